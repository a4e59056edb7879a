package wired_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"socialstream/internal/activities"
	"socialstream/internal/ids"
)

// TestFanoutPlanBeforeCommit: the planning job a post enqueues just before
// its commit waits briefly for the commit instead of failing into the
// queue's backoff; it still fails (to be retried) when the activity does
// not appear, and gives up on an activity minted long ago.
func TestFanoutPlanBeforeCommit(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	author := f.user(t, "planner")
	plan := func(id string) (activities.FanoutResult, error) {
		return f.act.Fanout(ctx, activities.FanoutTask{ActivityID: id, Chunk: 0})
	}

	// Committed 60 ms after the job starts: the job sees it.
	id := strconv.FormatInt(ids.New().Next(), 10)
	seq, _ := ids.Parse(id)
	go func() {
		time.Sleep(60 * time.Millisecond)
		a := &activities.Activity{Seq: seq, UserID: author, Title: "late", Chunks: 1}
		if err := f.db.Put(ctx, activities.Key(f.db, id), a); err != nil {
			t.Error(err)
		}
	}()
	if res, err := plan(id); err != nil || res.Skipped != "" {
		t.Errorf("plan of an activity committed 60 ms late = %+v, %v; want done", res, err)
	}

	// Never committed, minted just now: retry later.
	if _, err := plan(strconv.FormatInt(ids.New().Next(), 10)); !errors.Is(err, activities.ErrNotYet) {
		t.Errorf("plan of an uncommitted activity = %v, want ErrNotYet", err)
	}

	// Never committed, minted an hour ago: give up.
	old := ids.NewNode(1, func() time.Time { return time.Now().Add(-time.Hour) })
	if res, err := plan(strconv.FormatInt(old.Next(), 10)); err != nil || res.Skipped == "" {
		t.Errorf("plan of an activity minted an hour ago = %+v, %v; want skipped", res, err)
	}
}
