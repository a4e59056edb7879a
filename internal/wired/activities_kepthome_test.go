package wired_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"socialstream/internal/activities"
	"socialstream/internal/app"
	"socialstream/internal/app/apptest"
	"socialstream/internal/ids"
	"socialstream/internal/store"
	"socialstream/internal/testenv"
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
