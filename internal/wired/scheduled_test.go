package wired_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"socialstream/internal/accounts"
	"socialstream/internal/activities"
	"socialstream/internal/app/apptest"
	"socialstream/internal/derrors"
	"socialstream/internal/moderation"
	"socialstream/internal/polls"
	"socialstream/internal/queue"
	"socialstream/internal/scheduled"
	"socialstream/internal/testenv"
)

// clock is a settable time.
type clock struct{ at atomic.Int64 }

func (c *clock) now() time.Time      { return time.UnixMicro(c.at.Load()) }
func (c *clock) set(t time.Time)     { c.at.Store(t.UnixMicro()) }
func (c *clock) add(d time.Duration) { c.set(c.now().Add(d)) }
func newClock(t time.Time) *clock    { c := &clock{}; c.set(t); return c }
func taskOf(v scheduled.Scheduled, user string) scheduled.PublishTask {
	return scheduled.PublishTask{ID: v.ID, User: user, At: v.At.UnixMicro(), Due: v.At.UnixMicro()}
}

// failingPoster posts, then answers an error, once: a commit that
// happened and whose answer was lost.
type failingPoster struct {
	scheduled.Poster
	failed atomic.Bool
}

func (p *failingPoster) Post(ctx context.Context, author string, in activities.PostInput) (activities.View, bool, error) {
	v, made, err := p.Poster.Post(ctx, author, in)
	if err == nil && p.failed.CompareAndSwap(false, true) {
		return activities.View{}, false, derrors.New(derrors.Unavailable, "the answer was lost")
	}
	return v, made, err
}

// A scheduled post is published by its job at its time, exactly once:
// early, the job waits; a run whose post committed but whose answer was
// lost is finished by the next, which makes no second post; a run after
// that finds it gone. The post is the author's of that moment, its poll
// counted from then.
func TestScheduledPostPublishesOnce(t *testing.T) {
	ctx := context.Background()
	env := apptest.New(t)
	author := env.Person("author")
	c := newClock(time.Now())
	poster := &failingPoster{Poster: env.Svc.Activities}
	s, err := scheduled.New(env.DB, env.Gen, testenv.StartTasks(t).Queue, poster, scheduled.Config{Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Schedule(ctx, author, c.now().Add(time.Minute), activities.PostInput{Title: "too soon"}); !errors.Is(err, derrors.InvalidArgument) {
		t.Errorf("a post a minute ahead: %v, want refused", err)
	}
	if _, err := s.Schedule(ctx, author, c.now().Add(time.Hour), activities.PostInput{Title: " "}); !errors.Is(err, derrors.InvalidArgument) {
		t.Errorf("a post of no text: %v, want refused", err)
	}
	v, err := s.Schedule(ctx, author, c.now().Add(2*time.Hour), activities.PostInput{Title: "later", Visibility: activities.Unlisted,
		Poll: &polls.Input{Options: []string{"yes", "no"}, ExpiresIn: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	if list, err := s.List(ctx, author, scheduled.Window{Limit: 20}); err != nil || len(list) != 1 || list[0].Input.Title != "later" {
		t.Fatalf("the author's scheduled posts: %+v, %v", list, err)
	}
	task := taskOf(v, author)
	if _, err := s.Publish(ctx, task); !errors.Is(err, queue.ErrNotYet) {
		t.Errorf("publishing before its time: %v, want a retry", err)
	}
	c.add(2*time.Hour + time.Second)
	if _, err := s.Publish(ctx, task); !errors.Is(err, derrors.Unavailable) {
		t.Fatalf("the run whose answer was lost: %v", err)
	}
	if _, err := s.Get(ctx, author, v.ID); !errors.Is(err, scheduled.ErrNoSuchPost) {
		t.Errorf("a post being published is still shown: %v", err)
	}
	if _, err := s.Reschedule(ctx, author, v.ID, c.now().Add(time.Hour)); !errors.Is(err, scheduled.ErrNoSuchPost) {
		t.Errorf("a post being published was moved: %v", err)
	}
	for i, want := range []string{scheduled.Published, scheduled.Moved} {
		if got, err := s.Publish(ctx, task); err != nil || got != want {
			t.Errorf("run %d: %q, %v; want %q", i+2, got, err, want)
		}
	}
	id, ok, err := env.Svc.Activities.ExternalIDOf(ctx, author, scheduled.ExternalID(v.ID))
	if err != nil || !ok || id == "" {
		t.Fatalf("the published post: %q %v %v", id, ok, err)
	}
	posts, err := env.Svc.Activities.Shown(ctx, author, []string{id})
	if err != nil || len(posts) != 1 || posts[0].Title != "later" || posts[0].Visibility != activities.Unlisted || posts[0].Poll == nil {
		t.Fatalf("the published post: %+v, %v", posts, err)
	}
	if list, err := s.List(ctx, author, scheduled.Window{Limit: 20}); err != nil || len(list) != 0 {
		t.Errorf("the author's scheduled posts after: %+v, %v", list, err)
	}
}

// A post moved is published by its new time's job, not its old one's; a
// post cancelled by none; a person suspended by their scheduled time
// posts nothing; a post further ahead than a queue holds a task is
// carried by a task that enqueues the next.
func TestScheduledPostMovedCancelledRefused(t *testing.T) {
	ctx := context.Background()
	env := apptest.New(t)
	author, mod := env.Person("author"), env.Person("mod")
	if err := moderation.SetRole(ctx, env.DB, env.Gen, mod, accounts.RoleModerator); err != nil {
		t.Fatal(err)
	}
	c := newClock(time.Now())
	s, err := scheduled.New(env.DB, env.Gen, testenv.StartTasks(t).Queue, env.Svc.Activities, scheduled.Config{Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	moved, err := s.Schedule(ctx, author, c.now().Add(time.Hour), activities.PostInput{Title: "moved"})
	if err != nil {
		t.Fatal(err)
	}
	old := taskOf(moved, author)
	if moved, err = s.Reschedule(ctx, author, moved.ID, c.now().Add(3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	cancelled, err := s.Schedule(ctx, author, c.now().Add(time.Hour), activities.PostInput{Title: "cancelled"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Cancel(ctx, author, cancelled.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Cancel(ctx, author, cancelled.ID); !errors.Is(err, scheduled.ErrNoSuchPost) {
		t.Errorf("cancelling again: %v", err)
	}
	far, err := s.Schedule(ctx, author, c.now().Add(40*24*time.Hour), activities.PostInput{Title: "far"})
	if err != nil {
		t.Fatal(err)
	}
	c.add(time.Hour + time.Second)
	for _, task := range []scheduled.PublishTask{old, taskOf(cancelled, author)} {
		if got, err := s.Publish(ctx, task); err != nil || got != scheduled.Moved {
			t.Errorf("%+v: %q, %v; want nothing done", task, got, err)
		}
	}
	hop := taskOf(far, author)
	hop.Due = c.now().Add(-time.Second).UnixMicro()
	if got, err := s.Publish(ctx, hop); err != nil || got != scheduled.Hopped {
		t.Errorf("a task due before its post's time: %q, %v", got, err)
	}
	c.add(2 * time.Hour)
	if got, err := s.Publish(ctx, taskOf(moved, author)); err != nil || got != scheduled.Published {
		t.Errorf("the moved post's own task: %q, %v", got, err)
	}
	if _, err := env.Svc.Moderation.Act(ctx, mod, moderation.ActionInput{Action: moderation.Suspend, AccountID: author, Reason: "spam"}); err != nil {
		t.Fatal(err)
	}
	c.add(40 * 24 * time.Hour)
	if got, err := s.Publish(ctx, taskOf(far, author)); err != nil || got != scheduled.Refused {
		t.Errorf("a suspended person's post: %q, %v; want refused", got, err)
	}
	for what, ext := range map[string]string{"moved": moved.ID, "cancelled": cancelled.ID, "suspended": far.ID} {
		id, ok, err := env.Svc.Activities.ExternalIDOf(ctx, author, scheduled.ExternalID(ext))
		if err != nil || ok != (what == "moved") {
			t.Errorf("the %s post: published %v (%q), %v", what, ok, id, err)
		}
	}
	if _, err := s.Get(ctx, author, far.ID); !errors.Is(err, scheduled.ErrNoSuchPost) {
		t.Errorf("the refused post is kept: %v", err)
	}
}

// The day's limit holds: MaxDaily posts on one day, then no more on it,
// another day still open; a move into a full day is refused.
func TestScheduledPostsDailyLimit(t *testing.T) {
	ctx := context.Background()
	env := apptest.New(t)
	author := env.Person("author")
	c := newClock(time.Date(2031, 3, 1, 6, 0, 0, 0, time.UTC))
	s, err := scheduled.New(env.DB, env.Gen, testenv.StartTasks(t).Queue, env.Svc.Activities, scheduled.Config{Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2031, 3, 2, 0, 0, 0, 0, time.UTC)
	for i := range scheduled.MaxDaily {
		if _, err := s.Schedule(ctx, author, day.Add(time.Duration(i)*time.Minute), activities.PostInput{Title: "post"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Schedule(ctx, author, day.Add(23*time.Hour), activities.PostInput{Title: "one more"}); !errors.Is(err, derrors.InvalidArgument) {
		t.Errorf("one more on a full day: %v", err)
	}
	next, err := s.Schedule(ctx, author, day.Add(24*time.Hour), activities.PostInput{Title: "next day"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Reschedule(ctx, author, next.ID, day.Add(time.Hour)); !errors.Is(err, derrors.InvalidArgument) {
		t.Errorf("a move into a full day: %v", err)
	}
	list, err := s.List(ctx, author, scheduled.Window{Limit: 10})
	if err != nil || len(list) != 10 || list[0].ID != next.ID {
		t.Fatalf("the first page: %d, %v", len(list), err)
	}
	more, err := s.List(ctx, author, scheduled.Window{Limit: 40, Below: list[9].ID})
	if err != nil || len(more) != scheduled.MaxDaily+1-10 {
		t.Errorf("the rest: %d, %v", len(more), err)
	}
}
