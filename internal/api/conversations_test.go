package api_test

import (
	"net/http"
	"net/url"
	"testing"
)

// Conversations and featured hashtags on REST and JSON-RPC.
func TestConversationsAndFeaturedTagsOnRESTAndRPC(t *testing.T) {
	e := newEnv(t)
	ann, bob := e.register("ann"), e.register("bob")
	r := e.do("POST", "/social/rest/activities/@me/@self", ann.token, map[string]any{"title": "just us @bob", "visibility": "mentioned"})
	if r.status != http.StatusCreated {
		t.Fatalf("a direct post: %d %s", r.status, r.raw)
	}
	post := e.entry(r)["id"]
	e.Settle()
	page := e.do("GET", "/social/rest/conversations/@me", bob.token, nil)
	list, _ := page.body["list"].([]any)
	if page.status != http.StatusOK || len(list) != 1 {
		t.Fatalf("bob's conversations: %d %s", page.status, page.raw)
	}
	c := list[0].(map[string]any)
	people, _ := c["people"].([]any)
	act, _ := c["activity"].(map[string]any)
	if c["unread"] != true || len(people) != 1 || people[0].(map[string]any)["id"] != ann.id || act["id"] != post {
		t.Errorf("the conversation: %v", c)
	}
	id := c["id"].(string)
	rpc := e.do("POST", "/social/rpc", bob.token, `{"method":"conversations.update","id":"r","params":{"userId":"@me","id":"`+id+`"}}`)
	if res, _ := rpc.body["result"].(map[string]any); res == nil || res["unread"] != false {
		t.Errorf("read by RPC: %s", rpc.raw)
	}
	if rd := e.do("POST", "/social/rest/conversations/@me/"+id+"/read", bob.token, nil); rd.status != http.StatusOK || e.entry(rd)["unread"] != false {
		t.Errorf("read: %d %s", rd.status, rd.raw)
	}
	e.wantError(e.do("GET", "/social/rest/conversations/"+ann.id, bob.token, nil), http.StatusForbidden)
	e.wantError(e.do("POST", "/social/rest/conversations/@me/"+id+"/read", e.register("cyd").token, nil), http.StatusNotFound)
	if d := e.do("DELETE", "/social/rest/conversations/@me/"+id, bob.token, nil); d.status != http.StatusNoContent {
		t.Errorf("remove: %d %s", d.status, d.raw)
	}
	if l, _ := e.do("GET", "/social/rest/conversations/@me", bob.token, nil).body["list"].([]any); len(l) != 0 {
		t.Errorf("after removing it: %v", l)
	}

	e.post(ann, "about #Go")
	if f := e.do("POST", "/social/rest/featuredTags/@me", ann.token, map[string]string{"name": "#go"}); f.status != http.StatusOK || e.entry(f)["statusesCount"] != float64(1) {
		t.Errorf("featuring #go: %d %s", f.status, f.raw)
	}
	got := e.do("GET", "/social/rest/featuredTags/"+ann.id, bob.token, nil)
	if l, _ := got.body["list"].([]any); got.status != http.StatusOK || len(l) != 1 || l[0].(map[string]any)["name"] != "go" || l[0].(map[string]any)["lastStatusTime"] == nil {
		t.Errorf("ann's featured tags, as bob reads them: %d %s", got.status, got.raw)
	}
	e.wantError(e.do("POST", "/social/rest/featuredTags/@me", ann.token, map[string]string{"name": "no tag!"}), http.StatusBadRequest)
	e.wantError(e.do("POST", "/social/rest/featuredTags/"+ann.id, bob.token, map[string]string{"name": "go"}), http.StatusForbidden)
	if d := e.do("DELETE", "/social/rest/featuredTags/@me/"+url.PathEscape("go"), ann.token, nil); d.status != http.StatusNoContent {
		t.Errorf("unfeature: %d %s", d.status, d.raw)
	}
	e.wantError(e.do("DELETE", "/social/rest/featuredTags/@me/go", ann.token, nil), http.StatusNotFound)
	rpc = e.do("POST", "/social/rpc", ann.token, `{"method":"featuredTags.get","id":"f","params":{"userId":"@me"}}`)
	if res, _ := rpc.body["result"].(map[string]any); res == nil || len(res["list"].([]any)) != 0 {
		t.Errorf("featuredTags.get: %s", rpc.raw)
	}
}
