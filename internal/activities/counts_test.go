package activities_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"socialstream/internal/activities"
	"socialstream/internal/likes"
	"socialstream/internal/store"
)

// The counts are the sums of the counter shards, whichever shard a change
// went to: a like counted before a widening and undone after it (in
// another shard) leaves the count exact, a stale widening changes nothing,
// a feed still reads every shard in its one lookup, and the delete takes
// every shard with it.
func TestCountsAcrossShards(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	author := f.user(t, "author")
	v, _, err := f.act.Post(ctx, author, activities.PostInput{Title: "counted"})
	if err != nil {
		t.Fatal(err)
	}
	fans := make([]string, 6)
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
	shards := func() int {
		t.Helper()
		var a activities.Activity
		if _, err := f.db.Get(ctx, activities.Key(f.db, v.ID), &a); err != nil {
			t.Fatal(err)
		}
		return a.Shards
	}
	if got, err := f.likes.Like(ctx, fans[0], v.ID); err != nil || got.LikesCount != 1 || !got.LikedByViewer {
		t.Fatalf("like: %+v %v", got, err)
	}
	if err := f.act.Widen(ctx, v.ID, 1); err != nil {
		t.Fatal(err)
	}
	if err := f.act.Widen(ctx, v.ID, 1); err != nil { // seen 1 again: widened already
		t.Fatal(err)
	}
	if n := shards(); n != 4 {
		t.Fatalf("shards after two widenings from 1: %d, want 4", n)
	}
	if got, err := f.likes.Unlike(ctx, fans[0], v.ID); err != nil || got.LikesCount != 0 || got.LikedByViewer {
		t.Fatalf("unlike: %+v %v", got, err)
	}
	for _, fan := range fans {
		if _, err := f.likes.Like(ctx, fan, v.ID); err != nil {
			t.Fatal(err)
		}
	}
	likesCount(int64(len(fans)))
	for _, seen := range []int{4, 16} {
		if err := f.act.Widen(ctx, v.ID, seen); err != nil {
			t.Fatal(err)
		}
	}
	if n := shards(); n != activities.MaxShards {
		t.Fatalf("shards: %d, want %d", n, activities.MaxShards)
	}
	got, err := f.likes.Unlike(ctx, fans[1], v.ID)
	if err != nil || got.LikesCount != int64(len(fans)-1) {
		t.Fatalf("unlike across %d shards: %+v %v", activities.MaxShards, got, err)
	}
	likesCount(int64(len(fans) - 1))
	// Shards in use: the sum is spread, not in one entity.
	used := 0
	for n := range activities.MaxShards {
		var st activities.Stats
		if ok, err := f.db.Get(ctx, activities.StatsKey(f.db, v.ID, n), &st); err != nil {
			t.Fatal(err)
		} else if ok {
			used++
		}
	}
	if used < 2 {
		t.Errorf("%d counter shards written; want the likes spread", used)
	}
	if err := f.act.Delete(ctx, author, v.ID); err != nil {
		t.Fatal(err)
	}
	for n := range activities.MaxShards {
		if ok, err := f.db.Get(ctx, activities.StatsKey(f.db, v.ID, n), &activities.Stats{}); err != nil || ok {
			t.Errorf("shard %d after the delete: found %v, %v", n, ok, err)
		}
	}
}

// Many people liking one activity at once: the contended transactions
// widen its counters, and the count ends exact.
func TestContendedLikesWiden(t *testing.T) {
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
	for _, fan := range fans {
		wg.Go(func() {
			_, err := f.likes.Like(ctx, fan, v.ID)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	var a activities.Activity
	if _, err := f.db.Get(ctx, activities.Key(f.db, v.ID), &a); err != nil {
		t.Fatal(err)
	}
	if a.Shards <= 1 {
		t.Errorf("shards after %d concurrent likes: %d; want widened", n, a.Shards)
	}
	list, err := f.act.Get(ctx, author, author, "", []string{v.ID})
	if err != nil || len(list) != 1 || list[0].LikesCount != n {
		t.Errorf("after %d likes: %+v %v", n, list, err)
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

// A like's answer counts every shard the activity has when it answers, not
// those it had when the like began: likes counted in shards a widening
// added meanwhile came before it. (The checker found a like answering
// likesCount 0 with likedByViewer true.) Here the widening and another
// like land between the like's first read and its transaction.
func TestLikeAnswerCountsShardsWidenedMeanwhile(t *testing.T) {
	ctx := context.Background()
	_, acc, svc, hold := held(t)
	user := func(name string) string { return register(t, acc, name) }
	author, fan := user("author"), user("fan")
	other := user("other0")
	for i := 1; store.Shard(other, 4) == 0; i++ { // one that counts in a new shard
		other = user(fmt.Sprint("other", i))
	}
	v, _, err := svc.Activities.Post(ctx, author, activities.PostInput{Title: "widened meanwhile"})
	if err != nil {
		t.Fatal(err)
	}
	var meanwhile error
	hold("/BeginTransaction", func() {
		if meanwhile = svc.Activities.Widen(ctx, v.ID, 1); meanwhile == nil {
			_, meanwhile = svc.Likes.Like(ctx, other, v.ID)
		}
	})
	got, err := svc.Likes.Like(ctx, fan, v.ID)
	if err != nil || meanwhile != nil {
		t.Fatalf("like %v, meanwhile %v", err, meanwhile)
	}
	if got.LikesCount != 2 || !got.LikedByViewer {
		t.Errorf("the like answers likesCount %d, likedByViewer %v; want 2, true", got.LikesCount, got.LikedByViewer)
	}
}

// A like's answer is one reading of the activity's counts. It once read
// the activity, then its shards: a widening in between, with a like and
// its unlike counted in different shards meanwhile (an unlike that
// retried moves to the next shard), made it count the unlike and not the
// like. (The checker saw a like answer likesCount 0 with likedByViewer
// true.) Here those changes land just after the first read that follows
// the like's commit; the unlike that moved to the first shard is written
// as likes.Unlike writes one.
func TestLikeAnswerIsOneReading(t *testing.T) {
	ctx := context.Background()
	db, acc, svc, hold := held(t)
	user := func(name string) string { return register(t, acc, name) }
	author, fan := user("author"), user("fan")
	x := user("xx0") // x's like counts in a shard of four other than the first
	for i := 1; store.Shard(x, 4) == 0; i++ {
		x = user(fmt.Sprint("xx", i))
	}
	v, _, err := svc.Activities.Post(ctx, author, activities.PostInput{Title: "one reading"})
	if err != nil {
		t.Fatal(err)
	}
	var meanwhile error
	change := func() {
		if meanwhile = svc.Activities.Widen(ctx, v.ID, 1); meanwhile != nil {
			return
		}
		if _, meanwhile = svc.Likes.Like(ctx, x, v.ID); meanwhile != nil {
			return
		}
		meanwhile = db.Update(ctx, func(tx *store.Tx) error {
			var st activities.Stats
			if _, err := tx.Get(activities.StatsKey(db, v.ID, 0), &st); err != nil {
				return err
			}
			st.Likes--
			if err := tx.Put(activities.StatsKey(db, v.ID, 0), &st); err != nil {
				return err
			}
			return tx.Delete(likes.LikeKey(db, v.ID, x))
		})
	}
	// After the like's commit, the next read is its answer's first.
	hold("/Commit", func() { hold("/Lookup", func() { hold("/Lookup", change) }) })
	got, err := svc.Likes.Like(ctx, fan, v.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.LikesCount != 1 || !got.LikedByViewer {
		t.Errorf("the like answers likesCount %d, likedByViewer %v; want 1, true", got.LikesCount, got.LikedByViewer)
	}
	// A read that runs change, if the answer did not.
	if _, err := svc.Activities.Exists(ctx, v.ID); err != nil || meanwhile != nil {
		t.Fatal(err, meanwhile)
	}
	list, err := svc.Activities.Get(ctx, fan, author, "", []string{v.ID})
	if err != nil || len(list) != 1 || list[0].LikesCount != 1 {
		t.Errorf("read back: %+v %v", list, err)
	}
}

// A reaction reads its shard, not its activity: a missing shard is either
// an activity of an earlier version, which had none until its first
// reaction (the like goes ahead and makes it), or one deleted since the
// reaction first read it (the like is refused and leaves nothing).
func TestReactionWithoutItsShard(t *testing.T) {
	ctx := context.Background()
	db, acc, svc, hold := held(t)
	author, fan := register(t, acc, "author"), register(t, acc, "fan")
	old, _, err := svc.Activities.Post(ctx, author, activities.PostInput{Title: "from before shards"})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Delete(ctx, activities.StatsKey(db, old.ID, 0)); err != nil {
		t.Fatal(err)
	}
	if got, err := svc.Likes.Like(ctx, fan, old.ID); err != nil || got.LikesCount != 1 {
		t.Fatalf("like of an activity with no shard: %+v %v", got, err)
	}
	var st activities.Stats
	if ok, err := db.Get(ctx, activities.StatsKey(db, old.ID, 0), &st); err != nil || !ok || st.Likes != 1 {
		t.Errorf("its first shard: found %v, %+v, %v", ok, st, err)
	}

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
}
