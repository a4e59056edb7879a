package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"socialstream/internal/derrors"
)

type recorded []Task

func (r *recorded) Enqueue(_ context.Context, t Task) error { *r = append(*r, t); return nil }

// A job's definition gives its route, its queue (or another for some
// bodies), its body as JSON and its task's name.
func TestJobDefinesItsTasks(t *testing.T) {
	type body struct {
		ID   string `json:"id"`
		Step int    `json:"step"`
	}
	j := Job[body]{Name: "thing", Queue: Rebuild,
		QueueOf:  func(b body) string { return map[bool]string{true: Backfill}[b.Step > 0] },
		TaskName: func(b body) string { return fmt.Sprintf("thing-%s-%d", b.ID, b.Step) }}
	if j.Path() != "/_tasks/thing" {
		t.Errorf("path %q", j.Path())
	}
	var q recorded
	for _, b := range []body{{"a", 0}, {"a", 1}} {
		if err := j.Enqueue(context.Background(), &q, b, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range []struct{ queue, name string }{{Rebuild, "thing-a-0"}, {Backfill, "thing-a-1"}} {
		got := q[i]
		var b body
		if err := json.Unmarshal(got.Body, &b); err != nil || b.Step != i || got.Path != j.Path() || got.Delay != time.Minute ||
			got.Queue != want.queue || got.Name != want.name {
			t.Errorf("task %d: %+v (body %+v, %v), want queue %s, name %s", i, got, b, err, want.queue, want.name)
		}
	}
	unnamed := Job[body]{Name: "other", Queue: Cleanup}
	if err := unnamed.Enqueue(context.Background(), &q, body{}, 0); err != nil || q[2].Name != "" || q[2].Queue != Cleanup {
		t.Errorf("an unnamed job's task %+v, %v", q[2], err)
	}
}

// Every job's "not yet" is one error, and a retry.
func TestNotYet(t *testing.T) {
	err := fmt.Errorf("job: %w", NotYet("the post"))
	if !errors.Is(err, ErrNotYet) || !errors.Is(err, derrors.Unavailable) || err.Error() != "job: the post is not committed yet" {
		t.Errorf("%v: is ErrNotYet %v, Unavailable %v", err, errors.Is(err, ErrNotYet), errors.Is(err, derrors.Unavailable))
	}
	if errors.Is(errors.New("other"), ErrNotYet) {
		t.Error("another error is ErrNotYet")
	}
}

// A queue made Patient gives its jobs' give-up, and still enqueues on
// the queue it wraps; any other gives GiveUpAfter.
func TestPatient(t *testing.T) {
	var r recorded
	for _, c := range []struct {
		q    Queue
		want time.Duration
	}{
		{&r, GiveUpAfter},
		{Patient(&r, 0), GiveUpAfter},
		{Patient(&r, time.Minute), time.Minute},
	} {
		if got := GiveUpOf(c.q); got != c.want {
			t.Errorf("GiveUpOf(%T) = %v, want %v", c.q, got, c.want)
		}
		if err := c.q.Enqueue(context.Background(), Task{Queue: "q", Path: "/p"}); err != nil {
			t.Fatal(err)
		}
	}
	if len(r) != 3 {
		t.Errorf("%d tasks reached the queue wrapped, want 3", len(r))
	}
}
