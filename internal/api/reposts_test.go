package api_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Reposts, after Mastodon's boosts: a repost reaches the reposter's
// followers carrying the activity it shares with its author and counts;
// the shared activity counts its reposts and tells the viewer theirs;
// reposting twice is one repost; undoing it, or deleting the shared
// activity, takes it from every feed.
func TestReposts(t *testing.T) {
	e := newEnv(t)
	ann, ben, cat, dan, eve := e.register("ann"), e.register("ben"), e.register("cat"), e.register("dan"), e.register("eve")
	e.follow(ben, cat.id)
	e.follow(ben, dan.id)
	a := e.post(ann, "worth sharing")
	repost := func(u user, id string, want int) map[string]any {
		t.Helper()
		r := e.do("POST", "/social/rest/reposts/"+id, u.token, nil)
		if r.status != want {
			t.Fatalf("%s reposts %s: %d %s, want %d", u.name, id, r.status, r.raw, want)
		}
		return e.entry(r)
	}
	rc := repost(cat, a, 201)
	orig, _ := rc["repostOf"].(map[string]any)
	if rc["userId"] != cat.id || rc["title"] != "" || orig == nil || orig["id"] != a || orig["title"] != "worth sharing" ||
		orig["author"].(map[string]any)["id"] != ann.id || orig["repostsCount"] != 1.0 || orig["repostedByViewer"] != true {
		t.Fatalf("the repost: %v", rc)
	}
	r := rc["id"].(string)
	if again := repost(cat, a, 200); again["id"] != r {
		t.Errorf("reposting again: %v, want the first repost %s", again["id"], r)
	}
	// A repost of the repost shares the activity first posted.
	rd := repost(dan, r, 201)
	if o, _ := rd["repostOf"].(map[string]any); o == nil || o["id"] != a || o["repostsCount"] != 2.0 {
		t.Errorf("a repost of a repost: %v", rd)
	}
	d := rd["id"].(string)
	e.Settle()

	if got := e.feed(ben, "@me/@friends"); !cmp.Equal(got, []string{d, r}) {
		t.Errorf("ben's home: %v, want the two reposts", got)
	}
	if got := e.feed(cat, "@me/@self"); !cmp.Equal(got, []string{r}) {
		t.Errorf("cat's own: %v", got)
	}
	got := e.do("GET", "/social/rest/activities/"+ann.id+"/@self/@app/"+a, cat.token, nil)
	if l := got.body["list"].([]any); len(l) != 1 || l[0].(map[string]any)["repostsCount"] != 2.0 || l[0].(map[string]any)["repostedByViewer"] != true {
		t.Errorf("the shared activity as cat sees it: %s", got.raw)
	}
	if ids := e.list(e.do("GET", "/social/rest/reposts/"+a, eve.token, nil)); !cmp.Equal(ids, []string{dan.id, cat.id}) {
		t.Errorf("who reposts: %v", ids)
	}

	// Refusals change nothing: a block, a repost's edit, nothing there.
	if r := e.do("POST", "/social/rest/people/@me/@blocked", ann.token, map[string]string{"id": eve.id}); r.status != 201 {
		t.Fatal(r.status, string(r.raw))
	}
	e.wantError(e.do("POST", "/social/rest/reposts/"+a, eve.token, nil), 404) // across a block: not there
	e.wantError(e.do("POST", "/social/rest/reposts/"+r, eve.token, nil), 404)
	e.wantError(e.do("POST", "/social/rest/reposts/123456789", eve.token, nil), 404)
	e.wantError(e.do("POST", "/social/rest/reposts/nope", eve.token, nil), 404)
	e.wantError(e.do("PUT", "/social/rest/activities/@me/@self/@app/"+r, cat.token, map[string]string{"title": "mine now"}), 400)
	if got := e.feed(eve, "@me/@self"); len(got) != 0 {
		t.Errorf("eve's own after the refusals: %v", got)
	}

	// Undone: gone from every feed, counted no more; again, nothing.
	for range 2 {
		u := e.do("DELETE", "/social/rest/reposts/"+a, cat.token, nil)
		if u.status != 200 || e.entry(u)["id"] != a || e.entry(u)["repostsCount"] != 1.0 || e.entry(u)["repostedByViewer"] != false {
			t.Fatalf("unrepost: %d %s", u.status, u.raw)
		}
	}
	if got := e.feed(ben, "@me/@friends"); !cmp.Equal(got, []string{d}) {
		t.Errorf("ben's home after cat's undo: %v", got)
	}

	// The shared activity deleted: no repost of it is seen, at once, and
	// its reposts go.
	if r := e.do("DELETE", "/social/rest/activities/@me/@self/@app/"+a, ann.token, nil); r.status != 204 {
		t.Fatal(r.status, string(r.raw))
	}
	if got := e.feed(ben, "@me/@friends"); len(got) != 0 {
		t.Errorf("ben's home once the shared activity is deleted: %v", got)
	}
	e.Settle()
	if got := e.feed(dan, "@me/@self"); len(got) != 0 {
		t.Errorf("dan's own after the cleanup: %v", got)
	}
	if got := e.feed(eve, "@all/@all"); slices.Contains(got, d) {
		t.Errorf("@all still has dan's repost: %v", got)
	}
	e.wantError(e.do("GET", "/social/rest/reposts/"+a, eve.token, nil), 404)
}

// An unrepost takes back one's own repost even of what the policy now
// hides from the reposter (the author blocked them, or was suspended), and
// answers 404, as for what is not there. The convergence checker found
// reposts left standing when it hid the activity before deleting.
func TestUnrepostOfWhatIsNowHidden(t *testing.T) {
	e := newEnv(t)
	ada, ann, bob, cat := e.register("ada"), e.register("ann"), e.register("bob"), e.register("cat")
	e.makeAdmin(ada)
	blocked, suspended := e.post(ann, "ann's"), e.post(bob, "bob's")
	for _, id := range []string{blocked, suspended} {
		if r := e.do("POST", "/social/rest/reposts/"+id, cat.token, nil); r.status != 201 {
			t.Fatalf("repost: %d %s", r.status, r.raw)
		}
	}
	if r := e.do("POST", "/social/rest/people/@me/@blocked", ann.token, map[string]string{"id": cat.id}); r.status != 201 {
		t.Fatalf("block: %d %s", r.status, r.raw)
	}
	e.act(ada, map[string]any{"action": "suspend", "accountId": bob.id, "reason": "spam"})
	for _, id := range []string{blocked, suspended} {
		e.wantError(e.do("DELETE", "/social/rest/reposts/"+id, cat.token, nil), 404)
	}
	e.Settle()
	if got := e.feed(cat, "@me/@self"); len(got) != 0 {
		t.Errorf("cat's reposts after unreposting: %v", got)
	}
	if n := e.activity(ann, ann.id, blocked)["repostsCount"]; n != 0.0 {
		t.Errorf("ann's post counts %v reposts, want 0", n)
	}
}
