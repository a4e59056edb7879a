package activities_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"cloud.google.com/go/datastore"
	"github.com/google/go-cmp/cmp"

	"socialstream/internal/activities"
	"socialstream/internal/likes"
	"socialstream/internal/store"
)

// An activity of an earlier version keeps its counts in counter shards;
// its count is the Activity's own plus the shards', which a feed reads in
// its one lookup. Likes and unlikes after the change of version count on
// the Activity, and the sum stays exact; the delete takes the shards.
// One written before there were shards (none at all) counts too.
func TestCountsOfAnEarlierVersion(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	author := f.user(t, "author")
	v, _, err := f.act.Post(ctx, author, activities.PostInput{Title: "counted in shards"})
	if err != nil {
		t.Fatal(err)
	}
	fans := make([]string, 5)
	for i := range fans {
		fans[i] = f.user(t, fmt.Sprint("fan", i))
	}
	likesCount := func(want int64) {
		t.Helper()
		f.calls.reset()
		list, _, err := f.act.Feed(ctx, activities.FeedRequest{Viewer: author, Selector: activities.Self, UserID: author, Page: store.PageRequest{Count: 5}})
		if err != nil || len(list) != 1 {
			t.Fatalf("feed: %v %v", list, err)
		}
		if list[0].LikesCount != want {
			t.Errorf("likesCount %d, want %d", list[0].LikesCount, want)
		}
		if diff := cmp.Diff(map[string]int{"RunQuery": 1, "Lookup": 1}, f.calls.reset()); diff != "" {
			t.Errorf("Datastore calls of the feed (-want +got):\n%s", diff)
		}
	}
	for _, fan := range fans[:3] {
		if _, err := f.likes.Like(ctx, fan, v.ID); err != nil {
			t.Fatal(err)
		}
	}
	// As the earlier version left it: the three likes counted in two of
	// four shards, none on the Activity.
	err = f.db.Update(ctx, func(tx *store.Tx) error {
		var a activities.Activity
		if _, err := tx.Get(activities.Key(f.db, v.ID), &a); err != nil {
			return err
		}
		a.Counted, a.Shards, a.LikesCount = false, 4, 0
		return tx.PutMulti([]*datastore.Key{activities.Key(f.db, v.ID), activities.StatsKey(f.db, v.ID, 0), activities.StatsKey(f.db, v.ID, 2)},
			[]any{&a, &activities.Stats{Likes: 1}, &activities.Stats{Likes: 2}})
	})
	if err != nil {
		t.Fatal(err)
	}
	likesCount(3)
	if got, err := f.likes.Like(ctx, fans[3], v.ID); err != nil || got.LikesCount != 4 || !got.LikedByViewer {
		t.Errorf("like: %+v %v; want 4 likes", got, err)
	}
	if got, err := f.likes.Unlike(ctx, fans[0], v.ID); err != nil || got.LikesCount != 3 || got.LikedByViewer {
		t.Errorf("unlike of a like counted in a shard: %+v %v; want 3 likes", got, err)
	}
	likesCount(3)
	var st activities.Stats
	if _, err := f.db.Get(ctx, activities.StatsKey(f.db, v.ID, 2), &st); err != nil || st.Likes != 2 {
		t.Errorf("shard 2 now %+v, %v: written since", st, err)
	}
	if err := f.act.Delete(ctx, author, v.ID); err != nil {
		t.Fatal(err)
	}
	for n := range activities.MaxShards {
		if ok, err := f.db.Get(ctx, activities.StatsKey(f.db, v.ID, n), &activities.Stats{}); err != nil || ok {
			t.Errorf("shard %d after the delete: found %v, %v", n, ok, err)
		}
	}

	// From before shards: no shard, no count of its own.
	old, _, err := f.act.Post(ctx, author, activities.PostInput{Title: "from before shards"})
	if err != nil {
		t.Fatal(err)
	}
	err = f.db.Update(ctx, func(tx *store.Tx) error {
		var a activities.Activity
		if _, err := tx.Get(activities.Key(f.db, old.ID), &a); err != nil {
			return err
		}
		a.Counted, a.Shards = false, 0
		return tx.Put(activities.Key(f.db, old.ID), &a)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := f.likes.Like(ctx, fans[4], old.ID); err != nil || got.LikesCount != 1 {
		t.Errorf("like of an activity with no shard: %+v %v", got, err)
	}
	likesCount(1)
}

// Many people liking one activity at once all succeed, and the count is
// exact: each like adds to it on the server, reading nothing the others
// write.
func TestContendedLikesCountExactly(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	author := f.user(t, "author")
	v, _, err := f.act.Post(ctx, author, activities.PostInput{Title: "viral"})
	if err != nil {
		t.Fatal(err)
	}
	const n = 48
	fans := make([]string, n)
	for i := range fans {
		fans[i] = f.user(t, fmt.Sprint("fan", i))
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	answers := make(chan activities.View, n)
	for _, fan := range fans {
		wg.Go(func() {
			got, err := f.likes.Like(ctx, fan, v.ID)
			errs <- err
			answers <- got
		})
	}
	wg.Wait()
	close(errs)
	close(answers)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	for got := range answers {
		if got.LikesCount < 1 || got.LikesCount > n || !got.LikedByViewer {
			t.Errorf("a like answered likesCount %d, likedByViewer %v", got.LikesCount, got.LikedByViewer)
		}
	}
	list, err := f.act.Get(ctx, author, author, "", []string{v.ID})
	if err != nil || len(list) != 1 || list[0].LikesCount != n {
		t.Errorf("after %d likes: %+v %v", n, list, err)
	}
	if ok, err := f.db.Get(ctx, activities.StatsKey(f.db, v.ID, 0), &activities.Stats{}); err != nil || ok {
		t.Errorf("a counter shard was written: %v %v", ok, err)
	}
}

// A like or unlike that commits answers the activity, even across a block
// between the reactor and the author (an unlike is allowed across one). It
// used to answer 404 for an unlike that had happened, which the
// convergence checker took, rightly, for one that had not.
func TestReactionAnswersAcrossABlock(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	author, fan := f.user(t, "author"), f.user(t, "fan")
	v, _, err := f.act.Post(ctx, author, activities.PostInput{Title: "liked, then blocked"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.likes.Like(ctx, fan, v.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.graph.Block(ctx, author, fan); err != nil {
		t.Fatal(err)
	}
	got, err := f.likes.Unlike(ctx, fan, v.ID)
	if err != nil || got.ID != v.ID || got.LikesCount != 0 || got.LikedByViewer {
		t.Errorf("unlike across a block: %+v, %v", got, err)
	}
}

// A like's answer counts the likes that landed between its first read of
// the activity and its transaction: it counts on the server, not from
// what it read.
func TestLikeAnswerCountsLikesMeanwhile(t *testing.T) {
	ctx := context.Background()
	_, acc, svc, hold := held(t)
	author, fan, other := register(t, acc, "author"), register(t, acc, "fan"), register(t, acc, "other")
	v, _, err := svc.Activities.Post(ctx, author, activities.PostInput{Title: "liked meanwhile"})
	if err != nil {
		t.Fatal(err)
	}
	var meanwhile error
	hold("/BeginTransaction", func() { _, meanwhile = svc.Likes.Like(ctx, other, v.ID) })
	got, err := svc.Likes.Like(ctx, fan, v.ID)
	if err != nil || meanwhile != nil {
		t.Fatalf("like %v, meanwhile %v", err, meanwhile)
	}
	if got.LikesCount != 2 || !got.LikedByViewer {
		t.Errorf("the like answers likesCount %d, likedByViewer %v; want 2, true", got.LikesCount, got.LikedByViewer)
	}
}

// A like's answer is one reading, after its commit, of the activity's
// count and of the viewer's like: never likedByViewer with likesCount 0
// (the convergence checker saw that answer when the two came from
// different readings). Here, just after the like commits and before its
// answer reads, another person likes and the fan unlikes: the answer is
// the state after both, whole.
func TestLikeAnswerIsOneReading(t *testing.T) {
	ctx := context.Background()
	_, acc, svc, hold := held(t)
	author, fan, x := register(t, acc, "author"), register(t, acc, "fan"), register(t, acc, "xxx")
	v, _, err := svc.Activities.Post(ctx, author, activities.PostInput{Title: "one reading"})
	if err != nil {
		t.Fatal(err)
	}
	var meanwhile error
	change := func() {
		if _, meanwhile = svc.Likes.Like(ctx, x, v.ID); meanwhile == nil {
			_, meanwhile = svc.Likes.Unlike(ctx, fan, v.ID)
		}
	}
	// After the like's commit, the next read is its answer's.
	hold("/Commit", func() { hold("/Lookup", change) })
	got, err := svc.Likes.Like(ctx, fan, v.ID)
	if err != nil || meanwhile != nil {
		t.Fatal(err, meanwhile)
	}
	if got.LikesCount != 1 || got.LikedByViewer {
		t.Errorf("the like answers likesCount %d, likedByViewer %v; want 1, false (the state after the changes)", got.LikesCount, got.LikedByViewer)
	}
	list, err := svc.Activities.Get(ctx, fan, author, "", []string{v.ID})
	if err != nil || len(list) != 1 || list[0].LikesCount != 1 || list[0].LikedByViewer {
		t.Errorf("read back: %+v %v", list, err)
	}
}

// A like does not read its activity in its transaction; the count's
// update checks at the commit that it is there. An activity deleted after
// the like first read it refuses the like, which leaves nothing.
func TestLikeOfAnActivityDeletedUnderIt(t *testing.T) {
	ctx := context.Background()
	db, acc, svc, hold := held(t)
	author, fan := register(t, acc, "author"), register(t, acc, "fan")
	gone, _, err := svc.Activities.Post(ctx, author, activities.PostInput{Title: "deleted under the like"})
	if err != nil {
		t.Fatal(err)
	}
	var deleted error
	hold("/BeginTransaction", func() { deleted = svc.Activities.Delete(ctx, author, gone.ID) })
	if _, err := svc.Likes.Like(ctx, fan, gone.ID); !errors.Is(err, activities.ErrNoSuchActivity) || deleted != nil {
		t.Fatalf("like of an activity deleted under it: %v (delete: %v), want no such activity", err, deleted)
	}
	if ok, err := db.Get(ctx, likes.LikeKey(db, gone.ID, fan), &likes.Like{}); err != nil || ok {
		t.Errorf("a like of the deleted activity was written: %v %v", ok, err)
	}
	if ok, err := db.Get(ctx, activities.Key(db, gone.ID), &activities.Activity{}); err != nil || ok {
		t.Errorf("the count's update made the activity again: %v %v", ok, err)
	}
}

// An activity deleted between a like's commit and its answer is answered
// as gone (404): its likes go with it, and an answer of the activity as
// the like first saw it said likedByViewer with likesCount 0 (the
// convergence checker saw that, with 16 clients).
func TestLikeAnswerOfAnActivityDeletedSince(t *testing.T) {
	ctx := context.Background()
	_, acc, svc, hold := held(t)
	author, fan := register(t, acc, "author"), register(t, acc, "fan")
	v, _, err := svc.Activities.Post(ctx, author, activities.PostInput{Title: "deleted after the like"})
	if err != nil {
		t.Fatal(err)
	}
	var deleted error
	// After the like's commit, the next read is its answer's.
	hold("/Commit", func() { hold("/Lookup", func() { deleted = svc.Activities.Delete(ctx, author, v.ID) }) })
	got, err := svc.Likes.Like(ctx, fan, v.ID)
	if deleted != nil {
		t.Fatal(deleted)
	}
	if !errors.Is(err, activities.ErrNoSuchActivity) {
		t.Errorf("the like of an activity deleted since its commit answers %+v, %v; want no such activity", got, err)
	}
}
