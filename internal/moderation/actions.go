package moderation

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/accounts"
	"socialstream/internal/activities"
	"socialstream/internal/derrors"
	"socialstream/internal/ids"
	"socialstream/internal/notifications"
	"socialstream/internal/policy"
	"socialstream/internal/queue"
	"socialstream/internal/store"
	"socialstream/internal/text"
)

// Actions a moderator takes.
const (
	Dismiss   = "dismiss"   // resolves a report with no action
	Remove    = "remove"    // takes activities down
	Restore   = "restore"   // puts taken down activities back
	Limit     = "limit"     // out of @all and tag feeds; reaches followers alone
	Unlimit   = "unlimit"   //
	Suspend   = "suspend"   // no sign-in, hidden everywhere; erased after Grace
	Unsuspend = "unsuspend" // within Grace
	// Grant is an admin's change of a person's role (the reason names
	// the role); in the audit log, not taken through Act.
	Grant = "grant"
)

// ActionNames are the actions Act takes.
var ActionNames = []string{Dismiss, Remove, Restore, Limit, Unlimit, Suspend, Unsuspend}

// MaxActionActivities is how many activities one remove or restore names.
const MaxActionActivities = 25

// Action is a stored moderator action: the audit log, and the notices of
// the account it concerns.
type Action struct {
	AccountID   string    `datastore:"accountId"` // indexed, with created: the account's notices
	Created     time.Time `datastore:"created"`   // indexed: the log, newest first
	ModeratorID string    `datastore:"moderatorId,noindex"`
	Action      string    `datastore:"action,noindex"`
	Reason      string    `datastore:"reason,noindex"`
	ReportID    string    `datastore:"reportId,noindex"`
	ActivityIDs []string  `datastore:"activityIds,noindex"`
}

// ActionInput is what a moderator asks for.
type ActionInput struct {
	Action      string   `json:"action"`
	AccountID   string   `json:"accountId"`
	ReportID    string   `json:"reportId"`
	ActivityIDs []string `json:"activityIds"`
	Reason      string   `json:"reason"`
}

// Notice is an action as the account it concerns sees it: never who took it.
type Notice struct {
	ID          string   `json:"id"`
	Action      string   `json:"action"`
	Reason      string   `json:"reason"`
	ActivityIDs []string `json:"activityIds"`
	Created     string   `json:"created"`
}

// Entry is an action as the audit log shows it.
type Entry struct {
	Notice
	AccountID   string `json:"accountId"`
	ModeratorID string `json:"moderatorId"`
	ReportID    string `json:"reportId,omitempty"`
}

func actionKey(db *store.DB, id string) *datastore.Key { return db.NameKey(KindAction, id, nil) }

func (a *Action) notice(id string) Notice {
	n := Notice{ID: id, Action: a.Action, Reason: a.Reason, ActivityIDs: a.ActivityIDs, Created: a.Created.UTC().Format(time.RFC3339)}
	if n.ActivityIDs == nil {
		n.ActivityIDs = []string{}
	}
	return n
}

func (a *Action) entry(id string) Entry {
	return Entry{Notice: a.notice(id), AccountID: a.AccountID, ModeratorID: a.ModeratorID, ReportID: a.ReportID}
}

var (
	errSelf      = derrors.New(derrors.InvalidArgument, "you cannot act on your own account")
	errOnAdmin   = policy.ErrOnAdmin
	errResolved  = derrors.New(derrors.Conflict, "the report is resolved already")
	errNoChange  = derrors.New(derrors.Conflict, "the account or activities are so already")
	errPastGrace = derrors.New(derrors.Conflict, "the suspension can no longer be lifted: the account is being erased")
	errNotOfIt   = derrors.New(derrors.InvalidArgument, "the report is not about this account")
)

// check checks and completes in, against the report it names (if any).
func (in *ActionInput) check() error {
	if !slices.Contains(ActionNames, in.Action) {
		return invalid("action is one of dismiss, remove, restore, limit, unlimit, suspend, unsuspend")
	}
	reason, err := text.Clean("reason", in.Reason, text.Rules{Max: MaxReason, Required: in.Action != Dismiss, Multiline: true})
	if err != nil {
		return err
	}
	in.Reason = reason
	if in.Action == Dismiss && in.ReportID == "" {
		return invalid("dismiss names the report: reportId")
	}
	if in.AccountID == "" && in.ReportID == "" {
		return invalid("accountId names the account")
	}
	takes := in.Action == Remove || in.Action == Restore
	if !takes && len(in.ActivityIDs) > 0 {
		return invalid("activityIds go with remove and restore alone")
	}
	if len(in.ActivityIDs) > MaxActionActivities {
		return invalid(fmt.Sprintf("at most %d activities at once", MaxActionActivities))
	}
	in.ActivityIDs = slices.Compact(slices.Sorted(slices.Values(in.ActivityIDs)))
	for _, id := range in.ActivityIDs {
		if _, ok := ids.Parse(id); !ok {
			return invalid(fmt.Sprintf("%q is not an activity id", id))
		}
	}
	if in.ReportID != "" && !ids.Scattered(in.ReportID) {
		return ErrNoSuchReport
	}
	return nil
}

// actJobs are the jobs of an action at now, enqueued before its commit:
// its notification, if the person is told; the end of a suspension's
// grace (which does nothing for a suspension that never committed or was
// lifted); and the withholding (withholdTasks) of what the change keeps
// from the counts, or its return.
func (s *Service) actJobs(in ActionInput, now time.Time, told bool, event notifications.Event) []queue.Pending {
	var expected []queue.Pending
	if told {
		expected = append(expected, s.notes.Expecting(event))
	}
	if in.Action == Suspend {
		expected = append(expected, ExpiryJob.Pending(s.queue, ExpiryTask{UserID: in.AccountID, At: now.UnixMicro()}, Grace-slack))
	}
	for _, t := range withholdTasks(in, now) {
		expected = append(expected, WithholdJob.Pending(s.queue, t, 0))
	}
	return expected
}

// Act takes moderator's action, and resolves the report it names. The
// moderator's role is read in its transaction; a moderator cannot act on
// an admin, nor anyone on their own account. The account is told (a
// Moderation notification, and its notices), except of a dismissal; the
// action is in the audit log. A suspension ends the account's tokens.
func (s *Service) Act(ctx context.Context, moderator string, in ActionInput) (Entry, error) {
	if err := s.MayModerate(ctx, moderator); err != nil {
		return Entry{}, err // before anything the action names is read or told
	}
	if err := in.check(); err != nil {
		return Entry{}, err
	}
	jobsOf := in // a removal that names no activity takes its report's
	if in.ReportID != "" && (in.AccountID == "" || in.Action == Remove && len(in.ActivityIDs) == 0) {
		r, err := s.read(ctx, in.ReportID)
		if err != nil {
			return Entry{}, err
		}
		if in.AccountID == "" {
			in.AccountID = r.AccountID
		}
		jobsOf.AccountID = in.AccountID
		if in.Action == Remove && len(in.ActivityIDs) == 0 {
			jobsOf.ActivityIDs = r.ActivityIDs
		}
	}
	if in.AccountID == moderator {
		return Entry{}, errSelf
	}
	now := s.now().UTC()
	id := ids.Format(s.ids.Next())
	a := &Action{AccountID: in.AccountID, Created: now, ModeratorID: moderator, Action: in.Action,
		Reason: in.Reason, ReportID: in.ReportID, ActivityIDs: in.ActivityIDs}
	told := in.Action != Dismiss
	event := notifications.Event{Type: notifications.Moderation, Recipients: []string{in.AccountID}, ID: "mod-" + id, ActionID: id}
	expected := s.actJobs(jobsOf, now, told, event)
	var again *Entry // the report's resolution, committed by an earlier try
	var jobs queue.Ahead
	err := jobs.Commit(ctx, expected, func() error {
		return s.db.Update(ctx, func(tx *store.Tx) error {
			var err error
			again, err = s.commitAct(ctx, tx, a, id, in, told, event)
			return err
		})
	})
	if err != nil {
		if in.Action == Suspend && errors.Is(err, errNoChange) {
			// Suspended already, perhaps by a call that failed before
			// it ended the tokens: end them now.
			if _, lerr := s.acc.LogoutAll(ctx, in.AccountID); lerr != nil {
				return Entry{}, lerr
			}
		}
		return Entry{}, fmt.Errorf("moderation.Act(%s %s): %w", in.Action, in.AccountID, err)
	}
	e := a.entry(id)
	if again != nil {
		e = *again
	}
	if e.Action == Suspend {
		// Every session ends (again, for a retry: it ends no other).
		if _, err := s.acc.LogoutAll(ctx, in.AccountID); err != nil {
			return Entry{}, err
		}
	}
	return e, nil
}

// commitAct is the transaction of action a, id: it answers an earlier
// try's entry if that committed.
func (s *Service) commitAct(ctx context.Context, tx *store.Tx, a *Action, id string, in ActionInput, told bool, event notifications.Event) (*Entry, error) {
	r, err := s.readAct(ctx, tx, a.ModeratorID, id, in)
	if err != nil {
		return nil, err
	}
	plan, err := decideAct(r.facts)
	if err != nil || plan.again != nil {
		return plan.again, err
	}
	if plan.activityIDs != nil {
		a.ActivityIDs = plan.activityIDs
	}
	if err := s.apply(ctx, tx, a, a.Created); err != nil {
		return nil, err
	}
	if in.ReportID != "" {
		rep := r.report
		rep.State, rep.Resolved, rep.ActionID, rep.HandledBy = Actioned, a.Created, id, a.ModeratorID
		if in.Action == Dismiss {
			rep.State = Dismissed
		}
		if err := tx.Put(reportKey(s.db, in.ReportID), &rep); err != nil {
			return nil, err
		}
	}
	if told {
		if err := s.notes.Tell(tx, event); err != nil {
			return nil, err
		}
	}
	return nil, tx.Put(actionKey(s.db, id), a)
}

// actRead is what an action's transaction read.
type actRead struct {
	facts  actFacts
	report Report
}

func (s *Service) readAct(ctx context.Context, tx *store.Tx, moderator, id string, in ActionInput) (*actRead, error) {
	r := &actRead{facts: actFacts{moderator: moderator, id: id, in: in}}
	l := tx.Lookup()
	me, them := accounts.Read(l, moderator), accounts.Read(l, in.AccountID)
	// This very action, should an attempt of this call have committed
	// and answered an error (the transaction runs again).
	var mine, prior Action
	done := l.Add(actionKey(s.db, id), &mine)
	var repRef, priorRef store.Ref
	if in.ReportID != "" {
		repRef = l.Add(reportKey(s.db, in.ReportID), &r.report)
		l.Then(func() {
			if repRef.Found() && r.report.ActionID != "" {
				priorRef = l.Add(actionKey(s.db, r.report.ActionID), &prior)
			}
		})
	}
	if err := l.Run(ctx); err != nil {
		return nil, err
	}
	f := &r.facts
	if done.Found() {
		f.mine = &mine
	}
	f.staff, f.subject = me.Standing().Account(moderator, me.Exists()), them.Standing().Account(in.AccountID, them.Exists())
	if repRef.Found() {
		f.report = &r.report
	}
	if priorRef.Found() {
		f.prior = &prior
	}
	return r, nil
}

// actFacts is what an action's transaction decides on.
type actFacts struct {
	moderator, id string
	in            ActionInput
	mine          *Action        // this very action, committed by an earlier try
	staff         policy.Account // the moderator
	subject       policy.Account // the account acted on
	report        *Report        // the report it names, if there
	prior         *Action        // the action that resolved it, if any
}

// actPlan is what an action does.
type actPlan struct {
	// again is an earlier try's entry: there is nothing left to do.
	again *Entry
	// activityIDs, if not nil, are what a removal takes down: its
	// report's, for one that names none.
	activityIDs []string
}

// decideAct decides whether an action is taken, from what its
// transaction read.
func decideAct(f actFacts) (actPlan, error) {
	if f.mine != nil {
		e := f.mine.entry(f.id)
		return actPlan{again: &e}, nil
	}
	if err := policy.MayModerateAccount(f.staff, f.subject); err != nil {
		return actPlan{}, err
	}
	switch {
	case !f.subject.Exists:
		return actPlan{}, accounts.ErrNoSuchPerson
	case f.in.ReportID == "":
		return actPlan{}, nil
	case f.report == nil:
		return actPlan{}, ErrNoSuchReport
	case f.report.AccountID != f.in.AccountID:
		return actPlan{}, errNotOfIt
	case f.report.State != Open && f.prior != nil && f.prior.Action == f.in.Action && f.prior.ModeratorID == f.moderator:
		e := f.prior.entry(f.report.ActionID)
		return actPlan{again: &e}, nil // a retry of what committed
	case f.report.State != Open:
		return actPlan{}, errResolved
	case f.in.Action == Remove && len(f.in.ActivityIDs) == 0:
		return actPlan{activityIDs: f.report.ActivityIDs}, nil
	}
	return actPlan{}, nil
}

// apply makes the change of action a in tx.
func (s *Service) apply(ctx context.Context, tx *store.Tx, a *Action, now time.Time) error {
	changed := true
	var err error
	switch a.Action {
	case Remove, Restore:
		if len(a.ActivityIDs) == 0 {
			return invalid("name the activities: activityIds")
		}
		var ids []string
		ids, err = activities.Takedown(ctx, tx, a.AccountID, a.ActivityIDs, now.UnixMicro(), a.Action == Remove)
		changed = len(ids) > 0
	case Limit, Unlimit:
		changed, err = accounts.SetLimited(ctx, tx, a.AccountID, a.Action == Limit, now)
	case Suspend:
		changed, err = accounts.Suspend(ctx, tx, a.AccountID, now, a.Reason)
	case Unsuspend:
		changed, err = accounts.Unsuspend(ctx, tx, a.AccountID, now, func(since time.Time) error {
			if !now.Before(ends(since)) {
				return errPastGrace
			}
			return nil
		})
	}
	if err == nil && !changed {
		err = errNoChange
	}
	return err
}

// Grant gives user role ("" takes the role away), if admin is an admin.
// An admin cannot change their own role, so there is always one; the
// grant is in the audit log, and the person is told.
func (s *Service) Grant(ctx context.Context, admin, user, role string) (accounts.Person, error) {
	if role != "" && role != accounts.RoleModerator && role != accounts.RoleAdmin {
		return accounts.Person{}, invalid(`role is "moderator", "admin" or "" (none)`)
	}
	now := s.now().UTC()
	id := ids.Format(s.ids.Next())
	event := notifications.Event{Type: notifications.Moderation, Recipients: []string{user}, ID: "mod-" + id, ActionID: id}
	var jobs queue.Ahead
	err := jobs.Commit(ctx, []queue.Pending{s.notes.Expecting(event)}, func() error {
		return s.db.Update(ctx, func(tx *store.Tx) error {
			l := tx.Lookup()
			me := accounts.Read(l, admin)
			if err := l.Run(ctx); err != nil {
				return err
			}
			if err := policy.MayGrant(me.Standing().Account(admin, me.Exists())); err != nil {
				return err
			}
			if user == admin {
				return invalid("an admin cannot change their own role")
			}
			was, err := accounts.SetRole(ctx, tx, user, role)
			if err != nil || was == role {
				return err // the same role: nothing to log or tell
			}
			a := &Action{AccountID: user, Created: now, ModeratorID: admin, Action: Grant, Reason: roleName(role)}
			if err := s.notes.Tell(tx, event); err != nil {
				return err
			}
			return tx.Put(actionKey(s.db, id), a)
		})
	})
	if err != nil {
		return accounts.Person{}, fmt.Errorf("moderation.Grant(%s %q): %w", user, role, err)
	}
	return s.acc.Get(ctx, user)
}

func roleName(role string) string {
	if role == "" {
		return "no role"
	}
	return role
}

// SetRole gives user role with no check, for the operator's command that
// names the first admin (cmd/admin). It is in the audit log as a grant
// by nobody.
func SetRole(ctx context.Context, db *store.DB, gen *ids.Generator, user, role string) error {
	if role != "" && role != accounts.RoleModerator && role != accounts.RoleAdmin {
		return invalid(`role is "moderator", "admin" or "" (none)`)
	}
	id := ids.Format(gen.Next())
	return db.Update(ctx, func(tx *store.Tx) error {
		was, err := accounts.SetRole(ctx, tx, user, role)
		if err != nil || was == role {
			return err
		}
		return tx.Put(actionKey(db, id), &Action{AccountID: user, Created: time.Now().UTC(), Action: Grant, Reason: roleName(role)})
	})
}

// Log returns a page of the audit log, newest first, for admin.
func (s *Service) Log(ctx context.Context, admin string, p store.PageRequest) ([]Entry, string, error) {
	if err := s.MayGrant(ctx, admin); err != nil {
		return nil, "", err
	}
	q := s.db.Query(KindAction).Order("-created")
	keys, vals, next, err := store.Page[Action](ctx, s.db, q, "log", p)
	if err != nil {
		return nil, "", err
	}
	out := make([]Entry, len(vals))
	for i := range vals {
		out[i] = vals[i].entry(keys[i].Name)
	}
	return out, next, nil
}

// Notices returns a page of what moderation did to user's account,
// newest first (the dismissals of reports about them are not theirs).
func (s *Service) Notices(ctx context.Context, user string, p store.PageRequest) ([]Notice, string, error) {
	q := s.db.Query(KindAction).FilterField("accountId", "=", user).Order("-created")
	keys, vals, next, err := store.Page[Action](ctx, s.db, q, "notices:"+user, p)
	if err != nil {
		return nil, "", err
	}
	out := make([]Notice, 0, len(vals))
	for i := range vals {
		if vals[i].Action != Dismiss {
			out = append(out, vals[i].notice(keys[i].Name))
		}
	}
	return out, next, nil
}

// slack is how much before Grace a suspension's end runs: Cloud Tasks
// schedules at most 30 days ahead, and the task is enqueued a moment
// after the suspension's time.
const slack = time.Minute

// ends returns when a suspension begun at t can no longer be lifted.
func ends(t time.Time) time.Time { return t.Add(Grace - slack) }

// ExpiryJob ends a suspension's grace.
var ExpiryJob = queue.Job[ExpiryTask]{Name: "suspension", Queue: queue.Cleanup,
	TaskName: func(t ExpiryTask) string { return fmt.Sprintf("suspension-%s-%d", t.UserID, t.At) }}

// ExpiryTask is the body of the end of a suspension's grace.
type ExpiryTask struct {
	UserID string `json:"userId"`
	At     int64  `json:"at"` // when the suspension began, µs
}

// ErrNotYet says the end of a grace came early; the queue retries it.
var ErrNotYet = derrors.New(derrors.Unavailable, "the suspension's grace is not over yet")

// Due reports whether the suspension t names still holds and its grace
// is over, so the account goes (package lifecycle): false for one lifted,
// or never committed, or replaced by a later one (whose own task ends
// it); ErrNotYet before the grace is over.
func Due(ctx context.Context, db *store.DB, t ExpiryTask, now time.Time) (bool, error) {
	l := db.Lookup()
	r := accounts.Read(l, t.UserID)
	if err := l.Run(ctx); err != nil {
		return false, fmt.Errorf("moderation.Due(%s): %w", t.UserID, err)
	}
	st := r.Standing()
	if !st.IsSuspended() || st.Suspended.UnixMicro() != t.At {
		return false, nil
	}
	if now.Before(ends(st.Suspended)) {
		return false, ErrNotYet
	}
	return true, nil
}

// Erase deletes up to n reports of a deleted user's: those they filed and
// those about them. The audit log keeps its entries (ids and reasons).
func Erase(ctx context.Context, db *store.DB, user string, n int) (int, error) {
	return db.DeleteWhere(ctx, KindReport, []string{"reporterId", "accountId"}, user, n)
}

// Export returns the reports user filed and the notices of their account,
// newest first, for an export.
func Export(ctx context.Context, db *store.DB, user string) ([]ReportView, []Notice, error) {
	reports := []ReportView{}
	q := db.Query(KindReport).FilterField("reporterId", "=", user).Order("-created")
	err := store.Each[Report](ctx, db, q, 500, func(k *datastore.Key, r *Report) error {
		reports = append(reports, r.view(k.Name))
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("moderation.Export(%s): %w", user, err)
	}
	notices := []Notice{}
	q = db.Query(KindAction).FilterField("accountId", "=", user).Order("-created")
	err = store.Each[Action](ctx, db, q, 500, func(k *datastore.Key, a *Action) error {
		if a.Action != Dismiss {
			notices = append(notices, a.notice(k.Name))
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("moderation.Export(%s): %w", user, err)
	}
	return reports, notices, nil
}
