package wired_test

import (
	"context"
	"errors"
	"testing"

	"socialstream/internal/activities"
	"socialstream/internal/viewer"
)

// A like asks its liker's state, read in its transaction, whether a
// block stands between liker and author; a state that no longer lists
// people (past viewer.MaxPeople: Overflow) has the blocks read by key.
// Either way a block refuses the like, and no block lets it land.
func TestLikeAcrossABlockWhateverTheStateKnows(t *testing.T) {
	ctx := context.Background()
	db, acc, svc, _ := held(t)
	author, fan, other := register(t, acc, "author"), register(t, acc, "fan"), register(t, acc, "other")
	v, _, err := svc.Activities.Post(ctx, author, activities.PostInput{Title: "blocked or not"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Graph.Block(ctx, author, fan); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Likes.Like(ctx, fan, v.ID); !errors.Is(err, activities.ErrNoSuchActivity) {
		t.Fatalf("a like across a block, the state knowing it: %v", err)
	}
	// Overflowed states list no one: the blocks are read by key.
	for _, who := range []string{fan, other} {
		var st viewer.State
		if _, err := db.Get(ctx, viewer.Key(db, who), &st); err != nil {
			t.Fatal(err)
		}
		st.Overflow, st.Blocks, st.BlockedBy, st.Muted, st.MutedUntil = true, nil, nil, nil, nil
		if err := db.Put(ctx, viewer.Key(db, who), &st); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc.Likes.Like(ctx, fan, v.ID); !errors.Is(err, activities.ErrNoSuchActivity) {
		t.Errorf("a like across a block, the state overflowed: %v", err)
	}
	if got, err := svc.Likes.Like(ctx, other, v.ID); err != nil || got.LikesCount != 1 || !got.LikedByViewer {
		t.Errorf("a like with no block, the state overflowed: %+v, %v", got, err)
	}
}

// A like's answer takes the liker's like and repost from their state,
// in the same reading as the counts, when the state holds the activity;
// should the state stop holding it between the commit and the answer
// (its likes past viewer.MaxRecent since), the answer reads them by key.
func TestLikeAnswerFromAStateThatStoppedHoldingIt(t *testing.T) {
	ctx := context.Background()
	db, acc, svc, hold := held(t)
	author, fan := register(t, acc, "author"), register(t, acc, "fan")
	v, _, err := svc.Activities.Post(ctx, author, activities.PostInput{Title: "reposted, then liked"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Activities.Repost(ctx, fan, v.ID); err != nil {
		t.Fatal(err)
	}
	got, err := svc.Likes.Like(ctx, fan, v.ID)
	if err != nil || got.LikesCount != 1 || !got.LikedByViewer || !got.RepostedByViewer {
		t.Fatalf("a like, its answer by the state: %+v, %v", got, err)
	}
	var moved error
	forget := func() {
		var st viewer.State
		if _, moved = db.Get(ctx, viewer.Key(db, fan), &st); moved == nil {
			st.Since, st.Liked, st.Reposted = 1<<62, nil, nil
			moved = db.Put(ctx, viewer.Key(db, fan), &st)
		}
	}
	// After the unlike's commit, the next read is its answer's.
	hold("/Commit", func() { hold("/Lookup", forget) })
	got, err = svc.Likes.Unlike(ctx, fan, v.ID)
	if err != nil || moved != nil {
		t.Fatal(err, moved)
	}
	if got.LikesCount != 0 || got.LikedByViewer || !got.RepostedByViewer {
		t.Errorf("the unlike answers likesCount %d, liked %v, reposted %v; want 0, false, true (by key)",
			got.LikesCount, got.LikedByViewer, got.RepostedByViewer)
	}
}
