package api_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"socialstream/internal/activities"
)

func TestPostValidation(t *testing.T) {
	e := newEnv(t)
	u := e.register("poster")
	tests := []struct {
		name   string
		path   string
		body   any
		status int
	}{
		{"no title", "", map[string]string{"body": "x"}, 400},
		{"blank title", "", map[string]string{"title": "   "}, 400},
		{"long title", "", map[string]string{"title": strings.Repeat("é", 501)}, 400},
		{"long body", "", map[string]string{"title": "t", "body": strings.Repeat("b", 10001)}, 400},
		{"ftp url", "", map[string]string{"title": "t", "url": "ftp://example.com/x"}, 400},
		{"javascript url", "", map[string]string{"title": "t", "url": "javascript:alert(1)"}, 400},
		{"relative url", "", map[string]string{"title": "t", "url": "/just/a/path"}, 400},
		{"bad app id", "/has space", map[string]string{"title": "t"}, 400},
		{"long externalId", "", map[string]string{"title": "t", "externalId": strings.Repeat("x", 201)}, 400},
		{"title not a string", "", `{"title": 7}`, 400},
		{"array body", "", `[{"title":"t"}]`, 400},
		{"over 1 MiB", "", `{"title":"t","body":"` + strings.Repeat("x", 1<<20) + `"}`, 413},
		{"for someone else", "/../../12345/@self", map[string]string{"title": "t"}, 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.t = t
			path := "/social/rest/activities/@me/@self" + tt.path
			if strings.Contains(tt.path, " ") {
				path = "/social/rest/activities/@me/@self/has%20space"
			}
			e.wantError(e.do("POST", path, u.token, tt.body), tt.status)
		})
	}
	e.t = t
	e.wantError(e.do("POST", "/social/rest/activities/12345/@self", u.token, map[string]string{"title": "t"}), 403)
	e.wantError(e.do("POST", "/social/rest/activities/@me/@friends", u.token, map[string]string{"title": "t"}), 400)
	e.wantError(e.do("POST", "/social/rest/activities/@me/@self", "", map[string]string{"title": "t"}), 401)
	if got := e.list(e.do("GET", "/social/rest/activities/@me/@self", u.token, nil)); len(got) != 0 {
		t.Errorf("refused posts were stored: %v", got)
	}

	// Unknown fields are ignored; the body, url and appId are kept.
	r := e.do("POST", "/social/rest/activities/@me/@self/gadget.v1", u.token,
		`{"title":"ok","body":"b","url":"https://example.com/a?b=c","postedTime":1,"id":"999","colour":"red"}`)
	if r.status != 201 {
		t.Fatalf("post: %d %s", r.status, r.raw)
	}
	a := e.entry(r)
	if a["id"] == "999" || a["appId"] != "gadget.v1" || a["url"] != "https://example.com/a?b=c" || a["userId"] != u.id || a["postedTime"] == 1.0 {
		t.Errorf("activity = %v", a)
	}
	if author, _ := a["author"].(map[string]any); author["id"] != u.id {
		t.Errorf("author not expanded: %v", a["author"])
	}
}

func TestMentionsAndExternalID(t *testing.T) {
	e := newEnv(t)
	alice, bob, carol := e.register("alice"), e.register("Bob"), e.register("carol")
	r := e.do("POST", "/social/rest/activities/@me/@self", alice.token, map[string]string{
		"title": "hi @bob and @ghost_user", "body": "cc @CAROL, mail bob@example.com, @bob again", "externalId": "ext-1",
	})
	if r.status != 201 {
		t.Fatalf("post: %d %s", r.status, r.raw)
	}
	a := e.entry(r)
	if diff := cmp.Diff([]any{bob.id, carol.id}, a["mentions"]); diff != "" {
		t.Errorf("mentions mismatch (-want +got):\n%s", diff)
	}
	if a["title"] != "hi @bob and @ghost_user" {
		t.Errorf("title changed: %v", a["title"])
	}
	for _, u := range []user{bob, carol} {
		if got := e.list(e.do("GET", "/social/rest/activities/@me/@mentions", u.token, nil)); !cmp.Equal(got, []string{a["id"].(string)}) {
			t.Errorf("%s's mentions = %v", u.name, got)
		}
	}
	e.wantError(e.do("GET", "/social/rest/activities/"+bob.id+"/@mentions", alice.token, nil), 403)

	// The same externalId returns the first activity, not a new one.
	again := e.do("POST", "/social/rest/activities/@me/@self", alice.token, map[string]string{"title": "different", "externalId": "ext-1"})
	if again.status != 200 || e.entry(again)["id"] != a["id"] || e.entry(again)["title"] != a["title"] {
		t.Errorf("repeat externalId: %d %s", again.status, again.raw)
	}
	// Another author may use the same externalId.
	if r := e.do("POST", "/social/rest/activities/@me/@self", bob.token, map[string]string{"title": "mine", "externalId": "ext-1"}); r.status != 201 {
		t.Errorf("other author's externalId: %d", r.status)
	}
	if got := e.list(e.do("GET", "/social/rest/activities/@me/@self", alice.token, nil)); len(got) != 1 {
		t.Errorf("alice has %d activities, want 1", len(got))
	}
}

func TestFeedsAndDelete(t *testing.T) {
	e := newEnv(t)
	alice, bob, carol := e.register("alice"), e.register("bob"), e.register("carol")
	e.follow(alice, bob.id)
	group := e.createGroup(bob, "bob's", "open")

	b1 := e.post(bob, "one")
	c1 := e.post(carol, "carol here") // alice does not follow carol
	a1 := e.post(alice, "mine")
	b2 := e.post(bob, "two @alice")

	get := func(u user, path string) []string {
		t.Helper()
		return e.list(e.do("GET", "/social/rest/activities/"+path, u.token, nil))
	}
	checks := []struct {
		name string
		got  []string
		want []string
	}{
		{"alice home", get(alice, "@me/@friends"), []string{b2, a1, b1}},
		{"bob home", get(bob, "@me/@friends"), []string{b2, b1}},
		{"bob self", get(alice, bob.id+"/@self"), []string{b2, b1}},
		{"alice mentions", get(alice, "@me/@mentions"), []string{b2}},
		{"group", get(carol, "@me/"+group), []string{b2, b1}},
		{"all", get(carol, "@me/@all"), []string{b2, a1, c1, b1}},
	}
	for _, c := range checks {
		if diff := cmp.Diff(c.want, c.got); diff != "" {
			t.Errorf("%s mismatch (-want +got):\n%s", c.name, diff)
		}
	}

	// Get by ids, in the order asked, unknown ids left out.
	if diff := cmp.Diff([]string{b1, b2}, get(alice, bob.id+"/@self/@app/"+b1+","+b2+",12345")); diff != "" {
		t.Errorf("get by ids mismatch (-want +got):\n%s", diff)
	}
	// One id that is not there (bob's under alice) is a 404, as the
	// contract says.
	e.wantError(e.do("GET", "/social/rest/activities/"+alice.id+"/@self/@app/"+b1, alice.token, nil), 404)
	e.wantError(e.do("GET", "/social/rest/activities/@me/@self/@app/x,y", alice.token, nil), 400)

	// Only the author deletes; then it is gone from every feed.
	e.wantError(e.do("DELETE", "/social/rest/activities/@me/@self/@app/"+b2, alice.token, nil), 403)
	e.wantError(e.do("DELETE", "/social/rest/activities/"+bob.id+"/@self/@app/"+b2, alice.token, nil), 403)
	e.wantError(e.do("DELETE", "/social/rest/activities/@me/@self/@app/12345", bob.token, nil), 404)
	if r := e.do("DELETE", "/social/rest/activities/@me/@self/@app/"+b2, bob.token, nil); r.status != 204 {
		t.Fatalf("delete: %d %s", r.status, r.raw)
	}
	for name, got := range map[string][]string{
		"alice home":     get(alice, "@me/@friends"),
		"bob home":       get(bob, "@me/@friends"),
		"bob self":       get(alice, bob.id+"/@self"),
		"alice mentions": get(alice, "@me/@mentions"),
		"group":          get(carol, "@me/"+group),
		"all":            get(carol, "@me/@all"),
	} {
		for _, id := range got {
			if id == b2 {
				t.Errorf("%s still has the deleted activity", name)
			}
		}
	}
	keys, err := e.db.GetAll(context.Background(), e.db.Query(activities.KindAudience).Ancestor(activities.Key(e.db, b2)).KeysOnly(), nil)
	if err != nil || len(keys) != 0 {
		t.Errorf("audience entities left after delete: %d (%v)", len(keys), err)
	}
}

func TestFeedPaging(t *testing.T) {
	e := newEnv(t)
	u := e.register("pager")
	var want []string
	for i := 0; i < 7; i++ {
		want = append([]string{e.post(u, fmt.Sprintf("post %d", i))}, want...)
	}
	for _, feed := range []string{"@me/@self", "@me/@friends", "@me/@all"} {
		var got []string
		cursor := ""
		for pages := 0; pages < 10; pages++ {
			path := "/social/rest/activities/" + feed + "?count=3"
			if cursor != "" {
				path += "&cursor=" + cursor
			}
			r := e.do("GET", path, u.token, nil)
			got = append(got, e.list(r)...)
			cursor, _ = r.body["nextCursor"].(string)
			if cursor == "" {
				break
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s paged by cursor mismatch (-want +got):\n%s", feed, diff)
		}
		if diff := cmp.Diff(want[3:5], e.list(e.do("GET", "/social/rest/activities/"+feed+"?count=2&startIndex=3", u.token, nil))); diff != "" {
			t.Errorf("%s by startIndex mismatch (-want +got):\n%s", feed, diff)
		}
	}
	if got := e.list(e.do("GET", "/social/rest/activities/@me/@self", u.token, nil)); len(got) != 7 {
		t.Errorf("default count: %d items", len(got))
	}
	r := e.do("GET", "/social/rest/activities/@me/@self?count=3", u.token, nil)
	selfCursor := r.body["nextCursor"].(string)
	for name, path := range map[string]string{
		"count 0":                "@me/@self?count=0",
		"count 101":              "@me/@self?count=101",
		"count text":             "@me/@self?count=all",
		"startIndex too deep":    "@me/@self?startIndex=5000",
		"garbage cursor":         "@me/@self?cursor=%%%",
		"cursor of another feed": "@me/@all?cursor=" + selfCursor,
		"cursor and startIndex":  "@me/@self?startIndex=2&cursor=" + selfCursor,
		"app filter on home":     "@me/@friends/someapp",
		"bad app id":             "@me/@self/bad%20app",
		"unknown selector":       "@me/@nonsense",
	} {
		t.Run(name, func(t *testing.T) {
			e.t = t
			r := e.do("GET", "/social/rest/activities/"+path, u.token, nil)
			if r.status != 400 && r.status != 404 {
				t.Errorf("status %d, want 400 or 404: %s", r.status, r.raw)
			}
			e.wantError(r, r.status)
		})
	}
}

func TestAppFilter(t *testing.T) {
	e := newEnv(t)
	u := e.register("apps")
	a := e.entry(e.do("POST", "/social/rest/activities/@me/@self/app1", u.token, map[string]string{"title": "from app1"}))["id"].(string)
	e.post(u, "no app")
	if diff := cmp.Diff([]string{a}, e.list(e.do("GET", "/social/rest/activities/@me/@self/app1", u.token, nil))); diff != "" {
		t.Errorf("@self app1 mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{a}, e.list(e.do("GET", "/social/rest/activities/@me/@all/app1", u.token, nil))); diff != "" {
		t.Errorf("@all app1 mismatch (-want +got):\n%s", diff)
	}
	if got := e.list(e.do("GET", "/social/rest/activities/@me/@self/@app", u.token, nil)); len(got) != 2 {
		t.Errorf("@app: %v", got)
	}
}
