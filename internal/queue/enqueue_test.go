package queue_test

import (
	"context"
	"errors"
	"testing"

	"socialstream/internal/derrors"
	"socialstream/internal/queue"
	"socialstream/internal/tasksemu"
	"socialstream/internal/testenv"
)

// Cloud Tasks failing a CreateTask with Unavailable or DeadlineExceeded
// (even one that created the task) is transient: Enqueue says so, and the
// request that asked answers 503, not 500. Found by the convergence
// checker.
func TestEnqueueFailureIsTransient(t *testing.T) {
	for _, f := range []tasksemu.Faults{{CreateFail: 1}, {CreateLost: 1}} {
		tasks := testenv.StartTasksWith(t, f)
		err := tasks.Queue.Enqueue(context.Background(), queue.Task{Queue: "rebuild", Path: "/x", Name: "t1"})
		if !errors.Is(err, derrors.Unavailable) {
			t.Errorf("faults %+v: Enqueue = %v, want derrors.Unavailable", f, err)
		}
	}
}
