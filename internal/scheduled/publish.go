package scheduled

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/activities"
	"socialstream/internal/derrors"
	"socialstream/internal/queue"
	"socialstream/internal/store"
)

// PublishJob posts a scheduled post at its time: enqueued ahead of the
// commit that schedules (or moves) it.
var PublishJob = queue.Job[PublishTask]{Name: "scheduled-publish", Queue: queue.Fanout,
	TaskName: func(t PublishTask) string { return fmt.Sprintf("scheduled-%s-%d-%d", t.ID, t.At, t.Due) }}

// PublishTask is the body of a publishing job.
type PublishTask struct {
	ID   string `json:"id"`
	User string `json:"user"`
	// At is the time the post was scheduled for when the job was
	// enqueued (µs): a post moved since is left to its own job.
	At int64 `json:"at"`
	// Due is when this task runs (µs): At, or sooner when At is further
	// than a queue holds a task (maxHop), the task then enqueuing the
	// next.
	Due int64 `json:"due"`
}

// maxHop is how far ahead a publishing task is enqueued at most: Cloud
// Tasks holds a task 30 days ahead at most.
const maxHop = 29 * 24 * time.Hour

// publishing is the job that publishes post id of user's at at, enqueued
// at now.
func publishing(q queue.Queue, id, user string, at, now time.Time) queue.Pending {
	t, delay := publishTask(id, user, at, now)
	return PublishJob.Pending(q, t, delay)
}

// publishTask is the task of that job, and its delay.
func publishTask(id, user string, at, now time.Time) (PublishTask, time.Duration) {
	due := at
	if at.Sub(now) > maxHop {
		due = now.Add(maxHop)
	}
	return PublishTask{ID: id, User: user, At: at.UnixMicro(), Due: due.UnixMicro()}, max(0, due.Sub(now))
}

// Outcomes of Publish, for the job's log line.
const (
	Published = "published"
	Moved     = "moved or gone"
	Refused   = "refused"
	Hopped    = "not due yet: enqueued again"
)

// Publish runs a publishing job: it posts the scheduled post of t as its
// author's post of now, and deletes it. A post cancelled, published or
// moved since the task was made is left alone; a post its author may no
// longer make (suspended, its reply's post gone, its pictures taken) is
// dropped, its pictures let go. It is exactly once: the post is first
// marked as being published (no longer listed, moved or cancelled), then
// posted under an external id of its own (activities' dedupe: a second
// run answers the first's post), then deleted; a run stopped anywhere is
// finished by the next.
func (s *Service) Publish(ctx context.Context, t PublishTask) (string, error) {
	if t.ID == "" || t.User == "" {
		return Moved, nil // malformed: nothing to do, ever
	}
	now := s.now()
	if at := time.UnixMicro(t.At); now.Before(at) {
		if now.Before(time.UnixMicro(t.Due)) {
			return "", queue.NotYet("the scheduled post's time")
		}
		next, delay := publishTask(t.ID, t.User, at, now)
		if err := PublishJob.Enqueue(ctx, s.q, next, delay); err != nil {
			return "", err
		}
		return Hopped, nil
	}
	p, ok, err := s.begin(ctx, t)
	if err != nil || !ok {
		return Moved, err
	}
	in, err := p.view(t.ID)
	if err != nil {
		return "", err
	}
	in.Input.ExternalID, in.Input.HeldBy = ExternalID(t.ID), t.ID
	_, _, err = s.posts.Post(ctx, t.User, in.Input)
	outcome := Published
	switch {
	case refused(err):
		outcome = Refused
	case err != nil:
		return "", err
	}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		var p Post
		ok, err := tx.Get(postKey(s.db, t.ID), &p)
		switch {
		case err != nil || !ok:
			return err
		case outcome == Refused:
			return s.drop(ctx, tx, t.User, t.ID, &p, nil)
		}
		return tx.Delete(postKey(s.db, t.ID))
	})
	if err != nil {
		return "", fmt.Errorf("scheduled.Publish(%s): %w", t.ID, err)
	}
	return outcome, nil
}

// ExternalID is the external id a scheduled post is published under.
func ExternalID(id string) string { return "scheduled:" + id }

// refused says whether err is a refusal of the post, which no retry
// changes.
func refused(err error) bool {
	for _, k := range []error{derrors.InvalidArgument, derrors.NotFound, derrors.PermissionDenied, derrors.Conflict,
		derrors.Unauthenticated, activities.ErrNoSuchActivity} {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}

// begin marks t's post as being published, and out of its author's
// book, unless it is gone or moved; a post marked already (a run before
// this one stopped after) is answered as it is.
func (s *Service) begin(ctx context.Context, t PublishTask) (*Post, bool, error) {
	var out Post
	found := false
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		var p Post
		var b book
		l := tx.Lookup()
		ref := l.Add(postKey(s.db, t.ID), &p)
		l.Add(bookKey(s.db, t.User), &b)
		if err := l.Run(ctx); err != nil {
			return err
		}
		found = ref.Found() && p.UserID == t.User && p.At.UnixMicro() == t.At
		if !found || p.Publishing {
			out = p
			return nil
		}
		p.Publishing = true
		b.remove(t.ID)
		out = p
		return tx.PutMulti([]*datastore.Key{postKey(s.db, t.ID), bookKey(s.db, t.User)}, []any{&p, &b})
	})
	if err != nil {
		return nil, false, fmt.Errorf("scheduled.Publish(%s): %w", t.ID, err)
	}
	return &out, found, nil
}
