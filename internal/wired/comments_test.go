package wired_test

import (
	"context"
	"errors"
	"testing"

	"socialstream/internal/app/apptest"
	"socialstream/internal/comments"
	"socialstream/internal/derrors"
	"socialstream/internal/store"
)

// Comments are listed oldest first and counted on their activity; the
// commenter or the activity's author may delete one, nobody else; text is
// checked; an erasure takes a person's comments with their counts, and an
// activity's cleanup takes the rest.
func TestComments(t *testing.T) {
	ctx := context.Background()
	env := apptest.New(t)
	db, svc := env.DB, env.Svc
	person := env.Person
	ann, bob, cat := person("ann"), person("bob"), person("cat")
	post := env.Post(ann, "hello")
	count := func() int64 {
		t.Helper()
		return env.Activity(ann, post.ID).CommentsCount
	}
	var made []comments.View
	for _, c := range []struct{ who, text string }{{bob, "first"}, {cat, "second"}, {bob, "third"}} {
		v, err := svc.Comments.Create(ctx, c.who, post.ID, c.text)
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, v)
	}
	list, _, err := svc.Comments.List(ctx, ann, post.ID, store.PageRequest{Count: 10})
	if err != nil || len(list) != 3 || list[0].Text != "first" || list[2].Text != "third" || list[1].Author == nil {
		t.Fatalf("comments %+v, %v; want first to third, with authors", list, err)
	}
	if n := count(); n != 3 {
		t.Errorf("commentsCount %d, want 3", n)
	}
	if _, err := svc.Comments.Create(ctx, bob, post.ID, "  "); !errors.Is(err, derrors.InvalidArgument) {
		t.Errorf("an empty comment: %v", err)
	}
	// cat may not delete bob's; ann, the activity's author, may.
	if err := svc.Comments.Delete(ctx, cat, post.ID, made[0].ID); !errors.Is(err, comments.ErrNotAllowed) {
		t.Errorf("cat deletes bob's comment: %v", err)
	}
	if err := svc.Comments.Delete(ctx, ann, post.ID, made[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := svc.Comments.Delete(ctx, ann, post.ID, made[0].ID); !errors.Is(err, comments.ErrNoSuchComment) {
		t.Errorf("a second delete: %v", err)
	}
	if n, err := comments.Erase(ctx, db, bob, 100); err != nil || n != 1 {
		t.Fatalf("erased %d of bob's comments, %v; want his third", n, err)
	}
	if n := count(); n != 1 {
		t.Errorf("commentsCount after the delete and the erasure %d, want cat's 1", n)
	}
	if n, err := comments.Forget(ctx, db, post.ID); err != nil || n != 1 {
		t.Errorf("the cleanup forgot %d, %v; want cat's", n, err)
	}
}
