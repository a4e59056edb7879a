package federation

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"

	"socialstream/internal/ids"
	"socialstream/internal/queue"
	"socialstream/internal/tasksemu"
	"socialstream/internal/testenv"
)

// enqueueFunc is a queue of one function: what a test does with a task
// enqueued.
type enqueueFunc func(queue.Task) error

func (f enqueueFunc) Enqueue(_ context.Context, t queue.Task) error { return f(t) }

// A batch delivers to each of its inboxes; an inbox that asks to be tried
// again gets a delivery job of its own, RetryAfter later. When that job
// cannot be enqueued the batch fails, to be run again whole: the inbox
// that took it takes it again (the same activity), and the one that
// asked is handed on again.
func TestBatchFailsWhenItCannotHandOnARetry(t *testing.T) {
	ctx := context.Background()
	db := testenv.DB(t)
	var took, asked atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		took.Add(1)
		w.WriteHeader(http.StatusAccepted)
	}))
	defer up.Close()
	busy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer busy.Close()
	refuse := true
	var handed []queue.Task
	q := enqueueFunc(func(t queue.Task) error {
		if refuse {
			return errors.New("CreateTask: unavailable")
		}
		handed = append(handed, t)
		return nil
	})
	keys := NewKeys(db)
	s := New(Config{Domain: "127.0.0.1:1", AllowLoopback: true}, db, ids.New(), keys, q, Deps{})
	if _, err := keys.Of(ctx, "42"); err != nil {
		t.Fatal(err)
	}
	b := Batch{From: "42", Inboxes: []string{up.URL + "/inbox", busy.URL + "/inbox"}, ID: "https://x/1", Activity: json.RawMessage(`{"type":"Create"}`)}
	if out, err := s.DeliverBatch(ctx, b); err == nil {
		t.Fatalf("a retry that could not be handed on: %q, no error; want the batch to fail", out)
	}
	if took.Load() != 1 || asked.Load() != 1 || len(handed) != 0 {
		t.Fatalf("first run: taken %d, asked %d, %d handed on", took.Load(), asked.Load(), len(handed))
	}
	refuse = false
	out, err := s.DeliverBatch(ctx, b)
	if err != nil || out != Delivered+" 1, tried again 1" {
		t.Fatalf("run again: %q, %v", out, err)
	}
	if took.Load() != 2 || asked.Load() != 2 || len(handed) != 1 {
		t.Fatalf("run again: taken %d, asked %d, %d handed on", took.Load(), asked.Load(), len(handed))
	}
	var d Delivery
	if err := json.Unmarshal(handed[0].Body, &d); err != nil || d.Inbox != busy.URL+"/inbox" || d.ID != b.ID || handed[0].Delay != RetryAfter {
		t.Errorf("handed on: %+v (%v), delay %v", d, err, handed[0].Delay)
	}
}

// RetryAfter is the federation queue's least back-off, as queue.yaml
// says it: a delivery a batch hands on first runs when a job's own
// retry would.
func TestRetryAfterIsTheQueuesLeastBackoff(t *testing.T) {
	data, err := os.ReadFile("../../queue.yaml")
	if err != nil {
		t.Fatal(err)
	}
	qs, err := tasksemu.ParseQueueYAML(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		if q.Name == queue.Federation {
			if q.Retry.MinBackoff != RetryAfter {
				t.Errorf("queue.yaml's %s queue backs off at least %v; RetryAfter is %v", q.Name, q.Retry.MinBackoff, RetryAfter)
			}
			return
		}
	}
	t.Errorf("queue.yaml has no %s queue", queue.Federation)
}
