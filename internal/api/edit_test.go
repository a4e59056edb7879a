package api_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"socialstream/internal/activities"
)

// An author edits a post: the text and mentions change at once (the
// @mentions feeds follow, the newly mentioned are told), the activity says
// it was edited, and the texts it replaced are kept for the author alone.
func TestEditActivity(t *testing.T) {
	e := newEnv(t)
	alice, bob, carol := e.register("alice"), e.register("bob"), e.register("carol")
	id := e.post(alice, "hello @bob")
	path := "/social/rest/activities/@me/@self/@app/" + id
	e.Settle()
	if got := e.notificationTypes(carol); len(got) != 0 {
		t.Fatalf("carol's notifications before the edit: %v", got)
	}

	r := e.do("PUT", path, alice.token, map[string]string{"title": "hello @carol", "body": "fixed"})
	if r.status != 200 {
		t.Fatalf("edit: %d %s", r.status, r.raw)
	}
	a := e.entry(r)
	if a["title"] != "hello @carol" || a["body"] != "fixed" || !cmp.Equal(a["mentions"], []any{carol.id}) || a["editedTime"] == nil ||
		a["editedTime"].(float64) < a["postedTime"].(float64) {
		t.Errorf("edited activity: %v", a)
	}
	if got := e.feed(bob, "@me/@mentions"); len(got) != 0 {
		t.Errorf("bob's mentions after the edit: %v, want none", got)
	}
	if got := e.feed(carol, "@me/@mentions"); !cmp.Equal(got, []string{id}) {
		t.Errorf("carol's mentions after the edit: %v, want %s", got, id)
	}
	e.Settle()
	if got := e.notificationTypes(carol); !cmp.Equal(got, []string{"mention"}) {
		t.Errorf("carol's notifications after the edit: %v, want one mention", got)
	}
	// Read by anyone, it says it was edited.
	if got := e.activity(bob, alice.id, id); got["title"] != "hello @carol" || got["editedTime"] != a["editedTime"] {
		t.Errorf("bob reads %v", got)
	}

	// An edit that changes nothing makes no version; the body alone may
	// change, keeping the title.
	if r := e.do("PUT", path, alice.token, map[string]string{"title": "hello @carol"}); r.status != 200 || e.entry(r)["editedTime"] != a["editedTime"] {
		t.Errorf("an edit that changes nothing: %d %s", r.status, r.raw)
	}
	if r := e.do("PUT", path, alice.token, map[string]string{"body": "fixed again"}); r.status != 200 || e.entry(r)["title"] != "hello @carol" {
		t.Errorf("an edit of the body: %d %s", r.status, r.raw)
	}

	// The history, oldest first, to the author alone.
	h := e.do("GET", path+"/history", alice.token, nil)
	if h.status != 200 {
		t.Fatalf("history: %d %s", h.status, h.raw)
	}
	var titles, bodies []string
	var mentioned []any
	for _, v := range h.body["list"].([]any) {
		m := v.(map[string]any)
		titles, bodies = append(titles, m["title"].(string)), append(bodies, fmt.Sprint(m["body"]))
		mentioned = append(mentioned, m["mentions"])
	}
	if !cmp.Equal(titles, []string{"hello @bob", "hello @carol", "hello @carol"}) || !cmp.Equal(bodies, []string{"<nil>", "fixed", "fixed again"}) ||
		!cmp.Equal(mentioned, []any{[]any{bob.id}, []any{carol.id}, []any{carol.id}}) {
		t.Errorf("history: titles %v, bodies %v, mentions %v", titles, bodies, mentioned)
	}
	e.wantError(e.do("GET", "/social/rest/activities/"+alice.id+"/@self/@app/"+id+"/history", bob.token, nil), 403)

	// Refusals change nothing.
	e.wantError(e.do("PUT", "/social/rest/activities/"+alice.id+"/@self/@app/"+id, bob.token, map[string]string{"title": "mine now"}), 403)
	e.wantError(e.do("PUT", path, alice.token, map[string]string{"title": "  "}), 400)
	e.wantError(e.do("PUT", path, alice.token, map[string]any{}), 400)
	e.wantError(e.do("PUT", path, alice.token, map[string]any{"title": 7}), 400)
	e.wantError(e.do("PUT", "/social/rest/activities/@me/@self/@app/999999999", alice.token, map[string]string{"title": "x"}), 404)
	e.wantError(e.do("PUT", "/social/rest/activities/@me/@self/@app/1,2", alice.token, map[string]string{"title": "x"}), 400)
	if got := e.activity(alice, alice.id, id); got["title"] != "hello @carol" || got["body"] != "fixed again" {
		t.Errorf("after the refusals: %v", got)
	}

	// By JSON-RPC, as osapi would call it.
	res := e.doBatch(alice, `[{"method":"activities.update","id":"1","params":{"userId":"@viewer","groupId":"@self","activityId":"`+id+`","activity":{"title":"by rpc"}}}]`)
	if got, ok := res[0]["result"].(map[string]any); !ok || got["title"] != "by rpc" || got["id"] != id {
		t.Errorf("activities.update: %v", res[0])
	}

	// Deleting the activity takes its versions with it.
	if r := e.do("DELETE", path, alice.token, nil); r.status != 204 {
		t.Fatalf("delete: %d %s", r.status, r.raw)
	}
	for n := range 3 {
		if ok, err := e.db.Get(t.Context(), activities.VersionKey(e.db, id, n), &activities.Version{}); err != nil || ok {
			t.Errorf("version %d after the delete: %v, %v", n, ok, err)
		}
	}
}

// An activity is edited at most MaxEdits times.
func TestEditsAreBounded(t *testing.T) {
	e := newEnv(t)
	alice := e.register("alice")
	id := e.post(alice, "v0")
	path := "/social/rest/activities/@me/@self/@app/" + id
	for n := 1; n <= activities.MaxEdits; n++ {
		if r := e.do("PUT", path, alice.token, map[string]string{"title": fmt.Sprint("v", n)}); r.status != 200 {
			t.Fatalf("edit %d: %d %s", n, r.status, r.raw)
		}
	}
	e.wantError(e.do("PUT", path, alice.token, map[string]string{"title": "one too many"}), 409)
	if got := e.activity(alice, alice.id, id); got["title"] != fmt.Sprint("v", activities.MaxEdits) {
		t.Errorf("after the refused edit: %v", got["title"])
	}
}

// An edit changes who may see an activity for the mentioned alone, and
// its home audience with it, at once: whoever it no longer names has it
// nowhere, home included; whoever it newly names has it at home and by
// id as if it had been posted so. A followers-only activity keeps its
// followers and reaches the newly named as a post would: by id and among
// their mentions, not at home.
func TestAnEditMovesWhoSeesIt(t *testing.T) {
	e := newEnv(t)
	ann, ben, cat, dan := e.register("ann"), e.register("ben"), e.register("cat"), e.register("dan")
	e.follow(dan, ann.id)
	post := func(title, visibility string) string { return e.postFor(ann, title, visibility) }
	edit := func(id, title string) {
		t.Helper()
		if r := e.do("PUT", "/social/rest/activities/@me/@self/@app/"+id, ann.token, map[string]string{"title": title}); r.status != 200 {
			t.Fatalf("edit: %d %s", r.status, r.raw)
		}
	}
	byID := func(u user, id string) int {
		return e.do("GET", "/social/rest/activities/"+ann.id+"/@self/@app/"+id, u.token, nil).status
	}
	men := post("for @ben alone", "mentioned")
	fol := post("for my followers and @ben", "followers")
	if got := e.feed(ben, "@me/@friends"); !cmp.Equal(got, []string{men}) {
		t.Fatalf("ben's home before the edits: %v, want %s", got, men)
	}

	edit(men, "for @cat alone")
	edit(fol, "for my followers and @cat")
	for _, c := range []struct {
		who        user
		path       string
		want       []string
		menID, fol int
	}{
		{ann, "@me/@friends", []string{fol, men}, 200, 200},
		{ben, "@me/@friends", nil, 404, 404},
		{ben, "@me/@mentions", nil, 404, 404},
		{cat, "@me/@friends", []string{men}, 200, 200},
		{cat, "@me/@mentions", []string{fol, men}, 200, 200},
		{dan, "@me/@friends", []string{fol}, 404, 200},
	} {
		if got := e.feed(c.who, c.path); !cmp.Equal(got, c.want, cmpopts.EquateEmpty()) {
			t.Errorf("after the edits, %s reads %s: %v, want %v", c.who.name, c.path, got, c.want)
		}
		if m, f := byID(c.who, men), byID(c.who, fol); m != c.menID || f != c.fol {
			t.Errorf("after the edits, %s reads them by id: %d and %d, want %d and %d", c.who.name, m, f, c.menID, c.fol)
		}
	}

	// Named again, ben has it back; the job of cat's mention, named for
	// its edit, changes nothing of that.
	edit(men, "for @ben and @cat")
	e.Settle()
	for _, u := range []user{ben, cat} {
		if got := e.feed(u, "@me/@friends"); !cmp.Equal(got, []string{men}) {
			t.Errorf("%s's home after ben is named again: %v, want %s", u.name, got, men)
		}
	}
}
