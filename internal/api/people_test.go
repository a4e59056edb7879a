package api_test

import (
	"net/http"
	"strings"
	"testing"

	"socialstream/internal/api"
)

func TestPeopleGetSelf(t *testing.T) {
	e := newEnv(t)
	alice := e.register("alice")
	bob := e.register("Bob_B")
	tests := []struct {
		name, path, token string
		status            int
		wantID            string
	}{
		{"me", "/social/rest/people/@me/@self", alice.token, 200, alice.id},
		{"viewer", "/social/rest/people/@viewer/@self", bob.token, 200, bob.id},
		{"by id", "/social/rest/people/" + bob.id + "/@self", alice.token, 200, bob.id},
		{"by username, any case", "/social/rest/people/@username:bob_b/@self", alice.token, 200, bob.id},
		{"unknown username", "/social/rest/people/@username:nobody/@self", alice.token, 404, ""},
		{"invalid username", "/social/rest/people/@username:x/@self", alice.token, 404, ""},
		{"unknown id", "/social/rest/people/12345/@self", alice.token, 404, ""},
		{"not an id", "/social/rest/people/abc/@self", alice.token, 400, ""},
		{"unknown selector", "/social/rest/people/@me/@nonsense", alice.token, 404, ""},
		{"no token", "/social/rest/people/@me/@self", "", 401, ""},
		{"bad token", "/social/rest/people/@me/@self", "not-a-token", 401, ""},
		{"well-formed unknown token", "/social/rest/people/@me/@self", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", 401, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.t = t
			r := e.do("GET", tt.path, tt.token, nil)
			if tt.status != 200 {
				e.wantError(r, tt.status)
				return
			}
			if r.status != 200 {
				t.Fatalf("status %d: %s", r.status, r.raw)
			}
			if got := r.body["entry"].(map[string]any)["id"]; got != tt.wantID {
				t.Errorf("id %v, want %s", got, tt.wantID)
			}
		})
	}
}

func TestPlumbing(t *testing.T) {
	e := newEnv(t)
	if r := e.do("GET", "/healthz", "", nil); r.status != 200 {
		t.Errorf("healthz: %d", r.status)
	}
	if r := e.do("GET", "/_ah/warmup", "", nil); r.status != http.StatusNoContent {
		t.Errorf("App Engine's warmup: %d %s", r.status, r.raw)
	}
	e.wantError(e.do("GET", "/no/such/thing", "", nil), 404)
	e.wantError(e.do("DELETE", "/auth/register", "", nil), http.StatusMethodNotAllowed)
	for _, p := range []string{"/_tasks/rebuild", "/_tasks/anything/else", "/_tasks/"} {
		e.wantError(e.do("POST", p, "", `{}`), 403)
		e.wantError(e.do("POST", p, "", `{}`, "X-AppEngine-TaskName", "t1"), 403)
		e.wantError(e.do("POST", p, "", `{}`, "X-AppEngine-QueueName", "rebuild"), 403)
	}
	// With the sender's proof the guard lets the request through to routing.
	e.wantError(e.do("POST", "/_tasks/no-such-job", "", `{}`, api.TaskSecretHeader, e.stack.TaskSecret), 404)
}

func TestPeopleInList(t *testing.T) {
	e := newEnv(t)
	alice, bob, carol := e.register("alice"), e.register("bob"), e.register("carol")
	e.follow(alice, bob.id)

	for _, tc := range []struct {
		name, path string
		token      string
		want       int
		wantID     string
	}{
		{"alice follows bob", "/people/@me/@friends/" + bob.id, alice.token, 200, bob.id},
		{"by username", "/people/@username:ALICE/@friends/@username:bob", carol.token, 200, bob.id},
		{"alice does not follow carol", "/people/@me/@friends/" + carol.id, alice.token, 404, ""},
		{"bob does not follow alice", "/people/@me/@friends/" + alice.id, bob.token, 404, ""},
		{"alice is bob's follower", "/people/@me/@followers/@username:alice", bob.token, 200, alice.id},
		{"bob is not alice's follower", "/people/@me/@followers/" + bob.id, alice.token, 404, ""},
		{"unknown person", "/people/@me/@friends/@username:nobody", alice.token, 404, ""},
		{"not a list of follows", "/people/@me/@self/" + bob.id, alice.token, 400, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do("GET", "/social/rest"+tc.path, tc.token, nil)
			if tc.want != 200 {
				e.wantError(r, tc.want)
				return
			}
			if r.status != 200 {
				t.Fatalf("status %d: %s", r.status, r.raw)
			}
			if got := e.entry(r)["id"]; got != tc.wantID {
				t.Errorf("entry id %v, want %s", got, tc.wantID)
			}
		})
	}

	// The same through JSON-RPC: a result, then a per-call error.
	r := e.do("POST", "/social/rpc", alice.token, `[
		{"id":1,"method":"people.get","params":{"userId":"@me","groupId":"@friends","personId":"`+bob.id+`"}},
		{"id":2,"method":"people.get","params":{"userId":"@me","groupId":"@friends","personId":"`+carol.id+`"}}]`)
	if r.status != 200 || !strings.Contains(string(r.raw), `"result":{"id":"`+bob.id+`"`) ||
		!strings.Contains(string(r.raw), `"id":2,"error":{"code":404`) {
		t.Errorf("RPC: %d %s", r.status, r.raw)
	}

	// After an unfollow the answer is a 404.
	if r := e.do("DELETE", "/social/rest/people/@me/@friends/"+bob.id, alice.token, nil); r.status != 204 {
		t.Fatalf("unfollow: %d %s", r.status, r.raw)
	}
	e.wantError(e.do("GET", "/social/rest/people/@me/@friends/"+bob.id, alice.token, nil), 404)
}
