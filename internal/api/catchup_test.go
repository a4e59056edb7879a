package api_test

import (
	"fmt"
	"net/url"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// since asks any feed for what is newer than an id, newest first, paged
// by cursor as any feed.
func TestFeedsSince(t *testing.T) {
	e := newEnv(t)
	alice, bob := e.register("alice"), e.register("bob")
	e.follow(alice, bob.id)
	g := e.createGroup(bob, "g", "open")
	if r := e.do("POST", "/social/rest/groups/@all/"+g+"/members", alice.token, map[string]string{"id": "@me"}); r.status/100 != 2 {
		t.Fatal(r.status)
	}
	p1 := e.post(bob, "one @alice")
	p2 := e.post(bob, "two @alice")
	e.Settle()
	r := e.do("POST", "/social/rest/activities/@me/@self/notes", bob.token, map[string]string{"title": "three @alice"})
	if r.status != 201 {
		t.Fatal(r.status)
	}
	p3 := e.entry(r)["id"].(string)
	e.Settle()
	for _, c := range []struct {
		path  string
		since string
		want  []string
	}{
		{"@me/@friends", p1, []string{p3, p2}},
		{"@me/@friends", p3, []string{}},
		{"@me/@mentions", p2, []string{p3}},
		{bob.id + "/@self", p1, []string{p3, p2}},
		{bob.id + "/@self/notes", p1, []string{p3}},
		{"@me/@all", p2, []string{p3}},
		{"@me/@all/notes", p1, []string{p3}},
		{"@me/" + g, p1, []string{p3, p2}},
	} {
		if got := e.feed(alice, c.path+"?since="+c.since); !cmp.Equal(got, c.want) {
			t.Errorf("%s since %s: %v, want %v", c.path, c.since, got, c.want)
		}
	}
	// Paged by cursor.
	first := e.do("GET", "/social/rest/activities/@me/@friends?count=1&since="+p1, alice.token, nil)
	next, _ := first.body["nextCursor"].(string)
	if got := e.list(first); !cmp.Equal(got, []string{p3}) || next == "" {
		t.Fatalf("first page since %s: %v, cursor %q", p1, got, next)
	}
	second := e.do("GET", "/social/rest/activities/@me/@friends?count=1&since="+p1+"&cursor="+url.QueryEscape(next), alice.token, nil)
	if got := e.list(second); !cmp.Equal(got, []string{p2}) || second.body["nextCursor"] != nil {
		t.Errorf("second page: %v, cursor %v; want %s and the end", got, second.body["nextCursor"], p2)
	}
	// A cursor of the feed without since is not one of this query.
	plain := e.do("GET", "/social/rest/activities/@me/@friends?count=1", alice.token, nil)
	e.wantError(e.do("GET", "/social/rest/activities/@me/@friends?since="+p1+"&cursor="+url.QueryEscape(plain.body["nextCursor"].(string)), alice.token, nil), 400)
	// By JSON-RPC.
	res := e.doBatch(alice, `[{"method":"activities.get","id":"1","params":{"userId":"@viewer","groupId":"@friends","since":"`+p2+`"}}]`)
	if l, _ := res[0]["result"].(map[string]any); l == nil || len(l["list"].([]any)) != 1 {
		t.Errorf("activities.get since: %v", res[0])
	}
	e.wantError(e.do("GET", "/social/rest/activities/@me/@friends?since=yesterday", alice.token, nil), 400)
	e.wantError(e.do("GET", "/social/rest/activities/@me/@self/@app/"+p1+"?since="+p1, alice.token, nil), 400)
}

// Markers: any device reads where its person left a feed, and moves it
// forward only.
func TestMarkers(t *testing.T) {
	e := newEnv(t)
	alice, bob := e.register("alice"), e.register("bob")
	ids := []string{e.post(bob, "1"), e.post(bob, "2"), e.post(bob, "3")}
	home := func(r resp) string {
		t.Helper()
		m, _ := e.entry(r)["home"].(map[string]any)
		s, _ := m["lastReadId"].(string)
		return s
	}
	if r := e.do("GET", "/social/rest/markers/@me", alice.token, nil); r.status != 200 || len(e.entry(r)) != 0 {
		t.Fatalf("markers before any: %d %s", r.status, r.raw)
	}
	if got := home(e.do("POST", "/social/rest/markers/@me", alice.token, map[string]any{"home": map[string]string{"lastReadId": ids[1]}})); got != ids[1] {
		t.Errorf("moved to %s: %s", ids[1], got)
	}
	if got := home(e.do("POST", "/social/rest/markers/@me", alice.token, map[string]any{"home": map[string]string{"lastReadId": ids[0]}})); got != ids[1] {
		t.Errorf("moved back to %s: %s, want it left at %s", ids[0], got, ids[1])
	}
	// Two devices at once: the newer position wins, whatever the order.
	var wg sync.WaitGroup
	for _, id := range []string{ids[2], ids[1]} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.do("POST", "/social/rest/markers/@me", alice.token, map[string]any{"home": map[string]string{"lastReadId": id}, "group:12345": map[string]string{"lastReadId": id}})
		}()
	}
	wg.Wait()
	r := e.do("GET", "/social/rest/markers/@me?feeds=home,group:12345,mentions", alice.token, nil)
	if m := e.entry(r); home(r) != ids[2] || fmt.Sprint(m["group:12345"]) != fmt.Sprintf("map[lastReadId:%s]", ids[2]) || m["mentions"] != nil {
		t.Errorf("after two devices: %s", r.raw)
	}
	// Each person's own.
	if r := e.do("GET", "/social/rest/markers/@me", bob.token, nil); len(e.entry(r)) != 0 {
		t.Errorf("bob's markers: %s", r.raw)
	}
	e.wantError(e.do("GET", "/social/rest/markers/"+alice.id, bob.token, nil), 403)
	e.wantError(e.do("POST", "/social/rest/markers/"+alice.id, bob.token, map[string]any{"home": map[string]string{"lastReadId": ids[0]}}), 403)
	// Bad input changes nothing.
	many := map[string]any{}
	for i := range 21 {
		many[fmt.Sprint("group:", i+1)] = map[string]string{"lastReadId": ids[0]}
	}
	for _, body := range []any{
		map[string]any{},
		map[string]any{"home": map[string]string{"lastReadId": "the top"}},
		map[string]any{"timeline": map[string]string{"lastReadId": ids[0]}},
		map[string]any{"home": "x"},
		many,
	} {
		e.wantError(e.do("POST", "/social/rest/markers/@me", alice.token, body), 400)
	}
	e.wantError(e.do("GET", "/social/rest/markers/@me?feeds=home,bogus", alice.token, nil), 400)
	if got := home(e.do("GET", "/social/rest/markers/@me", alice.token, nil)); got != ids[2] {
		t.Errorf("after the refusals: %s", got)
	}
}
