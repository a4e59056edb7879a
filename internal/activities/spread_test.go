package activities_test

import (
	"context"
	"slices"
	"testing"

	"socialstream/internal/activities"
	"socialstream/internal/store"
)

// A spread author's posts reach most followers through fan-out jobs,
// which may run well after the post. Such a job copies the post to the
// followers of the moment it was made: not to one who followed after it
// (asking for no copies), but to one who unfollowed after it keeping their
// copies. Both were violations the convergence checker found once follows
// spread over many chunks; here the jobs run by hand, after the changes.
func TestLateFanoutCopiesToFollowersOfThePost(t *testing.T) {
	ctx := context.Background()
	db, acc, svc := recorded(t, &recorder{}) // no job runs by itself
	user := func(name string) string {
		p, _, err := acc.Register(ctx, name, "password1", "")
		if err != nil {
			t.Fatal(err)
		}
		return p.ID
	}
	star, stays, leaves, late := user("star"), user("stays"), user("leaves"), user("late")
	if err := svc.Graph.Spread(ctx, star); err != nil {
		t.Fatal(err)
	}
	none := 0
	for _, f := range []string{stays, leaves} {
		if _, err := svc.Graph.Follow(ctx, f, star, &none); err != nil {
			t.Fatal(err)
		}
	}
	v, _, err := svc.Activities.Post(ctx, star, activities.PostInput{Title: "to the followers of now"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Graph.Follow(ctx, late, star, &none); err != nil {
		t.Fatal(err)
	}
	if err := svc.Graph.Unfollow(ctx, leaves, star, true); err != nil {
		t.Fatal(err)
	}
	var a activities.Activity
	if _, err := db.Get(ctx, activities.Key(db, v.ID), &a); err != nil {
		t.Fatal(err)
	}
	if a.Chunks < 2 {
		t.Fatalf("the post has %d chunks; want the spread author's lanes", a.Chunks)
	}
	for n := 1; n < a.Chunks; n++ {
		if _, err := svc.Activities.Fanout(ctx, activities.FanoutTask{ActivityID: v.ID, Chunk: n}); err != nil {
			t.Fatal(err)
		}
	}
	for who, want := range map[string]bool{stays: true, leaves: true, late: false} {
		list, _, err := svc.Activities.Feed(ctx, activities.FeedRequest{Viewer: who, Selector: activities.Friends, UserID: who, Page: store.PageRequest{Count: 10}})
		if err != nil {
			t.Fatal(err)
		}
		has := slices.ContainsFunc(list, func(x activities.View) bool { return x.ID == v.ID })
		if has != want {
			t.Errorf("home of %s has the post: %v, want %v", map[string]string{stays: "stays", leaves: "leaves", late: "late"}[who], has, want)
		}
	}
}
