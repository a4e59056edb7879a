package api_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// Visibility, after Mastodon's: a public activity is anyone's; a
// followers-only one its author's followers' and the people it mentions';
// one for the mentioned theirs alone. Every feed holds what its reader may
// see, by its query (a page stays full), and what someone may not see is,
// to them, not there: not by id, not to like, comment on or repost.
func TestVisibility(t *testing.T) {
	e := newEnv(t)
	ann, ben, cat, dan := e.register("ann"), e.register("ben"), e.register("cat"), e.register("dan")
	e.follow(ben, ann.id)
	group := e.createGroup(cat, "ann's fans", "open")
	post := func(title, visibility string) string {
		t.Helper()
		r := e.do("POST", "/social/rest/activities/@me/@self", ann.token, map[string]string{"title": title, "visibility": visibility})
		if r.status != 201 || e.entry(r)["visibility"] != map[string]string{"": "public"}[visibility]+visibility {
			t.Fatalf("post %s: %d %s", visibility, r.status, r.raw)
		}
		return e.entry(r)["id"].(string)
	}
	pub := post("for anyone #news", "")
	fol := post("for my followers #news", "followers")
	men := post("for @dan alone", "mentioned")
	if r := e.do("POST", "/social/rest/groups/@all/"+group+"/members", ann.token, map[string]string{"id": "@me"}); r.status != 201 {
		t.Fatal(r.status, string(r.raw))
	}
	e.waitQueuesEmpty()

	for _, c := range []struct {
		who  user
		path string
		want []string
	}{
		{ann, "@me/@friends", []string{men, fol, pub}},
		{ben, "@me/@friends", []string{fol, pub}},
		{cat, "@me/@friends", nil},
		{dan, "@me/@friends", []string{men}},
		{dan, "@me/@mentions", []string{men}},
		{cat, "@all/@all", []string{pub}},
		{cat, "@me/@tag:news", []string{pub}},
		{ann, ann.id + "/@self", []string{men, fol, pub}},
		{ben, ann.id + "/@self", []string{fol, pub}},
		{cat, ann.id + "/@self", []string{pub}},
		{dan, ann.id + "/@self", []string{pub}},
		{cat, "@me/" + group, []string{pub}},
	} {
		if got := e.feed(c.who, c.path); !cmp.Equal(got, c.want, cmpopts.EquateEmpty()) {
			t.Errorf("%s reads %s: %v, want %v", c.who.name, c.path, got, c.want)
		}
	}
	// By id, and what cannot be seen cannot be touched.
	byID := func(u user, id string) int {
		return e.do("GET", "/social/rest/activities/"+ann.id+"/@self/@app/"+id, u.token, nil).status
	}
	if byID(cat, fol) != 404 || byID(ben, fol) != 200 || byID(dan, men) != 200 || byID(ben, men) != 404 || byID(cat, pub) != 200 {
		t.Errorf("by id: cat fol %d, ben fol %d, dan men %d, ben men %d, cat pub %d",
			byID(cat, fol), byID(ben, fol), byID(dan, men), byID(ben, men), byID(cat, pub))
	}
	e.wantError(e.do("POST", "/social/rest/likes/"+fol, cat.token, nil), 404)
	e.wantError(e.do("POST", "/social/rest/comments/"+men, ben.token, map[string]string{"text": "hm"}), 404)
	e.wantError(e.do("GET", "/social/rest/comments/"+men, ben.token, nil), 404)
	e.wantError(e.do("GET", "/social/rest/likes/"+fol, cat.token, nil), 404)
	e.wantError(e.do("POST", "/social/rest/reposts/"+fol, cat.token, nil), 404)
	e.wantError(e.do("POST", "/social/rest/reposts/"+fol, ben.token, nil), 403)
	// Nor can an undo show it.
	e.wantError(e.do("DELETE", "/social/rest/likes/"+fol, cat.token, nil), 404)
	e.wantError(e.do("DELETE", "/social/rest/reposts/"+men, cat.token, nil), 404)
	if r := e.do("POST", "/social/rest/likes/"+fol, ben.token, nil); r.status != 200 {
		t.Errorf("ben likes the followers-only post: %d %s", r.status, r.raw)
	}
	if r := e.do("POST", "/social/rest/comments/"+men, dan.token, map[string]string{"text": "thanks"}); r.status != 201 {
		t.Errorf("dan comments on the post for him: %d %s", r.status, r.raw)
	}
	e.wantError(e.do("POST", "/social/rest/activities/@me/@self", ann.token, map[string]string{"title": "x", "visibility": "friends"}), 400)
	// By JSON-RPC too.
	res := e.doBatch(ann, `[{"method":"activities.create","id":"c","params":{"userId":"@viewer","groupId":"@self","activity":{"title":"by rpc","visibility":"followers"}}},
		{"method":"activities.create","id":"d","params":{"userId":"@viewer","groupId":"@self","activity":{"title":"by rpc","visibility":"everyone"}}}]`)
	if got, _ := res[0]["result"].(map[string]any); got == nil || got["visibility"] != "followers" {
		t.Errorf("activities.create for followers: %v", res[0])
	}
	if e, _ := res[1]["error"].(map[string]any); e == nil || e["code"] != 400.0 {
		t.Errorf("activities.create for everyone: %v, want a 400", res[1])
	}

	// A later follow brings what followers see, never what is for the
	// mentioned; a page of someone's posts stays full for a stranger.
	eve := e.register("eve")
	e.follow(eve, ann.id)
	for range 3 {
		post("more for followers", "followers")
	}
	e.waitQueuesEmpty()
	if got := e.feed(eve, "@me/@friends"); slices.Contains(got, men) || !slices.Contains(got, fol) || !slices.Contains(got, pub) {
		t.Errorf("eve's home after her follow: %v", got)
	}
	if got := e.list(e.do("GET", "/social/rest/activities/"+ann.id+"/@self?count=1", cat.token, nil)); !cmp.Equal(got, []string{pub}) {
		t.Errorf("a page of one of ann's posts read by cat: %v, want the public one", got)
	}
	// Tag followers get public posts alone.
	if r := e.do("POST", "/social/rest/tags/@me", cat.token, map[string]string{"name": "later"}); r.status != 201 {
		t.Fatal(r.status, string(r.raw))
	}
	post("#later for followers", "followers")
	later := post("#later for all", "")
	e.waitQueuesEmpty()
	if got := e.feed(cat, "@me/@friends"); !cmp.Equal(got, []string{later}) {
		t.Errorf("cat's home by the tag: %v, want the public post alone", got)
	}
}
