package wired_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"socialstream/internal/activities"
	"socialstream/internal/app"
	"socialstream/internal/app/apptest"
	"socialstream/internal/federation"
	"socialstream/internal/ids"
	"socialstream/internal/rebuild"
	"socialstream/internal/store"
	"socialstream/internal/testenv"
	"socialstream/internal/trends"
)

// Two instances, each keeping the range of the reader's home it read:
// every write that changes it on one shows on the other's next page (a
// post of someone the reader follows, a follow's copy of older posts, a
// delete), and a home read again when nothing reached it makes no query,
// but the ask for changes, though others posted meanwhile. First pages
// of up to 40 share one range, whatever their size.
func TestAKeptHomeShowsEveryChangeOnTheNextPage(t *testing.T) {
	t.Parallel() // its waits beside the others: its namespace and caches are its own
	ctx := context.Background()
	base := testenv.DB(t)
	cfg := app.Config{PageCacheTTL: 10 * time.Minute}.PageCache(nil)
	here, there := base.WithCache(store.NewCache(cfg)), base.WithCache(store.NewCache(cfg))
	gen := ids.New()
	acc := apptest.Accounts(t, base, gen)
	q := testenv.StartTasks(t).Queue
	a, b := apptest.Services(t, here, gen, acc, q), apptest.Services(t, there, gen, acc, q)
	reader, author, stranger, later := register(t, acc, "reader"), register(t, acc, "author"), register(t, acc, "stranger"), register(t, acc, "later")
	if _, err := a.Graph.Follow(ctx, reader, author, nil); err != nil {
		t.Fatal(err)
	}
	post := func(who, title string) activities.View {
		t.Helper()
		v, _, err := a.Activities.Post(ctx, who, activities.PostInput{Title: title})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// home reads the reader's home on the second instance: its titles,
	// and whether it read its range (not kept).
	home := func(count int) ([]string, bool) {
		t.Helper()
		_, before, _ := there.Cache().AnswerStats()
		list, _, err := b.Activities.Feed(ctx, activities.FeedRequest{Viewer: reader, Selector: activities.Friends, UserID: reader,
			Page: store.PageRequest{Count: count}})
		if err != nil {
			t.Fatal(err)
		}
		var titles []string
		for _, v := range list {
			titles = append(titles, v.Title)
		}
		_, after, _ := there.Cache().AnswerStats()
		return titles, after > before
	}
	first := post(author, "first")
	older := post(later, "before the follow")
	// settled: the read waits the margin after the step's write (a range
	// read within it of a change is read again at the next ask, however
	// it was dropped), so that the next step may find it kept.
	steps := []struct {
		name    string
		count   int
		write   func()
		want    []string
		queried bool
		settled bool
	}{
		{"cold", 5, nil, []string{"first"}, true, true},
		{"read again, a page of 20", 20, nil, []string{"first"}, false, false},
		{"a post of someone followed", 20, func() { post(author, "second") }, []string{"second", "first"}, true, true},
		{"a post of someone else", 20, func() { post(stranger, "elsewhere") }, []string{"second", "first"}, false, false},
		{"a follow's copy of older posts", 20, func() {
			if _, err := a.Graph.Follow(ctx, reader, later, nil); err != nil {
				t.Fatal(err)
			}
			// The follow's job, run here: the copy says whose home it
			// changes.
			err := here.Update(ctx, func(tx *store.Tx) error {
				_, err := activities.AddFollower(tx, []activities.Ref{{ID: older.ID, Seq: mustSeq(t, older.ID), Author: later}}, 0, reader)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}, []string{"second", "before the follow", "first"}, true, false},
		{"a delete", 20, func() {
			if err := a.Activities.Delete(ctx, author, first.ID); err != nil {
				t.Fatal(err)
			}
		}, []string{"second", "before the follow"}, true, true},
		{"read again after, a page of 1", 1, nil, []string{"second"}, false, false},
		{"a page of 41: more than is kept", 41, nil, []string{"second", "before the follow"}, true, false},
	}
	for _, s := range steps {
		if s.write != nil {
			s.write()
		}
		if s.settled {
			time.Sleep(store.SyncMargin)
		}
		got, queried := home(s.count)
		if diff := cmp.Diff(s.want, got); diff != "" || queried != s.queried {
			t.Errorf("%s: queried %v, want %v; titles (-want +got):\n%s", s.name, queried, s.queried, diff)
		}
	}
	if taken, _, _ := there.Cache().AnswerStats(); taken != 3 {
		t.Errorf("the second instance took %d ranges as kept, want 3", taken)
	}
}

// mustSeq is the sequence of an activity's id.
func mustSeq(t *testing.T, id string) int64 {
	t.Helper()
	seq, ok := ids.Parse(id)
	if !ok {
		t.Fatalf("%q is no id", id)
	}
	return seq
}

// A kept range holds no post the home's edge has passed since it was
// read: the page after reads the range again, and shows it no more.
func TestAKeptHomeEndsAtItsEdge(t *testing.T) {
	t.Parallel() // its waits beside the others
	ctx := context.Background()
	const retention = 3 * time.Second
	base := testenv.DB(t)
	db := base.WithCache(store.NewCache(app.Config{PageCacheTTL: 10 * time.Minute}.PageCache(nil)))
	gen := ids.New()
	acc := apptest.Accounts(t, base, gen)
	svc, err := app.NewServices(db, gen, acc, testenv.StartTasks(t).Queue, slog.New(slog.DiscardHandler), rebuild.Config{HomeRetention: retention},
		app.Pictures{}, app.Push{}, federation.Config{}, trends.Config{})
	if err != nil {
		t.Fatal(err)
	}
	reader := register(t, acc, "reader")
	if _, _, err := svc.Activities.Post(ctx, reader, activities.PostInput{Title: "soon past the edge"}); err != nil {
		t.Fatal(err)
	}
	posted := time.Now()
	time.Sleep(store.SyncMargin) // so that the range read next is kept
	home := func() (int, int64) {
		t.Helper()
		list, _, err := svc.Activities.Feed(ctx, activities.FeedRequest{Viewer: reader, Selector: activities.Friends, UserID: reader,
			Page: store.PageRequest{Count: 20}})
		if err != nil {
			t.Fatal(err)
		}
		taken, _, _ := db.Cache().AnswerStats()
		return len(list), taken
	}
	if n, _ := home(); n != 1 {
		t.Fatalf("the home before its edge passed the post: %d posts, want 1", n)
	}
	if n, taken := home(); n != 1 || taken != 1 {
		t.Fatalf("read again: %d posts, %d ranges taken as kept; want 1 and 1", n, taken)
	}
	time.Sleep(time.Until(posted.Add(retention + time.Second)))
	if n, taken := home(); n != 0 || taken != 2 {
		t.Errorf("once the edge passed the post: %d posts, %d ranges taken; want none shown of the range taken", n, taken)
	}
}
