package tasksemu_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"socialstream/internal/derrors"
	"socialstream/internal/queue"
	"socialstream/internal/tasksemu"
)

// Each fault of the fault mode, on every task: what the app sees, and
// what is counted. The "fast" queue allows 3 retries.
func TestFaultMode(t *testing.T) {
	cases := []struct {
		name      string
		faults    tasksemu.Faults
		calls     int  // deliveries the app sees
		enqueueOK bool // Enqueue answers no error
		kind      string
		count     int64
	}{
		{"delivered twice", tasksemu.Faults{Duplicate: 1, MaxDelay: 50 * time.Millisecond}, 2, true, tasksemu.FaultDuplicate, 1},
		{"delayed", tasksemu.Faults{Delay: 1, MaxDelay: 50 * time.Millisecond}, 1, true, tasksemu.FaultDelay, 1},
		{"500 without reaching the app", tasksemu.Faults{Fail: 1}, 0, true, tasksemu.FaultFail, 4},
		{"timed out after the app ran it", tasksemu.Faults{Timeout: 1}, 4, true, tasksemu.FaultTimeout, 4},
		{"CreateTask failed", tasksemu.Faults{CreateFail: 1}, 0, false, tasksemu.FaultCreateFail, 1},
		{"CreateTask failed after creating", tasksemu.Faults{CreateLost: 1}, 1, false, tasksemu.FaultCreateLost, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := start(t, nil, c.faults)
			err := s.q.Enqueue(context.Background(), queue.Task{Queue: "fast", Path: "/_tasks/x", Name: "job"})
			if c.enqueueOK != (err == nil) || err != nil && !errors.Is(err, derrors.Unavailable) {
				t.Fatalf("Enqueue = %v", err)
			}
			waitFor(t, "every queue to empty", func() bool { return s.srv.Pending() == 0 })
			if got := len(s.rec.of("/_tasks/x")); got != c.calls {
				t.Errorf("the app saw %d deliveries, want %d", got, c.calls)
			}
			if got := s.srv.FaultCounts()[c.kind]; got != c.count {
				t.Errorf("counted %d of %q, want %d (%v)", got, c.kind, c.count, s.srv.FaultCounts())
			}
		})
	}
}
