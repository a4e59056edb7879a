package api_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A post may answer another; the thread reads as one lookup up and one
// query down, as its reader may see it; a reply reaches a follower's home
// only when they also follow the person answered (or are that person);
// the person answered is told; a deleted post leaves its replies and
// their thread standing.
func TestRepliesAndThreads(t *testing.T) {
	e := newEnv(t)
	ann, bob, cat, dan := e.register("ann"), e.register("bob"), e.register("cat"), e.register("dan")
	// cat follows bob and ann; dan follows bob alone; ann follows bob.
	e.follow(cat, bob.id)
	e.follow(cat, ann.id)
	e.follow(dan, bob.id)
	e.follow(ann, bob.id)
	reply := func(u user, to, title string, extra map[string]any) string {
		t.Helper()
		body := map[string]any{"title": title, "inReplyTo": to}
		for k, v := range extra {
			body[k] = v
		}
		r := e.do("POST", "/social/rest/activities/@me/@self", u.token, body)
		if r.status != 201 || e.entry(r)["inReplyTo"] != to {
			t.Fatalf("reply: %d %s", r.status, r.raw)
		}
		return e.entry(r)["id"].(string)
	}
	root := e.post(ann, "a question")
	r1 := reply(bob, root, "an answer", nil)    // bob answers ann
	r2 := reply(ann, r1, "thanks", nil)         // ann answers bob
	r3 := reply(bob, r2, "welcome", nil)        // bob answers ann again
	r4 := reply(bob, r3, "one more thing", nil) // bob answers himself
	side := reply(cat, root, "me too", map[string]any{"visibility": "followers"})
	e.Settle()

	// Home: cat follows both, so has bob's replies to ann; dan follows
	// bob alone, so has bob's answer to himself alone; ann is answered.
	home := func(u user) []string { return e.feed(u, "@me/@friends") }
	if got := home(cat); !slices.Contains(got, r1) || !slices.Contains(got, r3) || !slices.Contains(got, r4) {
		t.Errorf("cat's home %v lacks bob's replies", got)
	}
	if got := home(dan); slices.Contains(got, r1) || slices.Contains(got, r3) || !slices.Contains(got, r4) {
		t.Errorf("dan's home %v: want bob's reply to himself alone", got)
	}
	if got := home(ann); !slices.Contains(got, r1) || !slices.Contains(got, r3) {
		t.Errorf("ann's home %v lacks the replies to her", got)
	}
	// bob's page keeps them all, to anyone.
	if got := e.feed(dan, bob.id+"/@self"); !slices.Contains(got, r1) || !slices.Contains(got, r3) {
		t.Errorf("bob's page to dan %v", got)
	}
	// A later follow of bob by someone following neither: backfill
	// leaves out bob's replies to ann.
	eve := e.register("eve")
	r := e.do("POST", "/social/rest/people/@me/@friends?copyLimit=10", eve.token, map[string]string{"id": bob.id})
	if r.status != 201 {
		t.Fatal(r.status, string(r.raw))
	}
	e.Settle()
	if got := home(eve); slices.Contains(got, r1) || !slices.Contains(got, r4) {
		t.Errorf("eve's home after following bob: %v", got)
	}

	// The person answered is told, once, of what they may read: not of
	// cat's reply for cat's followers, whom ann does not follow.
	var replies int
	r = e.do("GET", "/social/rest/notifications/@me", ann.token, nil)
	for _, n := range r.body["list"].([]any) {
		if m := n.(map[string]any); m["type"] == "reply" {
			replies++
		}
	}
	if replies != 2 {
		t.Errorf("ann has %d reply notifications, want 2 (r1, r3): %s", replies, r.raw)
	}

	// The context, as each may see it.
	context := func(u user, author, id string) (up, down []string) {
		t.Helper()
		r := e.do("GET", "/social/rest/activities/"+author+"/@self/@app/"+id+"/context", u.token, nil)
		if r.status != 200 {
			t.Fatalf("context of %s: %d %s", id, r.status, r.raw)
		}
		for _, k := range []struct {
			name string
			to   *[]string
		}{{"ancestors", &up}, {"descendants", &down}} {
			for _, it := range r.body[k.name].([]any) {
				*k.to = append(*k.to, it.(map[string]any)["id"].(string))
			}
		}
		return up, down
	}
	if up, down := context(cat, bob.id, r3); !cmp.Equal(up, []string{root, r1, r2}) || !cmp.Equal(down, []string{r4}) {
		t.Errorf("context of r3 to cat: %v / %v", up, down)
	}
	if _, down := context(cat, ann.id, root); !cmp.Equal(down, []string{r1, r2, r3, r4, side}) {
		t.Errorf("descendants of the root to cat: %v", down)
	}
	// cat's followers-only reply is hidden from dan, who does not follow her.
	if _, down := context(dan, ann.id, root); !cmp.Equal(down, []string{r1, r2, r3, r4}) {
		t.Errorf("descendants of the root to dan: %v", down)
	}
	e.wantError(e.do("GET", "/social/rest/activities/"+ann.id+"/@self/@app/"+r1+"/context", cat.token, nil), 404) // not ann's
	e.wantError(e.do("GET", "/social/rest/activities/"+cat.id+"/@self/@app/"+side+"/context", dan.token, nil), 404)

	// A reply to what one may not see is a 404; to a repost, a reply to
	// what it shares.
	e.wantError(e.do("POST", "/social/rest/activities/@me/@self", dan.token, map[string]any{"title": "x", "inReplyTo": side}), 404)
	e.wantError(e.do("POST", "/social/rest/activities/@me/@self", dan.token, map[string]any{"title": "x", "inReplyTo": "nonsense"}), 404)
	rp := e.do("POST", "/social/rest/reposts/"+root, dan.token, nil)
	r = e.do("POST", "/social/rest/activities/@me/@self", cat.token, map[string]any{"title": "via the repost", "inReplyTo": e.entry(rp)["id"]})
	if r.status != 201 || e.entry(r)["inReplyTo"] != root {
		t.Errorf("a reply to a repost: %d %s, want one to the root", r.status, r.raw)
	}

	// A deleted post leaves its replies and their thread.
	if r := e.do("DELETE", "/social/rest/activities/@me/@self/@app/"+r2, ann.token, nil); r.status != 204 {
		t.Fatal(r.status, string(r.raw))
	}
	e.Settle()
	if up, down := context(cat, bob.id, r3); !cmp.Equal(up, []string{root, r1}) || !cmp.Equal(down, []string{r4}) {
		t.Errorf("context of r3 after r2's delete: %v / %v", up, down)
	}
	if _, down := context(cat, ann.id, root); !cmp.Equal(down[:3], []string{r1, r3, r4}) {
		t.Errorf("descendants of the root after r2's delete: %v", down)
	}
	// By JSON-RPC too.
	res := e.doBatch(cat, `[{"method":"activities.create","id":"c","params":{"activity":{"title":"by rpc","inReplyTo":"`+root+`"}}}]`)
	if got, _ := res[0]["result"].(map[string]any); got == nil || got["inReplyTo"] != root || got["inReplyToUserId"] != ann.id {
		t.Errorf("activities.create as a reply: %v", res[0])
	}
}

// Once the person a reply answers is erased, the reply stands, no longer
// names them, and a later follow of its author copies it as any post
// (there is no one left whom the follower must follow too). The checker
// found its oracle holding the opposite.
func TestReplyToSomeoneErased(t *testing.T) {
	e := newEnv(t)
	ann, bob, eve := e.register("ann"), e.register("bob"), e.register("eve")
	root := e.post(ann, "a question")
	r := e.do("POST", "/social/rest/activities/@me/@self", bob.token, map[string]any{"title": "an answer", "inReplyTo": root})
	if r.status != 201 {
		t.Fatal(r.status, string(r.raw))
	}
	reply := e.entry(r)["id"].(string)
	if r := e.do("DELETE", "/auth/account", ann.token, map[string]string{"password": "password-ann"}); r.status != 202 {
		t.Fatal(r.status, string(r.raw))
	}
	e.Settle()
	if got := e.activity(bob, bob.id, reply); got["inReplyTo"] != root || got["inReplyToUserId"] != nil {
		t.Errorf("the reply after ann's erasure: %v", got)
	}
	if r := e.do("POST", "/social/rest/people/@me/@friends", eve.token, map[string]string{"id": bob.id}); r.status != 201 {
		t.Fatal(r.status, string(r.raw))
	}
	e.Settle()
	if got := e.feed(eve, "@me/@friends"); !slices.Contains(got, reply) {
		t.Errorf("eve's home after following bob: %v, want the reply", got)
	}
}

// A thread deeper than a context reaches up comes back whole below any of
// its posts: a chain of 60 replies (deeper than the 40 ancestors a context
// shows) is the root's descendants, all of them in order; the deepest
// reply's context shows its nearest 40 ancestors, root-side first; and a
// reply in the middle has all of those below it.
func TestDeepThreadComesBackWhole(t *testing.T) {
	e := newEnv(t)
	ann, bob := e.register("ann"), e.register("bob")
	root := e.post(ann, "a deep question")
	chain := []string{}
	parent := root
	for i := range 60 {
		u := []user{bob, ann}[i%2]
		r := e.do("POST", "/social/rest/activities/@me/@self", u.token, map[string]any{"title": fmt.Sprint("level ", i+1), "inReplyTo": parent})
		if r.status != http.StatusCreated {
			t.Fatalf("reply %d: %d %s", i+1, r.status, r.raw)
		}
		parent = e.entry(r)["id"].(string)
		chain = append(chain, parent)
	}
	context := func(author user, id string) (up, down []string) {
		t.Helper()
		r := e.do("GET", "/social/rest/activities/"+author.id+"/@self/@app/"+id+"/context", ann.token, nil)
		if r.status != http.StatusOK {
			t.Fatalf("context of %s: %d %s", id, r.status, r.raw)
		}
		for key, out := range map[string]*[]string{"ancestors": &up, "descendants": &down} {
			for _, v := range r.body[key].([]any) {
				*out = append(*out, v.(map[string]any)["id"].(string))
			}
		}
		return up, down
	}
	if _, down := context(ann, root); !slices.Equal(down, chain) {
		t.Errorf("the root's descendants: %d of %d, %v", len(down), len(chain), down)
	}
	if _, down := context(bob, chain[4]); !slices.Equal(down, chain[5:]) {
		t.Errorf("level 5's descendants: %d of %d", len(down), len(chain[5:]))
	}
	if up, down := context(ann, chain[59]); !slices.Equal(up, chain[19:59]) || len(down) != 0 {
		t.Errorf("the deepest reply's context: %d ancestors %v, %d descendants", len(up), up, len(down))
	}
}
