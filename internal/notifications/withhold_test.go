package notifications_test

import (
	"context"
	"sync"
	"testing"

	"cloud.google.com/go/datastore"

	"socialstream/internal/ids"
	"socialstream/internal/notifications"
	"socialstream/internal/policy"
	"socialstream/internal/store"
)

// posts are activities as the policy knows them, by id, that a test
// changes as it goes; each is a stored entity of no shape, so that a
// job's commit finds it there.
type posts struct {
	db *store.DB
	mu sync.Mutex
	by map[string]policy.Post
}

func (p *posts) set(id string, post policy.Post) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.by[id] = post
}

func (p *posts) Mentioned(_ context.Context, id string) (*datastore.Key, bool, []string, int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	post, ok := p.by[id]
	return p.db.NameKey("Activity", id, nil), ok, post.Mentions, 0, nil
}

func (*posts) Texts(context.Context, string, []string) (map[string][]string, error) { return nil, nil }

func (p *posts) Posts(_ *store.Lookup, idList []string) func() map[string]policy.Post {
	return func() map[string]policy.Post {
		p.mu.Lock()
		defer p.mu.Unlock()
		out := map[string]policy.Post{}
		for _, id := range idList {
			if post, ok := p.by[id]; ok {
				out[id] = post
			}
		}
		return out
	}
}

// follows is who follows whom, as package graph answers it.
type follows map[[2]string]bool

func (f follows) Follows(l *store.Lookup, follower, followee string) store.Ref {
	// A follow of a pair is stored as an entity of no shape: the lookup
	// finds it, or not.
	return l.Add(l.DB().NameKey("Follow", follower+"_"+followee, nil), &struct{ N int }{})
}

// A notification is made withheld when the policy keeps it from its
// reader already (a post taken down before its job ran), and Reweigh
// decides again from the facts as they are, either way, and twice over
// changes nothing: the list and the unread count agree at each step.
func TestWithheldAsThePostIs(t *testing.T) {
	ctx := context.Background()
	gen := ids.New()
	ps := &posts{by: map[string]policy.Post{}}
	fs := follows{}
	db, svc := newService(t, gen, nopQueue{}, notifications.Config{Activities: ps, Graph: fs})
	ps.db = db
	const reader, author = "1001", "2002"
	for _, id := range []string{"1", "2", "3"} {
		if err := db.Put(ctx, db.NameKey("Activity", id, nil), &struct{ N int }{1}); err != nil {
			t.Fatal(err)
		}
	}
	ps.set("1", policy.Post{Author: author, Mentions: []string{reader}})
	ps.set("2", policy.Post{Author: author, Mentions: []string{reader}, Removed: true}) // taken down before its job ran
	ps.set("3", policy.Post{Author: author, Visibility: policy.FollowersOnly})          // a post of the followers the reader is told of
	follow := func(on bool) {
		t.Helper()
		k := db.NameKey("Follow", reader+"_"+author, nil)
		var err error
		if on {
			err = db.Put(ctx, k, &struct{ N int }{1})
		} else {
			err = db.Delete(ctx, k)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	follow(true)
	for _, id := range []string{"1", "2", "3"} {
		e := notifications.Event{Type: notifications.Mention, ActorID: author, Recipients: []string{reader}, ActivityID: id, ID: "mention-" + id, Seq: gen.Next()}
		if e.Type, e.ID = notifications.Status, "status-"+id; id != "3" {
			e.Type, e.ID = notifications.Mention, "mention-"+id
		}
		if made, err := svc.Run(ctx, e); err != nil || made != 1 {
			t.Fatalf("%s: made %d, %v", e.ID, made, err)
		}
	}
	check := func(when string, want ...string) {
		t.Helper()
		list, unread, _, err := svc.List(ctx, reader, notifications.Query{Page: store.PageRequest{Count: 20}})
		if err != nil {
			t.Fatal(err)
		}
		n, err := svc.Unread(ctx, reader)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, v := range list {
			got = append(got, v.ActivityID)
		}
		if len(got) != len(want) || int64(len(want)) != unread || n != unread {
			t.Errorf("%s: the list shows %v (unread %d, counted %d), want %v", when, got, unread, n, want)
			return
		}
		for i := range want {
			if got[len(got)-1-i] != want[i] {
				t.Errorf("%s: the list shows %v, want %v, newest first", when, got, want)
			}
		}
	}
	check("as made", "1", "3")
	reweigh := func(sel notifications.Selection) {
		t.Helper()
		for range 2 {
			if err := svc.ReweighAll(ctx, sel); err != nil {
				t.Fatal(err)
			}
		}
	}
	ps.set("2", policy.Post{Author: author, Mentions: []string{reader}})
	reweigh(notifications.Selection{Activity: "2"})
	check("the post put back", "1", "2", "3")
	follow(false)
	reweigh(notifications.Selection{Actor: author, User: reader})
	check("the reader unfollowed", "1", "2")
	ps.set("1", policy.Post{Author: author, Mentions: []string{reader}, Removed: true})
	reweigh(notifications.Selection{Actor: author})
	check("the first taken down", "2")
	follow(true)
	ps.set("1", policy.Post{Author: author, Mentions: []string{reader}})
	reweigh(notifications.Selection{Actor: author})
	check("all back", "1", "2", "3")
}
