package mastodon_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/mattn/go-mastodon"

	"socialstream/internal/stacktest"
)

// Lists as Mastodon has them: private to their owner, who adds and
// removes people they follow without asking or telling them; a list's
// timeline is its members' posts (their newest when added, each new one
// after), replies as its replies_policy says; an exclusive list's members
// leave the owner's home; an unfollow takes the person off the lists.
func TestMastodonLists(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	alice, bob, carol, dave := e.Register("alice"), e.Register("bob"), e.Register("carol"), e.Register("dave")
	ca, cb := e.MastoClient(alice, "read write follow"), e.MastoClient(bob, "read write follow")
	cc, cd := e.MastoClient(carol, "read write follow"), e.MastoClient(dave, "read write follow")
	before, err := cb.PostStatus(ctx, &mastodon.Toot{Status: "bob before the list"})
	if err != nil {
		t.Fatal(err)
	}
	for _, who := range []stacktest.User{bob, carol} {
		if _, err := ca.AccountFollow(ctx, mastodon.ID(who.ID)); err != nil {
			t.Fatal(err)
		}
	}
	list, err := ca.CreateList(ctx, "close")
	if err != nil || list.Title != "close" {
		t.Fatalf("create: %+v, %v", list, err)
	}
	listed := func(what string, want func([]*mastodon.Status) bool) {
		t.Helper()
		e.Eventually(what, func() bool {
			l, err := ca.GetTimelineList(ctx, list.ID, nil)
			return err == nil && want(l)
		})
	}
	has := func(id mastodon.ID) func([]*mastodon.Status) bool {
		return func(l []*mastodon.Status) bool {
			for _, s := range l {
				if s.ID == id {
					return true
				}
			}
			return false
		}
	}
	if err := ca.AddToList(ctx, list.ID, mastodon.ID(bob.ID)); err != nil {
		t.Fatal(err)
	}
	listed("bob's post from before, copied on his add", has(before.ID))
	if err := ca.AddToList(ctx, list.ID, mastodon.ID(dave.ID)); err == nil {
		t.Error("dave, whom alice does not follow, added")
	} else {
		wantStatus(t, err, http.StatusUnprocessableEntity)
	}
	if accs, err := ca.GetListAccounts(ctx, list.ID); err != nil || len(accs) != 1 || string(accs[0].ID) != bob.ID {
		t.Fatalf("members: %+v, %v", accs, err)
	}
	if ls, err := ca.GetAccountLists(ctx, mastodon.ID(bob.ID)); err != nil || len(ls) != 1 || ls[0].ID != list.ID {
		t.Errorf("bob's lists of alice's: %+v, %v", ls, err)
	}
	after, err := cb.PostStatus(ctx, &mastodon.Toot{Status: "bob after"})
	if err != nil {
		t.Fatal(err)
	}
	byCarol, err := cc.PostStatus(ctx, &mastodon.Toot{Status: "carol, in no list"})
	if err != nil {
		t.Fatal(err)
	}
	listed("bob's new post", has(after.ID))
	if l, _ := ca.GetTimelineList(ctx, list.ID, nil); has(byCarol.ID)(l) {
		t.Error("carol's post in a list she is not on")
	}

	// Replies to someone else, as the list's replies_policy says: to a
	// member ("list", the default), to whom alice follows ("followed"),
	// none.
	reply := func(text string) mastodon.ID {
		t.Helper()
		st, err := cb.PostStatus(ctx, &mastodon.Toot{Status: "@carol " + text, InReplyToID: byCarol.ID})
		if err != nil {
			t.Fatal(err)
		}
		return st.ID
	}
	toNonMember := reply("to carol, no member")
	marker, err := cb.PostStatus(ctx, &mastodon.Toot{Status: "bob's marker"})
	if err != nil {
		t.Fatal(err)
	}
	listed("the marker after the reply", has(marker.ID))
	if l, _ := ca.GetTimelineList(ctx, list.ID, nil); has(toNonMember)(l) {
		t.Error(`a reply to a non-member under "list"`)
	}
	r := e.Do("PUT", "/api/v1/lists/"+string(list.ID), alice.Token, map[string]any{"title": "closer", "replies_policy": "followed"}, "Content-Type", "application/json")
	if r.Status != http.StatusOK || r.Body["title"] != "closer" || r.Body["replies_policy"] != "followed" {
		t.Fatalf("update: %d %s", r.Status, r.Raw)
	}
	toFollowed := reply("to carol, whom alice follows")
	listed(`a reply to whom alice follows under "followed"`, has(toFollowed))
	e.Do("PUT", "/api/v1/lists/"+string(list.ID), alice.Token, map[string]any{"replies_policy": "none"}, "Content-Type", "application/json")
	toNone := reply("to carol, none")
	marker2, _ := cb.PostStatus(ctx, &mastodon.Toot{Status: "bob's second marker"})
	listed("the second marker", has(marker2.ID))
	if l, _ := ca.GetTimelineList(ctx, list.ID, nil); has(toNone)(l) {
		t.Error(`a reply under "none"`)
	}
	if r := e.Do("PUT", "/api/v1/lists/"+string(list.ID), alice.Token, map[string]any{"replies_policy": "some"}, "Content-Type", "application/json"); r.Status != http.StatusUnprocessableEntity {
		t.Errorf("a bad replies_policy: %d %s", r.Status, r.Raw)
	}

	// Exclusive: bob's posts leave alice's home at once, and come back.
	home := func() []*mastodon.Status {
		l, err := ca.GetTimelineHome(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	e.Eventually("bob's post at alice's home", func() bool { return has(marker2.ID)(home()) })
	e.Do("PUT", "/api/v1/lists/"+string(list.ID), alice.Token, map[string]any{"exclusive": true}, "Content-Type", "application/json")
	for _, s := range home() {
		if string(s.Account.ID) == bob.ID {
			t.Errorf("bob's %s at home with his exclusive list", s.ID)
		}
	}
	if !has(byCarol.ID)(home()) {
		t.Error("carol's post left home too")
	}
	e.Do("PUT", "/api/v1/lists/"+string(list.ID), alice.Token, map[string]any{"exclusive": false}, "Content-Type", "application/json")
	if !has(marker2.ID)(home()) {
		t.Error("bob's post not back home")
	}

	// Nobody on a list is told, nor sees it.
	if ns, err := cb.GetNotifications(ctx, nil); err != nil {
		t.Fatal(err)
	} else {
		for _, n := range ns {
			if string(n.Account.ID) == alice.ID && n.Type != "follow" {
				t.Errorf("bob told of alice's list: %+v", n)
			}
		}
	}
	for _, c := range []*mastodon.Client{cb, cd} {
		if _, err := c.GetList(ctx, list.ID); err == nil {
			t.Error("another reads alice's list")
		} else {
			wantStatus(t, err, http.StatusNotFound)
		}
		if _, err := c.GetTimelineList(ctx, list.ID, nil); err == nil {
			t.Error("another reads alice's list's timeline")
		}
	}

	// A removal takes bob's posts out; an unfollow takes carol off.
	if err := ca.RemoveFromList(ctx, list.ID, mastodon.ID(bob.ID)); err != nil {
		t.Fatal(err)
	}
	listed("bob's posts gone with him", func(l []*mastodon.Status) bool { return len(l) == 0 })
	if err := ca.AddToList(ctx, list.ID, mastodon.ID(carol.ID)); err != nil {
		t.Fatal(err)
	}
	listed("carol's post, copied on her add", has(byCarol.ID))
	if _, err := ca.AccountUnfollow(ctx, mastodon.ID(carol.ID)); err != nil {
		t.Fatal(err)
	}
	if accs, err := ca.GetListAccounts(ctx, list.ID); err != nil || len(accs) != 0 {
		t.Errorf("members after alice unfollows carol: %+v, %v", accs, err)
	}
	listed("carol's posts gone with her unfollow", func(l []*mastodon.Status) bool { return len(l) == 0 })

	// REST's lists are the same.
	r = e.Do("GET", "/social/rest/lists/@me", alice.Token, nil)
	if l, _ := r.Body["list"].([]any); r.Status != http.StatusOK || len(l) != 1 {
		t.Errorf("REST's lists: %d %s", r.Status, r.Raw)
	}
	if r := e.Do("GET", "/social/rest/activities/@me/@list:"+string(list.ID), alice.Token, nil); r.Status != http.StatusOK {
		t.Errorf("REST's list timeline: %d %s", r.Status, r.Raw)
	}
	if r := e.Do("GET", "/social/rest/activities/@me/@list:"+string(list.ID), bob.Token, nil); r.Status != http.StatusNotFound {
		t.Errorf("REST's list timeline to another: %d %s", r.Status, r.Raw)
	}

	if err := ca.DeleteList(ctx, list.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := ca.GetList(ctx, list.ID); err == nil {
		t.Error("a deleted list is there")
	}
}
