package mastodon_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/mattn/go-mastodon"

	"socialstream/internal/app"
	"socialstream/internal/ids"
	"socialstream/internal/localstack"
	"socialstream/internal/stacktest"
	"socialstream/internal/testenv"
)

// Link previews through a Mastodon client library nobody here wrote: a
// status's first link gets a card once its job has run (null before),
// its picture served from here; the page is fetched once for every
// status that links it; a page that cannot be read leaves no card and
// no error; an edit to another link brings that link's card. REST shows
// the same card.
func TestMastodonLinkPreviews(t *testing.T) {
	var pageHits, picHits atomic.Int64
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/story", "/other":
			pageHits.Add(1)
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<html><head><title>fallback</title><meta property="og:title" content="Title of %s">
				<meta property="og:description" content="What it says"><meta property="og:image" content="/pic.png"></head><body>...`, r.URL.Path)
		case "/pic.png":
			picHits.Add(1)
			w.Header().Set("Content-Type", "image/png")
			w.Write(stacktest.Picture(t, "png", 60, 40))
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()
	e := stacktest.New(t, localstack.Options{DB: testenv.DB(t), Config: app.Config{LinkPreviewsAllowLoopback: true}})
	ctx := context.Background()
	alice, bob := e.Register("alice"), e.Register("bob")
	ca, cb := e.MastoClient(alice, "read write follow"), e.MastoClient(bob, "read write follow")

	st, err := ca.PostStatus(ctx, &mastodon.Toot{Status: "read this: " + site.URL + "/story."})
	if err != nil {
		t.Fatal(err)
	}
	e.Settle()
	got, err := cb.GetStatus(ctx, st.ID)
	if err != nil || got.Card == nil {
		t.Fatalf("the status's card: %+v, %v", got, err)
	}
	c := got.Card
	if c.URL != site.URL+"/story" || c.Title != "Title of /story" || c.Description != "What it says" || c.Type != "link" || c.Image == "" || c.Width != 60 {
		t.Errorf("the card: %+v", c)
	}
	if code, typ, _ := e.Fetch(c.Image); code != http.StatusOK || typ != "image/png" {
		t.Errorf("the card's picture: %d %s", code, typ)
	}
	// Another status of the same link shares the card.
	again, err := cb.PostStatus(ctx, &mastodon.Toot{Status: "same " + site.URL + "/story"})
	if err != nil {
		t.Fatal(err)
	}
	e.Settle()
	if s2, err := cb.GetStatus(ctx, again.ID); err != nil || s2.Card == nil || s2.Card.Title != "Title of /story" {
		t.Errorf("the second status's card: %+v, %v", s2, err)
	}
	if n := pageHits.Load(); n != 1 {
		t.Errorf("the page was fetched %d times, want once", n)
	}
	// A page that cannot be had: no card, and the status is fine.
	broken, err := ca.PostStatus(ctx, &mastodon.Toot{Status: "gone " + site.URL + "/missing"})
	if err != nil {
		t.Fatal(err)
	}
	e.Settle()
	if s3, err := ca.GetStatus(ctx, broken.ID); err != nil || s3.Card != nil {
		t.Errorf("a status of a missing page: %+v, %v", s3, err)
	}
	// An edit to another link: that link's card.
	if _, err := ca.UpdateStatus(ctx, &mastodon.Toot{Status: "read this instead: " + site.URL + "/other"}, st.ID); err != nil {
		t.Fatal(err)
	}
	e.Settle()
	if s4, err := ca.GetStatus(ctx, st.ID); err != nil || s4.Card == nil || s4.Card.Title != "Title of /other" {
		t.Errorf("the edited status's card: %+v, %v", s4, err)
	}
	// REST shows it too.
	n, _ := strconv.ParseInt(string(st.ID), 10, 64)
	r := e.Do("GET", "/social/rest/activities/"+alice.ID+"/@self/@app/"+ids.Format(n), bob.Token, nil)
	list, _ := r.Body["list"].([]any)
	if r.Status != http.StatusOK || len(list) != 1 {
		t.Fatalf("REST: %d %s", r.Status, r.Raw)
	}
	card, _ := list[0].(map[string]any)["card"].(map[string]any)
	if card == nil || card["title"] != "Title of /other" || card["image"] == nil {
		t.Errorf("REST's card: %s", r.Raw)
	}
}
