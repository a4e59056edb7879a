package moderation

import (
	"context"
	"fmt"
	"time"

	"socialstream/internal/accounts"
	"socialstream/internal/activities"
	"socialstream/internal/comments"
	"socialstream/internal/likes"
	"socialstream/internal/notifications"
	"socialstream/internal/queue"
	"socialstream/internal/store"
	"socialstream/internal/trends"
)

// A suspension hides a person's likes, comments and the notifications
// they caused from the lists at once (their card says they are
// suspended), and the withholding job takes them out of the activities'
// counts and their recipients' unread counts (or, once it is lifted,
// counts them again): each Like, Comment and Notification says whether
// it is withheld, so the job can run any number of times, and each of
// its transactions reads the facts it turns on, so whichever job runs
// last leaves the counts as the facts are. A limit and a takedown (and
// their undoing) have the job weigh the notifications alone: those of
// the person, or about the activity (notifications.Reweigh). Each ends
// with what trends: the activity's uses marked again, or the person's
// deleted (withholdTrends).

// WithholdJob withholds a suspended person's likes and comments from
// their counts, or restores them, a page at a time, and has their
// notifications, or those about an activity taken down or put back,
// weighed again.
var WithholdJob = queue.Job[WithholdTask]{Name: "withhold", Queue: queue.Cleanup, TaskName: WithholdTask.name}

// WithholdTask is the body of one step of a withholding.
type WithholdTask struct {
	UserID string `json:"userId"`
	// ActivityID, if set, names the activity of UserID's taken down (On)
	// or put back; Limit, that the change is a limit (On) or its lifting;
	// else it is a suspension (On) or its lifting.
	ActivityID string `json:"activityId,omitempty"`
	Limit      bool   `json:"limit,omitempty"`
	At         int64  `json:"at"` // the change's time, µs
	On         bool   `json:"on"`
	Kind       string `json:"kind"`
	Cursor     string `json:"cursor,omitempty"`
	Step       int    `json:"step"`
}

func (t WithholdTask) name() string {
	what := t.UserID
	switch {
	case t.ActivityID != "":
		what += "-" + t.ActivityID
	case t.Limit:
		what += "-limit"
	}
	return fmt.Sprintf("withhold-%s-%d-%d", what, t.At, t.Step)
}

// Kinds a withholding goes through, in order.
const (
	withholdLikes         = "likes"
	withholdComments      = "comments"
	withholdNotifications = "notifications"
	withholdTrends        = "trends"
	withholdPage          = 500
)

// withholdTasks are the withholding jobs of action a at now: a
// suspension's and its lifting's from the likes on, a limit's, its
// lifting's and each takedown's or restoring's of the notifications.
func withholdTasks(a ActionInput, now time.Time) []WithholdTask {
	at := now.UnixMicro()
	switch a.Action {
	case Suspend, Unsuspend:
		return []WithholdTask{{UserID: a.AccountID, At: at, On: a.Action == Suspend, Kind: withholdLikes}}
	case Limit, Unlimit:
		return []WithholdTask{{UserID: a.AccountID, Limit: true, At: at, On: a.Action == Limit, Kind: withholdNotifications}}
	case Remove, Restore:
		var out []WithholdTask
		for _, id := range a.ActivityIDs {
			out = append(out, WithholdTask{UserID: a.AccountID, ActivityID: id, At: at, On: a.Action == Remove, Kind: withholdNotifications})
		}
		return out
	}
	return nil
}

func (s *Service) enqueueWithhold(ctx context.Context, t WithholdTask) error {
	return WithholdJob.Enqueue(ctx, s.queue, t, 0)
}

// errWithholdNotYet says the change a withholding follows is not
// committed yet; the queue retries it.
var errWithholdNotYet = fmt.Errorf("moderation: the change withheld for is not committed yet: %w", ErrNotYet)

// Withhold runs one step of a withholding, and reports how it ended:
// "", or why it did nothing.
func (s *Service) Withhold(ctx context.Context, t WithholdTask) (string, error) {
	if stop, err := s.withholdFollows(ctx, t); stop != "" || err != nil {
		return stop, err
	}
	suspended := func(tx *store.Tx) (bool, error) {
		l := tx.Lookup()
		me := accounts.Read(l, t.UserID)
		if err := l.Run(ctx); err != nil {
			return false, err
		}
		return me.Standing().IsSuspended(), nil
	}
	sel := notifications.Selection{Actor: t.UserID}
	if t.ActivityID != "" {
		sel = notifications.Selection{Activity: t.ActivityID}
	}
	var next string
	var err error
	switch t.Kind {
	case withholdLikes:
		next, err = likes.Withhold(ctx, s.db, t.UserID, t.Cursor, withholdPage, suspended)
	case withholdComments:
		next, err = comments.Withhold(ctx, s.db, t.UserID, t.Cursor, withholdPage, suspended)
	case withholdNotifications:
		next, err = s.notes.Reweigh(ctx, sel, t.Cursor, withholdPage)
	case withholdTrends:
		next, err = s.withholdTrends(ctx, t)
	default:
		return "malformed task", nil
	}
	if err != nil {
		return "", err
	}
	if next == "" && t.Kind == withholdTrends {
		return "", nil
	}
	t.Step++
	t.Cursor = next
	if next == "" {
		t.Kind = map[string]string{withholdLikes: withholdComments, withholdComments: withholdNotifications, withholdNotifications: withholdTrends}[t.Kind]
	}
	return "", s.enqueueWithhold(ctx, t)
}

// withholdFollows reads whether the change t follows shows: "" when it
// does (the step goes on), else why the job stops, or errWithholdNotYet.
func (s *Service) withholdFollows(ctx context.Context, t WithholdTask) (string, error) {
	l := s.db.Lookup()
	r := accounts.Read(l, t.UserID)
	var taken func() (bool, int64, int64)
	if t.ActivityID != "" {
		taken = activities.ReadTakedown(l, t.ActivityID)
	}
	if err := l.Run(ctx); err != nil {
		return "", err
	}
	st := r.Standing()
	f := withholdFacts{account: r.Exists(), suspended: st.Suspended.UnixMicro(), lifted: st.Lifted, limited: st.Limited, limitChanged: st.LimitChanged}
	if !st.IsSuspended() {
		f.suspended = 0
	}
	if taken != nil {
		f.activity = true
		f.found, f.removed, f.restored = taken()
	}
	switch stop, shows, replaced := decideWithhold(t, f); {
	case stop != "":
		return stop, nil
	case !shows:
		return s.withholdLater(t, replaced)
	}
	return "", nil
}

// withholdFacts are what a step of a withholding read of the change it
// follows: the person, and the activity a takedown's step names.
type withholdFacts struct {
	account bool // the person is there
	// suspended is when the person was suspended (µs; 0: they are not),
	// lifted when a suspension of theirs was last lifted; limited whether
	// they are limited, limitChanged when that last changed.
	suspended, lifted int64
	limited           bool
	limitChanged      int64
	// activity: the task names one, found there, taken down at removed
	// (0: it is not) and last put back at restored.
	activity, found   bool
	removed, restored int64
}

// decideWithhold decides, from what a step of t read, whether the job
// stops (why), or whether the change it follows shows, and if not,
// whether a later change replaced it.
func decideWithhold(t WithholdTask, f withholdFacts) (stop string, shows, replaced bool) {
	switch {
	case !f.account:
		return "the account is gone", false, false
	case f.activity && !f.found:
		return "the activity is gone", false, false
	case f.activity:
		return "", (f.removed != 0) == t.On, t.On && f.restored >= t.At || !t.On && f.removed >= t.At
	case t.Limit:
		return "", f.limited == t.On, f.limitChanged >= t.At
	}
	return "", (f.suspended != 0) == t.On, t.On && f.lifted >= t.At || !t.On && f.suspended >= t.At
}

// withholdLater is what a step of t does that finds the facts not as its
// change left them (replaced: a later change undid it). Only the first
// step waits for its change (past the queue's give-up, it never came): a
// later one follows a step that found the facts as it wants, so what it
// finds now is a later change, whose own job does the work. A change made
// since replaced it: that job does the work.
func (s *Service) withholdLater(t WithholdTask, replaced bool) (string, error) {
	if t.Step == 0 && !replaced && s.now().Sub(time.UnixMicro(t.At)) < queue.GiveUpOf(s.queue) {
		return "", errWithholdNotYet
	}
	return "replaced, or never committed", nil
}

// withholdTrends is a withholding's last step, of what trends (package
// trends): a post taken down or put back has its uses marked again, as
// its trend job marks them; a person suspended or limited has their uses
// of every subject deleted (what they do from then on counts for nothing,
// the policy says), a page a step, "more" while some may be left. A
// lifting counts their earlier uses no more.
func (s *Service) withholdTrends(ctx context.Context, t WithholdTask) (string, error) {
	switch {
	case t.ActivityID != "":
		_, err := s.acts.Trend(ctx, activities.TrendTask{ActivityID: t.ActivityID})
		return "", err
	case t.On:
		n, err := trends.Erase(ctx, s.db, t.UserID, withholdPage)
		if err != nil || n < withholdPage {
			return "", err
		}
		return "more", nil
	}
	return "", nil
}
