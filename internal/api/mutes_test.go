package api_test

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// A mute quiets someone without telling them: their activities leave the
// muter's feeds (but their own page), their notifications stop and those
// from before are not shown, and the muter can list and undo mutes.
func TestMutes(t *testing.T) {
	e := newEnv(t)
	alice, bob, carol := e.register("alice"), e.register("bob"), e.register("carol")
	e.follow(alice, bob.id)
	e.follow(alice, carol.id)
	mine := e.post(alice, "alice's")
	b1, c1 := e.post(bob, "b1"), e.post(carol, "c1")
	b2 := e.post(bob, "hi @alice")
	e.Settle()
	if got := e.notificationTypes(alice); !cmp.Equal(got, []string{"mention"}) {
		t.Fatalf("alice's notifications before the mute: %v, want bob's mention", got)
	}

	r := e.do("POST", "/social/rest/people/@me/@muted", alice.token, map[string]string{"id": bob.id})
	if r.status != 201 || e.entry(r)["id"] != bob.id || e.entry(r)["mutedUntil"] != nil {
		t.Fatalf("mute: %d %s", r.status, r.raw)
	}
	if got := e.feed(alice, "@me/@friends"); !cmp.Equal(got, []string{c1, mine}) {
		t.Errorf("alice's home with bob muted: %v, want %v", got, []string{c1, mine})
	}
	if got := e.feed(alice, "@all/@all"); slices.Contains(got, b1) || slices.Contains(got, b2) || !slices.Contains(got, c1) {
		t.Errorf("@all read by alice with bob muted: %v", got)
	}
	if got := e.feed(alice, "@me/@mentions"); len(got) != 0 {
		t.Errorf("alice's mentions with bob muted: %v", got)
	}
	if got := e.feed(alice, bob.id+"/@self"); !cmp.Equal(got, []string{b2, b1}) {
		t.Errorf("bob's own page read by alice: %v, want both his posts", got)
	}
	// His notifications stop, and those from before are not shown or
	// counted; he is not told.
	if r := e.do("POST", "/social/rest/likes/"+mine, bob.token, nil); r.status != 200 {
		t.Fatalf("like: %d %s", r.status, r.raw)
	}
	e.Settle()
	n := e.do("GET", "/social/rest/notifications/@me", alice.token, nil)
	for _, it := range n.body["list"].([]any) {
		if actor, _ := it.(map[string]any)["actor"].(map[string]any); actor != nil && actor["id"] == bob.id {
			t.Errorf("alice sees a notification from bob: %v", it)
		}
	}
	if n.body["unreadCount"] != float64(0) {
		t.Errorf("alice's unreadCount %v, want 0", n.body["unreadCount"])
	}
	if got := e.notificationTypes(bob); !cmp.Equal(got, []string{"follow"}) {
		t.Errorf("bob's notifications: %v, want alice's follow alone", got)
	}
	// The list, to alice alone.
	if got := e.list(e.do("GET", "/social/rest/people/@me/@muted", alice.token, nil)); !cmp.Equal(got, []string{bob.id}) {
		t.Errorf("alice's mutes: %v", got)
	}
	if r := e.do("GET", "/social/rest/people/@me/@muted/"+bob.id, alice.token, nil); r.status != 200 {
		t.Errorf("is bob muted: %d", r.status)
	}
	e.wantError(e.do("GET", "/social/rest/people/@me/@muted/"+carol.id, alice.token, nil), 404)
	e.wantError(e.do("GET", "/social/rest/people/"+alice.id+"/@muted", bob.token, nil), 403)

	// Refusals change nothing.
	e.wantError(e.do("POST", "/social/rest/people/@me/@muted", alice.token, map[string]string{"id": alice.id}), 400)
	e.wantError(e.do("POST", "/social/rest/people/@me/@muted", alice.token, map[string]any{"id": carol.id, "duration": -1}), 400)
	e.wantError(e.do("POST", "/social/rest/people/@me/@muted", alice.token, map[string]any{"id": carol.id, "duration": "an hour"}), 400)
	e.wantError(e.do("POST", "/social/rest/people/@me/@muted", alice.token, map[string]any{"id": carol.id, "duration": 400_000_000}), 400)
	e.wantError(e.do("POST", "/social/rest/people/@me/@muted", alice.token, map[string]any{"id": "999999999"}), 404)
	e.wantError(e.do("POST", "/social/rest/people/@me/@muted?copyLimit=3", alice.token, map[string]any{"id": carol.id}), 400)
	e.wantError(e.do("POST", "/social/rest/people/@me/@friends", alice.token, map[string]any{"id": carol.id, "duration": 60}), 400)
	e.wantError(e.do("POST", "/social/rest/people/"+bob.id+"/@muted", alice.token, map[string]any{"id": carol.id}), 403)
	if got := e.list(e.do("GET", "/social/rest/people/@me/@muted", alice.token, nil)); !cmp.Equal(got, []string{bob.id}) {
		t.Errorf("alice's mutes after the refusals: %v", got)
	}

	// For a while, by JSON-RPC: it says until when.
	before := time.Now()
	res := e.doBatch(alice, `[{"method":"people.create","id":"m","params":{"userId":"@viewer","groupId":"@muted","id":"`+carol.id+`","duration":3600}},
		{"method":"people.get","id":"l","params":{"userId":"@viewer","groupId":"@muted"}}]`)
	got, _ := res[0]["result"].(map[string]any)
	until, err := time.Parse(time.RFC3339, str(got["mutedUntil"]))
	if got == nil || got["id"] != carol.id || err != nil || until.Before(before.Add(59*time.Minute)) || until.After(time.Now().Add(61*time.Minute)) {
		t.Errorf("people.create @muted for an hour: %v", res[0])
	}
	if l, _ := res[1]["result"].(map[string]any); l == nil || len(l["list"].([]any)) != 2 {
		t.Errorf("people.get @muted: %v", res[1])
	}
	if got := e.feed(alice, "@me/@friends"); !cmp.Equal(got, []string{mine}) {
		t.Errorf("alice's home with both muted: %v", got)
	}

	// Undone, everything is back: the copies never went.
	for _, u := range []user{bob, carol} {
		if r := e.do("DELETE", "/social/rest/people/@me/@muted/"+u.id, alice.token, nil); r.status != 204 {
			t.Fatalf("unmute: %d %s", r.status, r.raw)
		}
	}
	if got := e.feed(alice, "@me/@friends"); !cmp.Equal(got, []string{b2, c1, b1, mine}) {
		t.Errorf("alice's home after the unmutes: %v", got)
	}
	if got := e.list(e.do("GET", "/social/rest/people/@me/@muted", alice.token, nil)); len(got) != 0 {
		t.Errorf("alice's mutes after the unmutes: %v", got)
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
