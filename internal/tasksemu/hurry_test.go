package tasksemu_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"socialstream/internal/queue"
)

// Hurry runs at once what was enqueued with a delay within its bound, once
// nothing is due or running; a task due later than the bound keeps its
// time, and so does a retry's backoff.
func TestHurry(t *testing.T) {
	release := make(chan struct{})
	s := start(t, func(path string, n int, w http.ResponseWriter) {
		switch {
		case path == "/_tasks/busy":
			<-release
		case path == "/_tasks/retried" && n == 0:
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	ctx := context.Background()
	enqueue := func(path, queueName string, delay time.Duration) {
		t.Helper()
		if err := s.q.Enqueue(ctx, queue.Task{Queue: queueName, Path: path, Body: []byte(`{}`), Delay: delay}); err != nil {
			t.Fatal(err)
		}
	}
	// While a task runs, nothing is hurried.
	enqueue("/_tasks/busy", "slow", 0)
	enqueue("/_tasks/soon", "fast", 5*time.Second)
	enqueue("/_tasks/later", "fast", time.Hour)
	waitFor(t, "the busy task", func() bool { return len(s.rec.of("/_tasks/busy")) == 1 })
	if n := s.srv.Hurry(10 * time.Second); n != 0 {
		t.Errorf("hurried %d while a task ran", n)
	}
	close(release)
	waitFor(t, "the hurry", func() bool { return s.srv.Hurry(10*time.Second) == 1 })
	waitFor(t, "the hurried task", func() bool { return len(s.rec.of("/_tasks/soon")) == 1 })
	if n := len(s.rec.of("/_tasks/later")); n != 0 || s.srv.Pending() != 1 {
		t.Errorf("the task due in an hour ran %d times, %d pending", n, s.srv.Pending())
	}

	// A retry waits out its backoff (the "slow" queue's: 5 seconds).
	enqueue("/_tasks/retried", "slow", 0)
	waitFor(t, "the first attempt", func() bool { return len(s.rec.of("/_tasks/retried")) == 1 })
	time.Sleep(50 * time.Millisecond)
	s.srv.Hurry(time.Hour)
	time.Sleep(300 * time.Millisecond)
	if n := len(s.rec.of("/_tasks/retried")); n != 1 {
		t.Errorf("a retry ran %d times before its backoff", n-1)
	}
}
