package moderation

import (
	"context"
	"fmt"
	"time"

	"socialstream/internal/accounts"
	"socialstream/internal/comments"
	"socialstream/internal/likes"
	"socialstream/internal/notifications"
	"socialstream/internal/queue"
	"socialstream/internal/store"
)

// A suspension hides a person's likes, comments and the notifications
// they caused from the lists at once (their card says they are
// suspended), and the withholding job takes them out of the activities'
// counts and their recipients' unread counts (or, once it is lifted,
// counts them again): each Like, Comment and Notification says whether
// it is withheld, so the
// job can run any number of times, and each of its transactions reads the
// person's standing, so whichever job runs last leaves the counts as the
// standing is.

// WithholdJob withholds a suspended person's likes and comments from
// their counts, or restores them, a page at a time.
var WithholdJob = queue.Job[WithholdTask]{Name: "withhold", Queue: queue.Cleanup,
	TaskName: func(t WithholdTask) string { return fmt.Sprintf("withhold-%s-%d-%d", t.UserID, t.At, t.Step) }}

// WithholdTask is the body of one step of a withholding.
type WithholdTask struct {
	UserID string `json:"userId"`
	At     int64  `json:"at"` // the suspension's or its lifting's time, µs
	On     bool   `json:"on"` // a suspension (true) or its lifting
	Kind   string `json:"kind"`
	Cursor string `json:"cursor,omitempty"`
	Step   int    `json:"step"`
}

// Kinds a withholding goes through, in order.
const (
	withholdLikes         = "likes"
	withholdComments      = "comments"
	withholdNotifications = "notifications"
	withholdPage          = 500
)

func (s *Service) enqueueWithhold(ctx context.Context, t WithholdTask) error {
	return WithholdJob.Enqueue(ctx, s.queue, t, 0)
}

// errWithholdNotYet says the change a withholding follows is not
// committed yet; the queue retries it.
var errWithholdNotYet = fmt.Errorf("moderation: the suspension's change is not committed yet: %w", ErrNotYet)

// Withhold runs one step of a withholding, and reports how it ended:
// "", or why it did nothing.
func (s *Service) Withhold(ctx context.Context, t WithholdTask) (string, error) {
	l := s.db.Lookup()
	r := accounts.Read(l, t.UserID)
	if err := l.Run(ctx); err != nil {
		return "", err
	}
	if !r.Exists() {
		return "the account is gone", nil
	}
	if st := r.Standing(); st.IsSuspended() != t.On {
		return s.withholdLater(t, st.Lifted, st.Suspended.UnixMicro())
	}
	suspended := func(tx *store.Tx) (bool, error) {
		l := tx.Lookup()
		me := accounts.Read(l, t.UserID)
		if err := l.Run(ctx); err != nil {
			return false, err
		}
		return me.Standing().IsSuspended(), nil
	}
	var next string
	var err error
	switch t.Kind {
	case withholdLikes:
		next, err = likes.Withhold(ctx, s.db, t.UserID, t.Cursor, withholdPage, suspended)
	case withholdComments:
		next, err = comments.Withhold(ctx, s.db, t.UserID, t.Cursor, withholdPage, suspended)
	case withholdNotifications:
		next, err = notifications.Withhold(ctx, s.db, t.UserID, t.Cursor, withholdPage, suspended)
	default:
		return "malformed task", nil
	}
	if err != nil {
		return "", err
	}
	if next == "" && t.Kind == withholdNotifications {
		return "", nil
	}
	t.Step++
	t.Cursor = next
	if next == "" {
		t.Kind = map[string]string{withholdLikes: withholdComments, withholdComments: withholdNotifications}[t.Kind]
	}
	return "", s.enqueueWithhold(ctx, t)
}

// withholdLater is what a step of t does that finds the person's
// standing not as it wants (its suspension last lifted at lifted, last
// made at suspended, µs). Only the first step waits for its change (past the
// queue's give-up, it never came): a later one follows a step that found
// the standing as it wants, so what it finds now is a later change,
// whose own job does the work. A change made since (a lifting, or a
// suspension again) replaced it: that job does the work.
func (s *Service) withholdLater(t WithholdTask, lifted, suspended int64) (string, error) {
	replaced := t.On && lifted >= t.At || !t.On && suspended >= t.At
	if t.Step == 0 && !replaced && s.now().Sub(time.UnixMicro(t.At)) < queue.GiveUpOf(s.queue) {
		return "", errWithholdNotYet
	}
	return "replaced, or never committed", nil
}
