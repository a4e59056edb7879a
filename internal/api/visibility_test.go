package api_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// Visibility, after Mastodon's: a public activity is anyone's; an unlisted
// one too, but in no public, tag or group feed; a followers-only one its author's followers' and the people it mentions';
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
	unl := post("for anyone, unlisted #news", "unlisted")
	fol := post("for my followers #news", "followers")
	men := post("for @dan alone", "mentioned")
	if r := e.do("POST", "/social/rest/groups/@all/"+group+"/members", ann.token, map[string]string{"id": "@me"}); r.status != 201 {
		t.Fatal(r.status, string(r.raw))
	}
	e.Settle()

	for _, c := range []struct {
		who  user
		path string
		want []string
	}{
		{ann, "@me/@friends", []string{men, fol, unl, pub}},
		{ben, "@me/@friends", []string{fol, unl, pub}},
		{cat, "@me/@friends", nil},
		{dan, "@me/@friends", []string{men}},
		{dan, "@me/@mentions", []string{men}},
		{cat, "@all/@all", []string{pub}},
		{cat, "@me/@tag:news", []string{pub}},
		{ann, ann.id + "/@self", []string{men, fol, unl, pub}},
		{ben, ann.id + "/@self", []string{fol, unl, pub}},
		{cat, ann.id + "/@self", []string{unl, pub}},
		{dan, ann.id + "/@self", []string{unl, pub}},
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
	if byID(cat, fol) != 404 || byID(ben, fol) != 200 || byID(dan, men) != 200 || byID(ben, men) != 404 || byID(cat, pub) != 200 || byID(cat, unl) != 200 {
		t.Errorf("by id: cat fol %d, ben fol %d, dan men %d, ben men %d, cat pub %d, cat unl %d",
			byID(cat, fol), byID(ben, fol), byID(dan, men), byID(ben, men), byID(cat, pub), byID(cat, unl))
	}
	// An unlisted post may be reposted by anyone; the repost is unlisted
	// too, so it lists it nowhere either.
	r := e.do("POST", "/social/rest/reposts/"+unl, dan.token, nil)
	if r.status != 201 || e.entry(r)["visibility"] != "unlisted" {
		t.Errorf("dan reposts the unlisted post: %d %s", r.status, r.raw)
	}
	e.Settle()
	if got := e.feed(cat, "@all/@all"); !cmp.Equal(got, []string{pub}) {
		t.Errorf("@all after a repost of the unlisted post: %v", got)
	}
	if r := e.do("DELETE", "/social/rest/reposts/"+unl, dan.token, nil); r.status != 200 {
		t.Errorf("dan undoes the repost: %d %s", r.status, r.raw)
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
	if r := e.do("POST", "/social/rest/likes/"+unl, cat.token, nil); r.status != 200 {
		t.Errorf("cat likes the unlisted post: %d %s", r.status, r.raw)
	}
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
	e.Settle()
	if got := e.feed(eve, "@me/@friends"); slices.Contains(got, men) || !slices.Contains(got, fol) || !slices.Contains(got, pub) || !slices.Contains(got, unl) {
		t.Errorf("eve's home after her follow: %v", got)
	}
	if got := e.list(e.do("GET", "/social/rest/activities/"+ann.id+"/@self?count=1", cat.token, nil)); !cmp.Equal(got, []string{unl}) {
		t.Errorf("a page of one of ann's posts read by cat: %v, want the unlisted one", got)
	}
	// Tag followers get public posts alone.
	if r := e.do("POST", "/social/rest/tags/@me", cat.token, map[string]string{"name": "later"}); r.status != 201 {
		t.Fatal(r.status, string(r.raw))
	}
	post("#later for followers", "followers")
	post("#later unlisted", "unlisted")
	later := post("#later for all", "")
	e.Settle()
	if got := e.feed(cat, "@me/@friends"); !cmp.Equal(got, []string{later}) {
		t.Errorf("cat's home by the tag: %v, want the public post alone", got)
	}
}

// A content warning (spoilerText) and sensitive travel with an activity:
// in feeds, by id, in what a repost shares; an edit changes them and its
// history keeps them; a keyword filter matches the warning; bad ones are
// a 400 that changes nothing.
func TestContentWarnings(t *testing.T) {
	e := newEnv(t)
	ann, ben := e.register("ann"), e.register("ben")
	e.follow(ben, ann.id)
	r := e.do("POST", "/social/rest/activities/@me/@self", ann.token, map[string]any{"title": "the finale", "spoilerText": "  about the finale  "})
	a := e.entry(r)
	if r.status != 201 || a["spoilerText"] != "about the finale" || a["sensitive"] != true {
		t.Fatalf("post with a warning: %d %s", r.status, r.raw)
	}
	id := a["id"].(string)
	plain := e.post(ann, "nothing to warn of")
	if r := e.do("POST", "/social/rest/activities/@me/@self", ann.token, map[string]any{"title": "pictures", "sensitive": true}); r.status != 201 ||
		e.entry(r)["sensitive"] != true || e.entry(r)["spoilerText"] != nil {
		t.Errorf("sensitive alone: %d %s", r.status, r.raw)
	}
	for _, bad := range []map[string]any{
		{"title": "x", "spoilerText": "two\nlines"},
		{"title": "x", "spoilerText": strings.Repeat("w", 501)},
		{"title": "x", "spoilerText": 7},
	} {
		e.wantError(e.do("POST", "/social/rest/activities/@me/@self", ann.token, bad), 400)
	}
	e.Settle()
	var shown map[string]any
	for _, m := range e.feedItems(ben, "@me/@friends") {
		if m["id"] == id {
			shown = m
		}
	}
	if shown == nil || shown["spoilerText"] != "about the finale" || shown["sensitive"] != true {
		t.Errorf("ben's home shows %v", shown)
	}
	// What a repost shares keeps its warning.
	rp := e.do("POST", "/social/rest/reposts/"+id, ben.token, nil)
	if of, _ := e.entry(rp)["repostOf"].(map[string]any); of == nil || of["spoilerText"] != "about the finale" {
		t.Errorf("the repost shares %s", rp.raw)
	}
	// A filter of ben's on a word of the warning alone hides it at home.
	if r := e.do("POST", "/social/rest/filters/@me", ben.token, map[string]any{"title": "no finales",
		"keywords": []map[string]any{{"keyword": "about"}}, "context": []string{"home"}, "action": "hide"}); r.status != 201 {
		t.Fatal(r.status, string(r.raw))
	}
	if got := e.feed(ben, "@me/@friends"); slices.Contains(got, id) || !slices.Contains(got, plain) {
		t.Errorf("ben's home with the filter: %v", got)
	}
	// An edit takes the warning away, and the history keeps it.
	path := "/social/rest/activities/@me/@self/@app/" + id
	if r := e.do("PUT", path, ann.token, map[string]any{"spoilerText": "", "sensitive": false}); r.status != 200 ||
		e.entry(r)["spoilerText"] != nil || e.entry(r)["sensitive"] != false {
		t.Errorf("edit away the warning: %d %s", r.status, r.raw)
	}
	e.wantError(e.do("PUT", path, ann.token, map[string]any{"spoilerText": "bad\u0000"}), 400)
	h, _ := e.do("GET", path+"/history", ann.token, nil).body["list"].([]any)
	if len(h) != 2 || h[0].(map[string]any)["spoilerText"] != "about the finale" || h[1].(map[string]any)["spoilerText"] != nil {
		t.Errorf("history %v", h)
	}
	// By JSON-RPC too.
	res := e.doBatch(ann, `[{"method":"activities.create","id":"c","params":{"activity":{"title":"by rpc","spoilerText":"cw","visibility":"unlisted"}}}]`)
	if got, _ := res[0]["result"].(map[string]any); got == nil || got["spoilerText"] != "cw" || got["visibility"] != "unlisted" {
		t.Errorf("activities.create with a warning: %v", res[0])
	}
}
