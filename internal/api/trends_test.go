package api_test

import (
	"net/http"
	"testing"

	"socialstream/internal/api"
)

// Trends on REST and JSON-RPC: a hashtag two people used and a post two
// people liked, ranked by the hour's cron, show once a moderator
// approved them; bad requests are 400s.
func TestTrendsOverRESTAndRPC(t *testing.T) {
	e := newEnv(t)
	ada, bob, cat := e.register("ada"), e.register("bob"), e.register("cat")
	e.makeAdmin(ada)
	e.post(bob, "#Tea time")
	e.post(cat, "more #tea")
	liked := e.post(ada, "worth a like")
	for _, u := range []user{bob, cat} {
		if r := e.do("POST", "/social/rest/likes/"+liked, u.token, nil); r.status != http.StatusOK {
			t.Fatalf("like: %d %s", r.status, r.raw)
		}
	}
	e.Settle()
	if r := e.do("GET", api.CronTrendsPath, "", nil, api.TaskSecretHeader, e.stack.TaskSecret); r.status != http.StatusNoContent {
		t.Fatalf("the trends' cron: %d %s", r.status, r.raw)
	}
	if r := e.do("GET", "/social/rest/trends/tags", bob.token, nil); r.status != http.StatusOK || len(r.body["list"].([]any)) != 0 {
		t.Fatalf("trending tags before review: %d %s", r.status, r.raw)
	}
	for _, path := range []string{"/api/v1/admin/trends/tags/tea/approve", "/api/v1/admin/trends/statuses/" + number(t, liked) + "/approve"} {
		if r := e.do("POST", path, ada.token, nil); r.status != http.StatusOK {
			t.Fatalf("POST %s: %d %s", path, r.status, r.raw)
		}
	}
	r := e.do("GET", "/social/rest/trends/tags?count=5", bob.token, nil)
	list, _ := r.body["list"].([]any)
	if r.status != http.StatusOK || len(list) != 1 {
		t.Fatalf("trending tags: %d %s", r.status, r.raw)
	}
	tag := list[0].(map[string]any)
	day := tag["history"].([]any)[0].(map[string]any)
	if tag["name"] != "tea" || tag["people"] != float64(2) || day["people"] != float64(2) || day["uses"] != float64(2) {
		t.Errorf("the trending tag: %v", tag)
	}
	r = e.do("POST", "/social/rpc", cat.token, `{"method":"trends.get","id":"t","params":{"kind":"statuses"}}`)
	posts, _ := r.body["result"].(map[string]any)["list"].([]any)
	if r.status != http.StatusOK || len(posts) != 1 || posts[0].(map[string]any)["id"] != liked {
		t.Fatalf("trends.get of statuses: %d %s", r.status, r.raw)
	}
	for _, path := range []string{"/social/rest/trends/bogus", "/social/rest/trends/tags?startIndex=100", "/social/rest/trends/links?cursor=abc"} {
		e.wantError(e.do("GET", path, bob.token, nil), http.StatusBadRequest)
	}
}
