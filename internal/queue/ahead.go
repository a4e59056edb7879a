package queue

import (
	"context"
	"errors"
	"time"
)

// AheadDelay is how long after it is enqueued a job a commit needs (one
// Ahead enqueues) first runs, unless it asks for longer: long enough
// that the commit it follows, a few reads and a write away, is done, so
// that the job's first run finds it and no second run is needed. A job
// run before its commit answers ErrNotYet and runs again after its
// queue's backoff, which costs the reads it made and more delay than
// this.
const AheadDelay = 500 * time.Millisecond

// aheadKey marks the context of an enqueue Ahead makes.
type aheadKey struct{}

// delayAhead returns the delay of a task of ctx that asked for delay.
func delayAhead(ctx context.Context, delay time.Duration) time.Duration {
	if ctx.Value(aheadKey{}) != nil {
		return max(delay, AheadDelay)
	}
	return delay
}

// Pending is a job a commit needs, not yet enqueued: its task's name
// (deterministic, so that enqueuing it again adds nothing) and how to
// enqueue it.
type Pending struct {
	Name    string
	enqueue func(context.Context) error
}

// Pending returns the task of the job with body t, to enqueue ahead of
// the commit that needs it. The job must name its tasks (TaskName).
func (j Job[T]) Pending(q Queue, t T, delay time.Duration) Pending {
	return Pending{Name: j.Name + "/" + j.TaskName(t), enqueue: func(ctx context.Context) error {
		return j.Enqueue(ctx, q, t, delay)
	}}
}

// PendingFunc returns a task enqueued by another package's hook, under
// a name that hook makes deterministic.
func PendingFunc(name string, enqueue func(context.Context) error) Pending {
	return Pending{Name: name, enqueue: enqueue}
}

// errUnplanned is what Ahead.Need answers, in a transaction, when its
// commit needs a job not enqueued yet.
var errUnplanned = errors.New("queue: the commit needs a job not enqueued yet")

// Ahead keeps the rule that a change commits only once the jobs that
// follow it are enqueued: a job enqueued before a commit that then fails
// waits for its change and gives up (GiveUpAfter), where a commit without
// its job would leave the change half done. An operation tells it the
// jobs it expects before its transaction, and, in the transaction, the
// jobs what it read there needs (Need); a need not enqueued ends the
// transaction, and Commit enqueues it and runs the transaction again. No
// operation keeps flags of what it enqueued. Every task it enqueues (a
// Job's, even through a PendingFunc hook) first runs AheadDelay later.
type Ahead struct {
	done    map[string]bool
	missing []Pending
}

// Commit enqueues expected, then runs commit (a transaction that calls
// Need) until what it needs is enqueued, three times more at most.
func (a *Ahead) Commit(ctx context.Context, expected []Pending, commit func() error) error {
	if err := a.enqueue(ctx, expected); err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		err := commit()
		if !errors.Is(err, errUnplanned) || attempt == 3 {
			return err
		}
		if err := a.enqueue(ctx, a.missing); err != nil {
			return err
		}
	}
}

// Need answers an error, which the transaction must return, unless every
// one of jobs is enqueued.
func (a *Ahead) Need(jobs ...Pending) error {
	a.missing = a.missing[:0]
	for _, j := range jobs {
		if !a.done[j.Name] {
			a.missing = append(a.missing, j)
		}
	}
	if len(a.missing) > 0 {
		return errUnplanned
	}
	return nil
}

// Enqueued reports whether the job named name (Pending.Name) was
// enqueued: a commit that answered an error may have applied all the
// same, and its job run.
func (a *Ahead) Enqueued(name string) bool { return a.done[name] }

func (a *Ahead) enqueue(ctx context.Context, jobs []Pending) error {
	ctx = context.WithValue(ctx, aheadKey{}, true)
	for _, j := range jobs {
		if a.done[j.Name] {
			continue
		}
		if err := j.enqueue(ctx); err != nil {
			return err
		}
		if a.done == nil {
			a.done = map[string]bool{}
		}
		a.done[j.Name] = true
	}
	return nil
}
