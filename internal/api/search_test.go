package api_test

import (
	"net/http"
	"net/url"
	"testing"
)

// Post search on REST and JSON-RPC: a Japanese sentence found by a
// two-character word inside it, in the scope a person may search (their
// own, what mentions them, the public posts of the indexable), paged by
// cursor; what a search refuses.
func TestSearchOnRESTAndRPC(t *testing.T) {
	e := newEnv(t)
	ann, bob := e.register("ann"), e.register("bob")
	if r := e.do("PUT", "/social/rest/people/@me/@self", ann.token, map[string]any{"indexable": true}); r.status != http.StatusOK || e.entry(r)["indexable"] != true {
		t.Fatalf("indexable: %d %s", r.status, r.raw)
	}
	older := e.post(ann, "東京タワーに登りました")
	newer := e.post(ann, "夜の東京はきれい")
	hidden := e.post(bob, "東京 from bob, who is not indexable")
	search := func(u user, query string) (int, []string, string) {
		r := e.do("GET", "/social/rest/activities/@search?"+query, u.token, nil)
		var got []string
		list, _ := r.body["list"].([]any)
		for _, a := range list {
			got = append(got, a.(map[string]any)["id"].(string))
		}
		next, _ := r.body["nextCursor"].(string)
		return r.status, got, next
	}
	q := "q=" + url.QueryEscape("東京")
	if status, got, _ := search(bob, q); status != http.StatusOK || len(got) != 3 || got[0] != hidden || got[1] != newer || got[2] != older {
		t.Errorf("bob's search: %d %v, want his own and ann's, newest first", status, got)
	}
	status, got, next := search(ann, q+"&count=1")
	if status != http.StatusOK || len(got) != 1 || got[0] != newer || next == "" {
		t.Fatalf("ann's first page: %d %v %q", status, got, next)
	}
	if _, got, next := search(ann, q+"&count=1&cursor="+url.QueryEscape(next)); len(got) != 1 || got[0] != older || next != "" {
		t.Errorf("ann's next page: %v %q", got, next)
	}
	if _, got, _ := search(ann, "q="+url.QueryEscape("タワー")); len(got) != 1 || got[0] != older {
		t.Errorf("タワー: %v", got)
	}
	rpc := e.do("POST", "/social/rpc", bob.token, `{"method":"activities.search","id":"s","params":{"q":"from:ann 東京","count":5}}`)
	if res, _ := rpc.body["result"].(map[string]any); res == nil || len(res["list"].([]any)) != 2 {
		t.Errorf("activities.search by RPC: %s", rpc.raw)
	}
	for _, bad := range []string{"", "q=", "q=a+b+c+d+e+f+g+h+i+j+k+l+m+n+o+p+q", "q=x&count=0", "q=x&cursor=nope"} {
		e.wantError(e.do("GET", "/social/rest/activities/@search?"+bad, bob.token, nil), http.StatusBadRequest)
	}
	e.wantError(e.do("GET", "/social/rest/activities/@search?q=x", "", nil), http.StatusUnauthorized)
}
