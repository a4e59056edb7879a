package activities_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/activities"
	"socialstream/internal/notifications"
	"socialstream/internal/order"
	"socialstream/internal/store"
	"socialstream/internal/testenv"
)

// A database of an earlier version holds activities, audience chunks and
// notifications ordered by an indexed seq, and no places. While the move is
// under way every feed reads them beside those of this version, in one
// order, page by page; an unfollow finds their copies; the move's jobs
// rewrite them, leave none behind, and record the move over only once its
// grace has passed.
func TestFeedsAcrossTheMoveToPlaces(t *testing.T) {
	ctx := context.Background()
	q := &recorder{}
	db, acc, svc := recorded(t, q)
	act := svc.Activities
	author, reader, named := register(t, acc, "author"), register(t, acc, "reader"), register(t, acc, "named")
	if _, err := svc.Graph.Follow(ctx, reader, author, nil); err != nil {
		t.Fatal(err)
	}
	post := func(in activities.PostInput) string {
		t.Helper()
		v, _, err := act.Post(ctx, author, in)
		if err != nil {
			t.Fatal(err)
		}
		return v.ID
	}
	p1 := post(activities.PostInput{Title: "one #news"})
	p2 := post(activities.PostInput{Title: "two @named", Visibility: activities.FollowersOnly})
	p3 := post(activities.PostInput{Title: "three"})
	if _, err := svc.Likes.Like(ctx, reader, p1); err != nil {
		t.Fatal(err)
	}
	// As an earlier version left them, the move begun.
	for _, kind := range []string{activities.KindActivity, activities.KindAudience, notifications.Kind} {
		keys, err := db.GetAll(ctx, db.Query(kind).KeysOnly(), nil)
		if err != nil || len(keys) == 0 {
			t.Fatalf("%s: %v %v", kind, keys, err)
		}
		for _, k := range keys {
			testenv.EarlierForm(t, db, k)
		}
	}
	if err := db.Put(ctx, order.RecordKey(db), &order.Record{Started: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	if err := act.StartReorder(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(q.tasks); n == 0 || q.tasks[n-1].Path != activities.ReorderPath {
		t.Fatalf("StartReorder enqueued no job of the move")
	}
	p4 := post(activities.PostInput{Title: "four"})
	p5 := post(activities.PostInput{Title: "five #news"})
	if _, err := svc.Likes.Like(ctx, reader, p4); err != nil {
		t.Fatal(err)
	}

	// every reads a feed a page of one at a time, by its cursors.
	every := func(r activities.FeedRequest) []string {
		t.Helper()
		var got []string
		r.Page = store.PageRequest{Count: 1}
		for range 10 {
			vs, next, err := act.Feed(ctx, r)
			if err != nil {
				t.Fatalf("%+v: %v", r, err)
			}
			for _, v := range vs {
				got = append(got, v.ID)
			}
			if next == "" {
				return got
			}
			r.Page.Cursor = next
		}
		t.Fatalf("%+v: no end", r)
		return nil
	}
	notes := func() []string {
		t.Helper()
		var got []string
		p := store.PageRequest{Count: 1}
		for range 10 {
			vs, _, next, err := svc.Notifications.List(ctx, author, p)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range vs {
				got = append(got, v.ActivityID)
			}
			if next == "" {
				return got
			}
			p.Cursor = next
		}
		t.Fatal("notifications: no end")
		return nil
	}
	check := func(when string, home []string) {
		t.Helper()
		for _, c := range []struct {
			name string
			r    activities.FeedRequest
			want []string
		}{
			{"home", activities.FeedRequest{Viewer: reader, Selector: activities.Friends, UserID: reader}, home},
			{"own page", activities.FeedRequest{Viewer: author, Selector: activities.Self, UserID: author}, []string{p5, p4, p3, p2, p1}},
			{"page read by a follower", activities.FeedRequest{Viewer: reader, Selector: activities.Self, UserID: author}, []string{p5, p4, p3, p2, p1}},
			{"page read by another", activities.FeedRequest{Viewer: named, Selector: activities.Self, UserID: author}, []string{p5, p4, p3, p1}},
			{"@all", activities.FeedRequest{Viewer: reader, Selector: activities.All}, []string{p5, p4, p3, p1}},
			{"tag", activities.FeedRequest{Viewer: reader, Selector: activities.TagPrefix + "news"}, []string{p5, p1}},
			{"@mentions", activities.FeedRequest{Viewer: named, Selector: activities.Mentions, UserID: named}, []string{p2}},
			{"since", activities.FeedRequest{Viewer: author, Selector: activities.Self, UserID: author, Since: p2}, []string{p5, p4, p3}},
		} {
			if got := every(c.r); !slices.Equal(got, c.want) {
				t.Errorf("%s: %s = %v, want %v", when, c.name, got, c.want)
			}
		}
		// The likes, and the follow (of no activity) before them.
		if got, want := notes(), []string{p4, p1, ""}; !slices.Equal(got, want) {
			t.Errorf("%s: notifications of %v, want %v", when, got, want)
		}
	}
	check("during the move", []string{p5, p4, p3, p2, p1})

	// An unfollow's removal finds the earlier chunks by the second query.
	qs := activities.AudienceOf(db, reader, author, true)
	for phase, q := range qs {
		keys, err := db.GetAll(ctx, q, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := []int{2, 3}[phase]; len(keys) != want {
			t.Errorf("phase %d found %d chunks, want %d", phase, len(keys), want)
		}
		if err := db.Update(ctx, func(tx *store.Tx) error {
			_, err := activities.RemoveFollower(tx, keys, reader, time.Time{}, phase)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	if got := every(activities.FeedRequest{Viewer: reader, Selector: activities.Friends, UserID: reader}); len(got) != 0 {
		t.Errorf("home after the removal = %v, want none", got)
	}

	// The move: jobs until one moves none, which waits out the grace.
	moved := 0
	for step := 0; ; step++ {
		n, err := act.Reorder(ctx, activities.ReorderTask{Step: step})
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		moved += n
	}
	if want := 3 + 3 + 2; moved != want { // activities, chunks, the follow's and the like's notifications
		t.Errorf("moved %d, want %d", moved, want)
	}
	for _, kind := range []string{activities.KindActivity, activities.KindAudience, notifications.Kind} {
		if keys, err := order.Earlier(ctx, db, kind, 10); err != nil || len(keys) != 0 {
			t.Errorf("%s left in the earlier form: %v %v", kind, keys, err)
		}
	}
	var rec order.Record
	if _, err := db.Get(ctx, order.RecordKey(db), &rec); err != nil || !rec.Done.IsZero() {
		t.Fatalf("the move recorded over within its grace: %+v %v", rec, err)
	}
	if last := q.tasks[len(q.tasks)-1]; last.Path != activities.ReorderPath || last.Delay < activities.ReorderGrace-time.Minute {
		t.Errorf("last job %+v, want the move's, delayed by its grace", last)
	}
	rec.Started = rec.Started.Add(-activities.ReorderGrace)
	if err := db.Put(ctx, order.RecordKey(db), &rec); err != nil {
		t.Fatal(err)
	}
	if _, err := act.Reorder(ctx, activities.ReorderTask{Step: 99}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Get(ctx, order.RecordKey(db), &rec); err != nil || rec.Done.IsZero() {
		t.Fatalf("the move not recorded over after its grace: %+v %v", rec, err)
	}
	check("after the move", nil)
	var aud datastore.PropertyList
	if _, err := db.Get(ctx, activities.AudienceKey(db, p1, 0), &aud); err != nil {
		t.Fatal(err)
	}
	for _, p := range aud {
		if p.Name == "followerIds" || p.Name == "seq" && !p.NoIndex {
			t.Errorf("a moved chunk keeps %s (indexed: %v)", p.Name, !p.NoIndex)
		}
	}
}
