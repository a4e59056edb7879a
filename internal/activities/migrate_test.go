package activities_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"socialstream/internal/activities"
	"socialstream/internal/store"
	"socialstream/internal/testenv"
)

// An activity of an earlier version has no visibility: until the
// migration, the public feed and a person's page read by others, which
// find what may be seen by a query, leave it out; the migration's jobs,
// run twice over, make it public, and once done an instance that starts
// enqueues none.
func TestVisibilityMigration(t *testing.T) {
	ctx := context.Background()
	q := &recorder{}
	db, acc, svc := recorded(t, q)
	act := svc.Activities
	author, reader := register(t, acc, "author"), register(t, acc, "reader")
	old, _, err := act.Post(ctx, author, activities.PostInput{Title: "from before"})
	if err != nil {
		t.Fatal(err)
	}
	// A followers-only one, which the migration leaves as it is.
	_, _, err = act.Post(ctx, author, activities.PostInput{Title: "for followers", Visibility: activities.FollowersOnly})
	if err != nil {
		t.Fatal(err)
	}
	// As an earlier version left it.
	err = db.Update(ctx, func(tx *store.Tx) error {
		var a activities.Activity
		if _, err := tx.Get(activities.Key(db, old.ID), &a); err != nil {
			return err
		}
		a.Visibility, a.VisibleTo = "", nil
		return tx.Put(activities.Key(db, old.ID), &a)
	})
	if err != nil {
		t.Fatal(err)
	}
	testenv.EarlierForm(t, db, activities.Key(db, old.ID))
	public := func() []string {
		t.Helper()
		var got []string
		for _, r := range []activities.FeedRequest{
			{Viewer: reader, Selector: activities.All, Page: store.PageRequest{Count: 10}},
			{Viewer: reader, Selector: activities.Self, UserID: author, Page: store.PageRequest{Count: 10}},
		} {
			vs, _, err := act.Feed(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range vs {
				got = append(got, v.Visibility+" "+v.ID)
			}
		}
		return got
	}
	if got := public(); len(got) != 0 {
		t.Fatalf("before the migration: %v", got)
	}
	n := len(q.tasks)
	if err := act.StartMigration(ctx); err != nil {
		t.Fatal(err)
	}
	if len(q.tasks) != n+1 || q.tasks[n].Path != activities.MigratePath {
		t.Fatalf("StartMigration enqueued %v", q.tasks[n:])
	}
	var task activities.MigrateTask
	if err := json.Unmarshal(q.tasks[n].Body, &task); err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{1, 0} {
		changed, err := act.Migrate(ctx, task)
		if err != nil || changed != want {
			t.Errorf("run %d: changed %d, %v; want %d", i, changed, err, want)
		}
	}
	want := []string{"public " + old.ID, "public " + old.ID}
	if got := public(); !cmp.Equal(got, want) {
		t.Errorf("after the migration: %v, want %v", got, want)
	}
	n = len(q.tasks)
	if err := act.StartMigration(ctx); err != nil || len(q.tasks) != n {
		t.Errorf("StartMigration once done: %v, enqueued %v", err, q.tasks[n:])
	}
}
