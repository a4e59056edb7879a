package api_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"cloud.google.com/go/cloudtasks/apiv2/cloudtaskspb"

	"socialstream/internal/api"
	"socialstream/internal/federation"
	"socialstream/internal/media"
	"socialstream/internal/queue"
	"socialstream/internal/stacktest"
	"socialstream/internal/testenv"
)

// The pictures of a post from another server are kept by their address
// and cached here: a fetch job gets each once, through the guarded
// client, and a reader gets them from here (made safe as an upload is),
// with their
// address there as Mastodon's remote_url. At most four are kept, images
// alone; one whose server answers 404, or at an address the client never
// reaches, is answered 404 and not asked for again at once. The cache
// ends with its job, and the next view fetches the picture again; the
// post's Delete takes the bytes away. A Note of pictures alone is a post;
// a redirect is followed, and the address it names checked as any.
func TestFederationPicturesFromElsewhere(t *testing.T) {
	e, other, base := federatedBeside(t)
	ann := e.register("ann")
	eve := other.Person("eve")
	e.followRemote(other, ann, eve)

	first, second := stacktest.Picture(t, "png", 64, 48), stacktest.Picture(t, "jpeg", 30, 20)
	firstURL, secondURL := other.Picture("first.png", first), other.Picture("second.jpg", second)
	missingURL := other.Picture("missing.png", nil)
	metadataURL := "http://169.254.169.254/latest/meta-data/picture.png"
	fifthURL := other.Picture("fifth.png", first)
	attachments := []any{
		map[string]any{"type": "Document", "mediaType": "image/png", "url": firstURL, "name": "a gradient", "width": 64, "height": 48},
		map[string]any{"type": "Document", "mediaType": "video/mp4", "url": other.URL + "/media/film.mp4"},
		map[string]any{"type": "Image", "url": []any{
			map[string]any{"type": "Link", "mediaType": "text/html", "href": other.URL + "/page"},
			map[string]any{"type": "Link", "mediaType": "image/jpeg", "href": secondURL}}},
		map[string]any{"type": "Document", "mediaType": "image/png", "url": missingURL},
		map[string]any{"type": "Document", "mediaType": "image/png", "url": metadataURL},
		map[string]any{"type": "Document", "mediaType": "image/png", "url": fifthURL},
	}
	sendTo(t, other, eve, base, remoteCreate(eve, "1", "<p>pictures</p>", []string{federation.PublicCollection},
		[]string{eve.URI + "/followers"}, map[string]any{"attachment": attachments}), http.StatusAccepted)
	e.Settle()

	home := e.mastoHome(ann)
	if len(home) != 1 {
		t.Fatalf("ann's home: %v", home)
	}
	got, _ := home[0]["media_attachments"].([]any)
	var remote []string
	var links []map[string]any
	for _, a := range got {
		m := a.(map[string]any)
		r, _ := m["remote_url"].(string)
		remote = append(remote, r)
		links = append(links, m)
	}
	if want := []string{firstURL, secondURL, missingURL, metadataURL}; !slices.Equal(remote, want) {
		t.Fatalf("remote_url of the pictures: %v, want %v (four images at most, the video left out)", remote, want)
	}
	if links[0]["description"] != "a gradient" {
		t.Errorf("alt text: %v", links[0]["description"])
	}
	// The size a Note did not say is the fetch's.
	if meta, _ := links[1]["meta"].(map[string]any); meta == nil || fmt.Sprint(meta["original"]) != "map[aspect:1.5 height:20 size:30x20 width:30]" {
		t.Errorf("the second picture's size, as fetched: %v", links[1]["meta"])
	}
	if n := other.Fetched("first.png") + other.Fetched("second.jpg") + other.Fetched("missing.png"); n != 3 {
		t.Errorf("fetched %d times by the jobs, want once each", n)
	}
	if n := other.Fetched("fifth.png") + other.Fetched("film.mp4"); n != 0 {
		t.Errorf("a picture not kept was fetched %d times", n)
	}

	// Read from here, made safe as an upload is.
	for i, want := range []image.Point{{64, 48}, {30, 20}} {
		url := links[i]["url"].(string)
		if !strings.HasPrefix(url, base+"/media/") {
			t.Fatalf("picture %d is linked at %s, not here", i, url)
		}
		st, kind, body := e.Fetch(url)
		if st != 200 || !strings.HasPrefix(kind, "image/") {
			t.Fatalf("picture %d: %d %s (%d bytes)", i, st, kind, len(body))
		}
		if cfg, _, err := image.DecodeConfig(bytes.NewReader(body)); err != nil || cfg.Width != want.X || cfg.Height != want.Y {
			t.Errorf("picture %d: %v %+v", i, err, cfg)
		}
		if st, _, _ := e.Fetch(links[i]["preview_url"].(string)); st != 200 {
			t.Errorf("picture %d's thumbnail: %d", i, st)
		}
	}
	// Those not had are 404, and not asked for again at once.
	for i := 2; i < 4; i++ {
		if st, _, body := e.Fetch(links[i]["url"].(string)); st != http.StatusNotFound {
			t.Errorf("picture %d, not had: %d %s", i, st, body)
		}
	}
	if n := other.Fetched("missing.png"); n != 1 {
		t.Errorf("the missing picture was asked for %d times, want once", n)
	}

	// The cache ends: the bytes go, and the next view has them again.
	id := pictureID(t, links[0]["url"].(string))
	cleanup, err := e.tasks.Server.ListTasks(context.Background(), &cloudtaskspb.ListTasksRequest{
		Parent: fmt.Sprintf("projects/%s/locations/test/queues/%s", testenv.Project, queue.Cleanup)})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, task := range cleanup.Tasks {
		names = append(names, task.Name)
	}
	uncache := regexp.MustCompile(`media-uncache-` + id + `-(\d+)`).FindStringSubmatch(strings.Join(names, "\n"))
	if uncache == nil {
		t.Fatalf("no end of the cache of %s is scheduled: %v", id, names)
	}
	job := fmt.Sprintf(`{"op":"uncache","id":%q,"cached":%s}`, id, uncache[1])
	if r := e.do("POST", "/_tasks/media", "", job, api.TaskSecretHeader, e.stack.TaskSecret); r.status != 204 {
		t.Fatalf("the uncache job: %d %s", r.status, r.raw)
	}
	if objs := e.objects(); slices.Contains(objs, "media/"+id) {
		t.Fatalf("after the uncache job, the bytes are still here: %v", objs)
	}
	if st, _, _ := e.Fetch(links[0]["url"].(string)); st != 200 || other.Fetched("first.png") != 2 {
		t.Errorf("seen again: %d, fetched %d times, want 2", st, other.Fetched("first.png"))
	}
	// Run again (Cloud Tasks may), the first fetch's job leaves the second
	// fetch's bytes alone.
	if r := e.do("POST", "/_tasks/media", "", job, api.TaskSecretHeader, e.stack.TaskSecret); r.status != 204 {
		t.Fatalf("the uncache job again: %d %s", r.status, r.raw)
	}
	if objs := e.objects(); !slices.Contains(objs, "media/"+id) {
		t.Errorf("an old fetch's uncache job deleted a newer fetch's bytes: %v", objs)
	}

	// Deleted, the post takes its pictures' bytes with it.
	del := map[string]any{"id": eve.URI + "/statuses/1#delete", "type": "Delete", "actor": eve.URI, "object": eve.URI + "/statuses/1"}
	sendTo(t, other, eve, base, del, http.StatusAccepted)
	e.Settle()
	if objs := e.objects(); len(objs) != 0 {
		t.Errorf("after the post's Delete: %v", objs)
	}

	// Pictures with no words are a post. A picture served by a redirect
	// is had through it; one redirected to an address the client never
	// reaches is not.
	moved, astray := other.Moved("moved.jpg", secondURL), other.Moved("astray.jpg", metadataURL)
	sendTo(t, other, eve, base, remoteCreate(eve, "2", "", []string{federation.PublicCollection}, []string{eve.URI + "/followers"},
		map[string]any{"attachment": []any{map[string]any{"type": "Document", "mediaType": "image/jpeg", "url": moved},
			map[string]any{"type": "Document", "mediaType": "image/jpeg", "url": astray}}}), http.StatusAccepted)
	e.Settle()
	home = e.mastoHome(ann)
	if len(home) != 1 || len(home[0]["media_attachments"].([]any)) != 2 {
		t.Fatalf("a Note of pictures alone: %v", home)
	}
	for i, want := range []int{http.StatusOK, http.StatusNotFound} {
		link := home[0]["media_attachments"].([]any)[i].(map[string]any)["url"].(string)
		if st, _, body := e.Fetch(link); st != want {
			t.Errorf("picture %d of the second Note: %d %s, want %d", i, st, body, want)
		}
	}
	if other.Fetched("moved.jpg") != 1 || other.Fetched("second.jpg") != 2 {
		t.Errorf("the redirect: asked %d times, what it names %d times", other.Fetched("moved.jpg"), other.Fetched("second.jpg"))
	}

	// A server that fails for a while: the fetch job tries again, and
	// has the picture once it answers, before anyone looks.
	late := other.Picture("late.png", first)
	other.Failing("late.png", true)
	sendTo(t, other, eve, base, remoteCreate(eve, "3", "<p>late</p>", []string{federation.PublicCollection}, []string{eve.URI + "/followers"},
		map[string]any{"attachment": map[string]any{"type": "Document", "mediaType": "image/png", "url": late}}), http.StatusAccepted)
	e.Eventually("the fetch tried", func() bool { return other.Fetched("late.png") >= 1 })
	each := len(media.ObjectsOf(""))      // a picture, its thumbnail and that in WebP
	if n := len(e.objects()); n != each { // the second Note's
		t.Fatalf("objects while the server fails: %d", n)
	}
	other.Failing("late.png", false)
	e.Settle()
	if n := len(e.objects()); n != 2*each || other.Fetched("late.png") < 2 {
		t.Errorf("once the server answers: %d objects, asked %d times", n, other.Fetched("late.png"))
	}
}

// pictureID is the id of the picture a link of ours names.
func pictureID(t *testing.T, link string) string {
	t.Helper()
	m := regexp.MustCompile(`/media/([^/]+)/image`).FindStringSubmatch(link)
	if m == nil {
		t.Fatalf("not a picture's link: %s", link)
	}
	return m[1]
}
