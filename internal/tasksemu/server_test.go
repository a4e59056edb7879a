package tasksemu_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cloudtasks "cloud.google.com/go/cloudtasks/apiv2"
	"cloud.google.com/go/cloudtasks/apiv2/cloudtaskspb"
	"google.golang.org/api/iterator"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"socialstream/internal/queue"
	"socialstream/internal/tasksemu"
)

// call is one request the app received from the emulator.
type call struct {
	path, queueName, taskName, body string
	retryCount                      int
	at                              time.Time
}

type recorder struct {
	mu    sync.Mutex
	calls []call
	// respond decides the answer to the n-th call (0-based) of a path.
	respond func(path string, n int, w http.ResponseWriter)
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	retry, _ := strconv.Atoi(r.Header.Get("X-AppEngine-TaskRetryCount"))
	rec.mu.Lock()
	n := 0
	for _, c := range rec.calls {
		if c.path == r.URL.Path {
			n++
		}
	}
	rec.calls = append(rec.calls, call{r.URL.Path, r.Header.Get("X-AppEngine-QueueName"), r.Header.Get("X-AppEngine-TaskName"), string(body), retry, time.Now()})
	rec.mu.Unlock()
	if rec.respond != nil {
		rec.respond(r.URL.Path, n, w)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (rec *recorder) of(path string) []call {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var out []call
	for _, c := range rec.calls {
		if c.path == path {
			out = append(out, c)
		}
	}
	return out
}

type stack struct {
	srv    *tasksemu.Server
	rec    *recorder
	client *cloudtasks.Client
	q      *queue.CloudTasks
	cfg    queue.Config
}

const queueYAML = `
queue:
- name: fast
  rate: 100/s
  bucket_size: 100
  max_concurrent_requests: 2
  retry_parameters:
    task_retry_limit: 3
    min_backoff_seconds: 0.05
    max_backoff_seconds: 0.2
    max_doublings: 2
- name: slow
  rate: 5/s
  bucket_size: 1
  max_concurrent_requests: 10
  retry_parameters:
    min_backoff_seconds: 5
`

func start(t *testing.T, respond func(string, int, http.ResponseWriter), faults ...tasksemu.Faults) *stack {
	t.Helper()
	rec := &recorder{respond: respond}
	app := httptest.NewServer(rec)
	t.Cleanup(app.Close)

	qs, err := tasksemu.ParseQueueYAML([]byte(queueYAML))
	if err != nil {
		t.Fatal(err)
	}
	cfg := tasksemu.Config{
		Project: "p", Location: "here", Queues: qs, Target: app.URL,
		DispatchDeadline: 300 * time.Millisecond,
	}
	if len(faults) > 0 {
		cfg.Faults = faults[0]
	}
	srv, err := tasksemu.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})

	client, err := queue.Dial(ctx, l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	qcfg := queue.Config{Project: "p", Location: "here"}
	q, err := queue.NewCloudTasks(client, qcfg)
	if err != nil {
		t.Fatal(err)
	}
	return &stack{srv: srv, rec: rec, client: client, q: q, cfg: qcfg}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestDispatchWithHeadersOnceOn2xx(t *testing.T) {
	s := start(t, nil)
	ctx := context.Background()
	if err := s.q.Enqueue(ctx, queue.Task{Queue: "fast", Path: "/_tasks/ok", Body: []byte(`{"x":1}`), Name: "job-1"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the handler", func() bool { return len(s.rec.of("/_tasks/ok")) == 1 })
	time.Sleep(500 * time.Millisecond) // longer than the queue's backoff: a retry would show
	calls := s.rec.of("/_tasks/ok")
	if len(calls) != 1 {
		t.Fatalf("handler ran %d times, want 1", len(calls))
	}
	c := calls[0]
	if c.queueName != "fast" || c.taskName != queue.TaskID("job-1") || c.retryCount != 0 || c.body != `{"x":1}` {
		t.Errorf("got %+v", c)
	}
	_, err := s.client.GetTask(ctx, &cloudtaskspb.GetTaskRequest{Name: queue.QueuePath(s.cfg, "fast") + "/tasks/" + queue.TaskID("job-1")})
	if status.Code(err) != codes.NotFound {
		t.Errorf("GetTask after success: %v, want NotFound", err)
	}
}

func TestRetryAfter5xxAndTimeout(t *testing.T) {
	s := start(t, func(path string, n int, w http.ResponseWriter) {
		switch {
		case path == "/_tasks/fail5xx" && n < 2:
			w.WriteHeader(http.StatusInternalServerError)
		case path == "/_tasks/slow" && n == 0:
			time.Sleep(time.Second) // past the 300ms dispatch deadline
			w.WriteHeader(http.StatusOK)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	})
	ctx := context.Background()
	for _, p := range []string{"/_tasks/fail5xx", "/_tasks/slow"} {
		if err := s.q.Enqueue(ctx, queue.Task{Queue: "fast", Path: p, Body: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "three attempts after two 500s", func() bool { return len(s.rec.of("/_tasks/fail5xx")) == 3 })
	waitFor(t, "a second attempt after a timeout", func() bool { return len(s.rec.of("/_tasks/slow")) == 2 })
	time.Sleep(500 * time.Millisecond)
	fails := s.rec.of("/_tasks/fail5xx")
	if len(fails) != 3 {
		t.Fatalf("5xx task ran %d times, want 3", len(fails))
	}
	for i, c := range fails {
		if c.retryCount != i {
			t.Errorf("attempt %d: X-AppEngine-TaskRetryCount %d", i, c.retryCount)
		}
	}
	if d := fails[1].at.Sub(fails[0].at); d < 40*time.Millisecond {
		t.Errorf("first retry after %v, want at least the 50ms min backoff", d)
	}
	if n := len(s.rec.of("/_tasks/slow")); n != 2 {
		t.Errorf("timed-out task ran %d times, want 2", n)
	}
}

func TestRetryLimitDropsTask(t *testing.T) {
	s := start(t, func(path string, n int, w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) })
	if err := s.q.Enqueue(context.Background(), queue.Task{Queue: "fast", Path: "/_tasks/never", Body: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	// task_retry_limit 3: one attempt and three retries.
	waitFor(t, "four attempts", func() bool { return len(s.rec.of("/_tasks/never")) == 4 })
	time.Sleep(time.Second)
	if n := len(s.rec.of("/_tasks/never")); n != 4 {
		t.Errorf("ran %d times, want 4", n)
	}
}

func TestNamedTaskDeduplicates(t *testing.T) {
	s := start(t, nil)
	ctx := context.Background()
	task := queue.Task{Queue: "fast", Path: "/_tasks/dedup", Body: []byte(`{}`), Name: "same", Delay: 200 * time.Millisecond}
	for i := 0; i < 3; i++ {
		if err := s.q.Enqueue(ctx, task); err != nil {
			t.Fatalf("Enqueue %d: %v", i, err)
		}
	}
	req, err := queue.NewCreateTaskRequest(s.cfg, task, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.client.CreateTask(ctx, req); status.Code(err) != codes.AlreadyExists {
		t.Errorf("raw CreateTask of a taken name: %v, want AlreadyExists", err)
	}
	waitFor(t, "the task", func() bool { return len(s.rec.of("/_tasks/dedup")) == 1 })
	// After it ran, the name stays taken (a tombstone), as on Cloud Tasks.
	if _, err := s.client.CreateTask(ctx, req); status.Code(err) != codes.AlreadyExists {
		t.Errorf("CreateTask after the task ran: %v, want AlreadyExists", err)
	}
	time.Sleep(300 * time.Millisecond)
	if n := len(s.rec.of("/_tasks/dedup")); n != 1 {
		t.Errorf("ran %d times, want 1", n)
	}
}

func TestQueueAndTaskMethods(t *testing.T) {
	s := start(t, nil)
	ctx := context.Background()
	parent := "projects/p/locations/here"

	var names []string
	for it := s.client.ListQueues(ctx, &cloudtaskspb.ListQueuesRequest{Parent: parent}); ; {
		q, err := it.Next()
		if err == iterator.Done {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, q.Name)
	}
	if len(names) != 2 || names[0] != parent+"/queues/fast" || names[1] != parent+"/queues/slow" {
		t.Errorf("ListQueues = %v", names)
	}
	q, err := s.client.GetQueue(ctx, &cloudtaskspb.GetQueueRequest{Name: parent + "/queues/fast"})
	if err != nil {
		t.Fatal(err)
	}
	if q.RateLimits.MaxDispatchesPerSecond != 100 || q.RateLimits.MaxConcurrentDispatches != 2 || q.RetryConfig.MaxAttempts != 4 {
		t.Errorf("GetQueue = %v", q)
	}
	if _, err := s.client.GetQueue(ctx, &cloudtaskspb.GetQueueRequest{Name: parent + "/queues/nope"}); status.Code(err) != codes.NotFound {
		t.Errorf("GetQueue(unknown) = %v, want NotFound", err)
	}

	for i := 0; i < 3; i++ {
		if err := s.q.Enqueue(ctx, queue.Task{Queue: "fast", Path: "/_tasks/later", Body: []byte(`{}`), Name: "later-" + strconv.Itoa(i), Delay: time.Hour}); err != nil {
			t.Fatal(err)
		}
	}
	var listed []string
	it := s.client.ListTasks(ctx, &cloudtaskspb.ListTasksRequest{Parent: parent + "/queues/fast", PageSize: 2})
	for {
		task, err := it.Next()
		if err == iterator.Done {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, task.Name)
	}
	if len(listed) != 3 {
		t.Fatalf("ListTasks = %v, want 3 tasks", listed)
	}
	name := parent + "/queues/fast/tasks/" + queue.TaskID("later-1")
	got, err := s.client.GetTask(ctx, &cloudtaskspb.GetTaskRequest{Name: name})
	if err != nil || got.Name != name {
		t.Fatalf("GetTask = %v, %v", got, err)
	}
	if err := s.client.DeleteTask(ctx, &cloudtaskspb.DeleteTaskRequest{Name: name}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.client.GetTask(ctx, &cloudtaskspb.GetTaskRequest{Name: name}); status.Code(err) != codes.NotFound {
		t.Errorf("GetTask after delete = %v, want NotFound", err)
	}
	if err := s.client.DeleteTask(ctx, &cloudtaskspb.DeleteTaskRequest{Name: name}); status.Code(err) != codes.NotFound {
		t.Errorf("second DeleteTask = %v, want NotFound", err)
	}
	if _, err := s.client.CreateTask(ctx, &cloudtaskspb.CreateTaskRequest{Parent: parent + "/queues/fast", Task: &cloudtaskspb.Task{
		MessageType: &cloudtaskspb.Task_HttpRequest{HttpRequest: &cloudtaskspb.HttpRequest{Url: "http://example.invalid/"}},
	}}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("CreateTask of an HTTP target task = %v, want InvalidArgument", err)
	}
}

func TestRateAndConcurrencyLimits(t *testing.T) {
	var inFlight, peak atomic.Int32
	s := start(t, func(path string, n int, w http.ResponseWriter) {
		if path == "/_tasks/busy" {
			cur := inFlight.Add(1)
			for {
				p := peak.Load()
				if cur <= p || peak.CompareAndSwap(p, cur) {
					break
				}
			}
			time.Sleep(100 * time.Millisecond)
			inFlight.Add(-1)
		}
		w.WriteHeader(http.StatusOK)
	})
	ctx := context.Background()
	for i := 0; i < 6; i++ {
		if err := s.q.Enqueue(ctx, queue.Task{Queue: "fast", Path: "/_tasks/busy", Body: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
		if err := s.q.Enqueue(ctx, queue.Task{Queue: "slow", Path: "/_tasks/paced", Body: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "all tasks", func() bool {
		return len(s.rec.of("/_tasks/busy")) == 6 && len(s.rec.of("/_tasks/paced")) == 6
	})
	if p := peak.Load(); p != 2 {
		t.Errorf("peak concurrency %d, want max_concurrent_requests 2", p)
	}
	// slow: 5/s with a bucket of 1, so consecutive dispatches are at least
	// 200ms apart (a lower bound, which scheduling noise cannot break).
	paced := s.rec.of("/_tasks/paced")
	if span := paced[len(paced)-1].at.Sub(paced[0].at); span < 5*190*time.Millisecond {
		t.Errorf("6 tasks at 5/s took %v, want at least ~1s", span)
	}
}

// A paused queue keeps what is added and dispatches none of it until it
// is resumed, through the real client's PauseQueue and ResumeQueue as
// through Hold.
func TestPauseAndResume(t *testing.T) {
	s := start(t, nil)
	ctx := context.Background()
	name := queue.QueuePath(s.cfg, "fast")
	q, err := s.client.PauseQueue(ctx, &cloudtaskspb.PauseQueueRequest{Name: name})
	if err != nil || q.GetState() != cloudtaskspb.Queue_PAUSED {
		t.Fatalf("PauseQueue: %v, %v", q.GetState(), err)
	}
	if err := s.q.Enqueue(ctx, queue.Task{Queue: "fast", Path: "/_tasks/ok", Name: "held"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if n := len(s.rec.of("/_tasks/ok")); n != 0 || s.srv.Pending() != 1 {
		t.Fatalf("a paused queue dispatched %d, keeps %d", n, s.srv.Pending())
	}
	if q, err := s.client.ResumeQueue(ctx, &cloudtaskspb.ResumeQueueRequest{Name: name}); err != nil || q.GetState() != cloudtaskspb.Queue_RUNNING {
		t.Fatalf("ResumeQueue: %v, %v", q.GetState(), err)
	}
	waitFor(t, "the task once resumed", func() bool { return len(s.rec.of("/_tasks/ok")) == 1 })

	release := s.srv.Hold()
	if err := s.q.Enqueue(ctx, queue.Task{Queue: "fast", Path: "/_tasks/ok", Name: "held-again"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if n := len(s.rec.of("/_tasks/ok")); n != 1 {
		t.Fatalf("a held queue dispatched: %d calls", n)
	}
	release()
	waitFor(t, "the task once released", func() bool { return len(s.rec.of("/_tasks/ok")) == 2 })
	if _, err := s.client.PauseQueue(ctx, &cloudtaskspb.PauseQueueRequest{Name: name + "-none"}); status.Code(err) != codes.NotFound {
		t.Errorf("PauseQueue of no queue: %v", err)
	}
}

// A 503 is a system error to Cloud Tasks: it throttles the whole queue,
// and successes bring the rate back. A 500 is the task's own failure,
// retried with backoff, and leaves the queue's rate alone.
func TestA503ThrottlesTheQueueA500DoesNot(t *testing.T) {
	s := start(t, func(path string, n int, w http.ResponseWriter) {
		switch path {
		case "/_tasks/503":
			w.WriteHeader(http.StatusServiceUnavailable)
		case "/_tasks/500":
			w.WriteHeader(http.StatusInternalServerError)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	})
	ctx := context.Background()
	run := func(path string, attempts int) {
		t.Helper()
		if err := s.q.Enqueue(ctx, queue.Task{Queue: "fast", Path: path, Body: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, path, func() bool { return len(s.rec.of(path)) == attempts && s.srv.Pending() == 0 })
	}
	full := s.srv.Rate("fast")
	if full != 100 {
		t.Fatalf("rate %v before any failure, want queue.yaml's 100", full)
	}
	run("/_tasks/500", 4) // the first attempt and task_retry_limit 3
	if got := s.srv.Rate("fast"); got != full {
		t.Errorf("rate %v after four 500s, want %v", got, full)
	}
	run("/_tasks/503", 4)
	if got, want := s.srv.Rate("fast"), full/16; got != want {
		t.Errorf("rate %v after four 503s, want %v", got, want)
	}
	if got := s.srv.Rate("slow"); got != 5 {
		t.Errorf("the other queue's rate %v, want its own 5", got)
	}
	run("/_tasks/ok", 1)
	if got, want := s.srv.Rate("fast"), full/8; got != want {
		t.Errorf("rate %v after a success, want %v", got, want)
	}
}

// The emulator counts what Cloud Tasks bills: every CreateTask, a name
// taken too, and every attempt, telling a task's later ones apart.
func TestOperationsCounted(t *testing.T) {
	s := start(t, func(path string, n int, w http.ResponseWriter) {
		if path == "/_tasks/twice" && n == 0 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	ctx := context.Background()
	before := s.srv.Operations()
	for _, task := range []queue.Task{
		{Queue: "fast", Path: "/_tasks/once", Name: "once"},
		{Queue: "fast", Path: "/_tasks/once", Name: "once"}, // taken: billed, adds nothing
		{Queue: "fast", Path: "/_tasks/twice"},
	} {
		if err := s.q.Enqueue(ctx, task); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the tasks", func() bool { return len(s.rec.of("/_tasks/twice")) == 2 && len(s.rec.of("/_tasks/once")) == 1 })
	waitFor(t, "the count", func() bool { return s.srv.Operations().Sub(before).Dispatched == 3 })
	if got, want := s.srv.Operations().Sub(before), (tasksemu.Operations{Created: 3, Dispatched: 3, Redispatched: 1}); got != want {
		t.Errorf("operations %+v, want %+v", got, want)
	}
}
