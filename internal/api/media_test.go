package api_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	stdimage "image"
	"image/jpeg"
	"image/png"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"socialstream/internal/app"
	"socialstream/internal/derrors"
	"socialstream/internal/localstack"
	"socialstream/internal/media"
	"socialstream/internal/ratelimit"
	"socialstream/internal/stacktest"
	"socialstream/internal/store"
)

// upload sends an image's bytes as the body.
func (e *env) upload(u user, data []byte, alt string) resp {
	e.t.Helper()
	return e.do("POST", "/social/rest/mediaItems/@me/@self?description="+url.QueryEscape(alt), u.token, data, "Content-Type", "image/png")
}

// uploaded uploads a picture and returns its entry.
func (e *env) uploaded(u user, alt string) map[string]any {
	e.t.Helper()
	r := e.upload(u, stacktest.Picture(e.t, "png", 64, 48), alt)
	if r.status != http.StatusCreated {
		e.t.Fatalf("upload: %d %s", r.status, r.raw)
	}
	return e.entry(r)
}

// objects lists the bucket's objects.
func (e *env) objects() []string {
	e.t.Helper()
	names, err := e.stack.Storage.Objects(e.stack.Bucket, "")
	if err != nil {
		e.t.Fatal(err)
	}
	slices.Sort(names)
	return names
}

func mediaOf(t *testing.T, v map[string]any) []map[string]any {
	t.Helper()
	list, _ := v["mediaItems"].([]any)
	out := make([]map[string]any, len(list))
	for i, m := range list {
		out[i] = m.(map[string]any)
	}
	return out
}

func TestPicturesOnActivities(t *testing.T) {
	e := newEnv(t)
	ann, bob, carl := e.register("ann"), e.register("bob"), e.register("carl")
	e.follow(bob, ann.id)

	first := e.uploaded(ann, "a gradient, blue")
	if first["mimeType"] != "image/png" || first["width"] != float64(64) || first["height"] != float64(48) ||
		first["description"] != "a gradient, blue" || first["type"] != "image" {
		t.Fatalf("upload answered %v", first)
	}
	// A JPEG, by a multipart form as a browser sends it.
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	fw, _ := mw.CreateFormFile("file", "photo.jpg")
	fw.Write(stacktest.Picture(t, "jpeg", 30, 20))
	mw.WriteField("description", "a photo")
	mw.Close()
	r := e.do("POST", "/social/rest/mediaItems/@me/@self", ann.token, form.Bytes(), "Content-Type", mw.FormDataContentType())
	if r.status != http.StatusCreated || e.entry(r)["mimeType"] != "image/jpeg" {
		t.Fatalf("multipart upload: %d %s", r.status, r.raw)
	}
	second := e.entry(r)

	r = e.do("POST", "/social/rest/activities/@me/@self", ann.token, map[string]any{
		"title": "holiday", "visibility": "followers",
		"mediaItems": []map[string]string{{"id": first["id"].(string)}, {"id": second["id"].(string)}},
	})
	if r.status != http.StatusCreated {
		t.Fatalf("post: %d %s", r.status, r.raw)
	}
	post := e.entry(r)
	pics := mediaOf(t, post)
	if len(pics) != 2 || pics[0]["id"] != first["id"] || pics[1]["description"] != "a photo" {
		t.Fatalf("the post's pictures: %v", pics)
	}

	// Bob, a follower, sees them in his home feed, and their links work
	// with no token.
	home := e.do("GET", "/social/rest/activities/@me/@friends", bob.token, nil)
	items, _ := home.body["list"].([]any)
	if len(items) != 1 {
		t.Fatalf("bob's home: %s", home.raw)
	}
	seen := mediaOf(t, items[0].(map[string]any))
	if len(seen) != 2 {
		t.Fatalf("bob sees %v", seen)
	}
	status, kind, body := e.Fetch(seen[0]["url"].(string))
	if status != 200 || kind != "image/png" {
		t.Fatalf("the picture: %d %s", status, kind)
	}
	if img, err := png.Decode(bytes.NewReader(body)); err != nil || img.Bounds().Dx() != 64 {
		t.Fatalf("the picture's bytes: %v", err)
	}
	if status, kind, _ := e.Fetch(seen[1]["thumbnailUrl"].(string)); status != 200 || kind != "image/jpeg" {
		t.Fatalf("the thumbnail: %d %s", status, kind)
	}
	// A shared cache may keep the picture for the rest of its link's life,
	// and no refusal.
	res, err := http.Get(seen[0]["url"].(string))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	var maxAge int
	if _, err := fmt.Sscanf(res.Header.Get("Cache-Control"), "public, max-age=%d", &maxAge); err != nil ||
		maxAge != int(media.CacheFor.Seconds()) {
		t.Errorf("the picture's Cache-Control %q", res.Header.Get("Cache-Control"))
	}
	if res, err = http.Get(strings.Replace(seen[0]["url"].(string), "s=", "s=x", 1)); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if got := res.Header.Get("Cache-Control"); res.StatusCode != http.StatusNotFound || got != "no-store" {
		t.Errorf("a forged link: %d, Cache-Control %q", res.StatusCode, got)
	}
	// A link whose signature is changed, or that names another picture,
	// opens nothing.
	forged := strings.Replace(seen[0]["url"].(string), "s=", "s=x", 1)
	if status, _, _ := e.Fetch(forged); status != http.StatusNotFound {
		t.Errorf("a forged link: %d", status)
	}
	swapped := strings.Replace(seen[0]["url"].(string), first["id"].(string), second["id"].(string), 1)
	if status, _, _ := e.Fetch(swapped); status != http.StatusNotFound {
		t.Errorf("a link to another picture: %d", status)
	}

	// Carl, a stranger, gets neither the post nor its pictures by id.
	one := "/social/rest/mediaItems/" + ann.id + "/@self/@all/" + first["id"].(string)
	e.wantError(e.do("GET", one, carl.token, nil), http.StatusNotFound)
	if got := e.list(e.do("GET", "/social/rest/mediaItems/"+ann.id+"/@self", carl.token, nil)); len(got) != 0 {
		t.Errorf("carl lists ann's pictures: %v", got)
	}
	if r := e.do("GET", one, bob.token, nil); r.status != 200 || e.entry(r)["activityId"] != post["id"] {
		t.Errorf("bob reads the picture by id: %d %s", r.status, r.raw)
	}

	// Attaching: one's own loose uploads alone, four at most.
	third := e.uploaded(ann, "")
	e.wantError(e.do("POST", "/social/rest/activities/@me/@self", carl.token, map[string]any{
		"title": "mine now", "mediaItems": []map[string]string{{"id": third["id"].(string)}}}), http.StatusNotFound)
	e.wantError(e.do("POST", "/social/rest/activities/@me/@self", ann.token, map[string]any{
		"title": "again", "mediaItems": []map[string]string{{"id": first["id"].(string)}}}), http.StatusConflict)
	five := []string{}
	for range 5 {
		five = append(five, third["id"].(string))
	}
	e.wantError(e.do("POST", "/social/rest/activities/@me/@self", ann.token, map[string]any{"title": "many", "mediaItems": five}), http.StatusBadRequest)
	e.wantError(e.do("POST", "/social/rest/activities/@me/@self", ann.token, map[string]any{"title": "bad", "mediaItems": []string{"../etc"}}), http.StatusBadRequest)

	// New alt text shows on the activity at once.
	r = e.do("PUT", "/social/rest/mediaItems/@me/@self/@all/"+first["id"].(string), ann.token, map[string]string{"description": "a gradient, blue to green"})
	if r.status != 200 {
		t.Fatalf("update: %d %s", r.status, r.raw)
	}
	r = e.do("GET", "/social/rest/activities/"+ann.id+"/@self/@app/"+post["id"].(string), bob.token, nil)
	if got := mediaOf(t, r.body["list"].([]any)[0].(map[string]any)); got[0]["description"] != "a gradient, blue to green" {
		t.Errorf("the activity shows %v", got[0]["description"])
	}
	// A picture on an activity goes with it, not alone.
	e.wantError(e.do("DELETE", one, ann.token, nil), http.StatusConflict)

	if r := e.do("DELETE", "/social/rest/activities/@me/@self/@app/"+post["id"].(string), ann.token, nil); r.status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.status, r.raw)
	}
	e.Settle()
	if got, want := e.objects(), media.ObjectsOf(third["id"].(string)); !slices.Equal(got, want) {
		t.Errorf("objects after the delete: %v, want the loose upload's alone %v", got, want)
	}
}

// bomb is a PNG whose header says 100,000 × 100,000 pixels.
func bomb(t *testing.T) []byte {
	b := stacktest.Picture(t, "png", 1, 1)
	binary.BigEndian.PutUint32(b[16:], 100000)
	binary.BigEndian.PutUint32(b[20:], 100000)
	binary.BigEndian.PutUint32(b[29:], crc32.ChecksumIEEE(b[12:29]))
	return b
}

func TestUploadRefusals(t *testing.T) {
	e := newEnv(t)
	ann := e.register("ann")
	big := append(stacktest.Picture(t, "png", 8, 8), make([]byte, media.MaxBytes)...)
	for _, c := range []struct {
		name   string
		data   []byte
		kind   string
		status int
	}{
		{"html said to be a PNG", []byte("<html><script>alert(1)</script></html>"), "image/png", 400},
		{"an empty body", []byte{}, "image/png", 400},
		{"a decompression bomb", bomb(t), "image/png", 400},
		{"over 8 MiB", big, "image/png", 413},
		{"over 9 MiB", append(bytes.Clone(big), make([]byte, 1<<20)...), "image/png", 413},
		{"a PNG sent as text", stacktest.Picture(t, "png", 4, 4), "text/plain", 400},
	} {
		r := e.do("POST", "/social/rest/mediaItems/@me/@self", ann.token, c.data, "Content-Type", c.kind)
		if r.status != c.status {
			t.Errorf("%s: %d %s, want %d", c.name, r.status, r.raw, c.status)
		}
		e.wantError(r, c.status)
		if c.status == 413 && !strings.Contains(r.errMessage(), "8 MiB") {
			t.Errorf("%s: %q does not say the limit", c.name, r.errMessage())
		}
	}
	// JSON on the upload path keeps the 1 MiB of every other body.
	huge := `{"id":"` + strings.Repeat("a", 2<<20) + `"}`
	if r := e.do("POST", "/social/rest/mediaItems/@me/@self", ann.token, huge, "Content-Type", "application/json"); r.status != 413 || strings.Contains(r.errMessage(), "8 MiB") {
		t.Errorf("2 MiB of JSON: %d %q", r.status, r.errMessage())
	}
	// Multipart with no file.
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	mw.WriteField("description", "where is it")
	mw.Close()
	e.wantError(e.do("POST", "/social/rest/mediaItems/@me/@self", ann.token, form.Bytes(), "Content-Type", mw.FormDataContentType()), 400)
	// Nobody else's.
	bob := e.register("bob")
	e.wantError(e.do("POST", "/social/rest/mediaItems/"+bob.id+"/@self", ann.token, stacktest.Picture(t, "png", 4, 4), "Content-Type", "image/png"), 403)
	if got := e.objects(); len(got) != 0 {
		t.Errorf("refused uploads left objects: %v", got)
	}
}

func TestAlbums(t *testing.T) {
	e := newEnv(t)
	ann, bob := e.register("ann"), e.register("bob")
	for _, path := range []string{"/social/rest/albums/@supportedFields", "/social/rest/mediaItems/@supportedFields"} {
		r := e.do("GET", path, ann.token, nil)
		if r.status != 200 || !bytes.Contains(r.raw, []byte(`"thumbnailUrl"`)) {
			t.Errorf("%s: %d %s", path, r.status, r.raw)
		}
	}
	r := e.do("POST", "/social/rest/albums/@me/@self", ann.token, map[string]string{"title": "Trip", "description": "by the sea"})
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.raw)
	}
	album := e.entry(r)["id"].(string)
	e.wantError(e.do("POST", "/social/rest/albums/@me/@self", ann.token, map[string]string{"title": "  "}), 400)

	// Into it: an upload, and a loose picture moved.
	r = e.do("POST", "/social/rest/mediaItems/@me/@self/"+album+"?description=waves", ann.token, stacktest.Picture(t, "png", 10, 10), "Content-Type", "image/png")
	if r.status != http.StatusCreated || e.entry(r)["albumId"] != album {
		t.Fatalf("upload into the album: %d %s", r.status, r.raw)
	}
	inAlbum := e.entry(r)["id"].(string)
	loose := e.uploaded(ann, "sand")["id"].(string)
	r = e.do("POST", "/social/rest/mediaItems/@me/@self/"+album, ann.token, map[string]string{"id": loose})
	if r.status != http.StatusOK || e.entry(r)["albumId"] != album {
		t.Fatalf("move into the album: %d %s", r.status, r.raw)
	}
	e.wantError(e.do("POST", "/social/rest/activities/@me/@self", ann.token, map[string]any{
		"title": "from the album", "mediaItems": []string{loose}}), http.StatusConflict)

	r = e.do("GET", "/social/rest/albums/@me/@self/"+album, ann.token, nil)
	if r.status != 200 || e.entry(r)["mediaItemCount"] != float64(2) || e.entry(r)["thumbnailUrl"] == nil {
		t.Fatalf("the album: %d %s", r.status, r.raw)
	}
	if got := e.list(e.do("GET", "/social/rest/mediaItems/@me/@self/"+album, ann.token, nil)); !slices.Equal(got, []string{loose, inAlbum}) {
		t.Errorf("the album's pictures %v, want %v", got, []string{loose, inAlbum})
	}
	if got := e.list(e.do("GET", "/social/rest/mediaItems/@me/@self/@all/"+inAlbum+","+loose, ann.token, nil)); len(got) != 2 {
		t.Errorf("two by id: %v", got)
	}
	if got := e.list(e.do("GET", "/social/rest/albums/@me/@self", ann.token, nil)); !slices.Equal(got, []string{album}) {
		t.Errorf("albums %v", got)
	}
	r = e.do("PUT", "/social/rest/albums/@me/@self/"+album, ann.token, map[string]string{"title": "Summer"})
	if r.status != 200 || e.entry(r)["title"] != "Summer" || e.entry(r)["description"] != "by the sea" {
		t.Fatalf("update: %d %s", r.status, r.raw)
	}
	// Albums are their owner's.
	e.wantError(e.do("GET", "/social/rest/albums/"+ann.id+"/@self", bob.token, nil), http.StatusForbidden)
	e.wantError(e.do("GET", "/social/rest/mediaItems/"+ann.id+"/@self/"+album, bob.token, nil), http.StatusForbidden)
	e.wantError(e.do("PUT", "/social/rest/albums/"+ann.id+"/@self/"+album, bob.token, map[string]string{"title": "mine"}), http.StatusForbidden)
	e.wantError(e.do("DELETE", "/social/rest/albums/@me/@self/"+album, bob.token, nil), http.StatusNotFound)
	e.wantError(e.do("GET", "/social/rest/albums/@me/@friends", ann.token, nil), http.StatusBadRequest)

	if r := e.do("DELETE", "/social/rest/mediaItems/@me/@self/"+album+"/"+inAlbum, ann.token, nil); r.status != http.StatusNoContent {
		t.Fatalf("delete a picture: %d %s", r.status, r.raw)
	}
	if r := e.do("DELETE", "/social/rest/albums/@me/@self/"+album, ann.token, nil); r.status != http.StatusNoContent {
		t.Fatalf("delete the album: %d %s", r.status, r.raw)
	}
	e.Settle()
	if got := e.objects(); len(got) != 0 {
		t.Errorf("objects left: %v", got)
	}
}

func TestMediaOverJSONRPC(t *testing.T) {
	e := newEnv(t)
	ann := e.register("ann")
	data := "data:image/png;base64," + base64.StdEncoding.EncodeToString(stacktest.Picture(t, "png", 12, 12))
	r := e.do("POST", "/social/rpc", ann.token, fmt.Sprintf(`[
		{"method":"albums.create","id":"a","params":{"userId":"@viewer","groupId":"@self","album":{"title":"RPC"}}},
		{"method":"mediaItems.create","id":"m","params":{"userId":"@viewer","groupId":"@self","mediaItem":{"url":%q,"description":"dots"}}},
		{"method":"mediaItems.supportedFields","id":"f"},
		{"method":"system.listMethods","id":"l"}
	]`, data))
	if r.status != 200 {
		t.Fatalf("batch: %d %s", r.status, r.raw)
	}
	results := map[string]any{}
	for _, v := range rpcResults(t, r.raw) {
		if v["error"] != nil {
			t.Fatalf("call %v: %v", v["id"], v["error"])
		}
		results[v["id"].(string)] = v["result"]
	}
	album := results["a"].(map[string]any)["id"].(string)
	item := results["m"].(map[string]any)
	if item["description"] != "dots" || item["width"] != float64(12) {
		t.Fatalf("mediaItems.create answered %v", item)
	}
	if !slices.Contains(asStrings(results["l"]), "albums.get") || !slices.Contains(asStrings(results["f"]), "url") {
		t.Errorf("listMethods %v, supportedFields %v", results["l"], results["f"])
	}
	r = e.do("POST", "/social/rpc", ann.token, fmt.Sprintf(`[
		{"method":"mediaItems.create","id":"move","params":{"userId":"@me","albumId":%q,"mediaItem":{"id":%q}}},
		{"method":"mediaItems.update","id":"u","params":{"userId":"@me","albumId":%q,"mediaItemIds":%q,"mediaItem":{"title":"Dots"}}},
		{"method":"mediaItems.get","id":"g","params":{"userId":"@me","groupId":"@self","albumId":%q}},
		{"method":"albums.get","id":"ag","params":{"userId":"@me","groupId":"@self","albumId":[%q]}},
		{"method":"mediaItems.create","id":"bad","params":{"userId":"@me","mediaItem":{"url":"https://example.com/x.png"}}}
	]`, album, item["id"], album, item["id"], album, album))
	byID := map[string]map[string]any{}
	for _, v := range rpcResults(t, r.raw) {
		byID[v["id"].(string)] = v
	}
	for _, id := range []string{"move", "u", "g", "ag"} {
		if byID[id]["error"] != nil {
			t.Errorf("%s: %v", id, byID[id]["error"])
		}
	}
	if got := byID["u"]["result"].(map[string]any)["title"]; got != "Dots" {
		t.Errorf("update: title %v", got)
	}
	if list := byID["g"]["result"].(map[string]any)["list"].([]any); len(list) != 1 {
		t.Errorf("the album holds %v", list)
	}
	if byID["ag"]["result"].(map[string]any)["mediaItemCount"] != float64(1) {
		t.Errorf("albums.get %v", byID["ag"]["result"])
	}
	if byID["bad"]["error"] == nil {
		t.Error("a create from a remote URL was taken: the service fetches no URL")
	}
}

func asStrings(v any) []string {
	list, _ := v.([]any)
	out := make([]string, len(list))
	for i, s := range list {
		out[i], _ = s.(string)
	}
	return out
}

func TestUploadRateLimit(t *testing.T) {
	setup := newEnv(t)
	lim := ratelimit.Defaults()
	lim.Upload = ratelimit.Rule{Quota: 2, Window: time.Hour}
	e := newEnvFrom(t, localstack.Options{DB: setup.db, Config: app.Config{RateLimits: lim}})
	ann := e.register("ann")
	for i := range 3 {
		r := e.upload(ann, stacktest.Picture(t, "png", 4, 4), "")
		if i < 2 && r.status != http.StatusCreated {
			t.Fatalf("upload %d: %d %s", i, r.status, r.raw)
		}
		if i == 2 {
			e.wantError(r, http.StatusTooManyRequests)
			if r.header.Get("Retry-After") == "" {
				t.Error("no Retry-After")
			}
		}
	}
}

// rpcResults decodes a JSON-RPC batch's answers.
func rpcResults(t *testing.T, raw []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("not a batch answer: %s", raw)
	}
	return out
}

func TestErasureAndExportCoverPictures(t *testing.T) {
	e := newEnv(t)
	v := e.register("victim")
	onPost := e.uploaded(v, "on a post")["id"].(string)
	e.uploaded(v, "never posted")
	r := e.do("POST", "/social/rest/albums/@me/@self", v.token, map[string]string{"title": "kept"})
	album := e.entry(r)["id"].(string)
	if r := e.do("POST", "/social/rest/mediaItems/@me/@self/"+album, v.token, stacktest.Picture(t, "png", 5, 5), "Content-Type", "image/png"); r.status != http.StatusCreated {
		t.Fatalf("upload into the album: %d %s", r.status, r.raw)
	}
	if r := e.do("POST", "/social/rest/activities/@me/@self", v.token, map[string]any{"title": "with a picture", "mediaItems": []string{onPost}}); r.status != http.StatusCreated {
		t.Fatalf("post: %d %s", r.status, r.raw)
	}

	r = e.do("GET", "/auth/account/export", v.token, nil)
	if r.status != 200 {
		t.Fatalf("export: %d %s", r.status, r.raw)
	}
	pics, _ := r.body["mediaItems"].([]any)
	albums, _ := r.body["albums"].([]any)
	if len(pics) != 3 || len(albums) != 1 {
		t.Fatalf("the export holds %d pictures and %d albums, want 3 and 1", len(pics), len(albums))
	}
	if status, _, _ := e.Fetch(pics[0].(map[string]any)["url"].(string)); status != 200 {
		t.Errorf("an exported picture's link: %d", status)
	}
	if got := e.objects(); len(got) != 3*len(media.ObjectsOf("")) { // each a picture, its thumbnail and that in WebP
		t.Fatalf("objects before the erasure: %v", got)
	}

	if r := e.do("DELETE", "/auth/account", v.token, map[string]string{"password": "password-victim"}); r.status != http.StatusAccepted {
		t.Fatalf("delete: %d %s", r.status, r.raw)
	}
	e.Settle()
	if got := e.objects(); len(got) != 0 {
		t.Errorf("objects after the erasure: %v", got)
	}
	if found, _ := mentionsOf(t, e.db, v.id); len(found) > 0 {
		t.Errorf("after the erasure, entities still name the user:\n%s", strings.Join(found, "\n"))
	}
}

// An upload in flight when its account is deleted keeps nothing in the
// bucket: its transaction's guard refuses it, and the upload deletes its
// objects then, not a day later.
func TestUploadOfAnAccountDeletedMeanwhile(t *testing.T) {
	e := newEnv(t)
	ann := e.register("ann")
	before := e.objects()
	if r := e.do("DELETE", "/auth/account", ann.token, map[string]string{"password": "password-ann"}); r.status >= 300 {
		t.Fatalf("delete: %d %s", r.status, r.raw)
	}
	// The request was let in before the deletion: it carries ann's
	// guard, which its transaction reads.
	ctx := store.WithGuard(context.Background(), e.svc.Accounts.Guard(ann.id, ann.token))
	if _, _, err := e.svc.Media.Upload(ctx, ann.id, media.UploadInput{Data: stacktest.Picture(t, "png", 64, 48)}); !errors.Is(err, derrors.Unauthenticated) {
		t.Fatalf("the upload of a deleted account: %v", err)
	}
	if after := e.objects(); !slices.Equal(after, before) {
		t.Errorf("the bucket after the refused upload: %v, before %v", after, before)
	}
}

// A picture's link works for days (LinkLife), and stops once the activity
// it is on is deleted: its objects go with the cleanup job. Its tag lets
// a device ask again for nothing but a 304 while it is there.
func TestPictureLinkLastsDaysAndEndsWithItsDelete(t *testing.T) {
	e := newEnv(t)
	ann := e.register("ann")
	pic := e.uploaded(ann, "kept a while")
	r := e.do("POST", "/social/rest/activities/@me/@self", ann.token, map[string]any{
		"title": "with a picture", "mediaItems": []map[string]string{{"id": pic["id"].(string)}}})
	if r.status != http.StatusCreated {
		t.Fatalf("post: %d %s", r.status, r.raw)
	}
	post := e.entry(r)
	link := mediaOf(t, post)[0]["url"].(string)
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	end, err := strconv.ParseInt(u.Query().Get("e"), 10, 64)
	if err != nil || time.Until(time.Unix(end, 0)) < media.LinkLife-time.Minute {
		t.Errorf("the link ends at %v, within LinkLife", time.Unix(end, 0))
	}
	if status, _, _ := e.Fetch(link); status != http.StatusOK {
		t.Fatalf("the link: %d", status)
	}
	// A device that holds it asks again with its tag: 304, no bytes.
	revalidate := func() *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, link, nil)
		req.Header.Set("If-None-Match", `W/"nothing", "`+pic["id"].(string)+`.image"`)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	if res := revalidate(); res.StatusCode != http.StatusNotModified || res.ContentLength > 0 ||
		res.Header.Get("ETag") != `"`+pic["id"].(string)+`.image"` || !strings.HasPrefix(res.Header.Get("Cache-Control"), "public, max-age=") {
		t.Errorf("a revalidation: %d, %d bytes, ETag %q, Cache-Control %q", res.StatusCode, res.ContentLength, res.Header.Get("ETag"), res.Header.Get("Cache-Control"))
	}
	if r := e.do("DELETE", "/social/rest/activities/@me/@self/@app/"+post["id"].(string), ann.token, nil); r.status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.status, r.raw)
	}
	e.Eventually("the deleted activity's picture gone", func() bool {
		status, _, _ := e.Fetch(link)
		return status == http.StatusNotFound
	})
	// Nor is a revalidation told it may keep what is gone.
	if res := revalidate(); res.StatusCode != http.StatusNotFound {
		t.Errorf("a revalidation after the delete: %d, want 404", res.StatusCode)
	}
}

// Hiding is no deletion: once ann blocks bob, no answer hands him her
// picture's link any more, and the link he was handed before works until
// it ends (as a signed Cloud Storage URL would), as docs/api.md states.
func TestPictureLinkAfterHiding(t *testing.T) {
	e := newEnv(t)
	ann, bob := e.register("ann"), e.register("bob")
	pic := e.uploaded(ann, "shown, then hidden")
	r := e.do("POST", "/social/rest/activities/@me/@self", ann.token, map[string]any{
		"title": "a picture", "mediaItems": []map[string]string{{"id": pic["id"].(string)}}})
	post := e.entry(r)
	seen := e.do("GET", "/social/rest/activities/"+ann.id+"/@self/@app/"+post["id"].(string), bob.token, nil)
	items, _ := seen.body["list"].([]any)
	if len(items) != 1 {
		t.Fatalf("bob's read: %s", seen.raw)
	}
	link := mediaOf(t, items[0].(map[string]any))[0]["url"].(string)
	if r := e.do("POST", "/social/rest/people/@me/@blocked", ann.token, map[string]string{"id": bob.id}); r.status != http.StatusCreated {
		t.Fatalf("block: %d %s", r.status, r.raw)
	}
	if r := e.do("GET", "/social/rest/activities/"+ann.id+"/@self/@app/"+post["id"].(string), bob.token, nil); r.status != http.StatusNotFound {
		t.Errorf("the post after the block: %d %s", r.status, r.raw)
	}
	if status, _, _ := e.Fetch(link); status != http.StatusOK {
		t.Errorf("the link handed out before the block: %d, want it to work until it ends", status)
	}
}

// A thumbnail is sent in WebP to the clients that take it, by their
// Accept header, and in its own type to the rest; each form has its own
// tag, and a device holding either is told it may keep it. The picture
// itself is sent as stored, whatever the client takes.
func TestThumbnailInTheFormTheClientTakes(t *testing.T) {
	e := newEnv(t)
	ann := e.register("ann")
	pic := e.uploaded(ann, "a gradient")
	id := pic["id"].(string)
	thumb, image := pic["thumbnailUrl"].(string), pic["url"].(string)
	get := func(link, accept, held string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, link, nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		if held != "" {
			req.Header.Set("If-None-Match", held)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res, body
	}
	webpTag, ownTag := `"`+id+`.thumb.webp"`, `"`+id+`.thumb"`
	for _, c := range []struct {
		accept, kind, tag string
	}{
		{"image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8", "image/webp", webpTag}, // a browser's
		{"image/webp,image/avif,image/jxl,image/heic,image/png,image/svg+xml,image/*;q=0.8,*/*;q=0.5", "image/webp", webpTag},
		{"*/*", "image/webp", webpTag},
		{"image/*", "image/webp", webpTag},
		{"", "image/jpeg", ownTag}, // says nothing of what it decodes
		{"image/jpeg, image/png", "image/jpeg", ownTag},
		{"image/jpeg, image/webp;q=0.5", "image/jpeg", ownTag},
		{"image/*, image/webp;q=0", "image/jpeg", ownTag},
		{"*/*;q=0.1, IMAGE/WEBP;q=0.9", "image/webp", webpTag},
	} {
		res, body := get(thumb, c.accept, "")
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != c.kind || res.Header.Get("ETag") != c.tag ||
			res.Header.Get("Vary") != "Accept" || media.Sniff(body) != c.kind {
			t.Errorf("Accept %q: %d %s (%s), ETag %s, Vary %q; want %s, %s", c.accept, res.StatusCode,
				res.Header.Get("Content-Type"), media.Sniff(body), res.Header.Get("ETag"), res.Header.Get("Vary"), c.kind, c.tag)
		}
	}
	// Each form held is still good to whoever holds it, whatever it takes
	// now.
	for _, held := range []string{webpTag, ownTag} {
		res, body := get(thumb, "image/webp", `W/"other", `+held)
		if res.StatusCode != http.StatusNotModified || len(body) != 0 || res.Header.Get("ETag") != held || res.Header.Get("Vary") != "Accept" {
			t.Errorf("revalidating %s: %d, %d bytes, ETag %s", held, res.StatusCode, len(body), res.Header.Get("ETag"))
		}
	}
	// The picture, opened, is the upload's own type.
	res, body := get(image, "image/webp,*/*", "")
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "image/png" || media.Sniff(body) != "image/png" ||
		res.Header.Get("Vary") != "" || res.Header.Get("ETag") != `"`+id+`.image"` {
		t.Errorf("the picture: %d %s, Vary %q, ETag %s", res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("Vary"), res.Header.Get("ETag"))
	}
	if res, _ := get(image, "", `"`+id+`.image.webp"`); res.StatusCode != http.StatusOK {
		t.Errorf("a tag of no form of the picture: %d, want 200", res.StatusCode)
	}
	// A picture whose thumbnail WebP would not make smaller (8 × 8, all
	// see-through): a client that takes WebP is sent the thumbnail itself,
	// from the form kept for it, so serving it never misses.
	var buf bytes.Buffer
	if err := png.Encode(&buf, stdimage.NewNRGBA(stdimage.Rect(0, 0, 8, 8))); err != nil {
		t.Fatal(err)
	}
	r := e.upload(ann, buf.Bytes(), "nothing to see")
	if r.status != http.StatusCreated {
		t.Fatalf("upload: %d %s", r.status, r.raw)
	}
	flat := e.entry(r)
	_, own := get(flat["thumbnailUrl"].(string), "", "")
	res, body = get(flat["thumbnailUrl"].(string), "image/webp,*/*", "")
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "image/png" || !bytes.Equal(body, own) ||
		res.Header.Get("ETag") != `"`+flat["id"].(string)+`.thumb.webp"` {
		t.Errorf("a flat thumbnail for WebP: %d %s, ETag %s, %d bytes (its own %d)", res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("ETag"), len(body), len(own))
	}
	if objs := e.objects(); !slices.Contains(objs, "media/"+flat["id"].(string)+"/thumb.webp") {
		t.Errorf("the flat picture's objects: %v", objs)
	}
}

// The Mastodon face's image_matrix_limit is the most pixels a picture is
// kept at: apps shrink their photos to it before they send them, and one
// sent larger (up to 4096 × 4096) is taken and kept scaled down to it.
func TestPicturesKeptAtTheAdvertisedLimit(t *testing.T) {
	e := newEnv(t)
	inst := e.do("GET", "/api/v2/instance", "", nil)
	limit, _ := inst.body["configuration"].(map[string]any)["media_attachments"].(map[string]any)["image_matrix_limit"].(float64)
	if limit <= 0 {
		t.Fatalf("image_matrix_limit: %s", inst.raw)
	}
	ann := e.register("ann")
	r := e.upload(ann, stacktest.Picture(t, "jpeg", 4000, 3000), "twelve megapixels")
	if r.status != http.StatusCreated {
		t.Fatalf("upload: %d %s", r.status, r.raw)
	}
	pic := e.entry(r)
	w, h := pic["width"].(float64), pic["height"].(float64)
	if px := w * h; px > limit || px < 0.999*limit || math.Abs(w/h-4.0/3) > 0.001 {
		t.Errorf("kept at %v × %v, want the shape of 4000 × 3000 within %v pixels", w, h, limit)
	}
	if _, kind, body := e.Fetch(pic["url"].(string)); kind != "image/jpeg" || len(body) == 0 {
		t.Fatalf("the picture: %s", kind)
	} else if img, err := jpeg.Decode(bytes.NewReader(body)); err != nil || float64(img.Bounds().Dx()) != w {
		t.Errorf("the picture's bytes: %v, %v wide", err, img)
	}
}
