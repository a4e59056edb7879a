package polls

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"socialstream/internal/ids"
	"socialstream/internal/notifications"
	"socialstream/internal/queue"
	"socialstream/internal/store"
)

// CloseJob tells a poll's voters and its author that it ended: enqueued
// ahead of its post's commit, to run at the poll's end.
var CloseJob = queue.Job[CloseTask]{Name: "poll-close", Queue: queue.Notifications,
	TaskName: func(t CloseTask) string { return "poll-close-" + t.PollID }}

// CloseTask is the body of a poll's closing job.
type CloseTask struct {
	ActivityID string `json:"activityId"`
	PollID     string `json:"pollId"`
	Author     string `json:"author"`
	Expires    int64  `json:"expires"` // the poll's end, µs
}

// Closing is the job that closes p, of activity by author, to enqueue
// ahead of the post's commit (queue.Ahead), at its end from now.
func Closing(q queue.Queue, activity, author string, p *Poll, now time.Time) queue.Pending {
	return CloseJob.Pending(q, CloseTask{ActivityID: activity, PollID: p.ID, Author: author, Expires: p.Expires.UnixMicro()},
		max(0, p.Expires.Sub(now)))
}

// Closer runs the closing jobs.
type Closer struct {
	db    *store.DB
	ids   *ids.Generator
	notes *notifications.Service
	posts Posts
	now   func() time.Time
}

// Posts says which poll a post carries now (package activities'
// Records): a poll an edit replaced is closed by no one.
type Posts interface {
	PollOf(ctx context.Context, activity string) (string, error)
}

// NewCloser returns the runner of the closing jobs, which tells through
// notes.
func NewCloser(db *store.DB, gen *ids.Generator, notes *notifications.Service, posts Posts) (*Closer, error) {
	if db == nil || gen == nil || notes == nil || posts == nil {
		return nil, errors.New("polls.NewCloser: nil dependency")
	}
	return &Closer{db: db, ids: gen, notes: notes, posts: posts, now: time.Now}, nil
}

// errNotEnded says a closing job came before its poll's end.
var errNotEnded = queue.NotYet("the poll's end")

// Close tells the voters of t's poll (read now: whoever voted) and its
// author that it ended (notifications.Poll, about its post: none is made
// about a post deleted meanwhile, and the policy decides as for any
// notification), and returns how many it told. Run again, it tells no
// one twice (each notification is named by the poll and its reader).
func (c *Closer) Close(ctx context.Context, t CloseTask) (int, error) {
	if t.ActivityID == "" || t.PollID == "" || t.Author == "" {
		return 0, nil // malformed: nothing to do, ever
	}
	if c.now().Before(time.UnixMicro(t.Expires)) {
		return 0, errNotEnded
	}
	if now, err := c.posts.PollOf(ctx, t.ActivityID); err != nil || now != t.PollID {
		return 0, err // gone, or replaced by an edit: its voters are told of no end
	}
	keys, err := c.db.GetAll(ctx, c.db.Query(KindPollVote).FilterField("activityId", "=", t.ActivityID).KeysOnly(), nil)
	if err != nil {
		return 0, fmt.Errorf("polls.Close(%s): %w", t.PollID, err)
	}
	told := []string{t.Author}
	for _, k := range keys {
		if poll, voter, ok := strings.Cut(k.Name, "_"); ok && poll == t.PollID && voter != t.Author {
			told = append(told, voter)
		}
	}
	e := notifications.Event{Type: notifications.Poll, ActorID: t.Author, Recipients: told, ActivityID: t.ActivityID,
		ID: "poll-" + t.PollID, Seq: c.ids.Next()}
	return c.notes.Run(ctx, e)
}
