package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/accounts"
	"socialstream/internal/activities"
	"socialstream/internal/lifecycle"
	"socialstream/internal/push"
	"socialstream/internal/queue"
	"socialstream/internal/store"
)

// mentionsOf returns every entity in the env's namespace, of every kind,
// whose key or properties name id, as "Kind/name: where".
func mentionsOf(t *testing.T, db *store.DB, id string) (found []string, counted map[string]int) {
	t.Helper()
	ctx := context.Background()
	// A kindless query: every entity of the namespace, whatever its kind.
	var ents []datastore.PropertyList
	keys, err := db.GetAll(ctx, db.Query(""), &ents)
	if err != nil {
		t.Fatal(err)
	}
	counted = map[string]int{}
	for i, key := range keys {
		if strings.HasPrefix(key.Kind, "__") {
			continue
		}
		counted[key.Kind]++
		for p := key; p != nil; p = p.Parent {
			if strings.Contains(p.Name, id) {
				found = append(found, fmt.Sprintf("%s/%s: key", key.Kind, key.Name))
			}
		}
		for _, prop := range ents[i] {
			if valueNames(prop.Value, id) {
				found = append(found, fmt.Sprintf("%s/%s: %s", key.Kind, key.Name, prop.Name))
			}
		}
	}
	return found, counted
}

func valueNames(v any, id string) bool {
	switch v := v.(type) {
	case string:
		return strings.Contains(v, id)
	case []any:
		return slices.ContainsFunc(v, func(x any) bool { return valueNames(x, id) })
	}
	return false
}

// Deleting an account stops its tokens at once and frees its name, and its
// erasure leaves nothing of it in any kind: activities and their copies,
// follows both ways with their counts, memberships (an owned group goes to
// its longest member, or with none goes), invitations, likes and comments
// with their counts, notifications received and caused, blocks and
// history.
// pushKey is a device's P-256 public key (the generator's point).
const pushKey = "BGsX0fLhLEJH-Lzm5WOkQPJ3A32BLeszoPShOUXYmMKWT-NC4v4af5uO5-tKfA-eFivOM1drMV7Oy7ZAaDe_UfU"

func TestDeleteAccountErasesEverything(t *testing.T) {
	e := newEnv(t)
	v, a, b, c := e.register("victim"), e.register("alice"), e.register("bob"), e.register("carol")
	e.follow(v, a.id)
	e.follow(a, v.id)
	e.follow(b, v.id)
	e.follow(v, b.id)
	if r := e.do("DELETE", "/social/rest/people/@me/@friends/"+b.id, v.token, nil); r.status != 204 { // a history with a removal
		t.Fatal(r.status, string(r.raw))
	}
	mine := e.post(v, "hello @alice")
	if r := e.do("POST", "/social/rest/activities/@me/@self", v.token, map[string]string{"title": "again", "externalId": "x1"}); r.status != 201 {
		t.Fatal(r.status, string(r.raw))
	}
	// An edited post: its versions must go too.
	if r := e.do("PUT", "/social/rest/activities/@me/@self/@app/"+mine, v.token, map[string]string{"title": "hello @alice, edited"}); r.status != 200 {
		t.Fatal(r.status, string(r.raw))
	}
	// Follows of a tag, and a post of it that brings it to them.
	for _, u := range []user{v, a} {
		if r := e.do("POST", "/social/rest/tags/@me", u.token, map[string]string{"name": "news"}); r.status != 201 {
			t.Fatal(r.status, string(r.raw))
		}
	}
	theirs := e.post(a, "hi @victim and @bob")
	bobs := e.post(b, "bob alone with the #news")
	// Reposts both ways: the victim's of bob's post, and alice's of the
	// victim's.
	if r := e.do("POST", "/social/rest/reposts/"+bobs, v.token, nil); r.status != 201 {
		t.Fatal(r.status, string(r.raw))
	}
	if r := e.do("POST", "/social/rest/reposts/"+mine, a.token, nil); r.status != 201 {
		t.Fatal(r.status, string(r.raw))
	}
	for _, like := range []struct {
		u        user
		activity string
	}{{v, theirs}, {v, bobs}, {a, mine}} {
		if r := e.do("POST", "/social/rest/likes/"+like.activity, like.u.token, nil); r.status/100 != 2 {
			t.Fatal(r.status, string(r.raw))
		}
	}
	// Bookmarks both ways, and a pin of the victim's.
	for _, bm := range []struct {
		u        user
		activity string
	}{{v, theirs}, {v, bobs}, {a, mine}, {a, bobs}} {
		if r := e.do("POST", "/social/rest/bookmarks/"+bm.activity, bm.u.token, nil); r.status != 200 {
			t.Fatal(r.status, string(r.raw))
		}
	}
	if r := e.do("POST", "/social/rest/pins/"+mine, v.token, nil); r.status != 200 {
		t.Fatal(r.status, string(r.raw))
	}
	// Replies both ways: alice's to the victim's post stands, without
	// naming them; the victim's to bob's goes.
	answer := e.do("POST", "/social/rest/activities/@me/@self", a.token, map[string]string{"title": "an answer", "inReplyTo": mine})
	if answer.status != 201 {
		t.Fatal(answer.status, string(answer.raw))
	}
	if r := e.do("POST", "/social/rest/activities/@me/@self", v.token, map[string]string{"title": "my answer", "inReplyTo": bobs}); r.status != 201 {
		t.Fatal(r.status, string(r.raw))
	}
	for _, cm := range []struct {
		u        user
		activity string
	}{{v, theirs}, {v, theirs}, {a, theirs}, {a, mine}} {
		if r := e.do("POST", "/social/rest/comments/"+cm.activity, cm.u.token, map[string]string{"text": "nice"}); r.status != 201 {
			t.Fatal(r.status, string(r.raw))
		}
	}
	group := func(u user, title, policy string) string {
		r := e.do("POST", "/social/rest/groups/@me", u.token, map[string]string{"title": title, "joinPolicy": policy})
		if r.status != 201 {
			t.Fatal(r.status, string(r.raw))
		}
		return e.entry(r)["id"].(string)
	}
	member := func(actor user, g, id string, want int) {
		t.Helper()
		if r := e.do("POST", "/social/rest/groups/@all/"+g+"/members", actor.token, map[string]string{"id": id}); r.status != want {
			t.Fatalf("join %s as %s: %d %s", g, actor.name, r.status, r.raw)
		}
	}
	handed, alone, hers, closed := group(v, "handed", "open"), group(v, "alone", "closed"), group(a, "hers", "open"), group(a, "closed", "closed")
	member(a, handed, "@me", 201)
	member(b, handed, "@me", 201)
	member(v, alone, c.id, 202) // an invitation the victim made
	member(v, hers, "@me", 201)
	member(a, closed, v.id, 202) // an invitation the victim received
	if r := e.do("POST", "/social/rest/people/@me/@blocked", v.token, map[string]string{"id": c.id}); r.status != 201 {
		t.Fatal(r.status, string(r.raw))
	}
	if r := e.do("POST", "/social/rest/people/@me/@blocked", b.token, map[string]string{"id": v.id}); r.status != 201 {
		t.Fatal(r.status, string(r.raw))
	}
	for _, m := range [][2]user{{v, a}, {a, v}} {
		if r := e.do("POST", "/social/rest/people/@me/@muted", m[0].token, map[string]string{"id": m[1].id}); r.status != 201 {
			t.Fatal(r.status, string(r.raw))
		}
	}
	for _, u := range []user{v, a} {
		if r := e.do("PUT", "/social/rest/appdata/@me/@self/notes", u.token, map[string]string{"theme": "dark"}); r.status != 204 {
			t.Fatal(r.status, string(r.raw))
		}
	}
	// A device's push subscription (of a type that never rings: no
	// delivery goes out).
	if _, err := e.svc.Push.Subscribe(context.Background(), v.id, v.token, push.Settings{Endpoint: "https://push.example.com/device",
		P256dh: pushKey, Auth: "AAAAAAAAAAAAAAAAAAAAAA", Alerts: []string{"poll"}}); err != nil {
		t.Fatal(err)
	}
	// Their key pair, as the first read of their actor makes it.
	if _, err := e.svc.Keys.Of(context.Background(), v.id); err != nil {
		t.Fatal(err)
	}
	e.Settle()
	if found, _ := mentionsOf(t, e.db, v.id); len(found) < 20 {
		t.Fatalf("the setup left only %d traces of the user: %v", len(found), found)
	}

	// Refused deletions change nothing.
	e.wantError(e.do("DELETE", "/auth/account", v.token, map[string]string{"password": "wrong password"}), http.StatusForbidden)
	e.wantError(e.do("DELETE", "/auth/account", v.token, map[string]string{}), http.StatusBadRequest)
	e.wantError(e.do("DELETE", "/auth/account", "", map[string]string{"password": "password-victim"}), http.StatusUnauthorized)
	if r := e.do("GET", "/social/rest/people/@me/@self", v.token, nil); r.status != 200 {
		t.Fatalf("a refused deletion ended the session: %d", r.status)
	}

	r := e.do("DELETE", "/auth/account", v.token, map[string]string{"password": "password-victim"})
	if r.status != http.StatusAccepted || r.body["id"] != v.id {
		t.Fatalf("delete: %d %s", r.status, r.raw)
	}
	// At once: the token stops, the login fails, the name is free.
	e.wantError(e.do("GET", "/social/rest/people/@me/@self", v.token, nil), http.StatusUnauthorized)
	e.wantError(e.do("POST", "/auth/login", "", map[string]string{"username": "victim", "password": "password-victim"}), http.StatusUnauthorized)
	again := e.register("victim")
	if again.id == v.id {
		t.Fatal("the name's new account has the old id")
	}
	e.Settle()

	found, counted := mentionsOf(t, e.db, v.id)
	// A version names its activity, not its author.
	if ok, err := e.db.Get(context.Background(), activities.VersionKey(e.db, mine, 0), &activities.Version{}); err != nil || ok {
		found = append(found, fmt.Sprintf("version 0 of %s: %v, %v", mine, ok, err))
	}
	if len(found) > 0 {
		t.Errorf("after the erasure, %d entities still name the user:\n%s", len(found), strings.Join(found, "\n"))
	}
	t.Logf("kinds counted after the erasure: %v", counted)
	for _, kind := range []string{"Activity", "Audience", "Membership", "Group", "Comment", "Notification", "Token", "User", "Username", "AppData", "TagFollow", "Bookmark"} {
		if counted[kind] == 0 {
			t.Errorf("no %s left at all: the check looked at nothing", kind)
		}
	}

	// Counts on the others are exact.
	person := func(u user) map[string]any {
		return e.entry(e.do("GET", "/social/rest/people/@me/@self", u.token, nil))
	}
	if p := person(a); p["followersCount"] != 0.0 || p["followingCount"] != 0.0 {
		t.Errorf("alice: %v followers, %v following; want 0, 0", p["followersCount"], p["followingCount"])
	}
	if p := person(b); p["followingCount"] != 0.0 {
		t.Errorf("bob follows %v; want 0", p["followingCount"])
	}
	act := func(id string) map[string]any { return e.activity(a, a.id, id) }
	if got := act(theirs); got["likesCount"] != 0.0 || got["commentsCount"] != 1.0 || len(got["mentions"].([]any)) != 1 {
		t.Errorf("alice's post: %v likes, %v comments, mentions %v; want 0, 1, [bob]", got["likesCount"], got["commentsCount"], got["mentions"])
	}
	if got := e.activity(b, b.id, bobs); got["repostsCount"] != 0.0 {
		t.Errorf("bob's post: %v reposts, want 0: the victim's went", got["repostsCount"])
	}
	if got, want := e.feed(a, "@me/@self"), []string{e.entry(answer)["id"].(string), theirs}; !slices.Equal(got, want) {
		t.Errorf("alice's own: %v, want her answer and her post: her repost of the victim's went with it", got)
	}
	if got := act(e.entry(answer)["id"].(string)); got["inReplyTo"] != mine || got["inReplyToUserId"] != nil {
		t.Errorf("alice's answer to the victim's post: %v", got)
	}
	g := e.entry(e.do("GET", "/social/rest/groups/@all/"+handed, a.token, nil))
	if g["ownerId"] != a.id || g["membersCount"] != 2.0 {
		t.Errorf("the group went to %v with %v members; want alice (its longest member), 2", g["ownerId"], g["membersCount"])
	}
	e.wantError(e.do("GET", "/social/rest/groups/@all/"+alone, c.token, nil), http.StatusNotFound)
	if g := e.entry(e.do("GET", "/social/rest/groups/@all/"+hers, a.token, nil)); g["membersCount"] != 1.0 {
		t.Errorf("alice's group has %v members; want 1", g["membersCount"])
	}
	for _, u := range []user{a, b, c} {
		for _, feed := range []string{"@friends", "@all", "@mentions"} {
			for _, id := range e.list(e.do("GET", "/social/rest/activities/@me/"+feed, u.token, nil)) {
				if id == mine {
					t.Errorf("%s's %s still shows the user's activity", u.name, feed)
				}
			}
		}
		ns := e.do("GET", "/social/rest/notifications/@me", u.token, nil)
		if strings.Contains(string(ns.raw), v.id) {
			t.Errorf("%s's notifications still name the user: %s", u.name, ns.raw)
		}
	}
}

// An erasure runs to the same end however its steps are delivered: each
// step twice, a late duplicate of an earlier one, with a budget that
// makes many steps. Before the deletion commits it waits; for an account
// never deleted it gives up.
func TestErasureIsIdempotentAndResumable(t *testing.T) {
	e := newEnv(t)
	v, a := e.register("victim"), e.register("alice")
	e.follow(a, v.id)
	e.follow(v, a.id)
	for i := range 30 {
		e.post(v, fmt.Sprintf("post %d @alice", i))
	}
	theirs := e.post(a, "alice's")
	if r := e.do("POST", "/social/rest/likes/"+theirs, v.token, nil); r.status/100 != 2 {
		t.Fatal(r.status)
	}
	e.Settle()
	ctx := context.Background()
	svc := e.svc
	lc, err := lifecycle.New(e.db, lifecycle.Services{Accounts: svc.Accounts, Graph: svc.Graph, Groups: svc.Groups,
		Activities: svc.Activities, Comments: svc.Comments, Notifications: svc.Notifications}, &held{},
		lifecycle.Config{Budget: 50, GiveUpAfter: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	task := accounts.EraseTask{UserID: v.id, At: time.Now().UnixMicro()}
	if _, err := lc.Erase(ctx, task); err == nil {
		t.Fatal("an erasure before the deletion committed went on")
	}
	old := accounts.EraseTask{UserID: a.id, At: time.Now().Add(-2 * time.Minute).UnixMicro()}
	if res, err := lc.Erase(ctx, old); err != nil || res.Stopped == "" {
		t.Fatalf("an erasure of an account never deleted: %+v, %v; want it to stop", res, err)
	}
	// Delete the account through the service, with a hook that keeps the
	// task to itself: this test delivers the steps.
	if err := svc.Accounts.Delete(ctx, v.id, "password-victim", func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	var steps []accounts.EraseTask
	cur := task
	for n := 0; ; n++ {
		if n > 100 {
			t.Fatal("the erasure does not end")
		}
		res, err := lc.Erase(ctx, cur)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := lc.Erase(ctx, cur); err != nil { // delivered twice
			t.Fatal(err)
		}
		if n > 0 {
			if _, err := lc.Erase(ctx, steps[n-1]); err != nil { // a late duplicate
				t.Fatal(err)
			}
		}
		steps = append(steps, cur)
		if res.Done {
			break
		}
		if res.Next == nil || res.Next.Step != cur.Step+1 {
			t.Fatalf("step %d neither done nor handed on: %+v", n, res)
		}
		cur = *res.Next
	}
	if len(steps) < 3 {
		t.Errorf("the erasure took %d steps; a budget of 50 over 30 activities should need more", len(steps))
	}
	e.Settle()
	if found, _ := mentionsOf(t, e.db, v.id); len(found) > 0 {
		t.Errorf("%d entities still name the user:\n%s", len(found), strings.Join(found, "\n"))
	}
	if got := e.activity(a, a.id, theirs); got["likesCount"] != 0.0 {
		t.Errorf("likesCount %v after the erasure, want 0", got["likesCount"])
	}
	if p := e.entry(e.do("GET", "/social/rest/people/@me/@self", a.token, nil)); p["followersCount"] != 0.0 || p["followingCount"] != 0.0 {
		t.Errorf("alice's counts %v/%v, want 0/0", p["followersCount"], p["followingCount"])
	}
}

// held is a queue that keeps its tasks: the test delivers them.
type held struct{ tasks []queue.Task }

func (h *held) Enqueue(_ context.Context, t queue.Task) error {
	h.tasks = append(h.tasks, t)
	return nil
}

// A block ends the follows between two people both ways, refuses their
// follows, likes and comments of each other, drops mentions and
// notifications between them, and leaves each out of the other's feeds,
// comments and notifications; unblocking restores no follow but allows a
// new one.
func TestBlocks(t *testing.T) {
	e := newEnv(t)
	a, b, c := e.register("alice"), e.register("bob"), e.register("carol")
	e.follow(a, b.id)
	e.follow(b, a.id)
	hers, his := e.post(a, "alice's"), e.post(b, "bob's")
	if r := e.do("POST", "/social/rest/comments/"+hers, b.token, map[string]string{"text": "before"}); r.status != 201 {
		t.Fatal(r.status)
	}
	g := e.entry(e.do("POST", "/social/rest/groups/@me", a.token, map[string]string{"title": "alice's group"}))["id"].(string)
	e.Settle()

	block := "/social/rest/people/@me/@blocked"
	e.wantError(e.do("POST", block, a.token, map[string]string{"id": a.id}), http.StatusBadRequest)
	e.wantError(e.do("POST", block, a.token, map[string]string{"id": "123456789"}), http.StatusNotFound)
	e.wantError(e.do("POST", block, a.token, map[string]string{}), http.StatusBadRequest)
	e.wantError(e.do("POST", "/social/rest/people/"+b.id+"/@blocked", a.token, map[string]string{"id": c.id}), http.StatusForbidden)
	r := e.do("POST", block, a.token, map[string]string{"id": b.id})
	if r.status != 201 || e.entry(r)["followersCount"] != 0.0 || e.entry(r)["followingCount"] != 0.0 {
		t.Fatalf("block: %d %s; want 201 with bob's counts at 0", r.status, r.raw)
	}
	if r := e.do("POST", block, a.token, map[string]string{"id": b.id}); r.status != 201 {
		t.Fatalf("blocking again: %d", r.status)
	}
	if got := e.list(e.do("GET", block, a.token, nil)); !slices.Equal(got, []string{b.id}) {
		t.Errorf("alice blocks %v, want [bob]", got)
	}
	e.wantError(e.do("GET", "/social/rest/people/"+a.id+"/@blocked", b.token, nil), http.StatusForbidden)
	if p := e.entry(e.do("GET", "/social/rest/people/@me/@self", a.token, nil)); p["followersCount"] != 0.0 || p["followingCount"] != 0.0 {
		t.Errorf("alice's counts %v/%v after the block, want 0/0", p["followersCount"], p["followingCount"])
	}
	e.Settle()

	// Refused both ways.
	e.wantError(e.do("POST", "/social/rest/people/@me/@friends", b.token, map[string]string{"id": a.id}), http.StatusForbidden)
	e.wantError(e.do("POST", "/social/rest/people/@me/@friends", a.token, map[string]string{"id": b.id}), http.StatusForbidden)
	// Across a block, the other's activities are not there.
	e.wantError(e.do("POST", "/social/rest/likes/"+hers, b.token, nil), http.StatusNotFound)
	e.wantError(e.do("POST", "/social/rest/comments/"+hers, b.token, map[string]string{"text": "after"}), http.StatusNotFound)
	// A mention is dropped; a join notifies nobody.
	r = e.do("POST", "/social/rest/activities/@me/@self", b.token, map[string]string{"title": "hey @alice and @carol"})
	if r.status != 201 {
		t.Fatal(r.status, string(r.raw))
	}
	if m := e.entry(r)["mentions"].([]any); len(m) != 1 || m[0] != c.id {
		t.Errorf("bob's mentions %v, want only carol", m)
	}
	mention := e.entry(r)["id"].(string)
	if r := e.do("POST", "/social/rest/groups/@all/"+g+"/members", b.token, map[string]string{"id": "@me"}); r.status != 201 {
		t.Fatal(r.status, string(r.raw))
	}
	e.Settle()
	for _, feed := range []string{"@friends", "@all", "@mentions"} {
		if got := e.list(e.do("GET", "/social/rest/activities/@me/"+feed, a.token, nil)); slices.Contains(got, his) || slices.Contains(got, mention) {
			t.Errorf("alice's %s shows bob's activities: %v", feed, got)
		}
		if got := e.list(e.do("GET", "/social/rest/activities/@me/"+feed, b.token, nil)); slices.Contains(got, hers) {
			t.Errorf("bob's %s shows alice's activity: %v", feed, got)
		}
	}
	if got := e.list(e.do("GET", "/social/rest/activities/@me/@all", c.token, nil)); !slices.Contains(got, his) || !slices.Contains(got, hers) {
		t.Errorf("carol's @all lacks their activities: %v", got)
	}
	if got := e.list(e.do("GET", "/social/rest/comments/"+hers, a.token, nil)); len(got) != 0 {
		t.Errorf("alice sees bob's comment: %v", got)
	}
	if got := e.list(e.do("GET", "/social/rest/comments/"+hers, c.token, nil)); len(got) != 1 {
		t.Errorf("carol sees %d comments, want bob's 1", len(got))
	}
	ns := e.do("GET", "/social/rest/notifications/@me", a.token, nil)
	if strings.Contains(string(ns.raw), b.id) || ns.body["unreadCount"] != 0.0 {
		t.Errorf("alice's notifications show bob: %s", ns.raw)
	}

	// Unblocking restores no follow, and allows a new one.
	if r := e.do("DELETE", block+"/"+b.id, a.token, nil); r.status != 204 {
		t.Fatal(r.status)
	}
	if got := e.list(e.do("GET", "/social/rest/people/@me/@friends", a.token, nil)); len(got) != 0 {
		t.Errorf("alice follows %v after unblocking, want nobody", got)
	}
	e.follow(b, a.id)
	if got := e.list(e.do("GET", block, a.token, nil)); len(got) != 0 {
		t.Errorf("alice still blocks %v", got)
	}
}

// An export is one JSON document of everything of the caller's, its
// activities read a page at a time, ending with "complete": true.
func TestExport(t *testing.T) {
	e := newEnv(t)
	a, b := e.register("alice"), e.register("bob")
	n := lifecycle.ExportPage + 5
	var first string
	for i := range n {
		id := e.post(a, fmt.Sprintf("post %d", i))
		if i == 0 {
			first = id
		}
	}
	// The first post, edited, is exported with its versions.
	if r := e.do("PUT", "/social/rest/activities/@me/@self/@app/"+first, a.token, map[string]string{"title": "post 0, edited"}); r.status != 200 {
		t.Fatal(r.status)
	}
	e.follow(a, b.id)
	e.follow(b, a.id)
	bobs := e.post(b, "bob's")
	if r := e.do("POST", "/social/rest/likes/"+bobs, a.token, nil); r.status/100 != 2 {
		t.Fatal(r.status)
	}
	if r := e.do("POST", "/social/rest/comments/"+bobs, a.token, map[string]string{"text": "mine"}); r.status != 201 {
		t.Fatal(r.status)
	}
	if r := e.do("POST", "/social/rest/groups/@me", a.token, map[string]string{"title": "hers"}); r.status != 201 {
		t.Fatal(r.status)
	}
	if r := e.do("PUT", "/social/rest/appdata/@me/@self/notes", a.token, map[string]string{"theme": "dark"}); r.status != 204 {
		t.Fatal(r.status)
	}
	if r := e.do("POST", "/social/rest/people/@me/@muted", a.token, map[string]any{"id": b.id, "duration": 60}); r.status != 201 {
		t.Fatal(r.status)
	}
	if r := e.do("POST", "/social/rest/tags/@me", a.token, map[string]any{"name": "#News"}); r.status != 201 {
		t.Fatal(r.status)
	}
	e.wantError(e.do("GET", "/auth/account/export", "", nil), http.StatusUnauthorized)
	r := e.do("GET", "/auth/account/export", a.token, nil)
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") ||
		!strings.Contains(r.header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("export: %d %v", r.status, r.header)
	}
	var doc struct {
		Person     map[string]any   `json:"person"`
		Activities []map[string]any `json:"activities"`
		Follows    []map[string]any `json:"follows"`
		Followers  []map[string]any `json:"followers"`
		Groups     []map[string]any `json:"groups"`
		Comments   []map[string]any `json:"comments"`
		Likes      []map[string]any `json:"likes"`
		Blocked    []map[string]any `json:"blocked"`
		Muted      []map[string]any `json:"muted"`
		Tags       []map[string]any `json:"followedTags"`
		AppData    map[string]any   `json:"appData"`
		Complete   bool             `json:"complete"`
	}
	if err := json.Unmarshal(r.raw, &doc); err != nil {
		t.Fatalf("not JSON: %v: %.200s", err, r.raw)
	}
	switch {
	case !doc.Complete || doc.Person["id"] != a.id:
		t.Errorf("complete %v, person %v", doc.Complete, doc.Person)
	case len(doc.Activities) != n || doc.Activities[0]["title"] != fmt.Sprintf("post %d", n-1) || doc.Activities[n-1]["title"] != "post 0, edited":
		t.Errorf("%d activities, want %d newest first", len(doc.Activities), n)
	case doc.Activities[0]["history"] != nil || fmt.Sprint(doc.Activities[n-1]["history"]) != fmt.Sprintf("[map[mentions:[] postedTime:%v sensitive:false title:post 0] map[mentions:[] postedTime:%v sensitive:false title:post 0, edited]]",
		doc.Activities[n-1]["postedTime"], doc.Activities[n-1]["editedTime"]):
		t.Errorf("histories: %v and %v, want none and the edited post's two versions", doc.Activities[0]["history"], doc.Activities[n-1]["history"])
	case len(doc.Follows) != 1 || doc.Follows[0]["id"] != b.id || len(doc.Followers) != 1 || doc.Followers[0]["id"] != b.id:
		t.Errorf("follows %v, followers %v", doc.Follows, doc.Followers)
	case len(doc.Groups) != 1 || len(doc.Comments) != 1 || doc.Comments[0]["text"] != "mine" ||
		len(doc.Likes) != 1 || doc.Likes[0]["activityId"] != bobs || len(doc.Blocked) != 0 ||
		!reflect.DeepEqual(doc.AppData, map[string]any{"notes": map[string]any{"theme": "dark"}}):
		t.Errorf("groups %v, comments %v, likes %v, blocked %v, appData %v", doc.Groups, doc.Comments, doc.Likes, doc.Blocked, doc.AppData)
	case len(doc.Muted) != 1 || doc.Muted[0]["id"] != b.id || doc.Muted[0]["until"] == nil:
		t.Errorf("muted %v, want bob for a minute", doc.Muted)
	case len(doc.Tags) != 1 || doc.Tags[0]["name"] != "news" || doc.Tags[0]["since"] == nil:
		t.Errorf("followed tags %v, want news", doc.Tags)
	}
}

// failAfter accepts n bytes, then fails every write.
type failAfter struct{ n int }

func (w *failAfter) Write(b []byte) (int, error) {
	if w.n < len(b) {
		return 0, errors.New("connection gone")
	}
	w.n -= len(b)
	return len(b), nil
}

// An export that cannot finish says so: its error comes back, and what was
// written has no "complete" field.
func TestExportFailureIsVisible(t *testing.T) {
	e := newEnv(t)
	a := e.register("alice")
	for i := range 3 {
		e.post(a, fmt.Sprintf("post %d", i))
	}
	if err := e.svc.Lifecycle.Export(context.Background(), a.id, &failAfter{n: 10}, nil); err == nil {
		t.Error("an export whose writes fail answered no error")
	}
	var buf strings.Builder
	flushes := 0
	if err := e.svc.Lifecycle.Export(context.Background(), a.id, &buf, func() { flushes++ }); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(buf.String(), `"complete":true}`+"\n") || flushes < 7 {
		t.Errorf("export ends %q after %d flushes; want complete, flushed after each list", buf.String()[max(0, buf.Len()-40):], flushes)
	}
	if err := e.svc.Lifecycle.Export(context.Background(), "123", &buf, nil); err == nil {
		t.Error("an export of nobody answered no error")
	}
}
