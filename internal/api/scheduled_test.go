package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// Scheduled posts on REST and JSON-RPC: a post with scheduledAt answers
// 202 with what it will post, is listed and shown to its author alone,
// moved, cancelled, and refused when too soon or not a time.
func TestScheduledPostsOnRESTAndRPC(t *testing.T) {
	e := newEnv(t)
	ann, bob := e.register("ann"), e.register("bob")
	at := time.Now().Add(3 * time.Hour).UTC().Truncate(time.Second)
	r := e.do("POST", "/social/rest/activities/@me/@self", ann.token, map[string]any{"title": "later", "visibility": "followers",
		"scheduledAt": at.Format(time.RFC3339), "poll": map[string]any{"options": []string{"yes", "no"}, "expiresIn": 3600}})
	if r.status != http.StatusAccepted {
		t.Fatalf("a scheduled post: %d %s", r.status, r.raw)
	}
	sp := e.entry(r)
	id := sp["id"].(string)
	act, _ := sp["activity"].(map[string]any)
	if sp["scheduledAt"] != at.Format(time.RFC3339) || act["title"] != "later" || act["visibility"] != "followers" || act["poll"] == nil {
		t.Errorf("the scheduled post: %s", r.raw)
	}
	second := e.do("POST", "/social/rest/activities/@me/@self", ann.token, map[string]any{"title": "later still", "scheduledAt": at.Add(time.Hour).Format(time.RFC3339)})
	if second.status != http.StatusAccepted {
		t.Fatalf("a second: %d %s", second.status, second.raw)
	}
	page := e.do("GET", "/social/rest/scheduled/@me?count=1", ann.token, nil)
	list, _ := page.body["list"].([]any)
	if page.status != http.StatusOK || len(list) != 1 || list[0].(map[string]any)["id"] != e.entry(second)["id"] || page.body["nextCursor"] == nil {
		t.Fatalf("the first page: %d %s", page.status, page.raw)
	}
	rest := e.do("GET", "/social/rest/scheduled/@me?count=1&cursor="+page.body["nextCursor"].(string), ann.token, nil)
	if list, _ := rest.body["list"].([]any); rest.status != http.StatusOK || len(list) != 1 || list[0].(map[string]any)["id"] != id || rest.body["nextCursor"] != nil {
		t.Errorf("the next page: %d %s", rest.status, rest.raw)
	}
	if one := e.do("GET", "/social/rest/scheduled/@me/"+id, ann.token, nil); one.status != http.StatusOK || e.entry(one)["scheduledAt"] != at.Format(time.RFC3339) {
		t.Errorf("GET it: %d %s", one.status, one.raw)
	}
	e.wantError(e.do("GET", "/social/rest/scheduled/@me?cursor=abc", ann.token, nil), http.StatusBadRequest)
	// Nobody's but the author's.
	e.wantError(e.do("GET", "/social/rest/scheduled/"+ann.id, bob.token, nil), http.StatusForbidden)
	e.wantError(e.do("GET", "/social/rest/scheduled/@me/"+id, bob.token, nil), http.StatusNotFound)
	e.wantError(e.do("DELETE", "/social/rest/scheduled/@me/"+id, bob.token, nil), http.StatusNotFound)
	// Moved, by JSON-RPC too; never too soon.
	later := at.Add(5 * time.Hour)
	if m := e.do("PUT", "/social/rest/scheduled/@me/"+id, ann.token, map[string]any{"scheduledAt": later.Format(time.RFC3339)}); m.status != http.StatusOK || e.entry(m)["scheduledAt"] != later.Format(time.RFC3339) {
		t.Errorf("moving it: %d %s", m.status, m.raw)
	}
	e.wantError(e.do("PUT", "/social/rest/scheduled/@me/"+id, ann.token, map[string]any{"scheduledAt": time.Now().Add(time.Minute).Format(time.RFC3339)}), http.StatusBadRequest)
	e.wantError(e.do("PUT", "/social/rest/scheduled/@me/"+id, ann.token, map[string]any{"scheduledAt": "soon"}), http.StatusBadRequest)
	rpc := e.do("POST", "/social/rpc", ann.token, `{"method":"scheduled.update","id":"u","params":{"userId":"@me","id":"`+id+`","scheduledAt":"`+at.Format(time.RFC3339)+`"}}`)
	if res, _ := rpc.body["result"].(map[string]any); res["scheduledAt"] != at.Format(time.RFC3339) {
		t.Errorf("moving it by RPC: %s", rpc.raw)
	}
	// What is refused makes nothing.
	for name, body := range map[string]map[string]any{
		"too soon":      {"title": "x", "scheduledAt": time.Now().Add(time.Minute).Format(time.RFC3339)},
		"not a time":    {"title": "x", "scheduledAt": "tomorrow"},
		"with no title": {"title": " ", "scheduledAt": at.Format(time.RFC3339)},
	} {
		if r := e.do("POST", "/social/rest/activities/@me/@self", ann.token, body); r.status != http.StatusBadRequest {
			t.Errorf("%s: %d %s", name, r.status, r.raw)
		}
	}
	// Cancelled, by JSON-RPC for the second.
	if d := e.do("DELETE", "/social/rest/scheduled/@me/"+id, ann.token, nil); d.status != http.StatusNoContent {
		t.Errorf("cancelling it: %d %s", d.status, d.raw)
	}
	e.wantError(e.do("GET", "/social/rest/scheduled/@me/"+id, ann.token, nil), http.StatusNotFound)
	rpc = e.do("POST", "/social/rpc", ann.token, `{"method":"scheduled.delete","id":"d","params":{"userId":"@me","id":"`+e.entry(second)["id"].(string)+`"}}`)
	if strings.Contains(string(rpc.raw), `"error"`) {
		t.Errorf("cancelling by RPC: %s", rpc.raw)
	}
	rpc = e.do("POST", "/social/rpc", ann.token, `{"method":"scheduled.get","id":"g","params":{"userId":"@me"}}`)
	if res, _ := rpc.body["result"].(map[string]any); res == nil || len(res["list"].([]any)) != 0 {
		t.Errorf("ann's scheduled posts by RPC, all cancelled: %s", rpc.raw)
	}
}
