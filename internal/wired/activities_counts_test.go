package wired_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"socialstream/internal/accounts"
	"socialstream/internal/activities"
	"socialstream/internal/likes"
	"socialstream/internal/store"
)

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
	fans := f.users(t, "fan", n)
	answers := make(chan activities.View, n)
	at(t, n, func(i int) error {
		got, err := f.likes.Like(ctx, fans[i], v.ID)
		answers <- got
		return err
	})
	close(answers)
	for got := range answers {
		if got.LikesCount < 1 || got.LikesCount > n || !got.LikedByViewer {
			t.Errorf("a like answered likesCount %d, likedByViewer %v", got.LikesCount, got.LikedByViewer)
		}
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

// A person's statuses count and an activity's replies count are exact
// under concurrent posts and deletes: each commit counts itself on the
// server, and what is for the mentioned alone is not counted (as
// Mastodon counts). A takedown takes a reply out of both, and putting it
// back counts it again.
func TestStatusesAndRepliesCountExactly(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	author, fan := f.user(t, "author"), f.user(t, "fan")
	root, _, err := f.act.Post(ctx, author, activities.PostInput{Title: "root"})
	if err != nil {
		t.Fatal(err)
	}
	const n = 16
	var wg sync.WaitGroup
	replies := make(chan string, n)
	for i := range n {
		wg.Go(func() {
			in := activities.PostInput{Title: fmt.Sprint("reply ", i), InReplyTo: root.ID}
			if i%4 == 3 {
				in.Visibility = activities.MentionedOnly // counted nowhere
			}
			v, _, err := f.act.Post(ctx, fan, in)
			if err != nil {
				t.Error(err)
				return
			}
			if i%4 != 3 {
				replies <- v.ID
			}
		})
	}
	wg.Wait()
	close(replies)
	var kept []string
	for id := range replies {
		kept = append(kept, id)
	}
	// Half the counted replies go, at once.
	for _, id := range kept[:len(kept)/2] {
		wg.Go(func() {
			if err := f.act.Delete(ctx, fan, id); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	left := kept[len(kept)/2:]
	check := func(when string, replies, statuses int64) {
		t.Helper()
		got, err := f.act.Get(ctx, author, author, "", []string{root.ID})
		if err != nil || len(got) != 1 || got[0].RepliesCount != replies {
			t.Errorf("%s: the root's replies count: %+v, %v; want %d", when, got, err, replies)
		}
		p, _, err := accounts.Load(ctx, f.db, fan)
		if err != nil || p.StatusesCount != statuses || p.LastStatusTime == 0 {
			t.Errorf("%s: the fan's statuses count %d (last at %d), %v; want %d", when, p.StatusesCount, p.LastStatusTime, err, statuses)
		}
	}
	check("after the deletes", int64(len(left)), int64(len(left)))
	takedown := func(down bool) {
		t.Helper()
		if err := f.db.Update(ctx, func(tx *store.Tx) error {
			_, err := activities.Takedown(ctx, tx, fan, left[:1], time.Now().UnixMicro(), down)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	takedown(true)
	check("after a takedown", int64(len(left)-1), int64(len(left)-1))
	takedown(false)
	check("put back", int64(len(left)), int64(len(left)))
	if err := f.act.Delete(ctx, author, root.ID); err != nil {
		t.Fatal(err)
	}
	p, _, err := accounts.Load(ctx, f.db, author)
	if err != nil || p.StatusesCount != 0 {
		t.Errorf("the author after deleting their one post: %d, %v", p.StatusesCount, err)
	}
}
