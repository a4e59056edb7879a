package api_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
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

// A page that gives no answer at first (its connection closed) is asked
// again by the post's job, and every post that links it gets its card:
// a fetch that got no answer is not kept as a page that makes none.
func TestLinkPreviewAfterNoAnswer(t *testing.T) {
	var asked atomic.Int32
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if asked.Add(1) == 1 {
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
			}
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<head><meta property="og:title" content="A page"></head>`)
	}))
	defer site.Close()
	e := newEnvOn(t, testenv.DB(t), app.Config{BackfillMax: 1000, LinkPreviewsAllowLoopback: true})
	ann := e.register("ann")
	var posts []string
	for range 2 {
		r := e.do("POST", "/social/rest/activities/@me/@self", ann.token, map[string]any{"title": "see " + site.URL + "/page"})
		if r.status != http.StatusCreated {
			t.Fatalf("the post: %d %s", r.status, r.raw)
		}
		posts = append(posts, e.entry(r)["id"].(string))
	}
	e.Settle()
	for _, id := range posts {
		if card, _ := e.activity(ann, ann.id, id)["card"].(map[string]any); card == nil || card["title"] != "A page" {
			t.Errorf("the card of post %s: %v", id, card)
		}
	}
	if n := asked.Load(); n != 2 {
		t.Errorf("the page was asked %d times, want twice (no answer, then the card both share)", n)
	}
}
