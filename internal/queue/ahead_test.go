package queue

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// A commit runs once its jobs are enqueued: those expected before it
// once each, and a job found needed in the transaction enqueued before
// the transaction runs again; one never enqueued never commits.
func TestAheadEnqueuesBeforeTheCommit(t *testing.T) {
	j := Job[string]{Name: "thing", Queue: Fanout, TaskName: func(s string) string { return "thing-" + s }}
	ctx := context.Background()
	t.Run("expected", func(t *testing.T) {
		var q recorded
		var a Ahead
		runs := 0
		err := a.Commit(ctx, []Pending{j.Pending(&q, "a", 0), j.Pending(&q, "a", 0)}, func() error {
			runs++
			return a.Need(j.Pending(&q, "a", 0))
		})
		if err != nil || runs != 1 || len(q) != 1 || q[0].Name != "thing-a" || !a.Enqueued("thing/thing-a") {
			t.Errorf("err %v, %d runs, tasks %+v", err, runs, q)
		}
	})
	t.Run("found needed", func(t *testing.T) {
		var q recorded
		var a Ahead
		var enqueuedAt []int // how many tasks there were at each run
		err := a.Commit(ctx, nil, func() error {
			enqueuedAt = append(enqueuedAt, len(q))
			if err := a.Need(j.Pending(&q, "a", 0)); err != nil {
				return err
			}
			if len(enqueuedAt) < 3 {
				return a.Need(j.Pending(&q, "a", 0), j.Pending(&q, fmt.Sprint("b", len(enqueuedAt)), 0))
			}
			return nil
		})
		if err != nil || fmt.Sprint(enqueuedAt) != "[0 1 2]" || len(q) != 2 || q[1].Name != "thing-b2" {
			t.Errorf("err %v, runs saw %v tasks, tasks %+v", err, enqueuedAt, q)
		}
	})
	t.Run("never enqueued", func(t *testing.T) {
		var a Ahead
		failed := errors.New("queue down")
		runs := 0
		err := a.Commit(ctx, nil, func() error {
			runs++
			return a.Need(PendingFunc("x", func(context.Context) error { return failed }))
		})
		if !errors.Is(err, failed) || runs != 1 || a.Enqueued("x") {
			t.Errorf("err %v after %d runs", err, runs)
		}
	})
	t.Run("an expected job refused", func(t *testing.T) {
		var a Ahead
		failed := errors.New("queue down")
		runs := 0
		err := a.Commit(ctx, []Pending{PendingFunc("x", func(context.Context) error { return failed })}, func() error {
			runs++
			return nil
		})
		if !errors.Is(err, failed) || runs != 0 || a.Enqueued("x") {
			t.Errorf("err %v after %d runs: the commit ran without its job", err, runs)
		}
	})
	t.Run("needed again and again", func(t *testing.T) {
		var q recorded
		var a Ahead
		runs := 0
		err := a.Commit(ctx, nil, func() error {
			runs++
			return a.Need(j.Pending(&q, fmt.Sprint(runs), 0))
		})
		if !errors.Is(err, errUnplanned) || runs != 4 {
			t.Errorf("err %v after %d runs", err, runs)
		}
	})
}

// A job a commit needs first runs AheadDelay later, through a hook of
// another package too, unless it asks for longer; a job enqueued by
// itself runs when it asks.
func TestAheadDelaysItsJobs(t *testing.T) {
	j := Job[string]{Name: "thing", Queue: Fanout, TaskName: func(s string) string { return "thing-" + s }}
	ctx := context.Background()
	var q recorded
	var a Ahead
	hook := PendingFunc("hook", func(ctx context.Context) error { return j.Enqueue(ctx, &q, "hooked", 0) })
	err := a.Commit(ctx, []Pending{j.Pending(&q, "soon", 0), j.Pending(&q, "later", time.Minute), hook}, func() error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Enqueue(ctx, &q, "alone", 0); err != nil {
		t.Fatal(err)
	}
	got := map[string]time.Duration{}
	for _, task := range q {
		got[task.Name] = task.Delay
	}
	want := map[string]time.Duration{"thing-soon": AheadDelay, "thing-later": time.Minute, "thing-hooked": AheadDelay, "thing-alone": 0}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("delays %v, want %v", got, want)
	}
}
