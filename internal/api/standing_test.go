package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"socialstream/internal/localstack"
	"socialstream/internal/stacktest"
)

// twoInstances returns two services on one Datastore, as App Engine runs
// two instances of one deployment, each trusting a token it has verified
// for a minute.
func twoInstances(t *testing.T) (a, b *env) {
	t.Helper()
	a = newEnvFrom(t, localstack.Options{})
	o := localstack.Options{DB: a.db}
	o.Config.TokenCacheTTL = time.Minute
	b = newEnvFrom(t, o)
	return a, b
}

// writeRoute is one write of the API, as REST or JSON-RPC sends it.
type writeRoute struct {
	method, path string
	body         any
}

// writeRoutes are every kind of write a person makes, each valid for u,
// whose post is mine and who may see theirs, by other.
func writeRoutes(u user, other user, mine, theirs, group string) []writeRoute {
	rpc := func(method string, params string) writeRoute {
		return writeRoute{"POST", "/social/rpc", fmt.Sprintf(`{"method":%q,"id":"1","params":%s}`, method, params)}
	}
	return []writeRoute{
		{"POST", "/social/rest/people/@me/@friends", map[string]string{"id": other.id}},
		{"DELETE", "/social/rest/people/@me/@friends/" + other.id, nil},
		{"POST", "/social/rest/people/@me/@blocked", map[string]string{"id": other.id}},
		{"POST", "/social/rest/people/@me/@muted", map[string]string{"id": other.id}},
		{"PUT", "/social/rest/people/@me/@self", map[string]any{"locked": true}},
		{"POST", "/social/rest/groups/@me", map[string]string{"title": "g"}},
		{"POST", "/social/rest/groups/@all/" + group + "/members", map[string]string{"id": u.id}},
		{"POST", "/social/rest/activities/@me/@self", map[string]string{"title": "still here"}},
		{"PUT", "/social/rest/activities/@me/@self/@app/" + mine, map[string]string{"title": "edited"}},
		{"DELETE", "/social/rest/activities/@me/@self/@app/" + mine, nil},
		{"POST", "/social/rest/comments/" + theirs, map[string]string{"text": "hi"}},
		{"POST", "/social/rest/likes/" + theirs, nil},
		{"POST", "/social/rest/reposts/" + theirs, nil},
		{"POST", "/social/rest/notifications/@me/read", map[string]any{"all": true}},
		{"POST", "/social/rest/markers/@me", map[string]any{"home": map[string]string{"lastReadId": theirs}}},
		{"POST", "/social/rest/filters/@me", map[string]any{"title": "f", "keywords": []map[string]any{{"keyword": "word"}}, "context": []string{"home"}, "action": "hide"}},
		{"POST", "/social/rest/reports/@me", map[string]any{"accountId": other.id, "category": "spam"}},
		{"POST", "/social/rest/tags/@me", map[string]string{"name": "news"}},
		{"PUT", "/social/rest/appdata/@me/@self/notes", map[string]string{"theme": "dark"}},
		{"POST", "/social/rest/albums/@me/@self", map[string]string{"title": "Trip"}},
		rpc("activities.create", `{"userId":"@me","groupId":"@self","activity":{"title":"rpc"}}`),
		rpc("people.create", fmt.Sprintf(`{"userId":"@me","groupId":"@friends","id":%q}`, other.id)),
		rpc("appdata.update", `{"userId":"@me","groupId":"@self","appId":"notes","data":{"k":"v"}}`),
		rpc("albums.create", `{"userId":"@me","groupId":"@self","album":{"title":"rpc"}}`),
		rpc("likes.create", fmt.Sprintf(`{"activityId":%q}`, theirs)),
	}
}

// refused checks that every write of u's through b is refused with
// status, whatever b's token cache holds, and that nothing was written.
func refused(t *testing.T, b *env, u user, routes []writeRoute, status int) {
	t.Helper()
	for _, w := range routes {
		r := b.do(w.method, w.path, u.token, w.body)
		got := r.status
		if w.path == "/social/rpc" {
			got = rpcStatus(r)
		}
		if got != status {
			t.Errorf("%s %s %v: %d, want %d: %s", w.method, w.path, w.body, got, status, r.raw)
		}
	}
}

// staleTokens has b verify (and cache) the tokens of bob and dan, then
// has ada suspend bob and dan delete their account through a: b trusts
// both tokens still.
func staleTokens(t *testing.T, a, b *env, ada, bob, dan user) {
	t.Helper()
	for _, u := range []user{bob, dan} {
		if r := b.do("GET", "/social/rest/people/@me/@self", u.token, nil); r.status != http.StatusOK {
			t.Fatalf("%s on b: %d %s", u.name, r.status, r.raw)
		}
	}
	a.act(ada, map[string]any{"action": "suspend", "accountId": bob.id, "reason": "spam"})
	if r := a.do("DELETE", "/auth/account", dan.token, map[string]string{"password": "password-dan"}); r.status >= 300 {
		t.Fatalf("dan's deletion: %d %s", r.status, r.raw)
	}
}

// rpcStatus is the HTTP status a JSON-RPC answer's error carries (200 for
// a result).
func rpcStatus(r resp) int {
	if e, ok := r.body["error"].(map[string]any); ok {
		if c, ok := e["code"].(float64); ok {
			return int(c)
		}
	}
	return http.StatusOK
}

// An instance that still trusts a token of an account suspended or
// deleted through another refuses every write of it: each transaction
// reads its actor (the guard), whatever the token cache says.
func TestCachedTokenWritesRefused(t *testing.T) {
	a, b := twoInstances(t)
	ada, bob, carol, dan := a.register("ada"), a.register("bob"), a.register("carol"), a.register("dan")
	a.makeAdmin(ada)
	g := a.entry(a.do("POST", "/social/rest/groups/@me", carol.token, map[string]string{"title": "open"}))["id"].(string)
	bobs, dans, carols := a.post(bob, "bob's"), a.post(dan, "dan's"), a.post(carol, "carol's")
	staleTokens(t, a, b, ada, bob, dan)
	// a forgot both tokens; b trusts them still, and refuses every write.
	a.wantError(a.do("GET", "/social/rest/people/@me/@self", bob.token, nil), http.StatusUnauthorized)
	refused(t, b, bob, writeRoutes(bob, carol, bobs, carols, g), http.StatusForbidden)
	refused(t, b, dan, writeRoutes(dan, carol, dans, carols, g), http.StatusUnauthorized)
	a.Settle()
	b.Settle()
	// Nothing was written: bob's post is as it was, carol's has no
	// reaction, and nobody follows or was told of anything.
	if got, err := a.activitiesService().Exists(context.Background(), bobs); err != nil || got.Title != "bob's" || got.Edits != 0 {
		t.Errorf("bob's post after refused edits and deletes: %+v, %v", got, err)
	}
	c := a.activity(carol, carol.id, carols)
	if c["likesCount"] != float64(0) || c["commentsCount"] != float64(0) {
		t.Errorf("carol's post after refused writes: %v", c)
	}
	if f := a.list(a.do("GET", "/social/rest/people/@me/@followers", carol.token, nil)); len(f) != 0 {
		t.Errorf("carol's followers after refused follows: %v", f)
	}
	if n := a.do("GET", "/social/rest/notifications/@me", carol.token, nil).body["list"].([]any); len(n) != 0 {
		t.Errorf("carol was told of refused writes: %v", n)
	}
}

// A token logged out, or revoked by its app, through one instance writes
// nothing through another that still trusts it: every write reads its
// token as it reads its actor. (A read may still pass within the token
// cache's time.)
func TestLoggedOutTokenWritesRefused(t *testing.T) {
	a, b := twoInstances(t)
	bob, carol := a.register("bob"), a.register("carol")
	g := a.entry(a.do("POST", "/social/rest/groups/@me", carol.token, map[string]string{"title": "open"}))["id"].(string)
	bobs, carols := a.post(bob, "bob's"), a.post(carol, "carol's")
	if r := b.do("GET", "/social/rest/people/@me/@self", bob.token, nil); r.status != http.StatusOK {
		t.Fatalf("bob on b: %d %s", r.status, r.raw)
	}
	if r := a.do("POST", "/auth/logout", bob.token, nil); r.status != http.StatusNoContent {
		t.Fatalf("logout: %d %s", r.status, r.raw)
	}
	if r := b.do("GET", "/social/rest/people/@me/@self", bob.token, nil); r.status != http.StatusOK {
		t.Fatalf("b no longer trusts the token: the test tests nothing (%d)", r.status)
	}
	refused(t, b, bob, writeRoutes(bob, carol, bobs, carols, g), http.StatusUnauthorized)
	if r := b.do("POST", "/api/v1/statuses", bob.token, map[string]any{"status": "after the logout"}, stacktest.JSON...); r.status != http.StatusUnauthorized {
		t.Errorf("a Mastodon post after the logout: %d %s", r.status, r.raw)
	}
	a.Settle()
	if got, err := a.activitiesService().Exists(context.Background(), bobs); err != nil || got.Title != "bob's" {
		t.Errorf("bob's post after refused edits and deletes: %+v, %v", got, err)
	}
	if c := a.activity(carol, carol.id, carols); c["likesCount"] != float64(0) || c["commentsCount"] != float64(0) {
		t.Errorf("carol's post after refused writes: %v", c)
	}
}

// A suspended admin whose token another instance still trusts can
// neither grant a role, nor suspend, nor lift a suspension.
func TestSuspendedAdminCannotModerate(t *testing.T) {
	a, b := twoInstances(t)
	ada, eve, mal := a.register("ada"), a.register("eve"), a.register("mal")
	a.makeAdmin(ada)
	a.makeAdmin(eve)
	if r := b.do("GET", "/social/rest/people/@me/@self", eve.token, nil); r.status != http.StatusOK {
		t.Fatalf("eve on b: %d %s", r.status, r.raw)
	}
	a.act(ada, map[string]any{"action": "suspend", "accountId": eve.id, "reason": "rogue"})
	b.wantError(b.do("PUT", "/social/rest/moderation/roles/"+mal.id, eve.token, map[string]string{"role": "admin"}), http.StatusForbidden)
	b.wantError(b.do("POST", "/social/rest/moderation/actions", eve.token,
		map[string]any{"action": "suspend", "accountId": ada.id, "reason": "revenge"}), http.StatusForbidden)
	b.wantError(b.do("POST", "/social/rest/moderation/actions", eve.token,
		map[string]any{"action": "unsuspend", "accountId": eve.id}), http.StatusForbidden)
	// ada is an admin still, and mal nothing.
	if r := a.do("GET", "/social/rest/moderation/actions", ada.token, nil); r.status != http.StatusOK {
		t.Errorf("ada's audit log: %d %s", r.status, r.raw)
	}
	a.wantError(a.do("GET", "/social/rest/moderation/reports", mal.token, nil), http.StatusForbidden)
}

// No write of the OpenAPI document, and no JSON-RPC method that writes,
// succeeds for a suspended or a deleted account through an instance that
// still trusts its token: the routes are taken from the document and the
// method list, so one added later is tried without being named here.
func TestCachedTokenWritesNothingAnywhere(t *testing.T) {
	a, b := twoInstances(t)
	ada, bob, carol, dan := a.register("ada"), a.register("bob"), a.register("carol"), a.register("dan")
	a.makeAdmin(ada)
	carols := a.post(carol, "carol's")
	staleTokens(t, a, b, ada, bob, dan)
	doc, _, err := loadContract()
	if err != nil {
		t.Fatal(err)
	}
	fill := func(path string) string {
		return pathParam.ReplaceAllStringFunc(path, func(m string) string {
			switch m[1 : len(m)-1] {
			case "userId":
				return "@me"
			case "target", "id":
				return carol.id
			case "activityId", "ids":
				return carols
			case "selector", "groupId":
				if strings.HasPrefix(path, "/social/rest/people/") {
					return "@friends"
				}
				return "@self"
			case "appId":
				return "notes"
			case "albumId":
				return "@all"
			}
			return "0123456789abcdef"
		})
	}
	body := map[string]any{"id": carol.id, "accountId": carol.id, "activityIds": []string{carols}, "category": "spam", "title": "t",
		"text": "t", "name": "news", "locked": true, "all": true, "role": "moderator", "action": "limit", "reason": "r",
		"keywords": []map[string]any{{"keyword": "w"}}, "context": []string{"home"}, "home": map[string]string{"lastReadId": carols},
		"mediaItem": map[string]any{"description": "d"}, "password": "password-" + "x"}
	tried := 0
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			if method == http.MethodGet || method == http.MethodHead || path == "/social/rpc" ||
				path == "/auth/login" || path == "/auth/register" || path == "/auth/logout" {
				continue
			}
			for _, u := range []user{bob, dan} {
				r := b.do(method, fill(path), u.token, body)
				tried++
				if u == dan && method == http.MethodDelete && path == "/auth/account" {
					continue // a deletion tried again finishes what it began: the account is gone either way
				}
				if r.status < 300 {
					t.Errorf("%s %s by %s, whose token b still trusts: %d %s", method, path, u.name, r.status, r.raw)
				}
			}
		}
	}
	r := b.do("POST", "/social/rpc", carol.token, `{"method":"system.listMethods","id":"m"}`)
	for _, m := range r.body["result"].([]any) {
		method := m.(string)
		if strings.HasSuffix(method, ".get") || strings.HasSuffix(method, ".supportedFields") || method == "system.listMethods" ||
			strings.HasPrefix(method, "moderation.") && method != "moderation.act" && method != "moderation.grant" || method == "notifications.unread" {
			continue
		}
		params := fmt.Sprintf(`{"userId":"@me","groupId":"@self","activityId":%q,"id":%q,"appId":"notes","data":{"k":"v"},"activity":{"title":"t"},"comment":{"text":"t"},"album":{"title":"t"},"text":"t","ids":[],"all":true,"accountId":%q,"category":"spam","action":"limit","reason":"r","role":"admin","name":"news"}`,
			carols, carol.id, carol.id)
		for _, u := range []user{bob, dan} {
			got := b.do("POST", "/social/rpc", u.token, fmt.Sprintf(`{"method":%q,"id":"1","params":%s}`, method, params))
			tried++
			if rpcStatus(got) < 300 {
				t.Errorf("%s by %s, whose token b still trusts: %s", method, u.name, got.raw)
			}
		}
	}
	if tried < 60 {
		t.Errorf("only %d writes tried", tried)
	}
}
