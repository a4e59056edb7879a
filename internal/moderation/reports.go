// Package moderation owns what keeps a community safe beyond one person's
// own choices: reports of people and their activities, the moderators'
// actions on them, and the audit log of those actions.
//
// Anyone reports a person, with some of their activities, a category and
// a comment; the report keeps a snapshot of what was reported, so an edit
// or a delete does not erase the evidence. Moderators and admins (a role
// on the account, package accounts; the first admin named by cmd/admin)
// list open reports and resolve each with an action: dismiss, remove
// activities, limit the account, or suspend it. Every action is kept in
// the audit log (admins read it) and told to the account it concerns,
// with its reason, by a notification and in the account's own notices.
//
// What an action does is written where every page reads anyway: a taken
// down activity carries Removed (package activities), and a limit or a
// suspension is the account's Standing, on its card. No feed reads
// anything more for it.
package moderation

import (
	"context"
	"encoding/json"
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
	"socialstream/internal/outbox"
	"socialstream/internal/policy"
	"socialstream/internal/queue"
	"socialstream/internal/ratelimit"
	"socialstream/internal/store"
	"socialstream/internal/text"
)

// Kinds of the entities this package owns.
const (
	KindReport = "Report"
	KindAction = "ModerationAction"
)

// Categories of a report.
var Categories = []string{"spam", "abuse", "illegal", "other"}

// States of a report.
const (
	Open      = "open"
	Dismissed = "dismissed" // resolved with no action
	Actioned  = "actioned"  // resolved with an action on the account
)

// Limits.
const (
	MaxReportActivities = 10   // activities one report names
	MaxComment          = 1000 // characters of a report's comment
	MaxReason           = 1000 // characters of an action's reason
	// ReportsPerHour is how many reports a person may file at once, and
	// in an hour: a bucket of that many that refills one every six
	// minutes, shared by every instance.
	ReportsPerHour = 10
	// Grace is how long a suspension may be lifted; then the account is
	// erased as a deleted one is.
	Grace = 30 * 24 * time.Hour
)

// Report is the stored report.
type Report struct {
	ReporterID  string    `datastore:"reporterId"` // indexed: the reporter's list, their rate, an erasure
	AccountID   string    `datastore:"accountId"`  // indexed: an erasure of the reported
	State       string    `datastore:"state"`      // indexed, with created: the moderators' queue
	Created     time.Time `datastore:"created"`
	Category    string    `datastore:"category,noindex"`
	Comment     string    `datastore:"comment,noindex"`
	ActivityIDs []string  `datastore:"activityIds,noindex"`
	// Snapshot is what was reported, as JSON (snapshot).
	Snapshot string    `datastore:"snapshot,noindex"`
	Resolved time.Time `datastore:"resolved,noindex"`
	// ActionID and HandledBy name the action that resolved it and who
	// took it: for moderators alone.
	ActionID  string `datastore:"actionId,noindex"`
	HandledBy string `datastore:"handledBy,noindex"`
	// Forwarded: the reported person is of another server, and the
	// reporter asked for the report to go there too (as the deployment's
	// own, not theirs).
	Forwarded bool `datastore:"forwarded,noindex,omitempty"`
}

// snapshot is what a report keeps of what it names.
type snapshot struct {
	Account    Account               `json:"account"`
	Activities []activities.Snapshot `json:"activities"`
}

// Account is a reported person as the report kept them.
type Account struct {
	ID                string `json:"id"`
	DisplayName       string `json:"displayName"`
	PreferredUsername string `json:"preferredUsername"`
}

// ReportInput is what a reporter says.
type ReportInput struct {
	AccountID   string   `json:"accountId"`
	ActivityIDs []string `json:"activityIds"`
	Category    string   `json:"category"`
	Comment     string   `json:"comment"`
	// Forward asks for the report of a person of another server to go to
	// their server too (Mastodon's forward).
	Forward bool `json:"forward,omitempty"`
}

// Filed reports whether the report id is filed (for a job that must not
// send one that never committed).
func Filed(ctx context.Context, db *store.DB, id string) (bool, error) {
	var r Report
	return db.Get(ctx, reportKey(db, id), &r)
}

// ReportView is a report as its reporter sees it: never who handled it.
type ReportView struct {
	ID          string   `json:"id"`
	AccountID   string   `json:"accountId"`
	ActivityIDs []string `json:"activityIds"`
	Category    string   `json:"category"`
	Comment     string   `json:"comment,omitempty"`
	State       string   `json:"state"`
	Created     string   `json:"created"`
	Resolved    string   `json:"resolved,omitempty"`
	Forwarded   bool     `json:"forwarded,omitempty"`
}

// QueuedReport is a report as moderators see it: with its reporter, the
// snapshot, and what resolved it.
type QueuedReport struct {
	ReportView
	ReporterID string                `json:"reporterId"`
	Account    Account               `json:"account"`
	Activities []activities.Snapshot `json:"activities"`
	ActionID   string                `json:"actionId,omitempty"`
	HandledBy  string                `json:"handledBy,omitempty"`
}

var (
	ErrNoSuchReport = derrors.New(derrors.NotFound, "no such report")
	ErrSelfReport   = derrors.New(derrors.InvalidArgument, "you cannot report yourself")
	ErrNotStaff     = policy.ErrNotStaff
	ErrNotAdmin     = policy.ErrNotAdmin
)

func invalid(msg string) error { return derrors.New(derrors.InvalidArgument, msg) }

// Service files and resolves reports.
type Service struct {
	db    *store.DB
	ids   *ids.Generator
	acc   *accounts.Service
	acts  *activities.Service
	notes *notifications.Service
	queue queue.Queue
	now   func() time.Time
	// filed is every reporter's bucket of reports (ReportsPerHour), in
	// Datastore: a report takes its unit in a transaction of its own
	// before its own, so reports at once cannot all pass a bucket that
	// holds fewer.
	filed *ratelimit.Shared
	// forward, when set, sends reports to other servers when asked.
	forward *outbox.Jobs
}

// New returns a Service.
//
// forward, when the deployment federates, makes the job that sends a
// report to the server of a person of another server, enqueued ahead of
// the report's commit (package outbox; nil: none).
func New(db *store.DB, gen *ids.Generator, acc *accounts.Service, acts *activities.Service, notes *notifications.Service, q queue.Queue,
	forward *outbox.Jobs) (*Service, error) {
	if db == nil || gen == nil || acc == nil || acts == nil || notes == nil || q == nil {
		return nil, errors.New("moderation.New: nil dependency")
	}
	filed := ratelimit.NewShared(db, "report", ratelimit.Rule{Quota: ReportsPerHour, Window: time.Hour})
	return &Service{db: db, ids: gen, acc: acc, acts: acts, notes: notes, queue: q, now: time.Now, filed: filed, forward: forward}, nil
}

func reportKey(db *store.DB, id string) *datastore.Key { return db.NameKey(KindReport, id, nil) }

// File files reporter's report. The activities must be the reported
// person's and ones the reporter may see (what they may not is, to them,
// not there); what they and the person say now is kept in the report.
func (s *Service) File(ctx context.Context, reporter string, in ReportInput) (ReportView, error) {
	if in.AccountID == "" {
		return ReportView{}, invalid("accountId names whom you report")
	}
	if in.AccountID == reporter {
		return ReportView{}, ErrSelfReport
	}
	if !slices.Contains(Categories, in.Category) {
		return ReportView{}, invalid("category is one of spam, abuse, illegal, other")
	}
	comment, err := text.Clean("comment", in.Comment, text.Rules{Max: MaxComment, Multiline: true})
	if err != nil {
		return ReportView{}, err
	}
	if len(in.ActivityIDs) > MaxReportActivities {
		return ReportView{}, invalid(fmt.Sprintf("a report names at most %d activities", MaxReportActivities))
	}
	named := slices.Compact(slices.Sorted(slices.Values(in.ActivityIDs)))
	for _, id := range named {
		if _, ok := ids.Parse(id); !ok {
			return ReportView{}, invalid(fmt.Sprintf("%q is not an activity id", id))
		}
	}
	person, err := s.acc.Get(ctx, in.AccountID)
	if err != nil {
		return ReportView{}, err
	}
	snap := snapshot{Account: Account{ID: person.ID, DisplayName: person.DisplayName, PreferredUsername: person.PreferredUsername},
		Activities: []activities.Snapshot{}}
	if len(named) > 0 {
		views, err := s.acts.Get(ctx, reporter, in.AccountID, "", named)
		if err != nil {
			return ReportView{}, err
		}
		if len(views) != len(named) {
			return ReportView{}, activities.ErrNotTheirs
		}
		for _, v := range views {
			snap.Activities = append(snap.Activities, activities.Snap(v))
		}
	}
	raw, err := json.Marshal(snap)
	if err != nil {
		return ReportView{}, err
	}
	// The report's unit, once it is known to be a report: one refused
	// for what it says costs nothing.
	d, err := s.filed.Take(ctx, reporter, 1)
	if err != nil {
		return ReportView{}, fmt.Errorf("moderation.File: %w", err)
	}
	if !d.Allowed {
		return ReportView{}, d.Err()
	}
	id := ids.Format(s.ids.Next())
	r := &Report{ReporterID: reporter, AccountID: in.AccountID, State: Open, Created: s.now().UTC(),
		Category: in.Category, Comment: comment, ActivityIDs: named, Snapshot: string(raw)}
	var forwarding []queue.Pending
	if in.Forward && person.Remote() && s.forward != nil {
		r.Forwarded = true
		forwarding = append(forwarding, s.forward.Forwarding(id, in.AccountID, named, comment))
	}
	var jobs queue.Ahead
	err = jobs.Commit(ctx, forwarding, func() error {
		return s.db.Update(ctx, func(tx *store.Tx) error {
			l := tx.Lookup()
			me := accounts.Read(l, reporter)
			if err := l.Run(ctx); err != nil {
				return err
			}
			if !me.Exists() {
				return accounts.ErrBadToken
			}
			return tx.Put(reportKey(s.db, id), r)
		})
	})
	if err != nil {
		// The unit stays spent: a commit that failed may have applied.
		return ReportView{}, fmt.Errorf("moderation.File: %w", err)
	}
	return r.view(id), nil
}

func (r *Report) view(id string) ReportView {
	v := ReportView{ID: id, AccountID: r.AccountID, ActivityIDs: r.ActivityIDs, Category: r.Category, Comment: r.Comment,
		State: r.State, Created: r.Created.UTC().Format(time.RFC3339), Forwarded: r.Forwarded}
	if v.ActivityIDs == nil {
		v.ActivityIDs = []string{}
	}
	if !r.Resolved.IsZero() {
		v.Resolved = r.Resolved.UTC().Format(time.RFC3339)
	}
	return v
}

func (r *Report) queued(id string) QueuedReport {
	q := QueuedReport{ReportView: r.view(id), ReporterID: r.ReporterID, ActionID: r.ActionID, HandledBy: r.HandledBy}
	var snap snapshot
	if err := json.Unmarshal([]byte(r.Snapshot), &snap); err == nil {
		q.Account, q.Activities = snap.Account, snap.Activities
	}
	if q.Activities == nil {
		q.Activities = []activities.Snapshot{}
	}
	return q
}

// Mine returns a page of reporter's reports, newest first.
func (s *Service) Mine(ctx context.Context, reporter string, p store.PageRequest) ([]ReportView, string, error) {
	q := s.db.Query(KindReport).FilterField("reporterId", "=", reporter).Order("-created")
	keys, vals, next, err := store.Page[Report](ctx, s.db, q, "reports:"+reporter, p)
	if err != nil {
		return nil, "", err
	}
	out := make([]ReportView, len(vals))
	for i := range vals {
		out[i] = vals[i].view(keys[i].Name)
	}
	return out, next, nil
}

// One returns one of reporter's reports.
func (s *Service) One(ctx context.Context, reporter, id string) (ReportView, error) {
	r, err := s.read(ctx, id)
	if err != nil {
		return ReportView{}, err
	}
	if r.ReporterID != reporter {
		return ReportView{}, ErrNoSuchReport
	}
	return r.view(id), nil
}

func (s *Service) read(ctx context.Context, id string) (*Report, error) {
	if !ids.Scattered(id) {
		return nil, ErrNoSuchReport
	}
	var r Report
	ok, err := s.db.Get(ctx, reportKey(s.db, id), &r)
	if err != nil {
		return nil, fmt.Errorf("moderation: report %s: %w", id, err)
	}
	if !ok {
		return nil, ErrNoSuchReport
	}
	return &r, nil
}

// Queue returns a page of the reports in state (Open, or Dismissed or
// Actioned), newest first, for moderator.
func (s *Service) Queue(ctx context.Context, moderator, state string, p store.PageRequest) ([]QueuedReport, string, error) {
	if state != Open && state != Dismissed && state != Actioned {
		return nil, "", invalid("state is open, dismissed or actioned")
	}
	me, err := s.staff(ctx, moderator)
	if err != nil {
		return nil, "", err
	}
	q := s.db.Query(KindReport).FilterField("state", "=", state).Order("-created")
	keys, vals, next, err := store.Page[Report](ctx, s.db, q, "queue:"+state, p)
	if err != nil {
		return nil, "", err
	}
	out := make([]QueuedReport, 0, len(vals))
	for i := range vals {
		// Never one about themselves: a page may then be short.
		if policy.SeeReport(me, vals[i].AccountID) {
			out = append(out, vals[i].queued(keys[i].Name))
		}
	}
	return out, next, nil
}

// Queued returns one report, for moderator.
func (s *Service) Queued(ctx context.Context, moderator, id string) (QueuedReport, error) {
	me, err := s.staff(ctx, moderator)
	if err != nil {
		return QueuedReport{}, err
	}
	r, err := s.read(ctx, id)
	if err != nil {
		return QueuedReport{}, err
	}
	if !policy.SeeReport(me, r.AccountID) {
		return QueuedReport{}, ErrNoSuchReport
	}
	return r.queued(id), nil
}

// staff returns user's account as the policy knows it if policy.MayModerate
// lets them moderate, and its refusal otherwise: read on every call, so a
// role taken away or a suspension counts at once. It is asked before
// anything about what the call names is read.
func (s *Service) staff(ctx context.Context, user string) (policy.Account, error) {
	l := s.db.Lookup()
	me := accounts.Read(l, user)
	if err := l.Run(ctx); err != nil {
		return policy.Account{}, fmt.Errorf("moderation: %s: %w", user, err)
	}
	acct := me.Standing().Account(user, me.Exists())
	return acct, policy.MayModerate(acct)
}

// MayModerate refuses whoever may not moderate (policy.MayModerate), for
// a caller to ask before it reads what the call names.
func (s *Service) MayModerate(ctx context.Context, user string) error {
	_, err := s.staff(ctx, user)
	return err
}

// MayGrant refuses whoever may not change roles (policy.MayGrant).
func (s *Service) MayGrant(ctx context.Context, user string) error {
	acct, err := s.staff(ctx, user)
	if err != nil {
		return err
	}
	return policy.MayGrant(acct)
}
