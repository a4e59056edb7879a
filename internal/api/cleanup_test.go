package api_test

import (
	"testing"
)

// Deleting an activity takes it from every feed at once, and its cleanup
// job then removes its likes, comments and the notifications that point at
// it, through the tasks emulator. Notifications used to stay for good.
func TestDeleteRemovesEverythingThatPointsAtIt(t *testing.T) {
	e := newEnv(t)
	alice, bob := e.register("alice"), e.register("bob")
	id := e.post(alice, "hello @bob")
	if r := e.do("POST", "/social/rest/likes/"+id, bob.token, nil); r.status != 200 {
		t.Fatalf("like: %d %s", r.status, r.raw)
	}
	if r := e.do("POST", "/social/rest/comments/"+id, bob.token, map[string]string{"text": "hi"}); r.status != 201 {
		t.Fatalf("comment: %d %s", r.status, r.raw)
	}
	pointing := func(u user) int {
		r := e.do("GET", "/social/rest/notifications/@me", u.token, nil)
		n := 0
		items, _ := r.body["list"].([]any)
		for _, it := range items {
			if it.(map[string]any)["activityId"] == id {
				n++
			}
		}
		return n
	}
	e.Eventually("the mention, like and comment notifications", func() bool { return pointing(bob) == 1 && pointing(alice) == 2 })
	if r := e.do("DELETE", "/social/rest/activities/@me/@self/@app/"+id, alice.token, nil); r.status != 204 {
		t.Fatalf("delete: %d %s", r.status, r.raw)
	}
	e.wantError(e.do("GET", "/social/rest/likes/"+id, bob.token, nil), 404)
	e.Eventually("no notification points at the deleted activity", func() bool { return pointing(bob) == 0 && pointing(alice) == 0 })
}
