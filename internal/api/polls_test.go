package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"socialstream/internal/polls"
)

// A poll over REST and JSON-RPC: posted with its activity, shown on it
// (the contract's Poll), voted in once by either face, its totals hidden
// until it ends but from its author, and absent to whom may not see the
// activity; a poll the limits refuse, or with pictures, is a 400.
func TestPollsOnRESTAndRPC(t *testing.T) {
	e := newEnv(t)
	ann, bob, cid := e.register("ann"), e.register("bob"), e.register("cid")
	// Open a day: a closing job due within the tasks emulator's horizon
	// (an hour) would be work that Settle waits for.
	r := e.do("POST", "/social/rest/activities/@me/@self", ann.token, map[string]any{"title": "lunch?", "visibility": "followers",
		"poll": map[string]any{"options": []string{"noodles", "rice"}, "expiresIn": 86400, "hideTotals": true}})
	if r.status != http.StatusCreated {
		t.Fatalf("post: %d %s", r.status, r.raw)
	}
	act := e.entry(r)["id"].(string)
	poll, _ := e.entry(r)["poll"].(map[string]any)
	if opts, _ := poll["options"].([]any); len(opts) != 2 || poll["votersCount"] != 0.0 || poll["voted"] != false || poll["expired"] != false {
		t.Fatalf("the poll posted: %v", poll)
	}
	e.follow(bob, ann.id)
	r = e.do("POST", "/social/rest/polls/"+act+"/votes", bob.token, map[string]any{"choices": []int{1}})
	poll, _ = e.entry(r)["poll"].(map[string]any)
	opts, _ := poll["options"].([]any)
	if r.status != http.StatusOK || poll["voted"] != true || poll["votesCount"] != 1.0 || len(opts) != 2 || opts[1].(map[string]any)["votesCount"] != nil {
		t.Errorf("bob's vote, the totals hidden from him: %d %s", r.status, r.raw)
	}
	if again := e.do("POST", "/social/rest/polls/"+act+"/votes", bob.token, map[string]any{"choices": []int{1}}); again.status != http.StatusOK {
		t.Errorf("the same vote again: %d %s", again.status, again.raw)
	}
	e.wantError(e.do("POST", "/social/rest/polls/"+act+"/votes", bob.token, map[string]any{"choices": []int{0}}), http.StatusBadRequest)
	// ann sees her poll's totals.
	mine := e.activity(ann, ann.id, act)["poll"].(map[string]any)
	if o := mine["options"].([]any); o[1].(map[string]any)["votesCount"] != 1.0 || o[0].(map[string]any)["votesCount"] != 0.0 {
		t.Errorf("the poll to its author: %v", mine)
	}
	// cid does not follow ann: not there for him, by either face.
	e.wantError(e.do("POST", "/social/rest/polls/"+act+"/votes", cid.token, map[string]any{"choices": []int{0}}), http.StatusNotFound)
	rpc := e.do("POST", "/social/rpc", cid.token, `{"method":"polls.vote","id":"v","params":{"activityId":"`+act+`","choices":[0]}}`)
	if !strings.Contains(string(rpc.raw), `"code":404`) {
		t.Errorf("cid's vote by RPC: %s", rpc.raw)
	}
	e.follow(cid, ann.id)
	rpc = e.do("POST", "/social/rpc", cid.token, `{"method":"polls.vote","id":"v","params":{"activityId":"`+act+`","choices":[0]}}`)
	res, _ := rpc.body["result"].(map[string]any)
	if p, _ := res["poll"].(map[string]any); p["votersCount"] != 2.0 || p["voted"] != true {
		t.Errorf("cid's vote by RPC: %s", rpc.raw)
	}
	// What the limits refuse; a post with no poll has none to vote in.
	for name, p := range map[string]map[string]any{
		"one option":         {"options": []string{"a"}, "expiresIn": 86400},
		"five options":       {"options": []string{"a", "b", "c", "d", "e"}, "expiresIn": 86400},
		"ending in a minute": {"options": []string{"a", "b"}, "expiresIn": 60},
		"the same twice":     {"options": []string{"a", "a"}, "expiresIn": 86400},
	} {
		e.wantError(e.do("POST", "/social/rest/activities/@me/@self", ann.token, map[string]any{"title": name, "poll": p}), http.StatusBadRequest)
	}
	// Deleted, the post takes its poll's votes and counts with it.
	if r := e.do("DELETE", "/social/rest/activities/@me/@self/@app/"+act, ann.token, nil); r.status != http.StatusOK && r.status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.status, r.raw)
	}
	e.Settle()
	ctx := context.Background()
	if keys, err := e.db.GetAll(ctx, e.db.Query(polls.KindPollVote).FilterField("activityId", "=", act).KeysOnly(), nil); err != nil || len(keys) != 0 {
		t.Errorf("votes left of the deleted post: %v, %v", keys, err)
	}
	var c polls.Count
	if ok, err := e.db.Get(ctx, polls.CountKey(e.db, act), &c); ok || err != nil {
		t.Errorf("the deleted post's poll counts left: %+v, %v", c, err)
	}
	plain := e.post(ann, "no poll")
	e.wantError(e.do("POST", "/social/rest/polls/"+plain+"/votes", bob.token, map[string]any{"choices": []int{0}}), http.StatusNotFound)
	e.wantError(e.do("POST", "/social/rest/polls/"+act+"/votes", bob.token, `{"choices": "x"}`), http.StatusBadRequest)
}
