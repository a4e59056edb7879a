// Package lifecycle ends accounts and hands people their data: deleting an
// account with the erasure of everything it left, and the export of an
// account as one JSON document. It owns no entity: each owner erases and
// exports its own kinds through the functions it offers, and this package
// puts them in order and carries the erasure from one task to the next.
//
// The erasure is a chain of jobs on the cleanup queue, the first enqueued
// before the account's deletion commits (accounts.Service.Delete). Each
// runs the phases below in order, each phase a bounded share of work that
// can run any number of times (it deletes or edits what a query still
// finds), until its budget is spent; then it enqueues the next step, named
// by its number, so a retried or duplicated step enqueues nothing twice.
// Nothing new of the user appears once the deletion has committed: every
// write reads its actor in its transaction, and a notification, a follow,
// a mention or an invitation reads the people it names.
package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"time"

	"socialstream/internal/accounts"
	"socialstream/internal/activities"
	"socialstream/internal/appdata"
	"socialstream/internal/blocks"
	"socialstream/internal/bookmarks"
	"socialstream/internal/comments"
	"socialstream/internal/conversations"
	"socialstream/internal/federation"
	"socialstream/internal/graph"
	"socialstream/internal/groups"
	"socialstream/internal/ids"
	"socialstream/internal/likes"
	"socialstream/internal/markers"
	"socialstream/internal/media"
	"socialstream/internal/moderation"
	"socialstream/internal/mutes"
	"socialstream/internal/notifications"
	"socialstream/internal/push"
	"socialstream/internal/queue"
	"socialstream/internal/store"
	"socialstream/internal/tags"
	"socialstream/internal/trends"
)

// Config tunes a Service.
type Config struct {
	// GiveUpAfter is how long the first step waits for the deletion to
	// commit; 0 means 2 minutes.
	GiveUpAfter time.Duration
	// Budget is how many entities one step deletes or edits before it
	// hands on to the next; 0 means 2,000.
	Budget int
}

// Services are the owners an erasure and an export go through.
type Services struct {
	Accounts      *accounts.Service
	Graph         *graph.Service
	Groups        *groups.Service
	Activities    *activities.Service
	Comments      *comments.Service
	Notifications *notifications.Service
	Media         *media.Service   // nil: the service keeps no pictures
	Push          *push.Service    // nil: the service pushes nothing
	Keys          *federation.Keys // nil: no key pairs
	// Farewell, when the deployment federates (package federation's
	// Service), tells other servers of a deletion.
	Farewell Farewell
}

// Farewell tells other servers of a deletion (package federation's
// Service, when the deployment federates): a step of the key-pair
// phase, which erases the key pair itself once it is no longer needed.
type Farewell interface {
	Farewell(ctx context.Context, user string, n int) (int, error)
}

// Service deletes and exports accounts.
type Service struct {
	db    *store.DB
	svc   Services
	queue queue.Queue
	cfg   Config
	now   func() time.Time
}

// New returns a Service.
func New(db *store.DB, svc Services, q queue.Queue, cfg Config) (*Service, error) {
	if db == nil || q == nil || svc.Accounts == nil || svc.Graph == nil || svc.Groups == nil || svc.Activities == nil ||
		svc.Comments == nil || svc.Notifications == nil {
		return nil, errors.New("lifecycle.New: nil dependency")
	}
	if cfg.GiveUpAfter == 0 {
		cfg.GiveUpAfter = queue.GiveUpAfter
	}
	if cfg.Budget == 0 {
		cfg.Budget = 2000
	}
	if cfg.Budget < minShare {
		return nil, fmt.Errorf("lifecycle.New: budget %d under %d", cfg.Budget, minShare)
	}
	return &Service{db: db, svc: svc, queue: q, cfg: cfg, now: time.Now}, nil
}

// Delete deletes user's account once password proves it theirs, with the
// erasure enqueued before the commit. The user's tokens stop at once;
// the rest goes with the erasure's jobs.
func (s *Service) Delete(ctx context.Context, user, password string) error {
	t := accounts.EraseTask{UserID: user, At: s.now().UnixMicro()}
	return s.svc.Accounts.Delete(ctx, user, password, func(ctx context.Context) error { return s.enqueue(ctx, t) })
}

// EndSuspension ends the grace of the suspension t names: if it still
// holds, the account is deleted as its owner would delete it (with no
// password), and erased. It reports whether it did.
func (s *Service) EndSuspension(ctx context.Context, t moderation.ExpiryTask) (bool, error) {
	due, err := moderation.Due(ctx, s.db, t, s.now())
	if err != nil || !due {
		return false, err
	}
	e := accounts.EraseTask{UserID: t.UserID, At: s.now().UnixMicro()} // its first step waits for this deletion
	return true, s.svc.Accounts.Remove(ctx, t.UserID, func(ctx context.Context) error { return s.enqueue(ctx, e) })
}

func (s *Service) enqueue(ctx context.Context, t accounts.EraseTask) error {
	return accounts.EraseJob.Enqueue(ctx, s.queue, t, 0)
}

// minShare is the least budget a phase is given: a phase reports that it
// is done by doing less than it was allowed, and some count a key or two
// that may not exist.
const minShare = 50

// phase is one part of an erasure: it erases up to n entities of user and
// reports how many it erased.
type phase struct {
	name string
	run  func(ctx context.Context, user string, at int64, n int) (int, error)
}

// phases are in the order they must run: follows end before the user
// leaves every audience (no follow can copy them back), and notifications
// go after the phases whose jobs cause them.
func (s *Service) phases() []phase {
	db := s.db
	return []phase{
		{"tokens", func(ctx context.Context, user string, _ int64, _ int) (int, error) {
			_, err := s.svc.Accounts.LogoutAll(ctx, user)
			return 0, err
		}},
		{"follows", func(ctx context.Context, user string, _ int64, n int) (int, error) {
			return s.svc.Graph.Erase(ctx, user, n)
		}},
		{"blocks", func(ctx context.Context, user string, _ int64, n int) (int, error) {
			return blocks.Erase(ctx, db, user, n)
		}},
		{"mutes", func(ctx context.Context, user string, _ int64, n int) (int, error) {
			return mutes.Erase(ctx, db, user, n)
		}},
		{"followed tags", func(ctx context.Context, user string, _ int64, n int) (int, error) {
			return tags.Erase(ctx, db, user, n)
		}},
		{"markers", func(ctx context.Context, user string, _ int64, n int) (int, error) {
			return markers.Erase(ctx, db, user, n)
		}},
		{"conversations", func(ctx context.Context, user string, _ int64, n int) (int, error) {
			return conversations.Erase(ctx, db, user, n)
		}},
		{"groups", func(ctx context.Context, user string, _ int64, n int) (int, error) {
			return s.svc.Groups.Erase(ctx, user, n)
		}},
		{"activities", s.svc.Activities.EraseAuthored},
		{"pictures", func(ctx context.Context, user string, _ int64, n int) (int, error) {
			if s.svc.Media == nil {
				return 0, nil
			}
			return s.svc.Media.Erase(ctx, user, n)
		}},
		{"mentions", func(ctx context.Context, user string, _ int64, n int) (int, error) {
			return activities.EraseMentions(ctx, db, user, n)
		}},
		{"audiences", func(ctx context.Context, user string, _ int64, n int) (int, error) {
			return activities.EraseAudience(ctx, db, user, n)
		}},
		{"replies to them", func(ctx context.Context, user string, _ int64, n int) (int, error) {
			return activities.EraseAnswered(ctx, db, user, n)
		}},
		{"likes", func(ctx context.Context, user string, _ int64, n int) (int, error) {
			return likes.Erase(ctx, db, user, n)
		}},
		{"trends", func(ctx context.Context, user string, _ int64, n int) (int, error) {
			return trends.Erase(ctx, db, user, n)
		}},
		{"bookmarks", func(ctx context.Context, user string, _ int64, n int) (int, error) {
			return bookmarks.Erase(ctx, db, user, n)
		}},
		{"comments", func(ctx context.Context, user string, _ int64, n int) (int, error) {
			return comments.Erase(ctx, db, user, n)
		}},
		{"follow history", func(ctx context.Context, user string, _ int64, n int) (int, error) {
			return graph.EraseRest(ctx, db, user, n)
		}},
		{"group history", func(ctx context.Context, user string, _ int64, n int) (int, error) {
			return groups.EraseRest(ctx, db, user, n)
		}},
		{"reports", func(ctx context.Context, user string, _ int64, n int) (int, error) {
			return moderation.Erase(ctx, db, user, n)
		}},
		{"app data", func(ctx context.Context, user string, _ int64, _ int) (int, error) {
			return appdata.Erase(ctx, db, user)
		}},
		{"notifications", func(ctx context.Context, user string, _ int64, n int) (int, error) {
			return s.svc.Notifications.Erase(ctx, user, n)
		}},
		// Last, so that an erasure under way keeps its phases' numbers:
		// the lists they are on, and their own lists (no notification
		// comes of either).
		{"lists", func(ctx context.Context, user string, _ int64, n int) (int, error) {
			return s.svc.Graph.EraseLists(ctx, user, n)
		}},
		// Appended likewise: the subscriptions of their devices (no
		// delivery goes to them meanwhile: their tokens are gone).
		{"push subscriptions", func(ctx context.Context, user string, _ int64, n int) (int, error) {
			if s.svc.Push == nil {
				return 0, nil
			}
			return s.svc.Push.Erase(ctx, user, n)
		}},
		// Appended likewise: their key pair, which signed for them; with
		// federation on, it signs the Delete of their actor to other
		// servers first, and goes once that is delivered.
		{"key pair", func(ctx context.Context, user string, _ int64, n int) (int, error) {
			switch {
			case s.svc.Farewell != nil:
				return s.svc.Farewell.Farewell(ctx, user, n)
			case s.svc.Keys == nil:
				return 0, nil
			}
			return s.svc.Keys.Erase(ctx, user)
		}},
		// Appended likewise: what federation keeps of a person of
		// another server (the Follows sent them, their actor, its
		// addresses).
		{"remote actor", func(ctx context.Context, user string, _ int64, n int) (int, error) {
			return federation.EraseRemote(ctx, db, user, n)
		}},
	}
}

// ErrNotYet says an erasure came before the deletion it follows.
var ErrNotYet = queue.NotYet("the account's deletion")

// Result says what a step did, for its log line.
type Result struct {
	Erased  map[string]int      // by phase
	Stopped string              // why it did nothing, if it did nothing
	Next    *accounts.EraseTask // the next step, enqueued
	Done    bool                // the erasure is over
}

// Erase runs one step of an erasure.
func (s *Service) Erase(ctx context.Context, t accounts.EraseTask) (Result, error) {
	res := Result{Erased: map[string]int{}}
	phases := s.phases()
	if _, ok := ids.Parse(t.UserID); !ok || t.At <= 0 || t.Phase < 0 || t.Phase > len(phases) {
		res.Stopped = "malformed task"
		return res, nil
	}
	if _, err := s.svc.Accounts.Get(ctx, t.UserID); err == nil {
		// The deletion has not committed yet, or never will.
		if s.now().Sub(time.UnixMicro(t.At)) < s.cfg.GiveUpAfter {
			return res, ErrNotYet
		}
		res.Stopped = "the account was never deleted"
		return res, nil
	} else if !errors.Is(err, accounts.ErrNoSuchPerson) {
		return res, err
	}
	budget := s.cfg.Budget
	for t.Phase < len(phases) {
		if budget < minShare {
			next := t
			next.Step++
			if err := s.enqueue(ctx, next); err != nil {
				return res, err
			}
			res.Next = &next
			return res, nil
		}
		p := phases[t.Phase]
		n, err := p.run(ctx, t.UserID, t.At, budget)
		if n > 0 {
			res.Erased[p.name] += n
		}
		if err != nil {
			return res, fmt.Errorf("lifecycle.Erase(%s): %s: %w", t.UserID, p.name, err)
		}
		if n < budget {
			t.Phase++ // nothing left of this phase
		}
		budget -= n
	}
	res.Done = true
	return res, nil
}
