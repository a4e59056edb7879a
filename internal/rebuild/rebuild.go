// Package rebuild owns the jobs that keep the copies on activities in step
// with the graph. When a user follows, unfollows, joins or leaves, the
// operation (package graph or groups) enqueues, through this package's
// Service, a job that brings the copies up to date: a follower id on the
// followee's audience chunks, a group id on the member's activities. It
// owns no entity: it reads follows and memberships through their owners,
// and edits the copies through package activities.
//
// Cloud Tasks runs a job at least once, late, twice or out of order, so a
// job never trusts what it was told. Each job is enqueued before the graph
// change commits, and first reads the state its change left: a job that
// comes before the commit retries (and gives up after a while, for a change
// that never committed); one whose change was undone or superseded stops.
// Only then does it decide what to scan, so everything its query misses
// was committed after the change and so already agrees with it: a post
// reads its author's follower chunk and groups in its own transaction.
//
//   - Adding (follow, join) copies onto the owner's newest activities, then
//     a low-rate backfill chain covers older ones. Every batch runs in a
//     transaction that re-reads the follow or membership and goes on only
//     while that very generation exists, so an unfollow committing while a
//     follow job runs makes its next batch conflict, retry and stop.
//   - Removing (unfollow, leave, an owner's removal) finds every copy,
//     however old, by an equality query on the copies themselves, and pages
//     through them until none is left. A removal is recorded on the pair's
//     Ended entity (graph.Ended, groups.Ended): a follow or join that comes
//     back meanwhile sets a cutoff there, so the removal spares activities
//     posted since, and its own job waits until the removal is done, so it
//     never copies something the removal then takes away.
//
// Jobs that run twice change nothing the second time, and any order of
// follow, unfollow, follow ends in the state of the last change.
package rebuild

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"socialstream/internal/activities"
	"socialstream/internal/derrors"
	"socialstream/internal/graph"
	"socialstream/internal/groups"
	"socialstream/internal/notifications"
	"socialstream/internal/pair"
	"socialstream/internal/queue"
	"socialstream/internal/store"
)

// Job kinds.
const (
	JobFollow   = "follow"
	JobUnfollow = "unfollow"
	JobJoin     = "join"
	JobLeave    = "leave"
)

// RunJob runs the rebuild jobs: the copies of a follow, unfollow, join or
// leave, a step at a time.
var RunJob = queue.Job[Job]{Name: "rebuild", Queue: queue.Rebuild, TaskName: Job.taskName,
	QueueOf: func(j Job) string {
		if j.Step > 0 && j.adds() {
			return queue.Backfill // a backfill's later steps
		}
		return ""
	}}

// Job is the body of a rebuild task.
type Job struct {
	Kind string `json:"kind"`
	// Owner is the user whose activities are edited: the followee, or the
	// member.
	Owner    string `json:"owner"`
	Follower string `json:"follower,omitempty"` // follow and unfollow
	Group    string `json:"group,omitempty"`    // join and leave
	// Gen names the change: for follow and join, the generation (creation
	// time, µs) of the follow or membership; for unfollow and leave, the
	// removal (the time it was asked for, µs).
	Gen int64 `json:"gen"`
	// At is when the change was asked for (µs): a job that finds the
	// change not committed retries until GiveUpAfter past At. Zero means
	// Gen.
	At int64 `json:"at,omitempty"`
	// Before, when set, limits an adding job to activities older than
	// this seq.
	Before int64 `json:"before,omitempty"`
	// Cursor is where a removing job's query goes on.
	Cursor string `json:"cursor,omitempty"`
	Limit  int    `json:"limit"`  // activities an adding job covers
	Budget int    `json:"budget"` // activities the backfill may still cover after it
	Step   int    `json:"step"`
}

// Config tunes the jobs.
type Config struct {
	// CopyLimit is how many of the newest activities the first job covers
	// when a follow gives none; 0 means 200.
	CopyLimit int
	// BackfillMax bounds how many older activities the backfill chain
	// covers after the first job; 0 turns backfill off.
	BackfillMax int
	// BackfillBatch is the number of activities one backfill job covers;
	// 0 means 50.
	BackfillBatch int
	// Batch is the number of activities edited in one transaction; 0
	// means 25.
	Batch int
	// GiveUpAfter is how long a job waits for the change it is about to
	// commit; 0 means 2 minutes.
	GiveUpAfter time.Duration
	// RemovalsPerJob bounds the copies one removing job looks at before it
	// hands the rest to the next; 0 means 1000.
	RemovalsPerJob int
	// HomeRetention is how far back a home feed reaches (0: for ever): a
	// follow's jobs copy no activity older than that to the follower's
	// audience, and stop there (see activities.HomeEdge).
	HomeRetention time.Duration
	// PruneWindow is not the rebuild's: like GiveUpAfter, it is a setting
	// of the jobs that app.NewServices hands on (notifications.Config).
	PruneWindow time.Duration
	// CelebrityFollowers is not the rebuild's either: what makes a person
	// a celebrity, whose posts are copied to no follower
	// (activities.Config), handed on likewise.
	CelebrityFollowers int64
	// Notices, when set, weighs again the follower's notifications of
	// what the followee did once a follow or unfollow shows: whether one
	// is there for its reader may turn on the follow (a post the author's
	// followers alone see, a limited author's).
	Notices Reweigher
}

// Reweigher weighs notifications again (package notifications' Service).
type Reweigher interface {
	ReweighAll(ctx context.Context, sel notifications.Selection) error
}

// MaxCopyLimit bounds a per-call copyLimit.
const MaxCopyLimit = 1000

// Service enqueues and runs the jobs. It is the graph.Jobs of follows and
// the groups.Jobs of memberships.
type Service struct {
	db    *store.DB
	queue queue.Queue
	log   *slog.Logger
	cfg   Config
	now   func() time.Time
}

var (
	_ graph.Jobs  = (*Service)(nil)
	_ groups.Jobs = (*Service)(nil)
)

// New returns a Service.
func New(db *store.DB, q queue.Queue, log *slog.Logger, cfg Config) (*Service, error) {
	if db == nil || q == nil || log == nil {
		return nil, errors.New("rebuild.New: nil dependency")
	}
	if cfg.CopyLimit == 0 {
		cfg.CopyLimit = 200
	}
	if cfg.CopyLimit < 0 || cfg.CopyLimit > MaxCopyLimit {
		return nil, fmt.Errorf("rebuild.New: CopyLimit %d not 1..%d", cfg.CopyLimit, MaxCopyLimit)
	}
	if cfg.BackfillMax < 0 {
		return nil, fmt.Errorf("rebuild.New: negative BackfillMax")
	}
	if cfg.BackfillBatch == 0 {
		cfg.BackfillBatch = 50
	}
	if cfg.Batch == 0 {
		cfg.Batch = 25
	}
	if cfg.GiveUpAfter == 0 {
		cfg.GiveUpAfter = queue.GiveUpAfter
	}
	if cfg.RemovalsPerJob == 0 {
		cfg.RemovalsPerJob = 1000
	}
	return &Service{db: db, queue: q, log: log, cfg: cfg, now: time.Now}, nil
}

// CopyLimit checks a follow's copyLimit: nil means the configured default.
func (s *Service) CopyLimit(limit *int) (int, error) {
	if limit == nil {
		return s.cfg.CopyLimit, nil
	}
	if *limit < 0 || *limit > MaxCopyLimit {
		return 0, derrors.New(derrors.InvalidArgument, fmt.Sprintf("copyLimit must be 0 to %d", MaxCopyLimit))
	}
	return *limit, nil
}

// Followed enqueues the job that copies followee's newest limit activities
// to follower, then the backfill, for the follow of generation gen.
func (s *Service) Followed(ctx context.Context, follower, followee string, gen int64, limit int) error {
	return s.enqueue(ctx, Job{Kind: JobFollow, Owner: followee, Follower: follower, Gen: gen, At: gen, Limit: limit, Budget: s.cfg.BackfillMax})
}

// Unfollowed enqueues the job that removes follower from every one of
// followee's activities, named removal.
func (s *Service) Unfollowed(ctx context.Context, follower, followee string, removal int64) error {
	return s.enqueue(ctx, Job{Kind: JobUnfollow, Owner: followee, Follower: follower, Gen: removal})
}

// Joined enqueues the job that copies group onto user's newest
// activities, for the membership of generation gen.
func (s *Service) Joined(ctx context.Context, group, user string, gen int64) error {
	return s.enqueue(ctx, Job{Kind: JobJoin, Owner: user, Group: group, Gen: gen, At: gen, Limit: s.cfg.CopyLimit, Budget: s.cfg.BackfillMax})
}

// Left enqueues the job that removes group from every one of user's
// activities, named removal.
func (s *Service) Left(ctx context.Context, group, user string, removal int64) error {
	return s.enqueue(ctx, Job{Kind: JobLeave, Owner: user, Group: group, Gen: removal})
}

// taskName is unique to a job's change and step, so a retried request or a
// duplicated task enqueues nothing twice. A removal started again (see
// removal) is named by its second, too.
func (j Job) taskName() string {
	other := j.Follower
	if other == "" {
		other = j.Group
	}
	name := fmt.Sprintf("%s-%s-%s-%d-%d", j.Kind, j.Owner, other, j.Gen, j.Step)
	if !j.adds() && j.At != 0 {
		name += fmt.Sprintf("-r%d", j.At/1e6)
	}
	return name
}

// removal returns the job of the pair's removal named id, started again
// at now.
func (j Job) removal(id int64, now time.Time) Job {
	kind := JobUnfollow
	if j.Kind == JobJoin {
		kind = JobLeave
	}
	return Job{Kind: kind, Owner: j.Owner, Follower: j.Follower, Group: j.Group, Gen: id, At: now.UnixMicro()}
}

func (s *Service) enqueue(ctx context.Context, j Job) error {
	return RunJob.Enqueue(ctx, s.queue, j, 0)
}

// ErrNotYet says a job came before the change it is about committed.
var ErrNotYet = queue.NotYet("the change of this job")

// Result says what a job did, for its log line.
type Result struct {
	Scanned  int      // activities looked at
	Changed  []string // ids of the activities whose copies changed
	Stopped  string   // why the job stopped early, if it did
	NextStep bool     // a backfill job was enqueued
}

// Run runs a job.
func (s *Service) Run(ctx context.Context, j Job) (Result, error) {
	if err := j.validate(); err != nil {
		return Result{Stopped: err.Error()}, nil
	}
	if j.adds() {
		return s.runAdd(ctx, j)
	}
	return s.runRemove(ctx, j)
}

func (j Job) adds() bool { return j.Kind == JobFollow || j.Kind == JobJoin }

// read reads the pair's follow or membership and history, in tx, or
// outside any transaction when tx is nil.
func (s *Service) read(ctx context.Context, tx *store.Tx, j Job) (pair.State, error) {
	l := s.db.Lookup()
	if tx != nil {
		l = tx.Lookup()
	}
	var state func() pair.State
	if j.Group == "" {
		state = graph.ReadPair(l, j.Follower, j.Owner).State
	} else {
		state = groups.ReadPair(l, j.Group, j.Owner).State
	}
	if err := l.Run(ctx); err != nil {
		return pair.State{}, err
	}
	return state(), nil
}

// adding decides whether an adding job goes on: only while the very follow
// or membership it is about exists and no removal of the pair is under
// way. Missing, and not recorded as ended, soon after the job was made
// means the change has not committed yet: retry.
func (s *Service) adding(j Job, p pair.State) (string, error) {
	switch {
	case p.Exists && p.Gen == j.Gen && p.Ended.Pending():
		return "", errRemovalPending
	case p.Exists && p.Gen == j.Gen:
		return "", nil
	case p.Exists:
		return "superseded by a newer change", nil
	case p.Ended.Gen >= j.Gen:
		return "undone", nil
	case s.now().Sub(time.UnixMicro(j.at())) < s.cfg.GiveUpAfter:
		return "", ErrNotYet
	default:
		return "never committed", nil
	}
}

// removing decides whether a removing job goes on: only while its removal
// is the one the pair's record asks for.
func (s *Service) removing(j Job, p pair.State) (string, error) {
	switch {
	case p.Ended.Removal == j.Gen && p.Ended.Pending():
		return "", nil
	case p.Ended.Done >= j.Gen:
		return "done", nil
	case p.Ended.Removal > j.Gen:
		return "superseded by a newer removal", nil
	case s.now().Sub(time.UnixMicro(j.at())) < s.cfg.GiveUpAfter:
		return "", ErrNotYet
	default:
		return "never committed", nil
	}
}

var errRemovalPending = derrors.New(derrors.Unavailable, "a removal of this pair is under way")

func (s *Service) runAdd(ctx context.Context, j Job) (Result, error) {
	var res Result
	// The change must have committed before the query: whatever the query
	// then misses was posted after it, and copied by its post.
	p, err := s.read(ctx, nil, j)
	if err != nil {
		return res, fmt.Errorf("rebuild.Run(%s): %w", j.taskName(), err)
	}
	if stop, err := s.adding(j, p); stop != "" || err != nil {
		if errors.Is(err, errRemovalPending) && s.now().Sub(time.UnixMicro(p.Ended.Removal)) > s.cfg.GiveUpAfter {
			// The removal's own job gave up before its change committed
			// (a commit later than GiveUpAfter): start it again, or this
			// job would wait for good.
			if err := s.enqueue(ctx, j.removal(p.Ended.Removal, s.now())); err != nil {
				return res, err
			}
		}
		res.Stopped = stop
		return res, err
	}
	if err := s.reweigh(ctx, j); err != nil {
		return res, err
	}
	refs, err := activities.Newest(ctx, s.db, j.Owner, j.Before, j.Limit)
	if err != nil {
		return res, fmt.Errorf("rebuild.Run(%s): %w", j.taskName(), err)
	}
	res.Scanned = len(refs)
	// A follow copies nothing a home feed no longer reaches: the activities
	// past its edge, and with them the rest of the backfill, are left out.
	// (A group's feed is the activities' own groupIds, kept whatever
	// their age.)
	past := false
	if edge := activities.HomeEdge(s.cfg.HomeRetention, s.now()); j.Group == "" && edge > 0 {
		for i, r := range refs {
			if r.Seq < edge {
				refs, past = refs[:i], true
				break
			}
		}
	}
	for start := 0; start < len(refs); start += s.cfg.Batch {
		batch := refs[start:min(start+s.cfg.Batch, len(refs))]
		stop, err := s.edit(ctx, j, &res, s.adding, func(tx *store.Tx, p pair.State) ([]string, error) {
			if j.Group == "" {
				return activities.AddFollower(tx, batch, p.Chunk, j.Follower)
			}
			return activities.AddGroup(tx, batch, j.Group)
		})
		if stop || err != nil {
			return res, err
		}
	}
	if !past && len(refs) == j.Limit && j.Budget > 0 && len(refs) > 0 {
		next := j
		next.Step++
		next.Before = refs[len(refs)-1].Seq
		next.Limit = min(s.cfg.BackfillBatch, j.Budget)
		next.Budget = j.Budget - next.Limit
		if err := s.enqueue(ctx, next); err != nil {
			return res, err
		}
		res.NextStep = true
	}
	return res, nil
}

// runRemove pages through every copy the removal is about: the audience
// chunks of the owner's activities that hold the follower, or the owner's
// activities that carry the group. Copies of activities posted after the
// pair's cutoff (a later follow or join) are left alone.
func (s *Service) runRemove(ctx context.Context, j Job) (Result, error) {
	var res Result
	p, err := s.read(ctx, nil, j)
	if err != nil {
		return res, fmt.Errorf("rebuild.Run(%s): %w", j.taskName(), err)
	}
	if stop, err := s.removing(j, p); stop != "" || err != nil {
		res.Stopped = stop
		return res, err
	}
	if err := s.reweigh(ctx, j); err != nil {
		return res, err
	}
	// The copies to undo: the chunks that hold the follower, or the
	// activities that carry the group.
	q := activities.WithGroup(s.db, j.Owner, j.Group)
	if j.Group == "" {
		q = activities.AudienceOf(s.db, j.Follower, j.Owner)
	}
	cursor := j.Cursor
	for res.Scanned < s.cfg.RemovalsPerJob {
		keys, next, err := s.db.KeysFrom(ctx, q, cursor, s.cfg.Batch)
		if err != nil {
			return res, fmt.Errorf("rebuild.Run(%s): %w", j.taskName(), err)
		}
		if len(keys) == 0 {
			return res, s.finishRemoval(ctx, j)
		}
		res.Scanned += len(keys)
		stop, err := s.edit(ctx, j, &res, s.removing, func(tx *store.Tx, p pair.State) ([]string, error) {
			var cutoff time.Time
			if p.Ended.Cutoff > 0 {
				cutoff = time.UnixMicro(p.Ended.Cutoff)
			}
			if j.Group == "" {
				return activities.RemoveFollower(tx, keys, j.Follower, cutoff)
			}
			return activities.RemoveGroup(tx, keys, j.Group, cutoff)
		})
		if stop || err != nil {
			return res, err
		}
		cursor = next
	}
	// More than one job should do: hand the rest on.
	next := j
	next.Step++
	next.Cursor = cursor
	next.At = j.at()
	if err := s.enqueue(ctx, next); err != nil {
		return res, err
	}
	res.NextStep = true
	return res, nil
}

// reweigh has the follower's notifications of what the followee did
// weighed again, by the first step of a follow's or unfollow's job, once
// its change shows (each of the weighing's transactions reads the follow
// as it is then).
func (s *Service) reweigh(ctx context.Context, j Job) error {
	if s.cfg.Notices == nil || j.Group != "" || j.Step > 0 {
		return nil
	}
	return s.cfg.Notices.ReweighAll(ctx, notifications.Selection{Actor: j.Owner, User: j.Follower})
}

// edit runs one batch of a job in a transaction that first re-reads the
// pair and asks decide (adding or removing) whether the job goes on, then
// applies change. It adds what changed to res, and reports whether the job
// stopped (res.Stopped says why).
func (s *Service) edit(ctx context.Context, j Job, res *Result, decide func(Job, pair.State) (string, error),
	change func(*store.Tx, pair.State) ([]string, error)) (bool, error) {
	var changed []string
	var stop string
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		changed, stop = nil, ""
		p, err := s.read(ctx, tx, j)
		if err != nil {
			return err
		}
		if stop, err = decide(j, p); stop != "" || err != nil {
			return err
		}
		changed, err = change(tx, p)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("rebuild.Run(%s): %w", j.taskName(), err)
	}
	res.Changed = append(res.Changed, changed...)
	res.Stopped = stop
	return stop != "", nil
}

// finishRemoval records that the removal is done, so the follow or join
// jobs waiting for it go on.
func (s *Service) finishRemoval(ctx context.Context, j Job) error {
	if j.Group == "" {
		return graph.FinishRemoval(ctx, s.db, j.Follower, j.Owner, j.Gen)
	}
	return groups.FinishRemoval(ctx, s.db, j.Group, j.Owner, j.Gen)
}

func (j Job) at() int64 {
	if j.At != 0 {
		return j.At
	}
	return j.Gen
}

func (j Job) validate() error {
	switch {
	case j.Owner == "" || j.Gen <= 0:
		return errors.New("malformed job")
	case j.adds() && (j.Limit < 1 || j.Limit > MaxCopyLimit):
		return errors.New("malformed job: limit")
	case (j.Kind == JobFollow || j.Kind == JobUnfollow) && (j.Follower == "" || j.Group != ""):
		return errors.New("malformed job: no follower")
	case (j.Kind == JobJoin || j.Kind == JobLeave) && (j.Group == "" || j.Follower != ""):
		return errors.New("malformed job: no group")
	case j.Kind != JobFollow && j.Kind != JobUnfollow && j.Kind != JobJoin && j.Kind != JobLeave:
		return errors.New("malformed job: unknown kind")
	}
	if j.Cursor != "" && !store.ValidCursor(j.Cursor) {
		return errors.New("malformed job: cursor")
	}
	return nil
}
