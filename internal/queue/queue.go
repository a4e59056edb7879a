// Package queue enqueues background jobs as Cloud Tasks App Engine HTTP tasks
// through the real cloudtasks/apiv2 client, in production and locally alike
// (locally the client points at the project's tasks emulator).
package queue

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"time"

	cloudtasks "cloud.google.com/go/cloudtasks/apiv2"
	"cloud.google.com/go/cloudtasks/apiv2/cloudtaskspb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"socialstream/internal/derrors"
)

// Task is one job: a POST of Body to Path on the app, through Queue.
type Task struct {
	Queue string // queue name from queue.yaml
	Path  string // the handler's path, under /_tasks/
	Body  []byte // JSON
	// Name, when set, makes the task unique: enqueuing a second task of the
	// same name (while the first exists, or for a while after it ran) is a
	// no-op. Letters, digits, - and _ only, at most MaxName. Cloud Tasks
	// gets it behind a prefix hashed from it (TaskID).
	Name  string
	Delay time.Duration // run no earlier than this from now
}

// Queue enqueues tasks.
type Queue interface {
	Enqueue(ctx context.Context, t Task) error
}

// Config says where tasks go.
type Config struct {
	Project  string
	Location string // Cloud Tasks location, e.g. us-central1
	// Service and Version route tasks to an App Engine service; empty means
	// the default.
	Service, Version string
}

// CloudTasks is a Queue backed by Cloud Tasks.
type CloudTasks struct {
	client *cloudtasks.Client
	cfg    Config
	now    func() time.Time
}

// NewCloudTasks returns a Queue that enqueues through client.
func NewCloudTasks(client *cloudtasks.Client, cfg Config) (*CloudTasks, error) {
	if client == nil {
		return nil, errors.New("queue.NewCloudTasks: nil client")
	}
	if cfg.Project == "" || cfg.Location == "" {
		return nil, errors.New("queue.NewCloudTasks: project and location are required")
	}
	return &CloudTasks{client: client, cfg: cfg, now: time.Now}, nil
}

// Dial returns a cloudtasks client. A non-empty emulatorHost connects to the
// tasks emulator there, without credentials.
func Dial(ctx context.Context, emulatorHost string) (*cloudtasks.Client, error) {
	var opts []option.ClientOption
	if emulatorHost != "" {
		opts = append(opts,
			option.WithEndpoint("passthrough:///"+emulatorHost),
			option.WithoutAuthentication(),
			option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())),
		)
	}
	c, err := cloudtasks.NewClient(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("queue.Dial: %w", err)
	}
	return c, nil
}

// Enqueue creates the task. A task whose name is taken counts as enqueued:
// that is the deduplication asked for.
func (q *CloudTasks) Enqueue(ctx context.Context, t Task) error {
	req, err := NewCreateTaskRequest(q.cfg, t, q.now())
	if err != nil {
		return err
	}
	if _, err := q.client.CreateTask(ctx, req); err != nil {
		switch status.Code(err) {
		case codes.AlreadyExists:
			return nil
		case codes.Unavailable, codes.DeadlineExceeded, codes.Aborted, codes.ResourceExhausted, codes.Internal:
			// Transient: the caller answers 503 and the client retries.
			// The task may exist all the same; jobs are idempotent.
			return fmt.Errorf("queue.Enqueue(%s %s): %w: %w", t.Queue, t.Path, derrors.Unavailable, err)
		}
		return fmt.Errorf("queue.Enqueue(%s %s): %w", t.Queue, t.Path, err)
	}
	return nil
}

// MaxName is the longest Task.Name: Cloud Tasks' 500 less the hashed
// prefix TaskID adds.
const MaxName = 500 - prefixLen

// prefixLen is the length of TaskID's prefix: 8 hex digits and a dash.
const prefixLen = 9

// TaskID returns the id Cloud Tasks gets for a task named name: the name
// behind the first 8 hex digits of its SHA-256. Cloud Tasks spreads tasks
// over its servers by name, and names that share a prefix or grow in
// sequence (ours begin with the job's kind and hold time-ordered ids) land
// on one of them, which its documentation says raises latency and error
// rates. The prefix is a function of the name alone, so the same name
// still dedupes; the name stays readable after it, in logs and in the
// X-AppEngine-TaskName header.
func TaskID(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:4]) + "-" + name
}

var (
	validName  = regexp.MustCompile(`^[A-Za-z0-9_-]{1,491}$`)
	validQueue = regexp.MustCompile(`^[A-Za-z0-9-]{1,100}$`)
)

// QueuePath returns the full resource name of a queue.
func QueuePath(cfg Config, queue string) string {
	return fmt.Sprintf("projects/%s/locations/%s/queues/%s", cfg.Project, cfg.Location, queue)
}

// NewCreateTaskRequest builds the request that enqueues t. It is a pure
// function of its arguments.
func NewCreateTaskRequest(cfg Config, t Task, now time.Time) (*cloudtaskspb.CreateTaskRequest, error) {
	if !validQueue.MatchString(t.Queue) {
		return nil, fmt.Errorf("queue: invalid queue name %q", t.Queue)
	}
	if len(t.Path) == 0 || t.Path[0] != '/' {
		return nil, fmt.Errorf("queue: path %q must start with /", t.Path)
	}
	if t.Name != "" && !validName.MatchString(t.Name) {
		return nil, fmt.Errorf("queue: invalid task name %q", t.Name)
	}
	if t.Delay < 0 {
		return nil, fmt.Errorf("queue: negative delay %v", t.Delay)
	}
	parent := QueuePath(cfg, t.Queue)
	req := &cloudtaskspb.AppEngineHttpRequest{
		HttpMethod:  cloudtaskspb.HttpMethod_POST,
		RelativeUri: t.Path,
		Headers:     map[string]string{"Content-Type": "application/json"},
		Body:        t.Body,
	}
	if cfg.Service != "" || cfg.Version != "" {
		req.AppEngineRouting = &cloudtaskspb.AppEngineRouting{Service: cfg.Service, Version: cfg.Version}
	}
	task := &cloudtaskspb.Task{
		MessageType: &cloudtaskspb.Task_AppEngineHttpRequest{AppEngineHttpRequest: req},
	}
	if t.Name != "" {
		task.Name = parent + "/tasks/" + TaskID(t.Name)
	}
	if t.Delay > 0 {
		task.ScheduleTime = timestamppb.New(now.Add(t.Delay))
	}
	return &cloudtaskspb.CreateTaskRequest{Parent: parent, Task: task}, nil
}

// The queues of queue.yaml.
const (
	Rebuild       = "rebuild"       // audience copies after a change of the graph
	Fanout        = "fanout"        // the audience chunks of a post past the first; scheduled posts at their time
	Backfill      = "backfill"      // older activities, a small batch at a time
	Notifications = "notifications" // notifications, derived and disposable
	Cleanup       = "cleanup"       // what deletes, trims and expiries leave
	Push          = "push"          // Web Push deliveries, one per subscription
	Federation    = "federation"    // deliveries to other servers' inboxes, one per inbox
	Pictures      = "pictures"      // uploads made safe off the request
)

// RetryLimits is each queue's task_retry_limit in queue.yaml (a test
// holds the two equal). No queue has an age limit: with both, Cloud Tasks
// retries until both are reached, and a handler could not tell its last
// attempt.
var RetryLimits = map[string]int{
	Rebuild:       1500, // a day at the 60 s backoff: a dropped job leaves copies wrong
	Fanout:        1500, // likewise
	Backfill:      160,  // a day at 600 s
	Notifications: 50,   // under two hours at 120 s: a late notification is worth little
	Cleanup:       300,  // a day at 300 s
	Push:          12,   // an hour: a push service down longer loses the subscription
	Federation:    30,   // about a day: a server down longer misses what was sent meanwhile
	Pictures:      100,  // an hour and a half at 60 s: an upload not made safe by then is collected
}

// LastAttempt reports whether the attempt of a task of queue name that
// follows retries earlier ones is the last the queue makes: if it fails,
// the task is dropped.
func LastAttempt(name string, retries int) bool {
	limit, ok := RetryLimits[name]
	return ok && retries >= limit
}

// GiveUpAfter is how long a job waits for the change it follows to
// commit (a job is enqueued before the commit of the change it follows):
// a change that has not committed by then never will, for its request has
// given up. Each job's handler answers "not yet" (retried) until then.
const GiveUpAfter = 2 * time.Minute

// Patient returns q, whose jobs wait giveUp for the change they follow
// (GiveUpOf) instead of GiveUpAfter; 0 or less leaves q as it is. For a
// stack whose requests all commit sooner than that after they enqueue,
// and that must not wait minutes for the jobs of changes that never
// came: the convergence checker, which holds every request to it.
func Patient(q Queue, giveUp time.Duration) Queue {
	if giveUp <= 0 {
		return q
	}
	return patient{q, giveUp}
}

type patient struct {
	Queue
	giveUp time.Duration
}

func (p patient) GiveUpAfter() time.Duration { return p.giveUp }

// GiveUpOf returns how long the jobs of q wait for the change they follow
// to commit: GiveUpAfter, unless q was made Patient.
func GiveUpOf(q Queue) time.Duration {
	if p, ok := q.(interface{ GiveUpAfter() time.Duration }); ok {
		return p.GiveUpAfter()
	}
	return GiveUpAfter
}

type attemptKey struct{}

type attempt struct {
	queue   string
	retries int
}

// WithAttempt returns ctx for a task's run: its queue and how many
// attempts came before (the task's retry count), for LastAttemptOf.
func WithAttempt(ctx context.Context, queue string, retries int) context.Context {
	return context.WithValue(ctx, attemptKey{}, attempt{queue, retries})
}

// LastAttemptOf reports whether the task whose run ctx is (WithAttempt)
// is on its queue's last attempt: a job that gives up on something
// after it says so then.
func LastAttemptOf(ctx context.Context) bool {
	a, ok := ctx.Value(attemptKey{}).(attempt)
	return ok && LastAttempt(a.queue, a.retries)
}
