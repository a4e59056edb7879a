package api_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A locked account decides who follows it: a follow is a request, listed
// on both sides and notified; approval starts the follow with its copies,
// rejection and withdrawal end it, a block ends it, and unlocking approves
// what is pending. Until then the requester has none of the followers-only
// posts, by id or at home.
func TestLockedAccounts(t *testing.T) {
	e := newEnv(t)
	bob, alice, carol, dave, erin, frank := e.register("bob"), e.register("alice"), e.register("carol"), e.register("dave"), e.register("erin"), e.register("frank")

	e.wantError(e.do("PUT", "/social/rest/people/@me/@self", bob.token, map[string]any{}), http.StatusBadRequest)
	e.wantError(e.do("PUT", "/social/rest/people/"+alice.id+"/@self", bob.token, map[string]any{"locked": true}), http.StatusForbidden)
	e.wantError(e.do("PUT", "/social/rest/people/@me/@self", bob.token, map[string]any{"locked": true, "person": map[string]any{"locked": false}}), http.StatusBadRequest)
	// A lock and a profile are one change: a picture that is not bob's
	// refuses the lock with it.
	e.wantError(e.do("PUT", "/social/rest/people/@me/@self", bob.token, map[string]any{"locked": true, "avatar": "1234567"}), http.StatusNotFound)
	if p := e.entry(e.do("GET", "/social/rest/people/@me/@self", bob.token, nil)); p["locked"] != false {
		t.Fatalf("locked by a refused change: %v", p)
	}
	if p := e.entry(e.do("PUT", "/social/rest/people/@me/@self", bob.token, map[string]any{"locked": true, "displayName": "Bob"})); p["locked"] != true || p["displayName"] != "Bob" {
		t.Fatalf("lock: %v", p)
	}
	r := e.do("POST", "/social/rest/activities/@me/@self", bob.token, map[string]string{"title": "for my followers", "visibility": "followers"})
	if r.status != 201 {
		t.Fatalf("post: %d %s", r.status, r.raw)
	}
	secret := e.entry(r)["id"].(string)
	byID := "/social/rest/activities/" + bob.id + "/@self/@app/" + secret

	request := func(u user) {
		t.Helper()
		r := e.do("POST", "/social/rest/people/@me/@friends", u.token, map[string]string{"id": bob.id})
		if p := e.entry(r); r.status != http.StatusAccepted || p["requested"] != true || p["id"] != bob.id {
			t.Fatalf("%s's follow of a locked account: %d %s", u.name, r.status, r.raw)
		}
	}
	for _, u := range []user{alice, carol, dave, erin, frank} {
		request(u)
	}
	request(alice) // asking again is one request
	e.Settle()

	if got := e.list(e.do("GET", "/social/rest/people/@me/@requests", bob.token, nil)); !cmp.Equal(got, []string{frank.id, erin.id, dave.id, carol.id, alice.id}) {
		t.Errorf("bob's requests: %v", got)
	}
	if got := e.list(e.do("GET", "/social/rest/people/@me/@requested", alice.token, nil)); !cmp.Equal(got, []string{bob.id}) {
		t.Errorf("alice's sent requests: %v", got)
	}
	if p := e.entry(e.do("GET", "/social/rest/people/@me/@requested/"+bob.id, alice.token, nil)); p["requestedAt"] == nil {
		t.Errorf("alice's request: %v", p)
	}
	e.wantError(e.do("GET", "/social/rest/people/"+bob.id+"/@requests", alice.token, nil), http.StatusForbidden)
	if got := e.notificationTypes(bob); len(got) != 5 || slices.ContainsFunc(got, func(s string) bool { return s != "follow_request" }) {
		t.Errorf("bob's notifications: %v, want 5 follow_request", got)
	}
	pending := func(u user) {
		t.Helper()
		if got := e.list(e.do("GET", "/social/rest/people/@me/@friends", u.token, nil)); len(got) != 0 {
			t.Errorf("%s follows %v while the request is pending", u.name, got)
		}
		e.wantError(e.do("GET", byID, u.token, nil), http.StatusNotFound)
		if got := e.feed(u, "@me/@friends"); slices.Contains(got, secret) {
			t.Errorf("%s has the followers-only post at home while pending", u.name)
		}
	}
	pending(alice)
	if p := e.entry(e.do("GET", "/social/rest/people/"+bob.id+"/@self", alice.token, nil)); p["followersCount"] != 0.0 || p["locked"] != true {
		t.Errorf("bob as alice sees him: %v", p)
	}

	// The export lists what is pending, both ways.
	var exported struct {
		Requested []struct{ ID string } `json:"followRequested"`
	}
	if r := e.do("GET", "/auth/account/export", alice.token, nil); r.status != 200 || json.Unmarshal(r.raw, &exported) != nil || len(exported.Requested) != 1 || exported.Requested[0].ID != bob.id {
		t.Errorf("alice's export: %d %.300s", r.status, r.raw)
	}

	// Carol withdraws, bob rejects dave, and blocks frank: each request
	// ends, with its notification.
	if r := e.do("DELETE", "/social/rest/people/@me/@friends/"+bob.id, carol.token, nil); r.status != 204 {
		t.Fatalf("withdraw: %d %s", r.status, r.raw)
	}
	if r := e.do("DELETE", "/social/rest/people/@me/@requests/"+dave.id, bob.token, nil); r.status != 204 {
		t.Fatalf("reject: %d %s", r.status, r.raw)
	}
	if r := e.do("DELETE", "/social/rest/people/@me/@requests/"+dave.id, bob.token, nil); r.status != 204 {
		t.Errorf("reject again: %d %s", r.status, r.raw) // as an unfollow, nothing to do
	}
	if r := e.do("POST", "/social/rest/people/@me/@blocked", bob.token, map[string]string{"id": frank.id}); r.status != 201 {
		t.Fatalf("block: %d %s", r.status, r.raw)
	}
	if got := e.list(e.do("GET", "/social/rest/people/@me/@requests", bob.token, nil)); !cmp.Equal(got, []string{erin.id, alice.id}) {
		t.Errorf("bob's requests after a withdrawal, a rejection and a block: %v", got)
	}
	if got := e.notificationTypes(bob); len(got) != 2 {
		t.Errorf("bob's notifications after them: %v, want the 2 pending", got)
	}
	pending(dave)

	// Approval: alice follows, with the followers-only post at home.
	e.wantError(e.do("POST", "/social/rest/people/@me/@followers", bob.token, map[string]string{"id": carol.id}), http.StatusNotFound)
	r = e.do("POST", "/social/rest/people/@me/@followers", bob.token, map[string]string{"id": alice.id})
	if r.status != 201 || e.entry(r)["id"] != alice.id {
		t.Fatalf("approve: %d %s", r.status, r.raw)
	}
	if r := e.do("POST", "/social/rest/people/@me/@followers", bob.token, map[string]string{"id": alice.id}); r.status != 201 {
		t.Errorf("approve again: %d %s", r.status, r.raw) // a follower already
	}
	e.Eventually("the post at alice's home", func() bool { return slices.Contains(e.feed(alice, "@me/@friends"), secret) })
	if r := e.do("GET", byID, alice.token, nil); r.status != 200 {
		t.Errorf("alice reads the post by id after approval: %d", r.status)
	}
	if p := e.entry(e.do("GET", "/social/rest/people/"+bob.id+"/@self", alice.token, nil)); p["followersCount"] != 1.0 {
		t.Errorf("bob's followers after approval: %v", p["followersCount"])
	}

	// Unlocking approves what is pending: erin.
	if p := e.entry(e.do("PUT", "/social/rest/people/@me/@self", bob.token, map[string]any{"person": map[string]any{"locked": false}})); p["locked"] != false {
		t.Fatalf("unlock: %v", p)
	}
	e.Eventually("erin following after the unlock", func() bool {
		return cmp.Equal(e.list(e.do("GET", "/social/rest/people/@me/@friends", erin.token, nil)), []string{bob.id})
	})
	e.Eventually("the post at erin's home", func() bool { return slices.Contains(e.feed(erin, "@me/@friends"), secret) })
	if got := e.list(e.do("GET", "/social/rest/people/@me/@requests", bob.token, nil)); len(got) != 0 {
		t.Errorf("requests left after the unlock: %v", got)
	}
	// Unlocked, a follow is a follow.
	e.follow(carol, bob.id)

	// JSON-RPC: people.update locks, people.get lists the requests, and
	// people.create under @followers approves.
	got := e.doBatch(bob, `[{"method":"people.update","id":"l","params":{"userId":"@me","groupId":"@self","person":{"locked":true}}}]`)
	if p, _ := got[0]["result"].(map[string]any); p == nil || p["locked"] != true {
		t.Fatalf("people.update: %v", got)
	}
	request(dave)
	got = e.doBatch(bob, `[{"method":"people.get","id":"r","params":{"userId":"@me","groupId":"@requests"}},`+
		`{"method":"people.create","id":"a","params":{"userId":"@me","groupId":"@followers","id":"`+dave.id+`"}}]`)
	if l, _ := got[0]["result"].(map[string]any)["list"].([]any); len(l) != 1 || l[0].(map[string]any)["id"] != dave.id {
		t.Errorf("people.get @requests: %v", got[0])
	}
	if p, _ := got[1]["result"].(map[string]any); p == nil || p["id"] != dave.id {
		t.Errorf("people.create @followers: %v", got[1])
	}
}
