package api_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// A person pins up to five of their own public or unlisted posts to the
// top of their page: @pinned lists them, the last pinned first, to anyone
// who may see them, and every view of a pinned post says so.
func TestPins(t *testing.T) {
	e := newEnv(t)
	ann, bob := e.register("ann"), e.register("bob")
	post := func(title, visibility string) string { return e.postFor(ann, title, visibility) }
	pub, unl, fol := post("public", "public"), post("unlisted", "unlisted"), post("followers", "followers")
	pin := func(u user, id string) resp { return e.do("POST", "/social/rest/pins/"+id, u.token, nil) }
	for _, id := range []string{pub, unl} {
		if r := pin(ann, id); r.status != 200 || e.entry(r)["pinned"] != true {
			t.Fatalf("pin %s: %d %s", id, r.status, r.raw)
		}
	}
	if r := pin(ann, pub); r.status != 200 || e.entry(r)["pinned"] != true {
		t.Errorf("pinning again: %d %s", r.status, r.raw)
	}
	e.wantError(pin(ann, fol), 403)   // followers-only
	e.wantError(pin(bob, pub), 403)   // someone else's
	e.wantError(pin(bob, fol), 404)   // hidden from bob
	e.wantError(pin(ann, "123"), 404) // never was
	rp := e.do("POST", "/social/rest/reposts/"+pub, bob.token, nil)
	e.wantError(pin(bob, e.entry(rp)["id"].(string)), 403) // a repost

	pinned := func(u user) []string { return e.feed(u, ann.id+"/@pinned") }
	if got := pinned(bob); !cmp.Equal(got, []string{unl, pub}) {
		t.Errorf("@pinned to bob: %v, want %v", got, []string{unl, pub})
	}
	for _, it := range e.feedItems(bob, ann.id+"/@self") {
		if want := it["id"] == pub || it["id"] == unl; (it["pinned"] == true) != want {
			t.Errorf("on ann's page, %s pinned: %v", it["id"], it["pinned"])
		}
	}
	// At most five; a deleted one frees its place.
	more := []string{post("3", "public"), post("4", "public"), post("5", "public")}
	for _, id := range more {
		if r := pin(ann, id); r.status != 200 {
			t.Fatalf("pin: %d %s", r.status, r.raw)
		}
	}
	sixth := post("6", "public")
	e.wantError(pin(ann, sixth), 409)
	if r := e.do("DELETE", "/social/rest/activities/@me/@self/@app/"+more[0], ann.token, nil); r.status != 204 {
		t.Fatal(r.status, string(r.raw))
	}
	if got, want := pinned(bob), []string{more[2], more[1], unl, pub}; !cmp.Equal(got, want) {
		t.Errorf("@pinned after a delete: %v, want %v", got, want)
	}
	if r := pin(ann, sixth); r.status != 200 {
		t.Errorf("pin after a delete: %d %s", r.status, r.raw)
	}
	e.wantError(e.do("DELETE", "/social/rest/pins/"+more[0], ann.token, nil), 404) // gone: nothing to answer
	// Unpinning.
	if r := e.do("DELETE", "/social/rest/pins/"+pub, ann.token, nil); r.status != 200 || e.entry(r)["pinned"] != nil {
		t.Errorf("unpin: %d %s", r.status, r.raw)
	}
	if got, want := pinned(ann), []string{sixth, more[2], more[1], unl}; !cmp.Equal(got, want, cmpopts.EquateEmpty()) {
		t.Errorf("@pinned after an unpin: %v, want %v", got, want)
	}
	e.wantError(e.do("GET", "/social/rest/activities/"+ann.id+"/@pinned?startIndex=2", bob.token, nil), 400)
	// By JSON-RPC.
	res := e.doBatch(bob, `[{"method":"activities.get","id":"p","params":{"userId":"`+ann.id+`","groupId":"@pinned"}}]`)
	if got, _ := res[0]["result"].(map[string]any); got == nil || len(got["list"].([]any)) != 4 {
		t.Errorf("activities.get @pinned: %v", res[0])
	}
}
