package api_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"socialstream/internal/app"
	"socialstream/internal/stacktest"
	"socialstream/internal/testenv"
)

// A link's preview on REST, as the contract states it: absent until its
// job has run, then the card with its picture (a media item served from
// here); none for a page that makes none, and the post is fine.
func TestLinkPreviewOnREST(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, `<head><meta property="og:title" content="A page"><meta name="description" content="Its words"><meta property="og:image" content="/pic.jpg"></head>`)
		case "/pic.jpg":
			w.Header().Set("Content-Type", "image/jpeg")
			w.Write(stacktest.Picture(t, "jpeg", 40, 20))
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()
	e := newEnvOn(t, testenv.DB(t), app.Config{BackfillMax: 1000, LinkPreviewsAllowLoopback: true})
	ann := e.register("ann")
	for _, c := range []struct {
		path  string
		title string
	}{{"/page", "A page"}, {"/missing", ""}} {
		r := e.do("POST", "/social/rest/activities/@me/@self", ann.token, map[string]any{"title": "see " + site.URL + c.path})
		if r.status != http.StatusCreated || e.entry(r)["card"] != nil {
			t.Fatalf("the post: %d %s", r.status, r.raw)
		}
		id := e.entry(r)["id"].(string)
		e.Settle()
		card, _ := e.activity(ann, ann.id, id)["card"].(map[string]any)
		switch {
		case c.title == "" && card != nil:
			t.Errorf("a card for a page that makes none: %v", card)
		case c.title == "":
		case card == nil || card["title"] != c.title || card["description"] != "Its words" || card["url"] != site.URL+c.path:
			t.Errorf("the card of %s: %v", c.path, card)
		default:
			img, _ := card["image"].(map[string]any)
			if img == nil || img["width"] != 40.0 {
				t.Errorf("the card's picture: %v", img)
			} else if code, typ, _ := e.Fetch(img["url"].(string)); code != http.StatusOK || typ != "image/jpeg" {
				t.Errorf("the card's picture served: %d %s", code, typ)
			}
		}
	}
}
