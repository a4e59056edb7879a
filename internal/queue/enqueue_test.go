package queue_test

import (
	"context"
	"errors"
	"net"
	"testing"

	"socialstream/internal/derrors"
	"socialstream/internal/queue"
	"socialstream/internal/tasksemu"
)

// Cloud Tasks failing a CreateTask with Unavailable or DeadlineExceeded
// (even one that created the task) is transient: Enqueue says so, and the
// request that asked answers 503, not 500. Found by the convergence
// checker.
func TestEnqueueFailureIsTransient(t *testing.T) {
	for _, f := range []tasksemu.Faults{{CreateFail: 1}, {CreateLost: 1}} {
		srv, err := tasksemu.New(tasksemu.Config{
			Project: "p", Location: "l", Target: "http://127.0.0.1:1", Faults: f,
			Queues: []tasksemu.QueueConfig{{Name: "q", Rate: 1, BucketSize: 1, MaxConcurrent: 1, Retry: tasksemu.RetryConfig{RetryLimit: 0, MinBackoff: 1, MaxBackoff: 1}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); srv.Serve(ctx, l) }()
		client, err := queue.Dial(ctx, l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		q, err := queue.NewCloudTasks(client, queue.Config{Project: "p", Location: "l"})
		if err != nil {
			t.Fatal(err)
		}
		err = q.Enqueue(ctx, queue.Task{Queue: "q", Path: "/x", Name: "t1"})
		if !errors.Is(err, derrors.Unavailable) {
			t.Errorf("faults %+v: Enqueue = %v, want derrors.Unavailable", f, err)
		}
		client.Close()
		cancel()
		<-done
	}
}
