package mastodon_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/mattn/go-mastodon"

	"socialstream/internal/localstack"
	"socialstream/internal/stacktest"
	"socialstream/internal/testenv"
)

// Direct conversations through a Mastodon client library nobody here
// wrote: one per set of people, newest post first, unread for all but the
// one who wrote last; read; removed until a new message; a deleted post
// gives the one before; a set of other people is another conversation.
func TestMastodonConversations(t *testing.T) {
	e := stacktest.New(t, localstack.Options{DB: testenv.DB(t)})
	ctx := context.Background()
	alice, bob, carol := e.Register("alice"), e.Register("bob"), e.Register("carol")
	ca, cb, cc := e.MastoClient(alice, "read write follow"), e.MastoClient(bob, "read write follow"), e.MastoClient(carol, "read write follow")
	post := func(c *mastodon.Client, text string, reply mastodon.ID) mastodon.ID {
		t.Helper()
		st, err := c.PostStatus(ctx, &mastodon.Toot{Status: text, Visibility: "direct", InReplyToID: reply})
		if err != nil {
			t.Fatalf("post %q: %v", text, err)
		}
		return st.ID
	}
	list := func(c *mastodon.Client) []*mastodon.Conversation {
		t.Helper()
		got, err := c.GetConversations(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	first := post(ca, "@bob a word between us", "")
	e.Settle()
	got := list(cb)
	if len(got) != 1 || !got[0].Unread || got[0].LastStatus == nil || got[0].LastStatus.ID != first || len(got[0].Accounts) != 1 || got[0].Accounts[0].Username != "alice" {
		t.Fatalf("bob's conversations: %+v", got)
	}
	conv := got[0].ID
	if mine := list(ca); len(mine) != 1 || mine[0].Unread || mine[0].ID != conv || mine[0].Accounts[0].Username != "bob" {
		t.Errorf("alice's conversations: %+v", mine)
	}
	if none := list(cc); len(none) != 0 {
		t.Errorf("carol's conversations: %+v", none)
	}
	// A public post and a followers-only one mentioning bob are no
	// conversation's.
	if _, err := ca.PostStatus(ctx, &mastodon.Toot{Status: "@bob in public", Visibility: "public"}); err != nil {
		t.Fatal(err)
	}
	if err := cb.MarkConversationAsRead(ctx, conv); err != nil {
		t.Fatal(err)
	}
	answer := post(cb, "@alice an answer", first)
	other := post(ca, "@bob @carol the three of us", "")
	e.Settle()
	got = list(cb)
	if len(got) != 2 || got[0].LastStatus.ID != other || got[1].ID != conv || got[1].LastStatus.ID != answer || got[1].Unread || !got[0].Unread {
		t.Fatalf("bob's two conversations: %+v", got)
	}
	if a := list(ca); len(a) != 2 || a[1].ID != conv || !a[1].Unread {
		t.Errorf("alice's: the answer unread: %+v", a)
	}
	// Removed: gone from bob's list alone, until a newer post.
	if err := cb.DeleteConversation(ctx, conv); err != nil {
		t.Fatal(err)
	}
	if got := list(cb); len(got) != 1 || got[0].ID == conv {
		t.Errorf("after bob removed it: %+v", got)
	}
	if a := list(ca); len(a) != 2 {
		t.Errorf("alice's after bob removed it: %+v", a)
	}
	again := post(ca, "@bob still there?", answer)
	e.Settle()
	if got := list(cb); len(got) != 2 || got[0].ID != conv || got[0].LastStatus.ID != again || !got[0].Unread {
		t.Errorf("after a new message: %+v", got)
	}
	// A deleted post gives the one before; bob's, which held only the
	// deleted one since he removed it, is gone again (as Mastodon's).
	if err := ca.DeleteStatus(ctx, again); err != nil {
		t.Fatal(err)
	}
	e.Settle()
	if got := list(ca); len(got) != 2 || got[1].ID != conv || got[1].LastStatus == nil || got[1].LastStatus.ID != answer {
		t.Errorf("alice's after the newest was deleted: %+v", got)
	}
	if got := list(cb); len(got) != 1 || got[0].ID == conv {
		t.Errorf("bob's after the newest was deleted: %+v", got)
	}
	// Paging, and what is refused.
	page, err := ca.GetConversations(ctx, &mastodon.Pagination{Limit: 1})
	if err != nil || len(page) != 1 {
		t.Fatalf("limit=1: %v %v", page, err)
	}
	if rest, err := ca.GetConversations(ctx, &mastodon.Pagination{Limit: 1, MaxID: page[0].LastStatus.ID}); err != nil || len(rest) != 1 || rest[0].ID != conv {
		t.Errorf("the next page: %v %v", rest, err)
	}
	for _, bad := range []struct{ method, path string }{{"POST", "/api/v1/conversations/nope/read"}, {"DELETE", "/api/v1/conversations/" + string(conv) + "0"},
		{"GET", "/api/v1/conversations?max_id=x"}} {
		if r := e.Do(bad.method, bad.path, cc.Config.AccessToken, nil); r.Status < 400 || r.Status >= 500 {
			t.Errorf("%s %s: %d", bad.method, bad.path, r.Status)
		}
	}
	if r := e.Do("POST", "/api/v1/conversations/"+string(conv)+"/read", cc.Config.AccessToken, nil); r.Status != http.StatusNotFound {
		t.Errorf("carol reading bob's conversation: %d", r.Status)
	}
}
