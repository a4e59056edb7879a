package api_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func (e *env) createGroup(u user, title, policy string) string {
	e.t.Helper()
	r := e.do("POST", "/social/rest/groups/@me", u.token, map[string]string{"title": title, "joinPolicy": policy})
	if r.status != 201 {
		e.t.Fatalf("create group: %d %s", r.status, r.raw)
	}
	return e.entry(r)["id"].(string)
}

func TestGroups(t *testing.T) {
	e := newEnv(t)
	owner, ann, ben := e.register("owner"), e.register("ann"), e.register("ben")

	r := e.do("POST", "/social/rest/groups/@me", owner.token, map[string]string{"title": " Go fans ", "description": "gophers"})
	if r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.raw)
	}
	g := e.entry(r)
	if g["title"] != "Go fans" || g["ownerId"] != owner.id || g["joinPolicy"] != "open" || g["membersCount"] != 1.0 {
		t.Errorf("group = %v", g)
	}
	open := g["id"].(string)
	closed := e.createGroup(owner, "Inner circle", "closed")

	// Join an open group, twice.
	if r := e.do("POST", "/social/rest/groups/@all/"+open+"/members", ann.token, map[string]string{"id": "@me"}); r.status != 201 || e.entry(r)["membersCount"] != 2.0 {
		t.Errorf("join: %d %s", r.status, r.raw)
	}
	if r := e.do("POST", "/social/rest/groups/@all/"+open+"/members", ann.token, map[string]string{"id": "@me"}); r.status != 200 || e.entry(r)["membersCount"] != 2.0 {
		t.Errorf("join again: %d %s", r.status, r.raw)
	}
	// A closed group: only by the owner's invitation, which the invitee
	// accepts.
	e.wantError(e.do("POST", "/social/rest/groups/@all/"+closed+"/members", ann.token, map[string]string{"id": "@me"}), 403)
	e.wantError(e.do("POST", "/social/rest/groups/@all/"+open+"/members", ann.token, map[string]string{"id": ben.id}), 403)
	if r := e.do("POST", "/social/rest/groups/@all/"+closed+"/members", owner.token, map[string]string{"id": ben.id}); r.status != 202 || e.entry(r)["membersCount"] != 1.0 {
		t.Errorf("owner invites to closed: %d %s", r.status, r.raw)
	}
	if r := e.do("POST", "/social/rest/groups/@all/"+closed+"/members", ben.token, map[string]string{"id": "@me"}); r.status != 201 || e.entry(r)["membersCount"] != 2.0 {
		t.Errorf("invitee accepts: %d %s", r.status, r.raw)
	}

	// Members and visibility.
	if diff := cmp.Diff([]string{ann.id, owner.id}, e.list(e.do("GET", "/social/rest/people/@me/"+open, ben.token, nil))); diff != "" {
		t.Errorf("open members mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{ben.id, owner.id}, e.list(e.do("GET", "/social/rest/people/@me/"+closed, ben.token, nil))); diff != "" {
		t.Errorf("closed members mismatch (-want +got):\n%s", diff)
	}
	e.wantError(e.do("GET", "/social/rest/people/@me/"+closed, ann.token, nil), 403)
	e.wantError(e.do("GET", "/social/rest/activities/@me/"+closed, ann.token, nil), 403)
	if r := e.do("GET", "/social/rest/activities/@me/"+closed, ben.token, nil); r.status != 200 {
		t.Errorf("member reads closed feed: %d %s", r.status, r.raw)
	}

	// A user's groups, newest membership first.
	if diff := cmp.Diff([]string{closed, open}, e.list(e.do("GET", "/social/rest/groups/@me", owner.token, nil))); diff != "" {
		t.Errorf("owner's groups mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{open}, e.list(e.do("GET", "/social/rest/groups/"+ann.id, ben.token, nil))); diff != "" {
		t.Errorf("ann's groups mismatch (-want +got):\n%s", diff)
	}
	if got := e.entry(e.do("GET", "/social/rest/groups/@all/"+closed, ben.token, nil)); got["title"] != "Inner circle" {
		t.Errorf("get group: %v", got)
	}
	// A closed group is not shown to others, by id or in lists.
	e.wantError(e.do("GET", "/social/rest/groups/@all/"+closed, ann.token, nil), 403)
	if diff := cmp.Diff([]string{open}, e.list(e.do("GET", "/social/rest/groups/"+owner.id, ann.token, nil))); diff != "" {
		t.Errorf("owner's groups as ann sees them (-want +got):\n%s", diff)
	}
	if r := e.do("GET", "/social/rest/groups/"+owner.id+"?count=1", ann.token, nil); r.body["totalResults"] != 1.0 {
		t.Errorf("owner's groups as ann counts them: %s", r.raw)
	}

	// Leaving and removal.
	e.wantError(e.do("DELETE", "/social/rest/groups/@all/"+open+"/members/"+owner.id, owner.token, nil), 409)
	e.wantError(e.do("DELETE", "/social/rest/groups/@all/"+closed+"/members/"+ben.id, ann.token, nil), 403)
	if r := e.do("DELETE", "/social/rest/groups/@all/"+open+"/members/@me", ann.token, nil); r.status != 204 {
		t.Errorf("leave: %d %s", r.status, r.raw)
	}
	if r := e.do("DELETE", "/social/rest/groups/@all/"+closed+"/members/"+ben.id, owner.token, nil); r.status != 204 {
		t.Errorf("owner removes: %d %s", r.status, r.raw)
	}
	for _, id := range []string{open, closed} {
		if g := e.entry(e.do("GET", "/social/rest/groups/@all/"+id, owner.token, nil)); g["membersCount"] != 1.0 {
			t.Errorf("group %s membersCount %v, want 1", id, g["membersCount"])
		}
	}
}

func TestGroupErrors(t *testing.T) {
	e := newEnv(t)
	u := e.register("someone")
	tests := []struct {
		name, method, path string
		body               any
		status             int
	}{
		{"no title", "POST", "/social/rest/groups/@me", `{"title":"  "}`, 400},
		{"long title", "POST", "/social/rest/groups/@me", map[string]string{"title": strings.Repeat("t", 101)}, 400},
		{"long description", "POST", "/social/rest/groups/@me", map[string]string{"title": "t", "description": strings.Repeat("d", 1001)}, 400},
		{"bad policy", "POST", "/social/rest/groups/@me", map[string]string{"title": "t", "joinPolicy": "secret"}, 400},
		{"title not a string", "POST", "/social/rest/groups/@me", `{"title": ["x"]}`, 400},
		{"for someone else", "POST", "/social/rest/groups/12345", map[string]string{"title": "t"}, 403},
		{"unknown group", "GET", "/social/rest/groups/@all/12345", nil, 404},
		{"bad group id", "GET", "/social/rest/groups/@all/nope", nil, 404},
		{"join unknown", "POST", "/social/rest/groups/@all/12345/members", map[string]string{"id": "@me"}, 404},
		{"join malformed", "POST", "/social/rest/groups/@all/12345/members", `{"id":`, 400},
		{"add unknown person", "POST", "/social/rest/groups/@all/12345/members", map[string]string{"id": "424242"}, 404},
		{"leave unknown", "DELETE", "/social/rest/groups/@all/12345/members/@me", nil, 404},
		{"unknown group feed", "GET", "/social/rest/activities/@me/12345", nil, 404},
		{"unknown group members", "GET", "/social/rest/people/@me/12345", nil, 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.t = t
			e.wantError(e.do(tt.method, tt.path, u.token, tt.body), tt.status)
		})
	}
	e.t = t
	if got := e.list(e.do("GET", "/social/rest/groups/@me", u.token, nil)); len(got) != 0 {
		t.Errorf("refused requests created groups: %v", got)
	}
}
