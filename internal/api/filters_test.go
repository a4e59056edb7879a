package api_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"
)

// Keyword filters: a hide filter leaves what matches out of the feeds it
// names (a whole word only, when asked), a warn filter marks it with the
// filter and keywords that matched; one's own posts, and feeds the filter
// does not name, are untouched; an update and a delete apply at once.
func TestKeywordFilters(t *testing.T) {
	e := newEnv(t)
	alice, bob := e.register("alice"), e.register("bob")
	e.follow(alice, bob.id)
	spoiler := e.post(bob, "Spoilers for the finale ahead")
	inside := e.post(bob, "Spoilersome is no word")
	cats := e.post(bob, "Just CATS today")
	mine := e.post(alice, "I post spoilers myself")
	e.Settle()

	filters := "/social/rest/filters/@me"
	create := func(f map[string]any) map[string]any {
		t.Helper()
		r := e.do("POST", filters, alice.token, f)
		if r.status != 201 {
			t.Fatalf("create filter: %d %s", r.status, r.raw)
		}
		return e.entry(r)
	}
	hide := create(map[string]any{"title": "No spoilers", "keywords": []map[string]any{{"keyword": "spoilers", "wholeWord": true}},
		"context": []string{"home"}, "action": "hide"})
	warn := create(map[string]any{"title": "Cats", "keywords": []map[string]any{{"keyword": "cat"}},
		"context": []string{"home", "account"}})
	if warn["action"] != "warn" || hide["id"] == "" || hide["id"] == warn["id"] {
		t.Errorf("filters as made: %v %v", hide, warn)
	}
	if f := e.entry(e.do("GET", filters+"/"+hide["id"].(string), alice.token, nil)); f["title"] != "No spoilers" || f["action"] != "hide" {
		t.Errorf("one filter read back: %v", f)
	}
	e.wantError(e.do("GET", filters+"/nosuch", alice.token, nil), http.StatusNotFound)

	home := func() (ids []string, marked map[string]any) {
		t.Helper()
		r := e.do("GET", "/social/rest/activities/@me/@friends", alice.token, nil)
		marked = map[string]any{}
		for _, it := range r.body["list"].([]any) {
			a := it.(map[string]any)
			ids = append(ids, a["id"].(string))
			if f, ok := a["filtered"]; ok {
				marked[a["id"].(string)] = f
			}
		}
		return ids, marked
	}
	got, marked := home()
	if slices.Contains(got, spoiler) || !slices.Contains(got, inside) || !slices.Contains(got, mine) || !slices.Contains(got, cats) {
		t.Errorf("home with the filters: %v", got)
	}
	m, _ := marked[cats].([]any)
	if len(m) != 1 || fmt.Sprint(m[0].(map[string]any)["filterId"]) != warn["id"] || fmt.Sprint(m[0].(map[string]any)["keywordMatches"]) != "[cat]" || len(marked) != 1 {
		t.Errorf("warnings at home: %v", marked)
	}
	// Bob's page: only the filter naming it.
	page := e.do("GET", "/social/rest/activities/"+bob.id+"/@self", alice.token, nil)
	var shown []string
	warned := 0
	for _, it := range page.body["list"].([]any) {
		a := it.(map[string]any)
		shown = append(shown, a["id"].(string))
		if a["filtered"] != nil {
			warned++
		}
	}
	if !slices.Contains(shown, spoiler) || warned != 1 {
		t.Errorf("bob's page as alice reads it: %v, %d warned", shown, warned)
	}

	// An update applies at once; so does a delete.
	r := e.do("PUT", filters+"/"+warn["id"].(string), alice.token, map[string]any{"title": "Cats", "keywords": []map[string]any{{"keyword": "cat"}},
		"context": []string{"home"}, "action": "hide"})
	if r.status != 200 {
		t.Fatalf("update: %d %s", r.status, r.raw)
	}
	if got, _ := home(); slices.Contains(got, cats) {
		t.Errorf("home after the update still has the cats: %v", got)
	}
	if r := e.do("DELETE", filters+"/"+hide["id"].(string), alice.token, nil); r.status != 204 {
		t.Fatalf("delete: %d", r.status)
	}
	if got, _ := home(); !slices.Contains(got, spoiler) {
		t.Errorf("home after the delete lacks the spoiler: %v", got)
	}
	if l := e.list(e.do("GET", filters, alice.token, nil)); len(l) != 1 || l[0] != warn["id"] {
		t.Errorf("filters left: %v", l)
	}

	// What is refused changes nothing.
	ok := map[string]any{"title": "t", "keywords": []map[string]any{{"keyword": "k"}}, "context": []string{"home"}}
	bad := func(change func(f map[string]any)) map[string]any {
		f := map[string]any{}
		for k, v := range ok {
			f[k] = v
		}
		change(f)
		return f
	}
	for name, body := range map[string]any{
		"no keywords":     bad(func(f map[string]any) { f["keywords"] = []any{} }),
		"unknown context": bad(func(f map[string]any) { f["context"] = []string{"everywhere"} }),
		"no context":      bad(func(f map[string]any) { delete(f, "context") }),
		"bad action":      bad(func(f map[string]any) { f["action"] = "delete" }),
		"past expiry":     bad(func(f map[string]any) { f["expiresAt"] = time.Now().Add(-time.Hour).Format(time.RFC3339) }),
		"bad expiry":      bad(func(f map[string]any) { f["expiresAt"] = "tomorrow" }),
		"no title":        bad(func(f map[string]any) { f["title"] = " " }),
		"same keyword":    bad(func(f map[string]any) { f["keywords"] = []map[string]any{{"keyword": "k"}, {"keyword": "K"}} }),
	} {
		if r := e.do("POST", filters, alice.token, body); r.status != http.StatusBadRequest {
			t.Errorf("%s: %d %s", name, r.status, r.raw)
		}
	}
	e.wantError(e.do("GET", "/social/rest/filters/"+bob.id, alice.token, nil), http.StatusForbidden)
	e.wantError(e.do("PUT", filters+"/nosuch", alice.token, ok), http.StatusNotFound)
	for i := 1; i < 20; i++ {
		create(ok)
	}
	e.wantError(e.do("POST", filters, alice.token, ok), http.StatusBadRequest)
	if l := e.list(e.do("GET", filters, alice.token, nil)); len(l) != 20 {
		t.Errorf("%d filters after the refusal, want 20", len(l))
	}
	// JSON-RPC.
	res := e.doBatch(alice, `[{"method":"filters.get","id":"f","params":{"userId":"@me"}}]`)
	if l, _ := res[0]["result"].(map[string]any)["list"].([]any); len(l) != 20 {
		t.Errorf("filters.get: %v", res)
	}
}

// A filter of the notifications context applies to the notification list
// too, read only when one is active: what it hides is not there, what it
// warns of carries it; a notification about one's own activity (a like)
// is never filtered.
func TestKeywordFiltersOfNotifications(t *testing.T) {
	e := newEnv(t)
	alice, bob := e.register("alice"), e.register("bob")
	mine := e.post(alice, "my spoiler thread")
	hidden := e.post(bob, "the spoiler is out @alice")
	warned := e.post(bob, "the ending, @alice")
	if r := e.do("POST", "/social/rest/likes/"+mine, bob.token, nil); r.status != 200 {
		t.Fatal(r.status, string(r.raw))
	}
	e.Settle()
	for _, f := range []map[string]any{
		{"title": "spoilers", "keywords": []map[string]any{{"keyword": "spoiler"}}, "context": []string{"notifications"}, "action": "hide"},
		{"title": "endings", "keywords": []map[string]any{{"keyword": "ending", "wholeWord": true}}, "context": []string{"notifications"}, "action": "warn"},
	} {
		if r := e.do("POST", "/social/rest/filters/@me", alice.token, f); r.status != 201 {
			t.Fatal(r.status, string(r.raw))
		}
	}
	r := e.do("GET", "/social/rest/notifications/@me", alice.token, nil)
	about := map[string]map[string]any{}
	for _, it := range r.body["list"].([]any) {
		n := it.(map[string]any)
		about[n["activityId"].(string)] = n
	}
	if _, ok := about[hidden]; ok {
		t.Errorf("the notification of a hidden mention is listed")
	}
	if n := about[warned]; n == nil || n["filtered"] == nil {
		t.Errorf("the warned mention's notification: %v", n)
	}
	if n := about[mine]; n == nil || n["filtered"] != nil {
		t.Errorf("the like of alice's own post: %v", n)
	}
	grouped := e.do("GET", "/social/rest/notifications/@me?grouped=true", alice.token, nil)
	for _, it := range grouped.body["list"].([]any) {
		if it.(map[string]any)["activityId"] == hidden {
			t.Errorf("the grouped list holds the hidden mention")
		}
	}
}
