package api_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Grouped notifications, after Mastodon's: the likes of one activity, its
// reposts and the follows each make one entry with a count and the latest
// actors; the unread count counts groups; marking a group's ids read reads
// it; the plain list is as it was.
func TestGroupedNotifications(t *testing.T) {
	e := newEnv(t)
	ann, ben, cat, dan, eve, fay := e.register("ann"), e.register("ben"), e.register("cat"), e.register("dan"), e.register("eve"), e.register("fay")
	a := e.post(ann, "popular")
	for _, u := range []user{ben, cat, dan} {
		if r := e.do("POST", "/social/rest/likes/"+a, u.token, nil); r.status != 200 {
			t.Fatal(r.status, string(r.raw))
		}
	}
	if r := e.do("POST", "/social/rest/reposts/"+a, eve.token, nil); r.status != 201 {
		t.Fatal(r.status, string(r.raw))
	}
	e.follow(ben, ann.id)
	e.follow(cat, ann.id)
	e.post(fay, "hello @ann")
	e.Settle()

	type group struct {
		Key, Type string
		Count     int
		Actors    []string
		Read      bool
		IDs       int
	}
	grouped := func(query string) ([]group, any, any) {
		t.Helper()
		r := e.do("GET", "/social/rest/notifications/@me?grouped=true"+query, ann.token, nil)
		if r.status != 200 {
			t.Fatalf("grouped: %d %s", r.status, r.raw)
		}
		var out []group
		for _, it := range r.body["list"].([]any) {
			m := it.(map[string]any)
			g := group{Key: str(m["groupKey"]), Type: str(m["type"]), Count: int(m["count"].(float64)), Read: m["read"] == true, IDs: len(m["ids"].([]any))}
			for _, p := range m["actors"].([]any) {
				g.Actors = append(g.Actors, str(p.(map[string]any)["preferredUsername"]))
			}
			out = append(out, g)
		}
		return out, r.body["unreadCount"], r.body["totalResults"]
	}
	got, unread, total := grouped("")
	want := []group{
		{Type: "mention", Count: 1, Actors: []string{"fay"}, IDs: 1},
		{Key: "follow", Type: "follow", Count: 2, Actors: []string{"cat", "ben"}, IDs: 2},
		{Key: "repost:" + a, Type: "repost", Count: 1, Actors: []string{"eve"}, IDs: 1},
		{Key: "like:" + a, Type: "like", Count: 3, Actors: []string{"dan", "cat", "ben"}, IDs: 3},
	}
	if len(got) > 0 {
		want[0].Key = got[0].Key // an ungrouped one's key names it
	}
	if !cmp.Equal(got, want) || unread != 4.0 || total != 4.0 {
		t.Fatalf("grouped: %+v, unread %v of %v; want %+v, 4 of 4", got, unread, total, want)
	}
	// A page of groups.
	if page, _, total := grouped("&startIndex=1&count=2"); len(page) != 2 || page[0].Type != "follow" || page[1].Type != "repost" || total != 4.0 {
		t.Errorf("groups 2 and 3: %+v of %v", page, total)
	}

	// The likes read: one group fewer unread.
	r := e.do("GET", "/social/rest/notifications/@me?grouped=true&count=10", ann.token, nil)
	likes := r.body["list"].([]any)[3].(map[string]any)["ids"]
	if r := e.do("POST", "/social/rest/notifications/@me/read", ann.token, map[string]any{"ids": likes}); r.status != 204 {
		t.Fatal(r.status, string(r.raw))
	}
	if got, unread, _ := grouped(""); unread != 3.0 || !got[3].Read || got[0].Read {
		t.Errorf("after reading the likes: %+v, unread %v; want 3 unread groups", got, unread)
	}
	// The plain list is as it was: one entry each, unread counted one by one.
	plain := e.do("GET", "/social/rest/notifications/@me", ann.token, nil)
	if n := len(plain.body["list"].([]any)); n != 7 || plain.body["unreadCount"] != 4.0 {
		t.Errorf("the plain list: %d entries, %v unread; want 7, 4", n, plain.body["unreadCount"])
	}
	// By JSON-RPC too.
	res := e.doBatch(ann, `[{"method":"notifications.get","id":"g","params":{"userId":"@me","grouped":true}}]`)
	if l, _ := res[0]["result"].(map[string]any); l == nil || len(l["list"].([]any)) != 4 || l["unreadCount"] != 3.0 {
		t.Errorf("notifications.get grouped: %v", res[0])
	}

	// The unread count alone: the notifications, and if asked the groups
	// they fall in; one blocked is not counted.
	unreadOf := func(u user) (any, any) {
		t.Helper()
		r := e.do("GET", "/social/rest/notifications/@me/unread?grouped=true", u.token, nil)
		if r.status != 200 {
			t.Fatalf("unread: %d %s", r.status, r.raw)
		}
		m := r.body["entry"].(map[string]any)
		plain := e.do("GET", "/social/rest/notifications/@me/unread", u.token, nil)
		if p := plain.body["entry"].(map[string]any); p["unreadCount"] != m["unreadCount"] || p["unreadGroups"] != nil {
			t.Errorf("unread, not grouped: %v; grouped: %v", p, m)
		}
		return m["unreadCount"], m["unreadGroups"]
	}
	if n, g := unreadOf(ann); n != 4.0 || g != 3.0 {
		t.Errorf("unread: %v in %v groups; want 4 in 3", n, g)
	}
	if r := e.do("POST", "/social/rest/people/@me/@blocked", ann.token, map[string]string{"id": fay.id}); r.status != 201 {
		t.Fatal(r.status, string(r.raw))
	}
	if n, g := unreadOf(ann); n != 3.0 || g != 2.0 {
		t.Errorf("unread with fay blocked: %v in %v groups; want 3 in 2", n, g)
	}
	res = e.doBatch(ann, `[{"method":"notifications.unread","id":"u","params":{"userId":"@me","grouped":true}}]`)
	if m, _ := res[0]["result"].(map[string]any); m == nil || m["unreadCount"] != 3.0 || m["unreadGroups"] != 2.0 {
		t.Errorf("notifications.unread: %v", res[0])
	}
	e.wantError(e.do("GET", "/social/rest/notifications/"+ann.id+"/unread", ben.token, nil), 403)

	e.wantError(e.do("GET", "/social/rest/notifications/@me?grouped=maybe", ann.token, nil), 400)
	e.wantError(e.do("GET", "/social/rest/notifications/@me?grouped=true&cursor=abc", ann.token, nil), 400)
	e.wantError(e.do("GET", "/social/rest/notifications/"+ann.id+"?grouped=true", ben.token, nil), 403)
}
