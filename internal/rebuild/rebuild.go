// Package rebuild keeps the copies on activities in step with the graph.
// When a user follows, unfollows, joins or leaves, it changes the graph and
// schedules a job that brings the copies on the newest activities up to
// date (a follower id on the followee's audience chunks, a group id on the
// member's activities), then a low-rate chain of backfill jobs for older
// ones.
//
// Cloud Tasks runs a job at least once, late, or out of order, so a job
// never trusts what it was told: every batch of edits runs in a transaction
// that first re-reads the follow or membership the job is about, and adds
// copies only while that very generation of it exists, removes them only
// while none exists. Jobs that run twice change nothing the second time;
// follow, unfollow, follow ends followed whatever order the jobs run in;
// and an unfollow committing while a follow job runs makes that job's next
// transaction conflict, retry, and stop.
//
// Each job is enqueued before the graph change commits, with the
// generation (creation time) it will have, so a committed change never
// lacks its job; a job whose change never commits gives up after a while.
//
// A post racing a follow is not lost without any second pass: the post
// reads its author's follower chunk in its own transaction, so it either
// commits first (then the follow job, which runs after the follow commits,
// finds it: Firestore queries are strongly consistent) or after the follow
// (then it copies the new follower itself). Fan-out jobs merge into chunks
// a follow job may have created, never overwrite them.
package rebuild

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/activities"
	"socialstream/internal/derrors"
	"socialstream/internal/graph"
	"socialstream/internal/groups"
	"socialstream/internal/queue"
	"socialstream/internal/store"
)

// Job kinds.
const (
	KindFollow   = "follow"
	KindUnfollow = "unfollow"
	KindJoin     = "join"
	KindLeave    = "leave"
)

// Path is where rebuild jobs are sent.
const Path = "/_tasks/rebuild"

// Job is the body of a rebuild task.
type Job struct {
	Kind string `json:"kind"`
	// Owner is the user whose activities are edited: the followee, or the
	// member.
	Owner    string `json:"owner"`
	Follower string `json:"follower,omitempty"` // follow and unfollow
	Group    string `json:"group,omitempty"`    // join and leave
	// Chunk is the follower chunk the follower was in (unfollow).
	Chunk int `json:"chunk"`
	// Gen is the generation (creation time, µs) of the follow or
	// membership the job is about.
	Gen int64 `json:"gen"`
	// At is when the change was asked for (µs): a job that finds the
	// change not committed retries until GiveUpAfter past At. Zero means
	// Gen.
	At int64 `json:"at,omitempty"`
	// Before, when set, limits the job to activities older than this seq.
	Before int64 `json:"before,omitempty"`
	Limit  int   `json:"limit"`  // activities this job covers
	Budget int   `json:"budget"` // activities the backfill may still cover after it
	Step   int   `json:"step"`
}

// Config tunes the jobs.
type Config struct {
	RebuildQueue  string // default "rebuild"
	BackfillQueue string // default "backfill"
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
}

// MaxCopyLimit bounds a per-call copyLimit.
const MaxCopyLimit = 1000

// Service changes the graph and runs the jobs.
type Service struct {
	db     *store.DB
	graph  *graph.Service
	groups *groups.Service
	queue  queue.Queue
	log    *slog.Logger
	cfg    Config
	now    func() time.Time
}

// New returns a Service.
func New(db *store.DB, g *graph.Service, grp *groups.Service, q queue.Queue, log *slog.Logger, cfg Config) (*Service, error) {
	if db == nil || g == nil || grp == nil || q == nil || log == nil {
		return nil, errors.New("rebuild.New: nil dependency")
	}
	if cfg.RebuildQueue == "" {
		cfg.RebuildQueue = "rebuild"
	}
	if cfg.BackfillQueue == "" {
		cfg.BackfillQueue = "backfill"
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
		cfg.GiveUpAfter = 2 * time.Minute
	}
	return &Service{db: db, graph: g, groups: grp, queue: q, log: log, cfg: cfg, now: time.Now}, nil
}

// Follow makes follower follow followee and schedules the copying of the
// followee's newest copyLimit activities (nil: the configured default; 0:
// none, and no backfill).
func (s *Service) Follow(ctx context.Context, follower, followee string, copyLimit *int) (bool, error) {
	limit := s.cfg.CopyLimit
	if copyLimit != nil {
		limit = *copyLimit
	}
	if limit < 0 || limit > MaxCopyLimit {
		return false, derrors.New(derrors.InvalidArgument, fmt.Sprintf("copyLimit must be 0 to %d", MaxCopyLimit))
	}
	if follower == followee {
		return false, graph.ErrSelfFollow
	}
	if _, ok, err := s.graph.Get(ctx, follower, followee); err != nil {
		return false, err
	} else if ok {
		return false, nil // already following: nothing to copy
	}
	created := s.now().UTC().Truncate(time.Microsecond)
	if limit > 0 {
		if err := s.enqueue(ctx, Job{Kind: KindFollow, Owner: followee, Follower: follower, Gen: created.UnixMicro(), At: created.UnixMicro(), Limit: limit, Budget: s.cfg.BackfillMax}); err != nil {
			return false, err
		}
	}
	return s.graph.FollowAt(ctx, follower, followee, created)
}

// Unfollow ends follower's follow of followee and, unless keepHistory,
// schedules the removal of follower from the followee's activities: the
// newest MaxCopyLimit (as many as any follow copies at first), then older
// ones by backfill.
func (s *Service) Unfollow(ctx context.Context, follower, followee string, keepHistory bool) (bool, error) {
	f, ok, err := s.graph.Get(ctx, follower, followee)
	if err != nil || !ok {
		return false, err
	}
	if !keepHistory {
		if err := s.enqueue(ctx, Job{Kind: KindUnfollow, Owner: followee, Follower: follower, Chunk: f.Chunk, Gen: f.Gen(), At: s.now().UnixMicro(), Limit: MaxCopyLimit, Budget: s.cfg.BackfillMax}); err != nil {
			return false, err
		}
	}
	return s.graph.Unfollow(ctx, follower, followee)
}

// Join adds user to group on behalf of actor and schedules the copying of
// the group id onto user's newest activities.
func (s *Service) Join(ctx context.Context, actor, group, user string) (bool, error) {
	if err := s.groups.Authorize(ctx, actor, group, user, true); err != nil {
		return false, err
	}
	if _, ok, err := s.groups.Membership(ctx, group, user); err != nil {
		return false, err
	} else if ok {
		return false, nil
	}
	created := s.now().UTC().Truncate(time.Microsecond)
	if err := s.enqueue(ctx, Job{Kind: KindJoin, Owner: user, Group: group, Gen: created.UnixMicro(), At: created.UnixMicro(), Limit: s.cfg.CopyLimit, Budget: s.cfg.BackfillMax}); err != nil {
		return false, err
	}
	return s.groups.JoinAt(ctx, actor, group, user, created)
}

// Leave removes user from group on behalf of actor and schedules the
// removal of the group id from user's activities.
func (s *Service) Leave(ctx context.Context, actor, group, user string) (bool, error) {
	if err := s.groups.Authorize(ctx, actor, group, user, false); err != nil {
		return false, err
	}
	m, ok, err := s.groups.Membership(ctx, group, user)
	if err != nil || !ok {
		return false, err
	}
	if err := s.enqueue(ctx, Job{Kind: KindLeave, Owner: user, Group: group, Gen: m.Gen(), At: s.now().UnixMicro(), Limit: MaxCopyLimit, Budget: s.cfg.BackfillMax}); err != nil {
		return false, err
	}
	return s.groups.Leave(ctx, actor, group, user)
}

// taskName is unique to a job's change and step, so a retried request or a
// duplicated task enqueues nothing twice.
func (j Job) taskName() string {
	other := j.Follower
	if other == "" {
		other = j.Group
	}
	return fmt.Sprintf("%s-%s-%s-%d-%d", j.Kind, j.Owner, other, j.Gen, j.Step)
}

func (s *Service) enqueue(ctx context.Context, j Job) error {
	q := s.cfg.RebuildQueue
	if j.Step > 0 {
		q = s.cfg.BackfillQueue
	}
	body, err := json.Marshal(j)
	if err != nil {
		return err
	}
	return s.queue.Enqueue(ctx, queue.Task{Queue: q, Path: Path, Body: body, Name: j.taskName()})
}

// ErrNotYet says a job came before the change it is about committed.
var ErrNotYet = derrors.New(derrors.Unavailable, "the change of this job is not committed yet")

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
	var res Result
	q := s.db.Query(activities.KindActivity).FilterField("userId", "=", j.Owner)
	if j.Before > 0 {
		q = q.FilterField("seq", "<", j.Before)
	}
	keys, err := s.db.Client.GetAll(ctx, q.Order("-seq").Limit(j.Limit).KeysOnly(), nil)
	if err != nil {
		return res, fmt.Errorf("rebuild.Run: %w", store.Convert(err))
	}
	refs := make([]activities.Ref, 0, len(keys))
	for _, k := range keys {
		seq, _ := strconv.ParseInt(k.Name, 10, 64)
		refs = append(refs, activities.Ref{ID: k.Name, Seq: seq})
	}
	res.Scanned = len(refs)
	for start := 0; start < len(refs); start += s.cfg.Batch {
		batch := refs[start:min(start+s.cfg.Batch, len(refs))]
		var changed []string
		var stop string
		err := s.db.RunInTransaction(ctx, func(tx *datastore.Transaction) error {
			var err error
			changed, stop, err = s.apply(tx, j, batch)
			return err
		})
		if err != nil {
			return res, fmt.Errorf("rebuild.Run(%s): %w", j.taskName(), err)
		}
		res.Changed = append(res.Changed, changed...)
		if stop != "" {
			res.Stopped = stop
			return res, nil
		}
	}
	if len(refs) == j.Limit && j.Budget > 0 && len(refs) > 0 {
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

func (j Job) at() int64 {
	if j.At != 0 {
		return j.At
	}
	return j.Gen
}

func (j Job) validate() error {
	switch {
	case j.Owner == "" || j.Limit < 1 || j.Limit > MaxCopyLimit || j.Gen <= 0:
		return errors.New("malformed job")
	case (j.Kind == KindFollow || j.Kind == KindUnfollow) && j.Follower == "":
		return errors.New("malformed job: no follower")
	case (j.Kind == KindJoin || j.Kind == KindLeave) && j.Group == "":
		return errors.New("malformed job: no group")
	case j.Kind != KindFollow && j.Kind != KindUnfollow && j.Kind != KindJoin && j.Kind != KindLeave:
		return errors.New("malformed job: unknown kind")
	}
	return nil
}

// apply edits one batch in tx after re-reading the state the job is about.
// It returns a reason to stop when the state says the job is moot.
func (s *Service) apply(tx *datastore.Transaction, j Job, batch []activities.Ref) ([]string, string, error) {
	switch j.Kind {
	case KindFollow, KindUnfollow:
		var f graph.Follow
		var ended graph.Ended
		err := tx.GetMulti([]*datastore.Key{graph.FollowKey(s.db, j.Follower, j.Owner), graph.EndedKey(s.db, j.Follower, j.Owner)}, []any{&f, &ended})
		missing, ok := store.IsMissing(err, 2)
		if !ok {
			return nil, "", err
		}
		exists := !missing[0]
		if j.Kind == KindUnfollow {
			if exists {
				stop, err := s.stillThere(f.Gen() == j.Gen, j.at())
				return nil, stop, err
			}
			changed, err := activities.RemoveFollower(tx, s.db, batch, j.Chunk, j.Follower)
			return changed, "", err
		}
		if stop, err := s.current(exists, exists && f.Gen() == j.Gen, ended.Gen >= j.Gen, j.at()); stop != "" || err != nil {
			return nil, stop, err
		}
		changed, err := activities.AddFollower(tx, s.db, batch, f.Chunk, j.Follower)
		return changed, "", err
	default:
		var m groups.Membership
		var ended groups.Ended
		err := tx.GetMulti([]*datastore.Key{groups.MembershipKey(s.db, j.Group, j.Owner), groups.EndedKey(s.db, j.Group, j.Owner)}, []any{&m, &ended})
		missing, ok := store.IsMissing(err, 2)
		if !ok {
			return nil, "", err
		}
		exists := !missing[0]
		if j.Kind == KindLeave {
			if exists {
				stop, err := s.stillThere(m.Gen() == j.Gen, j.at())
				return nil, stop, err
			}
			changed, err := editGroups(tx, s.db, batch, j.Group, false)
			return changed, "", err
		}
		if stop, err := s.current(exists, exists && m.Gen() == j.Gen, ended.Gen >= j.Gen, j.at()); stop != "" || err != nil {
			return nil, stop, err
		}
		changed, err := editGroups(tx, s.db, batch, j.Group, true)
		return changed, "", err
	}
}

// stillThere decides for a removing job that finds a follow or membership:
// the very one it is to remove means the removal has not committed yet
// (retry, for a while); a newer one means the user came back (stop).
func (s *Service) stillThere(sameGen bool, at int64) (string, error) {
	switch {
	case !sameGen:
		return "done again since", nil
	case s.now().Sub(time.UnixMicro(at)) < s.cfg.GiveUpAfter:
		return "", ErrNotYet
	default:
		return "removal never committed", nil
	}
}

// current decides whether an adding job goes on: only while the very
// follow or membership it is about exists. Missing, and not recorded as
// ended, soon after the job was made means the change has not committed
// yet: retry.
func (s *Service) current(exists, sameGen, ended bool, at int64) (string, error) {
	switch {
	case sameGen:
		return "", nil
	case exists:
		return "superseded by a newer change", nil
	case ended:
		return "undone", nil
	case s.now().Sub(time.UnixMicro(at)) < s.cfg.GiveUpAfter:
		return "", ErrNotYet
	default:
		return "undone", nil
	}
}

// editGroups adds or removes group on each activity's groupIds.
func editGroups(tx *datastore.Transaction, db *store.DB, batch []activities.Ref, group string, add bool) ([]string, error) {
	keys := make([]*datastore.Key, len(batch))
	acts := make([]activities.Activity, len(batch))
	for i, r := range batch {
		keys[i] = activities.Key(db, r.ID)
	}
	err := tx.GetMulti(keys, acts)
	missing, ok := store.IsMissing(err, len(keys))
	if !ok {
		return nil, err
	}
	var changed []string
	var putKeys []*datastore.Key
	var putVals []any
	for i := range acts {
		if missing[i] {
			continue
		}
		a := &acts[i]
		has := false
		for _, g := range a.GroupIDs {
			has = has || g == group
		}
		switch {
		case add && !has && len(a.GroupIDs) < 2*groups.MaxGroupsPerUser:
			a.GroupIDs = append(a.GroupIDs, group)
		case !add && has:
			out := a.GroupIDs[:0]
			for _, g := range a.GroupIDs {
				if g != group {
					out = append(out, g)
				}
			}
			a.GroupIDs = out
		default:
			continue
		}
		putKeys, putVals = append(putKeys, keys[i]), append(putVals, a)
		changed = append(changed, batch[i].ID)
	}
	if len(putKeys) > 0 {
		if _, err := tx.PutMulti(putKeys, putVals); err != nil {
			return nil, err
		}
	}
	return changed, nil
}
