package wired_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"socialstream/internal/activities"
	"socialstream/internal/app/apptest"
	"socialstream/internal/likes"
	"socialstream/internal/store"
)

// A like counts once however often it is sent, an unlike takes it back
// once, the likers are listed, a hidden activity takes no like, and an
// erasure takes a person's likes with their counts.
func TestLikesCountOnce(t *testing.T) {
	ctx := context.Background()
	env := apptest.New(t)
	db, svc := env.DB, env.Svc
	person := env.Person
	ann, bob, cat := person("ann"), person("bob"), person("cat")
	post := env.Post(ann, "hello")
	count := func() int64 {
		t.Helper()
		return env.Activity(ann, post.ID).LikesCount
	}
	for range 2 {
		v, err := svc.Likes.Like(ctx, bob, post.ID)
		if err != nil || v.LikesCount != 1 || !v.LikedByViewer {
			t.Fatalf("bob's like: %+v, %v", v, err)
		}
	}
	if _, err := svc.Likes.Like(ctx, cat, post.ID); err != nil {
		t.Fatal(err)
	}
	if got, _, err := svc.Likes.Likers(ctx, ann, post.ID, store.PageRequest{Count: 10}); err != nil || !slices.Equal(got, []string{cat, bob}) {
		t.Errorf("likers %v (%v), want cat then bob", got, err)
	}
	for range 2 {
		if v, err := svc.Likes.Unlike(ctx, cat, post.ID); err != nil || v.LikesCount != 1 || v.LikedByViewer {
			t.Fatalf("cat's unlike: %+v, %v", v, err)
		}
	}
	// A post for the mentioned alone is not there to someone it does not name.
	private, _, err := svc.Activities.Post(ctx, ann, activities.PostInput{Title: "just us", Visibility: activities.MentionedOnly})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Likes.Like(ctx, cat, private.ID); !errors.Is(err, activities.ErrNoSuchActivity) {
		t.Errorf("a like of what cat may not see: %v", err)
	}
	if n, err := likes.Erase(ctx, db, bob, 100); err != nil || n != 1 {
		t.Fatalf("erased %d of bob's likes, %v", n, err)
	}
	if n := count(); n != 0 {
		t.Errorf("likesCount after bob's likes were erased: %d", n)
	}
}
