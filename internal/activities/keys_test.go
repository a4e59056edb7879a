package activities_test

import (
	"context"
	"slices"
	"strconv"
	"testing"

	"cloud.google.com/go/datastore"

	"socialstream/internal/activities"
	"socialstream/internal/ids"
	"socialstream/internal/store"
)

// New activities are named by their ids' scattered form; those of earlier
// versions keep the plain names they were written under (a key name cannot
// change in place, and they are no longer written at the rate of posts).
// Both live side by side: by id, at home, on the author's page, in order
// of their ids, liked, commented on, edited and deleted alike.
func TestActivitiesOfAnEarlierVersionKeepTheirKeys(t *testing.T) {
	ctx := context.Background()
	db, acc, svc := recorded(t, &recorder{})
	act := svc.Activities
	author, reader := register(t, acc, "author"), register(t, acc, "reader")
	if _, err := svc.Graph.Follow(ctx, reader, author, nil); err != nil {
		t.Fatal(err)
	}
	first, _, err := act.Post(ctx, author, activities.PostInput{Title: "from before"})
	if err != nil {
		t.Fatal(err)
	}
	if !ids.Scattered(first.ID) {
		t.Fatalf("new activity id %q is not in the scattered form", first.ID)
	}
	// Move it to the plain name an earlier version gave it, with its
	// audience chunk.
	seq, _ := ids.Parse(first.ID)
	old := strconv.FormatInt(seq, 10)
	err = db.Update(ctx, func(tx *store.Tx) error {
		var a activities.Activity
		var aud activities.Audience
		if _, err := tx.Get(activities.Key(db, first.ID), &a); err != nil {
			return err
		}
		if _, err := tx.Get(activities.AudienceKey(db, first.ID, 0), &aud); err != nil {
			return err
		}
		if err := tx.DeleteMulti([]*datastore.Key{activities.AudienceKey(db, first.ID, 0), activities.Key(db, first.ID)}); err != nil {
			return err
		}
		return tx.PutMulti([]*datastore.Key{activities.Key(db, old), activities.AudienceKey(db, old, 0)}, []any{&a, &aud})
	})
	if err != nil {
		t.Fatal(err)
	}
	newer, _, err := act.Post(ctx, author, activities.PostInput{Title: "from now"})
	if err != nil {
		t.Fatal(err)
	}
	feed := func(viewer, selector string) []string {
		t.Helper()
		vs, _, err := act.Feed(ctx, activities.FeedRequest{Viewer: viewer, Selector: selector, UserID: viewer, Page: store.PageRequest{Count: 10}})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, v := range vs {
			got = append(got, v.ID)
		}
		return got
	}
	want := []string{newer.ID, old}
	if got := feed(reader, activities.Friends); !slices.Equal(got, want) {
		t.Errorf("home = %v, want %v", got, want)
	}
	if got := feed(author, activities.Self); !slices.Equal(got, want) {
		t.Errorf("own page = %v, want %v", got, want)
	}
	if got, err := act.Get(ctx, reader, author, "", []string{old}); err != nil || len(got) != 1 || got[0].ID != old {
		t.Fatalf("Get(%s) = %v, %v", old, got, err)
	}
	liked, err := svc.Likes.Like(ctx, reader, old)
	if err != nil || liked.LikesCount != 1 || !liked.LikedByViewer {
		t.Fatalf("Like(%s) = %+v, %v", old, liked, err)
	}
	c, err := svc.Comments.Create(ctx, reader, old, "still here")
	if err != nil || !ids.Scattered(c.ID) {
		t.Fatalf("comment on %s = %+v, %v: want a scattered id", old, c, err)
	}
	title := "edited since"
	if v, err := act.Edit(ctx, author, old, activities.EditInput{Title: &title}); err != nil || v.Title != title {
		t.Fatalf("Edit(%s) = %+v, %v", old, v, err)
	}
	if err := act.Delete(ctx, author, old); err != nil {
		t.Fatal(err)
	}
	if got := feed(reader, activities.Friends); !slices.Equal(got, []string{newer.ID}) {
		t.Errorf("home after the delete = %v, want %v", got, []string{newer.ID})
	}
}
