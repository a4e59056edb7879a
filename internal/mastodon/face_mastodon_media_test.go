package mastodon_test

import (
	"bytes"
	"context"
	"math"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/mattn/go-mastodon"

	"socialstream/internal/media"
	"socialstream/internal/stacktest"
)

// uploadForm is a picture's upload as a Mastodon app sends it.
func uploadForm(t *testing.T, pic []byte, description string) ([]byte, string) {
	t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	f, err := w.CreateFormFile("file", "picture.png")
	if err != nil {
		t.Fatal(err)
	}
	f.Write(pic)
	w.WriteField("description", description)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return body.Bytes(), w.FormDataContentType()
}

// Version 2's upload of a picture of more than media.InlinePixels answers
// 202 at once, with no links, and its job makes the picture safe: until
// then the attachment answers 206 and a status cannot carry it (422,
// Mastodon's words); after, 200 with its links, and a status carries it.
// A smaller picture, and any by version 1, is made safe before the
// answer, as Mastodon's are.
func TestMastodonUploadIsMadeSafeByItsJob(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	alice := e.Register("alice")
	ca := e.MastoClient(alice, "read write")

	release := e.Tasks.Server.Hold()
	body, kind := uploadForm(t, stacktest.Picture(t, "png", 2000, 1200), "a gradient")
	up := e.Do("POST", "/api/v2/media", alice.Token, body, "Content-Type", kind)
	if up.Status != http.StatusAccepted || up.Body["url"] != nil || up.Body["preview_url"] != nil || up.Body["description"] != "a gradient" {
		release()
		t.Fatalf("the upload: %d %s", up.Status, up.Raw)
	}
	id := up.Body["id"].(string)
	if r := e.Do("GET", "/api/v1/media/"+id, alice.Token, nil); r.Status != http.StatusPartialContent || r.Body["url"] != nil {
		release()
		t.Fatalf("the attachment while it is processed: %d %s", r.Status, r.Raw)
	}
	_, err := ca.PostStatus(ctx, &mastodon.Toot{Status: "too soon", MediaIDs: []mastodon.ID{mastodon.ID(id)}})
	release()
	wantStatus(t, err, http.StatusUnprocessableEntity)
	if !strings.Contains(err.Error(), "not finished processing") {
		t.Errorf("the refusal says: %v", err)
	}

	var done stacktest.Resp
	e.Eventually("the picture made safe", func() bool {
		done = e.Do("GET", "/api/v1/media/"+id, alice.Token, nil)
		return done.Status == http.StatusOK
	})
	link, _ := done.Body["url"].(string)
	meta, _ := done.Body["meta"].(map[string]any)
	if link == "" || done.Body["preview_url"] == nil || meta["original"] == nil {
		t.Fatalf("the attachment once made safe: %s", done.Raw)
	}
	if status, kind, _ := e.Fetch(link); status != http.StatusOK || kind != "image/png" {
		t.Errorf("its link: %d %s", status, kind)
	}
	st, err := ca.PostStatus(ctx, &mastodon.Toot{Status: "now", MediaIDs: []mastodon.ID{mastodon.ID(id)}})
	if err != nil || len(st.MediaAttachments) != 1 {
		t.Fatalf("the status that carries it: %+v %v", st, err)
	}
	// Kept scaled down to media.KeptPixels, its shape kept.
	if o := st.MediaAttachments[0].Meta.Original; o.Width*o.Height > media.KeptPixels || o.Width < 1800 || math.Abs(float64(o.Width)/float64(o.Height)-2000.0/1200) > 0.01 {
		t.Errorf("the picture it carries is kept at %d × %d", o.Width, o.Height)
	}

	// Version 1, and a small picture by version 2: made safe before the
	// answer.
	for _, c := range []struct {
		path string
		w, h int
	}{{"/api/v1/media", 2000, 1200}, {"/api/v2/media", 1920, 1080}} {
		body, kind = uploadForm(t, stacktest.Picture(t, "png", c.w, c.h), "")
		if r := e.Do("POST", c.path, alice.Token, body, "Content-Type", kind); r.Status != http.StatusOK || r.Body["url"] == nil {
			t.Fatalf("%s of %d × %d: %d %s", c.path, c.w, c.h, r.Status, r.Raw)
		}
	}
	// What is not an image is refused at once, whichever the version.
	body, kind = uploadForm(t, []byte("not a picture"), "")
	if r := e.Do("POST", "/api/v2/media", alice.Token, body, "Content-Type", kind); r.Status != http.StatusUnprocessableEntity {
		t.Errorf("a version 2 upload of no image: %d %s", r.Status, r.Raw)
	}
}
