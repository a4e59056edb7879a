// Package tasksemu is the project's local stand-in for the Cloud Tasks
// service, which Google ships no emulator for. It is a gRPC server for the
// CloudTasks methods the service uses (CreateTask, GetTask, ListTasks,
// DeleteTask, GetQueue, ListQueues), so the app talks to it with the real
// cloudtasks/apiv2 client. It reads queue.yaml and dispatches App Engine HTTP
// tasks to the app as App Engine would: with the X-AppEngine-* headers, at
// most the queue's rate (a token bucket of bucket_size), at most
// max_concurrent_requests at once, and retrying failures (a non-2xx answer or
// no answer within the dispatch deadline) with the queue's backoff until
// task_retry_limit or task_age_limit.
//
// Like Cloud Tasks, it keeps the name of a task that ran or was deleted for a
// while (TombstoneTTL), refusing a new task of that name with AlreadyExists.
//
// Its fault mode (Config.Faults, off by default) makes it misbehave as
// Cloud Tasks may: duplicate, delayed and reordered deliveries, attempts
// that fail or time out, CreateTask calls that fail before or after
// creating the task. Pending tells when every queue is empty.
package tasksemu

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"cloud.google.com/go/cloudtasks/apiv2/cloudtaskspb"
	"golang.org/x/time/rate"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Config configures a Server.
type Config struct {
	Project, Location string
	Queues            []QueueConfig
	// Target is the base URL tasks are dispatched to, e.g. http://127.0.0.1:8080.
	Target string
	// DispatchDeadline applies to tasks that set none. App Engine's default
	// for automatically scaled services is 10 minutes.
	DispatchDeadline time.Duration
	// TombstoneTTL is how long a finished task's name stays taken. Cloud
	// Tasks keeps it about an hour.
	TombstoneTTL time.Duration
	Logger       *slog.Logger
	// Faults, when set, makes the emulator misbehave on purpose (see
	// Faults); off by default.
	Faults Faults
	// Proof is added to the headers of every dispatch, after the task's
	// own: how the sender proves itself to an app that nothing else
	// shields (a secret only the two share).
	Proof http.Header
}

// Server is the tasks emulator.
type Server struct {
	cloudtaskspb.UnimplementedCloudTasksServer

	cfg    Config
	http   *http.Client
	queues map[string]*queue // by full resource name
	order  []string          // queue names in queue.yaml order
	log    *slog.Logger
	faults *faults

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	created, dispatched, redispatched atomic.Int64 // Operations
}

// Operations counts what Cloud Tasks bills: tasks created (every
// CreateTask call, one that finds its name taken too) and attempts
// dispatched, of which Redispatched are a task's second or later.
type Operations struct {
	Created, Dispatched, Redispatched int64
}

// Operations returns the operations counted so far.
func (s *Server) Operations() Operations {
	return Operations{Created: s.created.Load(), Dispatched: s.dispatched.Load(), Redispatched: s.redispatched.Load()}
}

// Sub returns o less an earlier count.
func (o Operations) Sub(earlier Operations) Operations {
	return Operations{o.Created - earlier.Created, o.Dispatched - earlier.Dispatched, o.Redispatched - earlier.Redispatched}
}

type queue struct {
	s       *Server
	cfg     QueueConfig
	name    string // full resource name
	limiter *rate.Limiter
	slots   chan struct{}

	mu         sync.Mutex
	tasks      map[string]*task
	tombstones map[string]time.Time
	wake       chan struct{}
	paused     atomic.Bool // PauseQueue: tasks are kept, none dispatched
	// throttle is the share of the configured rate that congestion
	// control lets the queue dispatch at (throttle.go): 1 unless 503s
	// slowed it.
	throttle float64
}

type task struct {
	pb      *cloudtaskspb.Task
	created time.Time
	due     time.Time
	running bool
	deleted bool
	// again says a fault will deliver the task once more after it
	// succeeds.
	again bool
}

// New returns a Server; call Start to begin dispatching.
func New(cfg Config) (*Server, error) {
	if cfg.Project == "" || cfg.Location == "" {
		return nil, errors.New("tasksemu: project and location are required")
	}
	if len(cfg.Queues) == 0 {
		return nil, errors.New("tasksemu: no queues")
	}
	if cfg.DispatchDeadline == 0 {
		cfg.DispatchDeadline = 10 * time.Minute
	}
	if cfg.TombstoneTTL == 0 {
		cfg.TombstoneTTL = time.Hour
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &Server{
		cfg:    cfg,
		http:   &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		queues: map[string]*queue{},
		log:    cfg.Logger,
		faults: newFaults(cfg.Faults),
	}
	for _, qc := range cfg.Queues {
		name := fmt.Sprintf("projects/%s/locations/%s/queues/%s", cfg.Project, cfg.Location, qc.Name)
		s.queues[name] = &queue{
			s: s, cfg: qc, name: name,
			limiter:    rate.NewLimiter(rate.Limit(qc.Rate), qc.BucketSize),
			slots:      make(chan struct{}, qc.MaxConcurrent),
			tasks:      map[string]*task{},
			tombstones: map[string]time.Time{},
			wake:       make(chan struct{}, 1),
			throttle:   1,
		}
		s.order = append(s.order, name)
	}
	return s, nil
}

// SetTarget sets where tasks are dispatched; for a stack that learns the
// app's address after the emulator is made.
func (s *Server) SetTarget(target string) {
	for _, q := range s.queues {
		q.mu.Lock()
	}
	s.cfg.Target = target
	for _, q := range s.queues {
		q.mu.Unlock()
	}
}

// Serve registers the server on a new gRPC server, starts dispatching, and
// serves on l until ctx is done; then it stops dispatching and waits for the
// tasks under way.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	gs := grpc.NewServer()
	cloudtaskspb.RegisterCloudTasksServer(gs, s)
	s.start(ctx)
	errc := make(chan error, 1)
	go func() { errc <- gs.Serve(l) }()
	select {
	case <-ctx.Done():
		gs.GracefulStop()
		s.cancel()
		s.wg.Wait()
		return nil
	case err := <-errc:
		s.cancel()
		s.wg.Wait()
		return err
	}
}

func (s *Server) start(ctx context.Context) {
	s.ctx, s.cancel = context.WithCancel(ctx)
	for _, name := range s.order {
		q := s.queues[name]
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			q.run(s.ctx)
		}()
	}
}

// ---- gRPC methods ----

var taskID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,500}$`)

func (s *Server) queue(name string) (*queue, error) {
	q, ok := s.queues[name]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "queue %q not found", name)
	}
	return q, nil
}

// queueOf returns the queue of a task resource name.
func (s *Server) queueOf(taskName string) (*queue, error) {
	parent, id, ok := strings.Cut(taskName, "/tasks/")
	if !ok || !taskID.MatchString(id) {
		return nil, status.Errorf(codes.InvalidArgument, "invalid task name %q", taskName)
	}
	return s.queue(parent)
}

func (s *Server) ListQueues(ctx context.Context, req *cloudtaskspb.ListQueuesRequest) (*cloudtaskspb.ListQueuesResponse, error) {
	want := fmt.Sprintf("projects/%s/locations/%s", s.cfg.Project, s.cfg.Location)
	if req.GetParent() != want {
		return &cloudtaskspb.ListQueuesResponse{}, nil
	}
	resp := &cloudtaskspb.ListQueuesResponse{}
	for _, name := range s.order {
		resp.Queues = append(resp.Queues, s.queues[name].proto())
	}
	return resp, nil
}

func (s *Server) GetQueue(ctx context.Context, req *cloudtaskspb.GetQueueRequest) (*cloudtaskspb.Queue, error) {
	q, err := s.queue(req.GetName())
	if err != nil {
		return nil, err
	}
	return q.proto(), nil
}

func (q *queue) proto() *cloudtaskspb.Queue {
	r := q.cfg.Retry
	maxAttempts := int32(-1)
	if r.RetryLimit >= 0 {
		maxAttempts = int32(r.RetryLimit) + 1
	}
	pb := &cloudtaskspb.Queue{
		Name: q.name,
		RateLimits: &cloudtaskspb.RateLimits{
			MaxDispatchesPerSecond:  q.cfg.Rate,
			MaxBurstSize:            int32(q.cfg.BucketSize),
			MaxConcurrentDispatches: int32(q.cfg.MaxConcurrent),
		},
		RetryConfig: &cloudtaskspb.RetryConfig{
			MaxAttempts:  maxAttempts,
			MinBackoff:   durationpb.New(r.MinBackoff),
			MaxBackoff:   durationpb.New(r.MaxBackoff),
			MaxDoublings: int32(r.MaxDoublings),
		},
		State: q.state(),
	}
	if r.AgeLimit > 0 {
		pb.RetryConfig.MaxRetryDuration = durationpb.New(r.AgeLimit)
	}
	return pb
}

func (s *Server) CreateTask(ctx context.Context, req *cloudtaskspb.CreateTaskRequest) (*cloudtaskspb.Task, error) {
	q, err := s.queue(req.GetParent())
	if err != nil {
		return nil, err
	}
	if s.faults.hit(FaultCreateFail, s.cfg.Faults.CreateFail) {
		return nil, status.Error(codes.Unavailable, "injected fault: the service is unavailable")
	}
	s.created.Add(1)
	in := req.GetTask()
	if in == nil {
		return nil, status.Error(codes.InvalidArgument, "task is required")
	}
	ae := in.GetAppEngineHttpRequest()
	if ae == nil {
		return nil, status.Error(codes.InvalidArgument, "only App Engine HTTP tasks are supported")
	}
	if !strings.HasPrefix(ae.GetRelativeUri(), "/") {
		return nil, status.Errorf(codes.InvalidArgument, "relative_uri %q must start with /", ae.GetRelativeUri())
	}
	if len(ae.GetBody()) > 0 && (ae.GetHttpMethod() == cloudtaskspb.HttpMethod_GET || ae.GetHttpMethod() == cloudtaskspb.HttpMethod_DELETE) {
		return nil, status.Error(codes.InvalidArgument, "a body needs POST, PUT or PATCH")
	}
	now := time.Now()
	t := proto.Clone(in).(*cloudtaskspb.Task)
	if t.Name == "" {
		var b [16]byte
		rand.Read(b[:])
		t.Name = q.name + "/tasks/" + hex.EncodeToString(b[:])
	} else if parent, id, ok := strings.Cut(t.Name, "/tasks/"); !ok || parent != q.name || !taskID.MatchString(id) {
		return nil, status.Errorf(codes.InvalidArgument, "task name %q is not a task of queue %q", t.Name, q.name)
	}
	if t.GetAppEngineHttpRequest().GetHttpMethod() == cloudtaskspb.HttpMethod_HTTP_METHOD_UNSPECIFIED {
		t.GetAppEngineHttpRequest().HttpMethod = cloudtaskspb.HttpMethod_POST
	}
	if t.ScheduleTime == nil || t.ScheduleTime.AsTime().Before(now) {
		t.ScheduleTime = timestamppb.New(now)
	}
	t.CreateTime = timestamppb.New(now)
	if t.DispatchDeadline == nil {
		t.DispatchDeadline = durationpb.New(s.cfg.DispatchDeadline)
	}
	t.View = cloudtaskspb.Task_FULL

	q.mu.Lock()
	q.sweepTombstones(now)
	if _, ok := q.tasks[t.Name]; ok {
		q.mu.Unlock()
		return nil, status.Errorf(codes.AlreadyExists, "task %q already exists", t.Name)
	}
	if _, ok := q.tombstones[t.Name]; ok {
		q.mu.Unlock()
		return nil, status.Errorf(codes.AlreadyExists, "task %q was recently run or deleted", t.Name)
	}
	nt := &task{pb: t, created: now, due: t.ScheduleTime.AsTime()}
	if s.faults.hit(FaultDelay, s.cfg.Faults.Delay) {
		nt.due = nt.due.Add(s.faults.delay())
	}
	nt.again = s.faults.hit(FaultDuplicate, s.cfg.Faults.Duplicate)
	q.tasks[t.Name] = nt
	out := view(t, req.GetResponseView())
	q.mu.Unlock()
	q.poke()
	if s.faults.hit(FaultCreateLost, s.cfg.Faults.CreateLost) {
		return nil, status.Error(codes.DeadlineExceeded, "injected fault: deadline exceeded (the task was created)")
	}
	return out, nil
}

func (s *Server) GetTask(ctx context.Context, req *cloudtaskspb.GetTaskRequest) (*cloudtaskspb.Task, error) {
	q, err := s.queueOf(req.GetName())
	if err != nil {
		return nil, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	t, ok := q.tasks[req.GetName()]
	if !ok || t.deleted {
		return nil, status.Errorf(codes.NotFound, "task %q not found", req.GetName())
	}
	return view(t.pb, req.GetResponseView()), nil
}

func (s *Server) ListTasks(ctx context.Context, req *cloudtaskspb.ListTasksRequest) (*cloudtaskspb.ListTasksResponse, error) {
	q, err := s.queue(req.GetParent())
	if err != nil {
		return nil, err
	}
	size := int(req.GetPageSize())
	if size <= 0 || size > 1000 {
		size = 1000
	}
	start := 0
	if tok := req.GetPageToken(); tok != "" {
		if start, err = strconv.Atoi(tok); err != nil || start < 0 {
			return nil, status.Error(codes.InvalidArgument, "invalid page token")
		}
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	var all []*task
	for _, t := range q.tasks {
		if !t.deleted {
			all = append(all, t)
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if !all[i].due.Equal(all[j].due) {
			return all[i].due.Before(all[j].due)
		}
		return all[i].pb.Name < all[j].pb.Name
	})
	resp := &cloudtaskspb.ListTasksResponse{}
	for i := start; i < len(all) && i < start+size; i++ {
		resp.Tasks = append(resp.Tasks, view(all[i].pb, req.GetResponseView()))
	}
	if start+size < len(all) {
		resp.NextPageToken = strconv.Itoa(start + size)
	}
	return resp, nil
}

func (s *Server) DeleteTask(ctx context.Context, req *cloudtaskspb.DeleteTaskRequest) (*emptypb.Empty, error) {
	q, err := s.queueOf(req.GetName())
	if err != nil {
		return nil, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	t, ok := q.tasks[req.GetName()]
	if !ok || t.deleted {
		return nil, status.Errorf(codes.NotFound, "task %q not found", req.GetName())
	}
	if t.running {
		t.deleted = true // the dispatch under way finishes; it is not retried
	} else {
		delete(q.tasks, t.pb.Name)
	}
	q.tombstones[t.pb.Name] = time.Now()
	return &emptypb.Empty{}, nil
}

// view returns a copy of t as the response view asks: BASIC (the default)
// leaves out the body, as Cloud Tasks does.
func view(t *cloudtaskspb.Task, v cloudtaskspb.Task_View) *cloudtaskspb.Task {
	out := proto.Clone(t).(*cloudtaskspb.Task)
	if v != cloudtaskspb.Task_FULL {
		out.View = cloudtaskspb.Task_BASIC
		if ae := out.GetAppEngineHttpRequest(); ae != nil {
			ae.Body = nil
		}
	} else {
		out.View = cloudtaskspb.Task_FULL
	}
	return out
}

func (q *queue) sweepTombstones(now time.Time) {
	for name, at := range q.tombstones {
		if now.Sub(at) > q.s.cfg.TombstoneTTL {
			delete(q.tombstones, name)
		}
	}
}

func (q *queue) poke() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}
