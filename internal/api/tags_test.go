package api_test

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Hashtags: a post is filed under the #tags of its text, case-folded; a
// tag's feed lists them; a tag's followers get its new posts at home from
// their follow on, and keep them when they unfollow; an edit moves the
// activity between tags, and its followers' copies with it.
func TestHashtags(t *testing.T) {
	e := newEnv(t)
	alice, bob, carol := e.register("alice"), e.register("bob"), e.register("carol")
	tagFeed := func(u user, tag string) []string {
		t.Helper()
		return e.feed(u, "@me/@tag:"+url.PathEscape(tag))
	}
	old := e.post(alice, "before anyone follows #Go")
	r := e.do("POST", "/social/rest/tags/@me", bob.token, map[string]string{"name": "#GO"})
	if r.status != 201 || e.entry(r)["name"] != "go" || e.entry(r)["following"] != true || e.entry(r)["followedTime"] == nil {
		t.Fatalf("follow #GO: %d %s", r.status, r.raw)
	}
	// A second follow is the first: its time stays.
	if again := e.do("POST", "/social/rest/tags/@me", bob.token, map[string]string{"name": "go"}); again.status != 201 || e.entry(again)["followedTime"] != e.entry(r)["followedTime"] {
		t.Errorf("follow again: %d %s, want the first follow", again.status, again.raw)
	}
	if r := e.do("POST", "/social/rest/tags/@me", carol.token, map[string]string{"name": "Café"}); r.status != 201 || e.entry(r)["name"] != "café" {
		t.Fatalf("follow Café: %d %s", r.status, r.raw)
	}
	p := e.do("POST", "/social/rest/activities/@me/@self", alice.token, map[string]string{
		"title": "learning #go and #golang", "body": "at the #CAFE\u0301, see https://example.com/#go and &#39; #2024"})
	if p.status != 201 {
		t.Fatalf("post: %d %s", p.status, p.raw)
	}
	tagged := e.entry(p)["id"].(string)
	if got := e.entry(p)["tags"]; !cmp.Equal(got, []any{"go", "golang", "café"}) {
		t.Errorf("tags %v, want go, golang, café", got)
	}
	e.Settle()

	if got := tagFeed(carol, "GO"); !cmp.Equal(got, []string{tagged, old}) {
		t.Errorf("#GO read by carol: %v, want %v", got, []string{tagged, old})
	}
	if got := tagFeed(carol, "#café"); !cmp.Equal(got, []string{tagged}) {
		t.Errorf("#café: %v", got)
	}
	if got := tagFeed(carol, "2024"+"x"); len(got) != 0 {
		t.Errorf("#2024x: %v", got)
	}
	// Neither follows alice: the tags bring her new post, not the old one.
	if got := e.feed(bob, "@me/@friends"); !cmp.Equal(got, []string{tagged}) {
		t.Errorf("bob's home: %v, want the post after his follow of #go", got)
	}
	if got := e.feed(carol, "@me/@friends"); !cmp.Equal(got, []string{tagged}) {
		t.Errorf("carol's home: %v", got)
	}
	// Paging, and since.
	first := e.do("GET", "/social/rest/activities/@me/@tag:go?count=1", bob.token, nil)
	cursor := str(first.body["nextCursor"])
	if got := e.list(first); !cmp.Equal(got, []string{tagged}) || cursor == "" {
		t.Fatalf("#go, page 1: %v, cursor %q", got, cursor)
	}
	if got := e.list(e.do("GET", "/social/rest/activities/@me/@tag:go?count=1&cursor="+cursor, bob.token, nil)); !cmp.Equal(got, []string{old}) {
		t.Errorf("#go, page 2: %v", got)
	}
	if got := e.list(e.do("GET", "/social/rest/activities/@me/@tag:go?since="+old, bob.token, nil)); !cmp.Equal(got, []string{tagged}) {
		t.Errorf("#go since the first: %v", got)
	}
	// By JSON-RPC too.
	res := e.doBatch(bob, `[{"method":"activities.get","id":"t","params":{"userId":"@viewer","groupId":"@tag:GoLang"}}]`)
	if l, _ := res[0]["result"].(map[string]any); l == nil || len(l["list"].([]any)) != 1 {
		t.Errorf("activities.get @tag:GoLang: %v", res[0])
	}

	// The edit drops #go and adds #rust: the tag feeds follow at once, the
	// followers' homes once the job has run.
	if r := e.do("POST", "/social/rest/tags/@me", carol.token, map[string]string{"name": "rust"}); r.status != 201 {
		t.Fatal(r.status, string(r.raw))
	}
	if r := e.do("PUT", "/social/rest/activities/@me/@self/@app/"+tagged, alice.token, map[string]string{"title": "learning #rust"}); r.status != 200 ||
		!cmp.Equal(e.entry(r)["tags"], []any{"rust", "café"}) {
		t.Fatalf("edit: %d %s", r.status, r.raw)
	}
	if got := tagFeed(carol, "go"); !cmp.Equal(got, []string{old}) {
		t.Errorf("#go after the edit: %v", got)
	}
	if got := tagFeed(carol, "rust"); !cmp.Equal(got, []string{tagged}) {
		t.Errorf("#rust after the edit: %v", got)
	}
	e.Settle()
	if got := e.feed(bob, "@me/@friends"); len(got) != 0 {
		t.Errorf("bob's home after the edit took #go away: %v", got)
	}
	if got := e.feed(carol, "@me/@friends"); !cmp.Equal(got, []string{tagged}) {
		t.Errorf("carol's home after the edit: %v", got)
	}

	// Unfollowed: what came stays, what comes next does not.
	if r := e.do("DELETE", "/social/rest/tags/@me/caf%C3%A9", carol.token, nil); r.status != 204 {
		t.Fatalf("unfollow: %d %s", r.status, r.raw)
	}
	later := e.post(alice, "more #café")
	e.Settle()
	if got := e.feed(carol, "@me/@friends"); !cmp.Equal(got, []string{tagged}) {
		t.Errorf("carol's home after her unfollow: %v, want the earlier post alone", got)
	}
	if got := tagFeed(bob, "café"); !cmp.Equal(got, []string{later, tagged}) {
		t.Errorf("#café: %v", got)
	}

	// The list and the question, to the owner alone.
	l := e.do("GET", "/social/rest/tags/@me", carol.token, nil)
	if items, _ := l.body["list"].([]any); l.status != 200 || len(items) != 1 || items[0].(map[string]any)["name"] != "rust" {
		t.Errorf("carol's tags: %d %s", l.status, l.raw)
	}
	if r := e.do("GET", "/social/rest/tags/@me/Rust", carol.token, nil); r.status != 200 || e.entry(r)["following"] != true {
		t.Errorf("does carol follow rust: %d %s", r.status, r.raw)
	}
	if r := e.do("GET", "/social/rest/tags/@me/go", carol.token, nil); r.status != 200 || e.entry(r)["following"] != false || e.entry(r)["name"] != "go" {
		t.Errorf("does carol follow go: %d %s", r.status, r.raw)
	}
	e.wantError(e.do("GET", "/social/rest/tags/"+carol.id, bob.token, nil), 403)
	e.wantError(e.do("POST", "/social/rest/tags/"+carol.id, bob.token, map[string]string{"name": "go"}), 403)

	// Refusals change nothing.
	for _, bad := range []any{
		map[string]string{"name": ""}, map[string]string{"name": "#"}, map[string]string{"name": "123"},
		map[string]string{"name": "two words"}, map[string]string{"name": strings.Repeat("x", 101)},
		map[string]any{"name": 5}, map[string]string{}, "go",
	} {
		e.wantError(e.do("POST", "/social/rest/tags/@me", carol.token, bad), 400)
	}
	for _, bad := range []string{"@tag:", "@tag:a%20b", "@tag:" + strings.Repeat("x", 101), "@tag:42"} {
		e.wantError(e.do("GET", "/social/rest/activities/@me/"+bad, carol.token, nil), 400)
	}
	e.wantError(e.do("DELETE", "/social/rest/tags/@me/%23", carol.token, nil), 400)
	var many []string
	for i := range 21 {
		many = append(many, fmt.Sprintf("#t%d", i))
	}
	before := e.feed(alice, "@me/@self")
	e.wantError(e.do("POST", "/social/rest/activities/@me/@self", alice.token, map[string]string{"title": strings.Join(many, " ")}), 400)
	e.wantError(e.do("POST", "/social/rest/activities/@me/@self", alice.token, map[string]string{"title": "#" + strings.Repeat("long", 30)}), 400)
	e.wantError(e.do("PUT", "/social/rest/activities/@me/@self/@app/"+later, alice.token, map[string]string{"body": strings.Join(many, " ")}), 400)
	if got := e.feed(alice, "@me/@self"); !cmp.Equal(got, before) {
		t.Errorf("alice's posts after the refusals: %v, want %v", got, before)
	}
	if l := e.do("GET", "/social/rest/tags/@me", carol.token, nil); len(l.body["list"].([]any)) != 1 {
		t.Errorf("carol's tags after the refusals: %s", l.raw)
	}
	if got := tagFeed(bob, "café"); !slices.Contains(got, later) {
		t.Errorf("#café after the refused edit: %v", got)
	}
}

// A reader who follows an author and a tag of theirs is in two audience
// entities of each such post, which come one after the other in the home
// feed's query: paged one at a time, the feed shows each post once. The
// checker found a post twice across a page boundary.
func TestHomeShowsAPostOnceThoughTwoWaysBringIt(t *testing.T) {
	e := newEnv(t)
	ann, ben := e.register("ann"), e.register("ben")
	e.follow(ben, ann.id)
	if r := e.do("POST", "/social/rest/tags/@me", ben.token, map[string]string{"name": "go"}); r.status != 201 {
		t.Fatal(r.status, string(r.raw))
	}
	var want []string
	for i := range 3 {
		want = append([]string{e.post(ann, fmt.Sprintf("post %d #go", i))}, want...)
	}
	e.Settle()
	var got []string
	cursor := ""
	for page := 0; page < 10; page++ {
		r := e.do("GET", "/social/rest/activities/@me/@friends?count=1&cursor="+url.QueryEscape(cursor), ben.token, nil)
		got = append(got, e.list(r)...)
		if cursor = str(r.body["nextCursor"]); cursor == "" {
			break
		}
	}
	if !cmp.Equal(got, want) {
		t.Errorf("ben's home, a page of one at a time: %v, want %v", got, want)
	}
	// A cursor that is not the home feed's is refused.
	e.wantError(e.do("GET", "/social/rest/activities/@me/@friends?cursor=x.y", ben.token, nil), 400)
	e.wantError(e.do("GET", "/social/rest/activities/@me/@friends?cursor=abc", ben.token, nil), 400)
}
