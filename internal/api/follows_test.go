package api_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFollowAndLists(t *testing.T) {
	e := newEnv(t)
	alice, bob, carol, dave := e.register("alice"), e.register("bob"), e.register("carol"), e.register("dave")

	r := e.do("POST", "/social/rest/people/@me/@friends", alice.token, map[string]string{"id": bob.id})
	if r.status != 201 || e.entry(r)["id"] != bob.id {
		t.Fatalf("follow: %d %s", r.status, r.raw)
	}
	// Idempotent: again is fine and counts once.
	e.follow(alice, bob.id)
	e.follow(alice, "@username:carol")
	e.follow(alice, dave.id)
	e.follow(carol, bob.id)
	e.follow(dave, bob.id)

	self := func(u user, who string) map[string]any {
		return e.entry(e.do("GET", "/social/rest/people/"+who+"/@self", u.token, nil))
	}
	if a := self(alice, "@me"); a["followingCount"] != 3.0 || a["followersCount"] != 0.0 {
		t.Errorf("alice counts: %v", a)
	}
	if b := self(alice, bob.id); b["followersCount"] != 3.0 || b["followingCount"] != 0.0 {
		t.Errorf("bob counts: %v", b)
	}

	// Newest follow first, paged by cursor.
	if diff := cmp.Diff([]string{dave.id, carol.id, bob.id}, e.list(e.do("GET", "/social/rest/people/@me/@friends", alice.token, nil))); diff != "" {
		t.Errorf("@friends mismatch (-want +got):\n%s", diff)
	}
	page1 := e.do("GET", "/social/rest/people/"+bob.id+"/@followers?count=2", alice.token, nil)
	if diff := cmp.Diff([]string{dave.id, carol.id}, e.list(page1)); diff != "" {
		t.Errorf("@followers page 1 mismatch (-want +got):\n%s", diff)
	}
	if page1.body["totalResults"] != 3.0 || page1.body["itemsPerPage"] != 2.0 {
		t.Errorf("page 1 totals: %s", page1.raw)
	}
	next, _ := page1.body["nextCursor"].(string)
	if next == "" {
		t.Fatalf("no nextCursor on page 1: %s", page1.raw)
	}
	page2 := e.do("GET", "/social/rest/people/"+bob.id+"/@followers?count=2&cursor="+next, alice.token, nil)
	if diff := cmp.Diff([]string{alice.id}, e.list(page2)); diff != "" {
		t.Errorf("@followers page 2 mismatch (-want +got):\n%s", diff)
	}
	if _, ok := page2.body["nextCursor"]; ok {
		t.Errorf("last page has a nextCursor: %s", page2.raw)
	}
	offset := e.do("GET", "/social/rest/people/"+bob.id+"/@followers?count=2&startIndex=2", alice.token, nil)
	if diff := cmp.Diff([]string{alice.id}, e.list(offset)); diff != "" || offset.body["startIndex"] != 2.0 {
		t.Errorf("startIndex pageParams: %s", offset.raw)
	}

	// Unfollow.
	if r := e.do("DELETE", "/social/rest/people/@me/@friends/"+bob.id, alice.token, nil); r.status != 204 {
		t.Fatalf("unfollow: %d %s", r.status, r.raw)
	}
	if r := e.do("DELETE", "/social/rest/people/@me/@friends/"+bob.id, alice.token, nil); r.status != 204 {
		t.Errorf("second unfollow: %d %s", r.status, r.raw)
	}
	if b := self(alice, bob.id); b["followersCount"] != 2.0 {
		t.Errorf("bob followersCount after unfollow: %v", b["followersCount"])
	}
	if a := self(alice, "@me"); a["followingCount"] != 2.0 {
		t.Errorf("alice followingCount after unfollow: %v", a["followingCount"])
	}
}

func TestFollowErrors(t *testing.T) {
	e := newEnv(t)
	alice, bob := e.register("alice"), e.register("bob")
	tests := []struct {
		name, method, path, token string
		body                      any
		status                    int
	}{
		{"self", "POST", "/social/rest/people/@me/@friends", alice.token, map[string]string{"id": alice.id}, 400},
		{"self by name", "POST", "/social/rest/people/@me/@friends", alice.token, map[string]string{"id": "@me"}, 400},
		{"unknown id", "POST", "/social/rest/people/@me/@friends", alice.token, map[string]string{"id": "12345"}, 404},
		{"unknown name", "POST", "/social/rest/people/@me/@friends", alice.token, map[string]string{"id": "@username:ghost"}, 404},
		{"not an id", "POST", "/social/rest/people/@me/@friends", alice.token, map[string]string{"id": "x y"}, 400},
		{"no id", "POST", "/social/rest/people/@me/@friends", alice.token, `{}`, 400},
		{"id not a string", "POST", "/social/rest/people/@me/@friends", alice.token, `{"id": 5}`, 400},
		{"copyLimit too big", "POST", "/social/rest/people/@me/@friends?copyLimit=1001", alice.token, map[string]string{"id": bob.id}, 400},
		{"copyLimit negative", "POST", "/social/rest/people/@me/@friends?copyLimit=-1", alice.token, map[string]string{"id": bob.id}, 400},
		{"copyLimit not a number", "POST", "/social/rest/people/@me/@friends?copyLimit=all", alice.token, map[string]string{"id": bob.id}, 400},
		{"for someone else", "POST", "/social/rest/people/" + bob.id + "/@friends", alice.token, map[string]string{"id": alice.id}, 403},
		{"wrong selector", "POST", "/social/rest/people/@me/@followers", alice.token, map[string]string{"id": bob.id}, 404},
		{"no token", "POST", "/social/rest/people/@me/@friends", "", map[string]string{"id": bob.id}, 401},
		{"unfollow for someone else", "DELETE", "/social/rest/people/" + bob.id + "/@friends/" + alice.id, alice.token, nil, 403},
		{"unfollow bad keepHistory", "DELETE", "/social/rest/people/@me/@friends/" + bob.id + "?keepHistory=maybe", alice.token, nil, 400},
		{"unfollow no token", "DELETE", "/social/rest/people/@me/@friends/" + bob.id, "", nil, 401},
		{"list bad count", "GET", "/social/rest/people/@me/@friends?count=0", alice.token, nil, 400},
		{"list count too big", "GET", "/social/rest/people/@me/@friends?count=101", alice.token, nil, 400},
		{"list count not a number", "GET", "/social/rest/people/@me/@friends?count=ten", alice.token, nil, 400},
		{"list bad cursor", "GET", "/social/rest/people/@me/@friends?cursor=garbage", alice.token, nil, 400},
		{"list negative startIndex", "GET", "/social/rest/people/@me/@friends?startIndex=-1", alice.token, nil, 400},
		{"list unknown user", "GET", "/social/rest/people/12345/@followers", alice.token, nil, 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.t = t
			e.wantError(e.do(tt.method, tt.path, tt.token, tt.body), tt.status)
		})
	}
	e.t = t
	// Nothing changed.
	if a := e.entry(e.do("GET", "/social/rest/people/@me/@self", alice.token, nil)); a["followingCount"] != 0.0 || a["followersCount"] != 0.0 {
		t.Errorf("counts changed by refused requests: %v", a)
	}
}

func TestCursorOfOneListRefusedByAnother(t *testing.T) {
	e := newEnv(t)
	alice, bob, carol := e.register("alice"), e.register("bob"), e.register("carol")
	e.follow(alice, bob.id)
	e.follow(alice, carol.id)
	r := e.do("GET", "/social/rest/people/@me/@friends?count=1", alice.token, nil)
	next, _ := r.body["nextCursor"].(string)
	if next == "" {
		t.Fatalf("no cursor: %s", r.raw)
	}
	e.wantError(e.do("GET", "/social/rest/people/"+bob.id+"/@followers?count=1&cursor="+next, alice.token, nil), 400)
}
