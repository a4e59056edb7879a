package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"cloud.google.com/go/datastore"
	"github.com/google/go-cmp/cmp"

	"socialstream/internal/accounts"
	"socialstream/internal/comments"
)

// activity returns one activity as viewer sees it.
func (e *env) activity(viewer user, owner, id string) map[string]any {
	e.t.Helper()
	r := e.do("GET", "/social/rest/activities/"+owner+"/@self/@app/"+id, viewer.token, nil)
	items, _ := r.body["list"].([]any)
	if len(items) != 1 {
		e.t.Fatalf("activity %s: %d %s", id, r.status, r.raw)
	}
	return items[0].(map[string]any)
}

func TestComments(t *testing.T) {
	e := newEnv(t)
	author, ann, ben := e.register("author"), e.register("ann"), e.register("ben")
	act := e.post(author, "discuss")

	var ids []string
	for i, u := range []user{ann, ben, ann} {
		r := e.do("POST", "/social/rest/comments/"+act, u.token, map[string]string{"text": fmt.Sprintf(" comment %d ", i)})
		if r.status != 201 {
			t.Fatalf("comment: %d %s", r.status, r.raw)
		}
		c := e.entry(r)
		if c["text"] != fmt.Sprintf("comment %d", i) || c["userId"] != u.id || c["author"].(map[string]any)["id"] != u.id {
			t.Errorf("comment = %v", c)
		}
		ids = append(ids, c["id"].(string))
	}
	// Oldest first, paged by cursor.
	p1 := e.do("GET", "/social/rest/comments/"+act+"?count=2", ben.token, nil)
	next, _ := p1.body["nextCursor"].(string)
	p2 := e.do("GET", "/social/rest/comments/"+act+"?count=2&cursor="+next, ben.token, nil)
	if diff := cmp.Diff(ids, append(e.list(p1), e.list(p2)...)); diff != "" {
		t.Errorf("comments mismatch (-want +got):\n%s", diff)
	}
	e.Eventually("commentsCount 3", func() bool { return e.activity(ben, author.id, act)["commentsCount"] == 3.0 })

	// Who may delete.
	e.wantError(e.do("DELETE", "/social/rest/comments/"+act+"/"+ids[0], ben.token, nil), 403)
	if r := e.do("DELETE", "/social/rest/comments/"+act+"/"+ids[0], ann.token, nil); r.status != 204 {
		t.Errorf("commenter deletes: %d", r.status)
	}
	if r := e.do("DELETE", "/social/rest/comments/"+act+"/"+ids[1], author.token, nil); r.status != 204 {
		t.Errorf("activity author deletes: %d", r.status)
	}
	e.wantError(e.do("DELETE", "/social/rest/comments/"+act+"/"+ids[1], author.token, nil), 404)
	e.Eventually("commentsCount 1", func() bool { return e.activity(ben, author.id, act)["commentsCount"] == 1.0 })

	for name, tc := range map[string]struct {
		method, path string
		body         any
		status       int
	}{
		"empty text":       {"POST", "/social/rest/comments/" + act, map[string]string{"text": "  "}, 400},
		"long text":        {"POST", "/social/rest/comments/" + act, map[string]string{"text": strings.Repeat("x", 2001)}, 400},
		"control char":     {"POST", "/social/rest/comments/" + act, map[string]string{"text": "a\u0000b"}, 400},
		"text not string":  {"POST", "/social/rest/comments/" + act, `{"text": 1}`, 400},
		"unknown activity": {"POST", "/social/rest/comments/12345", map[string]string{"text": "hi"}, 404},
		"bad activity":     {"GET", "/social/rest/comments/nope", nil, 404},
		"bad comment id":   {"DELETE", "/social/rest/comments/" + act + "/nope", nil, 404},
		"bad count":        {"GET", "/social/rest/comments/" + act + "?count=0", nil, 400},
	} {
		t.Run(name, func(t *testing.T) {
			e.t = t
			e.wantError(e.do(tc.method, tc.path, ann.token, tc.body), tc.status)
		})
	}
	e.t = t
	e.wantError(e.do("POST", "/social/rest/comments/"+act, "", map[string]string{"text": "hi"}), 401)

	// Deleting the activity takes its comments with it.
	if r := e.do("DELETE", "/social/rest/activities/@me/@self/@app/"+act, author.token, nil); r.status != 204 {
		t.Fatal(r.status)
	}
	e.wantError(e.do("GET", "/social/rest/comments/"+act, ann.token, nil), 404)
	// ... by the cleanup job that follows.
	e.Eventually("no comment left after the delete", func() bool {
		keys, err := e.db.GetAll(context.Background(), e.db.Query(comments.KindComment).FilterField("activityId", "=", act).KeysOnly(), nil)
		return err == nil && len(keys) == 0
	})
}

func TestLikes(t *testing.T) {
	e := newEnv(t)
	author, ann, ben := e.register("author"), e.register("ann"), e.register("ben")
	act := e.post(author, "like me")
	// Each answer is the activity with its counts as they are now.
	answer := func(r resp, likes float64, liked bool) {
		t.Helper()
		if r.status != 200 {
			t.Fatalf("%d %s", r.status, r.raw)
		}
		if a := e.entry(r); a["id"] != act || a["likesCount"] != likes || a["likedByViewer"] != liked {
			t.Errorf("answer %v: want likesCount %v, likedByViewer %v", a, likes, liked)
		}
	}
	for i := 0; i < 2; i++ { // idempotent
		answer(e.do("POST", "/social/rest/likes/"+act, ann.token, nil), 1, true)
	}
	answer(e.do("POST", "/social/rest/likes/"+act, ben.token, nil), 2, true)
	if a := e.activity(ann, author.id, act); a["likesCount"] != 2.0 {
		t.Errorf("likesCount read back at once: %v", a["likesCount"])
	}
	if a := e.activity(ann, author.id, act); a["likedByViewer"] != true {
		t.Errorf("likedByViewer for a liker: %v", a["likedByViewer"])
	}
	if a := e.activity(author, author.id, act); a["likedByViewer"] != false {
		t.Errorf("likedByViewer for a non-liker: %v", a["likedByViewer"])
	}
	home := e.do("GET", "/social/rest/activities/@me/@friends", author.token, nil)
	if item := home.body["list"].([]any)[0].(map[string]any); item["likesCount"] != 2.0 {
		t.Errorf("likesCount on the home feed: %v", item["likesCount"])
	}
	if diff := cmp.Diff([]string{ben.id, ann.id}, e.list(e.do("GET", "/social/rest/likes/"+act, author.token, nil))); diff != "" {
		t.Errorf("likers mismatch (-want +got):\n%s", diff)
	}
	for i := 0; i < 2; i++ {
		answer(e.do("DELETE", "/social/rest/likes/"+act, ann.token, nil), 1, false)
	}
	if a := e.activity(ann, author.id, act); a["likesCount"] != 1.0 {
		t.Errorf("likesCount after the unlike: %v", a["likesCount"])
	}
	// The caller's own likes, newest first: ben's one.
	if got := e.list(e.do("GET", "/social/rest/likes", ben.token, nil)); !cmp.Equal(got, []string{act}) {
		t.Errorf("ben's likes: %v, want [%s]", got, act)
	}
	if got := e.list(e.do("GET", "/social/rest/likes", ann.token, nil)); len(got) != 0 {
		t.Errorf("ann's likes after her unlike: %v", got)
	}
	e.wantError(e.do("POST", "/social/rest/likes/12345", ann.token, nil), 404)
	e.wantError(e.do("GET", "/social/rest/likes/x", ann.token, nil), 404)
	e.wantError(e.do("POST", "/social/rest/likes/"+act, "", nil), 401)
}

// Hundreds like one activity at once: every like is kept and the count
// ends exact.
func TestConcurrentLikesKeepExactCount(t *testing.T) {
	e := newEnv(t)
	author := e.register("popular")
	act := e.post(author, "viral")
	lk := e.likesService()
	ctx := context.Background()
	const n = 300
	// The likers exist (a like reads its actor), with their cards.
	var keys []*datastore.Key
	var vals []any
	for i := range n {
		id, u := fmt.Sprint(8_000_000_000+i), &accounts.User{Username: fmt.Sprint("liker", i)}
		keys = append(keys, accounts.UserKey(e.db, id), accounts.CountsKey(e.db, id))
		vals = append(vals, u, accounts.Card(u, accounts.Counts{}))
	}
	if err := e.db.PutMulti(ctx, keys, vals); err != nil {
		t.Fatal(err)
	}
	run := func(f func(user string) error) {
		errs := make(chan error, n)
		sem := make(chan struct{}, 50)
		for i := 0; i < n; i++ {
			sem <- struct{}{}
			go func() {
				defer func() { <-sem }()
				errs <- f(fmt.Sprint(8_000_000_000 + i))
			}()
		}
		for i := 0; i < n; i++ {
			if err := <-errs; err != nil {
				t.Errorf("concurrent: %v", err)
			}
		}
	}
	run(func(u string) error { _, err := lk.Like(ctx, u, act); return err })
	e.Eventually("likesCount 300", func() bool { return e.activity(author, author.id, act)["likesCount"] == float64(n) })
	run(func(u string) error {
		var i int
		fmt.Sscan(u, &i)
		var err error
		if i%2 == 0 {
			_, err = lk.Unlike(ctx, u, act)
		} else {
			_, err = lk.Like(ctx, u, act) // liking again changes nothing
		}
		return err
	})
	e.Eventually("likesCount 150", func() bool { return e.activity(author, author.id, act)["likesCount"] == float64(n/2) })
}

func TestNotifications(t *testing.T) {
	e := newEnv(t)
	alice, bob, carol := e.register("alice"), e.register("bob"), e.register("carol")
	e.follow(bob, alice.id)                                                                  // follow
	act := e.post(bob, "hello @alice and @bob")                                              // mention (bob mentions himself: nothing)
	e.do("POST", "/social/rest/comments/"+act, carol.token, map[string]string{"text": "hi"}) // comment → bob
	e.do("POST", "/social/rest/comments/"+act, bob.token, map[string]string{"text": "me"})   // own: nothing
	e.do("POST", "/social/rest/likes/"+act, alice.token, nil)                                // like → bob
	e.do("POST", "/social/rest/likes/"+act, bob.token, nil)                                  // own: nothing
	group := e.createGroup(alice, "alice's", "open")
	e.do("POST", "/social/rest/groups/@all/"+group+"/members", carol.token, map[string]string{"id": "@me"}) // join → alice

	types := func(u user) ([]string, map[string]any) {
		r := e.do("GET", "/social/rest/notifications/@me", u.token, nil)
		if r.status != 200 {
			t.Fatalf("notifications: %d %s", r.status, r.raw)
		}
		var out []string
		for _, it := range r.body["list"].([]any) {
			out = append(out, it.(map[string]any)["type"].(string))
		}
		return out, r.body
	}
	e.Eventually("alice's three notifications", func() bool { got, _ := types(alice); return len(got) == 3 })
	e.Eventually("bob's two notifications", func() bool { got, _ := types(bob); return len(got) == 2 })
	got, body := types(alice)
	if diff := cmp.Diff([]string{"group_join", "mention", "follow"}, got); diff != "" {
		t.Errorf("alice's notifications mismatch (-want +got):\n%s", diff)
	}
	if body["unreadCount"] != 3.0 {
		t.Errorf("unreadCount = %v", body["unreadCount"])
	}
	first := body["list"].([]any)[0].(map[string]any)
	if first["actor"].(map[string]any)["id"] != carol.id || first["groupId"] != group || first["read"] != false || first["published"] == "" {
		t.Errorf("group_join notification = %v", first)
	}
	if got, _ := types(bob); !cmp.Equal(got, []string{"like", "comment"}) {
		t.Errorf("bob's notifications = %v", got)
	}
	if got, _ := types(carol); len(got) != 0 {
		t.Errorf("carol notified of her own doing: %v", got)
	}

	// Mark read by id; another's ids are ignored.
	_, bobBody := types(bob)
	bobID := bobBody["list"].([]any)[0].(map[string]any)["id"].(string)
	mention := body["list"].([]any)[1].(map[string]any)["id"].(string)
	if r := e.do("POST", "/social/rest/notifications/@me/read", alice.token, map[string]any{"ids": []string{mention, bobID}}); r.status != 204 {
		t.Fatalf("read: %d %s", r.status, r.raw)
	}
	if _, b := types(alice); b["unreadCount"] != 2.0 {
		t.Errorf("alice unreadCount after one read: %v", b["unreadCount"])
	}
	if _, b := types(bob); b["unreadCount"] != 2.0 {
		t.Errorf("bob's notification marked read by alice: %v", b["unreadCount"])
	}
	if r := e.do("POST", "/social/rest/notifications/@me/read", alice.token, map[string]any{"all": true}); r.status != 204 {
		t.Fatal(r.status)
	}
	if _, b := types(alice); b["unreadCount"] != 0.0 {
		t.Errorf("unreadCount after all read: %v", b["unreadCount"])
	}
	p1 := e.do("GET", "/social/rest/notifications/@me?count=2", alice.token, nil)
	next, _ := p1.body["nextCursor"].(string)
	p2 := e.do("GET", "/social/rest/notifications/@me?count=2&cursor="+next, alice.token, nil)
	if len(e.list(p1))+len(e.list(p2)) != 3 || next == "" {
		t.Errorf("pageParams: %s / %s", p1.raw, p2.raw)
	}

	// One by id; dismissed, it is gone (404), and from the list; then
	// every one cleared.
	path := "/social/rest/notifications/@me/" + mention
	if r := e.do("GET", path, alice.token, nil); r.status != http.StatusOK || e.entry(r)["id"] != mention || e.entry(r)["type"] != "mention" {
		t.Errorf("one by id: %d %s", r.status, r.raw)
	}
	if r := e.do("DELETE", path, alice.token, nil); r.status != http.StatusNoContent {
		t.Errorf("dismiss: %d %s", r.status, r.raw)
	}
	e.wantError(e.do("GET", path, alice.token, nil), http.StatusNotFound)
	if got, _ := types(alice); !cmp.Equal(got, []string{"group_join", "follow"}) {
		t.Errorf("alice's notifications after a dismissal: %v", got)
	}
	if r := e.do("DELETE", "/social/rest/notifications/@me", alice.token, nil); r.status != http.StatusNoContent {
		t.Errorf("clear: %d %s", r.status, r.raw)
	}
	if got, b := types(alice); len(got) != 0 || b["unreadCount"] != 0.0 {
		t.Errorf("alice's notifications after a clear: %v", got)
	}

	e.wantError(e.do("GET", "/social/rest/notifications/"+bob.id, alice.token, nil), 403)
	e.wantError(e.do("POST", "/social/rest/notifications/"+bob.id+"/read", alice.token, map[string]any{"all": true}), 403)
	e.wantError(e.do("GET", "/social/rest/notifications/@me", "", nil), 401)
	e.wantError(e.do("POST", "/social/rest/notifications/@me/read", alice.token, `{}`), 400)
	e.wantError(e.do("POST", "/social/rest/notifications/@me/read", alice.token, map[string]any{"all": true, "ids": []string{"x"}}), 400)
	e.wantError(e.do("POST", "/social/rest/notifications/@me/read", alice.token, `{"ids": "x"}`), 400)
}

func TestSocialRPC(t *testing.T) {
	e := newEnv(t)
	alice, bob := e.register("alice"), e.register("bob")
	act := e.post(bob, "rpc")
	r := e.do("POST", "/social/rpc", alice.token, `[
		{"method":"comments.create","id":"c","params":{"activityId":"`+act+`","text":"via rpc"}},
		{"method":"likes.create","id":"l","params":{"activityId":"`+act+`"}},
		{"method":"comments.get","id":"g","params":{"activityId":"`+act+`"}},
		{"method":"likes.get","id":"w","params":{"activityId":"`+act+`"}},
		{"method":"comments.create","id":"bad","params":{"activityId":"`+act+`","text":""}}
	]`)
	if r.status != 200 || !strings.Contains(string(r.raw), `"via rpc"`) || !strings.Contains(string(r.raw), alice.id) {
		t.Fatalf("batch: %d %s", r.status, r.raw)
	}
	if !strings.Contains(string(r.raw), `"id":"bad","error":{"code":400`) {
		t.Errorf("bad call not an error in its slot: %s", r.raw)
	}
	e.Eventually("bob's notifications by RPC", func() bool {
		n := e.do("POST", "/social/rpc", bob.token, `{"method":"notifications.get","id":"n"}`)
		res, _ := n.body["result"].(map[string]any)
		return res != nil && res["unreadCount"] == 2.0
	})
}
