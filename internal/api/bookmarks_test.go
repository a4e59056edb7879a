package api_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"socialstream/internal/bookmarks"
)

// A person keeps the posts they may see in a private list, newest
// bookmark first, paged; what later becomes hidden from them, or is
// deleted, is not shown; the list is their own.
func TestBookmarks(t *testing.T) {
	e := newEnv(t)
	ann, bob, cat := e.register("ann"), e.register("bob"), e.register("cat")
	e.follow(bob, ann.id)
	pub := e.post(ann, "public")
	fol := e.postFor(ann, "for followers", "followers")
	other := e.post(cat, "cat's")
	mark := func(u user, id string) resp { return e.do("POST", "/social/rest/bookmarks/"+id, u.token, nil) }
	for _, id := range []string{fol, pub, other} {
		if r := mark(bob, id); r.status != 200 || e.entry(r)["bookmarked"] != true || e.entry(r)["id"] != id {
			t.Fatalf("bookmark %s: %d %s", id, r.status, r.raw)
		}
	}
	if r := mark(bob, fol); r.status != 200 {
		t.Errorf("bookmarking again: %d %s", r.status, r.raw)
	}
	e.wantError(mark(cat, fol), 404) // hidden from cat
	e.wantError(mark(cat, "12345"), 404)
	list := func(u user, query string) []string {
		t.Helper()
		r := e.do("GET", "/social/rest/bookmarks"+query, u.token, nil)
		if r.status != 200 {
			t.Fatalf("bookmarks: %d %s", r.status, r.raw)
		}
		for _, it := range r.body["list"].([]any) {
			if it.(map[string]any)["bookmarked"] != true {
				t.Errorf("a bookmark not marked: %v", it)
			}
		}
		return e.list(r)
	}
	if got, want := list(bob, ""), []string{other, pub, fol}; !cmp.Equal(got, want) {
		t.Errorf("bob's bookmarks %v, want %v (newest bookmark first; again keeps its place)", got, want)
	}
	if got := list(cat, ""); len(got) != 0 {
		t.Errorf("cat's bookmarks %v", got)
	}
	// Paged.
	r := e.do("GET", "/social/rest/bookmarks?count=2", bob.token, nil)
	next, _ := r.body["nextCursor"].(string)
	if got := e.list(r); !cmp.Equal(got, []string{other, pub}) || next == "" {
		t.Fatalf("first page %v, next %q", got, next)
	}
	if got := list(bob, "?count=2&cursor="+next); !cmp.Equal(got, []string{fol}) {
		t.Errorf("second page %v", got)
	}
	e.wantError(e.do("GET", "/social/rest/bookmarks?cursor=nonsense", bob.token, nil), 400)
	// Hidden since (the follow ended), or deleted: not shown.
	if r := e.do("DELETE", "/social/rest/people/@me/@friends/"+ann.id, bob.token, nil); r.status != 204 {
		t.Fatal(r.status, string(r.raw))
	}
	if r := e.do("DELETE", "/social/rest/activities/@me/@self/@app/"+other, cat.token, nil); r.status != 204 {
		t.Fatal(r.status, string(r.raw))
	}
	if got := list(bob, ""); !cmp.Equal(got, []string{pub}) {
		t.Errorf("bob's bookmarks after the unfollow and the delete: %v", got)
	}
	// Taken off; an unbookmark of what is now hidden is a 404, the
	// bookmark gone all the same.
	if r := e.do("DELETE", "/social/rest/bookmarks/"+pub, bob.token, nil); r.status != 200 || e.entry(r)["bookmarked"] != nil {
		t.Errorf("unbookmark: %d %s", r.status, r.raw)
	}
	e.wantError(e.do("DELETE", "/social/rest/bookmarks/"+fol, bob.token, nil), 404)
	e.follow(bob, ann.id)
	if got := list(bob, ""); !cmp.Equal(got, []string(nil), cmpopts.EquateEmpty()) {
		t.Errorf("bob's bookmarks after unbookmarking: %v", got)
	}
	// The deleted activity's cleanup took its bookmarks.
	e.Settle()
	if keys, err := e.db.GetAll(t.Context(), e.db.Query(bookmarks.KindBookmark).KeysOnly(), nil); err != nil || len(keys) != 0 {
		t.Errorf("bookmarks stored: %v (%v), want none", keys, err)
	}
}
