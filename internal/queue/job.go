package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"socialstream/internal/derrors"
)

// TasksPrefix is the path every job's handler is under.
const TasksPrefix = "/_tasks/"

// Job is a kind of job, defined once, by the package that owns it: its
// name (its handler's route is TasksPrefix+Name, and its log lines say
// it), its queue (one of queue.yaml's), its body (T, sent as JSON), and
// how a task of it is named. Everything else about it follows from the
// definition: the route the API serves it at (which decodes T and hands
// it to the owner), the task's path, its retry limit (the queue's,
// RetryLimits) and how long it waits for the change it follows
// (GiveUpAfter).
type Job[T any] struct {
	Name  string
	Queue string
	// QueueOf, when set, picks the queue of a body (a backfill's later
	// steps go to a queue of their own); "" keeps Queue.
	QueueOf func(T) string
	// TaskName, when set, names the task of a body
	// deterministically, so that an enqueue tried again (a retried
	// request or job) adds none; "" leaves it unnamed.
	TaskName func(T) string
}

// Path is the route of the job's handler.
func (j Job[T]) Path() string { return TasksPrefix + j.Name }

// Enqueue adds a task of the job with body t to q, to run after delay
// (AheadDelay at least when Ahead enqueues it).
func (j Job[T]) Enqueue(ctx context.Context, q Queue, t T, delay time.Duration) error {
	delay = delayAhead(ctx, delay)
	body, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("queue: the body of a %s job: %w", j.Name, err)
	}
	task := Task{Queue: j.Queue, Path: j.Path(), Body: body, Delay: delay}
	if j.QueueOf != nil {
		if other := j.QueueOf(t); other != "" {
			task.Queue = other
		}
	}
	if j.TaskName != nil {
		task.Name = j.TaskName(t)
	}
	return q.Enqueue(ctx, task)
}

// ErrNotYet is what a job answers when the change it follows has not
// committed yet (nor given up: GiveUpAfter): its queue retries it. Each
// job says which change, by NotYet.
var ErrNotYet = errors.New("the change this job follows is not committed yet")

// notYet is a job's ErrNotYet, saying which change it waits for.
type notYet struct{ what string }

func (e notYet) Error() string { return e.what + " is not committed yet" }

// Is makes it ErrNotYet, and an Unavailable error (derrors): a retry,
// not a failure, in the log.
func (e notYet) Is(target error) bool { return target == ErrNotYet || target == derrors.Unavailable }

// NotYet returns the error of a job whose change, what, has not
// committed yet: errors.Is it ErrNotYet.
func NotYet(what string) error { return notYet{what} }
