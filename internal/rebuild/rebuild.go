// Package rebuild keeps the copies on activities in step with the graph.
// When a user follows, unfollows, joins or leaves, it changes the graph and
// schedules a job that brings the copies up to date: a follower id on the
// followee's audience chunks, a group id on the member's activities.
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
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"time"

	"cloud.google.com/go/datastore"
	"google.golang.org/api/iterator"

	"socialstream/internal/activities"
	"socialstream/internal/derrors"
	"socialstream/internal/graph"
	"socialstream/internal/groups"
	"socialstream/internal/ids"
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
	// RemovalsPerJob bounds the copies one removing job looks at before it
	// hands the rest to the next; 0 means 1000.
	RemovalsPerJob int
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
	if cfg.RemovalsPerJob == 0 {
		cfg.RemovalsPerJob = 1000
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
// schedules the removal of follower from every one of the followee's
// activities.
func (s *Service) Unfollow(ctx context.Context, follower, followee string, keepHistory bool) (bool, error) {
	_, ok, err := s.graph.Get(ctx, follower, followee)
	if err != nil || !ok {
		return false, err
	}
	var removal int64
	if !keepHistory {
		removal = s.now().UnixMicro()
		if err := s.enqueue(ctx, Job{Kind: KindUnfollow, Owner: followee, Follower: follower, Gen: removal}); err != nil {
			return false, err
		}
	}
	return s.graph.Unfollow(ctx, follower, followee, removal)
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
// removal of the group id from every one of user's activities.
func (s *Service) Leave(ctx context.Context, actor, group, user string) (bool, error) {
	if err := s.groups.Authorize(ctx, actor, group, user, false); err != nil {
		return false, err
	}
	if _, ok, err := s.groups.Membership(ctx, group, user); err != nil || !ok {
		return false, err
	}
	removal := s.now().UnixMicro()
	if err := s.enqueue(ctx, Job{Kind: KindLeave, Owner: user, Group: group, Gen: removal}); err != nil {
		return false, err
	}
	return s.groups.Leave(ctx, actor, group, user, removal)
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
	kind := KindUnfollow
	if j.Kind == KindJoin {
		kind = KindLeave
	}
	return Job{Kind: kind, Owner: j.Owner, Follower: j.Follower, Group: j.Group, Gen: id, At: now.UnixMicro()}
}

func (s *Service) enqueue(ctx context.Context, j Job) error {
	q := s.cfg.RebuildQueue
	if j.Step > 0 && j.adds() {
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
	if j.adds() {
		return s.runAdd(ctx, j)
	}
	return s.runRemove(ctx, j)
}

func (j Job) adds() bool { return j.Kind == KindFollow || j.Kind == KindJoin }

// pair is what a job re-reads: the follow or membership of its pair, and
// the pair's Ended record.
type pair struct {
	exists bool
	gen    int64 // of the follow or membership, when it exists
	chunk  int   // the follower chunk, for a follow
	ended  ended
}

// ended holds the fields graph.Ended and groups.Ended share.
type ended struct{ gen, removal, cutoff, done int64 }

func (e ended) pending() bool { return e.removal > e.done }

// keys returns the keys of the pair's follow or membership and Ended.
func (s *Service) keys(j Job) []*datastore.Key {
	if j.Group == "" {
		return []*datastore.Key{graph.FollowKey(s.db, j.Follower, j.Owner), graph.EndedKey(s.db, j.Follower, j.Owner)}
	}
	return []*datastore.Key{groups.MembershipKey(s.db, j.Group, j.Owner), groups.EndedKey(s.db, j.Group, j.Owner)}
}

// read reads the pair in tx, or outside any transaction when tx is nil.
func (s *Service) read(ctx context.Context, tx *datastore.Transaction, j Job) (pair, error) {
	keys := s.keys(j)
	var (
		p   pair
		f   graph.Follow
		fe  graph.Ended
		m   groups.Membership
		me  groups.Ended
		dst []any
	)
	if j.Group == "" {
		dst = []any{&f, &fe}
	} else {
		dst = []any{&m, &me}
	}
	var err error
	if tx != nil {
		err = tx.GetMulti(keys, dst)
	} else {
		err = s.db.Client.GetMulti(ctx, keys, dst)
	}
	missing, ok := store.IsMissing(err, 2)
	if !ok {
		return p, store.Convert(err)
	}
	p.exists = !missing[0]
	if j.Group == "" {
		p.gen, p.chunk = f.Gen(), f.Chunk
		p.ended = ended{fe.Gen, fe.Removal, fe.Cutoff, fe.Done}
	} else {
		p.gen = m.Gen()
		p.ended = ended{me.Gen, me.Removal, me.Cutoff, me.Done}
	}
	return p, nil
}

// adding decides whether an adding job goes on: only while the very follow
// or membership it is about exists and no removal of the pair is under
// way. Missing, and not recorded as ended, soon after the job was made
// means the change has not committed yet: retry.
func (s *Service) adding(j Job, p pair) (string, error) {
	switch {
	case p.exists && p.gen == j.Gen && p.ended.pending():
		return "", errRemovalPending
	case p.exists && p.gen == j.Gen:
		return "", nil
	case p.exists:
		return "superseded by a newer change", nil
	case p.ended.gen >= j.Gen:
		return "undone", nil
	case s.now().Sub(time.UnixMicro(j.at())) < s.cfg.GiveUpAfter:
		return "", ErrNotYet
	default:
		return "never committed", nil
	}
}

// removing decides whether a removing job goes on: only while its removal
// is the one the pair's record asks for.
func (s *Service) removing(j Job, p pair) (string, error) {
	switch {
	case p.ended.removal == j.Gen && p.ended.pending():
		return "", nil
	case p.ended.done >= j.Gen:
		return "done", nil
	case p.ended.removal > j.Gen:
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
		if errors.Is(err, errRemovalPending) && s.now().Sub(time.UnixMicro(p.ended.removal)) > s.cfg.GiveUpAfter {
			// The removal's own job gave up before its change committed
			// (a commit later than GiveUpAfter): start it again, or this
			// job would wait for good.
			if err := s.enqueue(ctx, j.removal(p.ended.removal, s.now())); err != nil {
				return res, err
			}
		}
		res.Stopped = stop
		return res, err
	}
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
		refs = append(refs, activities.Ref{ID: k.Name, Seq: seq, Author: j.Owner})
	}
	res.Scanned = len(refs)
	for start := 0; start < len(refs); start += s.cfg.Batch {
		batch := refs[start:min(start+s.cfg.Batch, len(refs))]
		stop, err := s.edit(ctx, j, &res, s.adding, func(tx *datastore.Transaction, p pair) ([]string, error) {
			if j.Group == "" {
				return activities.AddFollower(tx, s.db, batch, p.chunk, j.Follower)
			}
			return editGroups(tx, s.db, batch, j.Group, true, time.Time{})
		})
		if stop || err != nil {
			return res, err
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
	var q *datastore.Query
	if j.Group == "" {
		q = activities.AudienceOf(s.db, j.Follower, j.Owner)
	} else {
		q = s.db.Query(activities.KindActivity).FilterField("userId", "=", j.Owner).FilterField("groupIds", "=", j.Group).KeysOnly()
	}
	cursor := j.Cursor
	for res.Scanned < s.cfg.RemovalsPerJob {
		page := q.Limit(s.cfg.Batch)
		if cursor != "" {
			c, err := datastore.DecodeCursor(cursor) // validate checked it
			if err != nil {
				return res, err
			}
			page = page.Start(c)
		}
		it := s.db.Client.Run(ctx, page)
		var keys []*datastore.Key
		for {
			k, err := it.Next(nil)
			if errors.Is(err, iterator.Done) {
				break
			}
			if err != nil {
				return res, fmt.Errorf("rebuild.Run(%s): %w", j.taskName(), store.Convert(err))
			}
			keys = append(keys, k)
		}
		if len(keys) == 0 {
			return res, s.finishRemoval(ctx, j)
		}
		next, err := it.Cursor()
		if err != nil {
			return res, fmt.Errorf("rebuild.Run(%s): %w", j.taskName(), store.Convert(err))
		}
		res.Scanned += len(keys)
		stop, err := s.edit(ctx, j, &res, s.removing, func(tx *datastore.Transaction, p pair) ([]string, error) {
			var cutoff time.Time
			if p.ended.cutoff > 0 {
				cutoff = time.UnixMicro(p.ended.cutoff)
			}
			if j.Group == "" {
				return activities.RemoveFollower(tx, keys, j.Follower, cutoff)
			}
			refs := make([]activities.Ref, len(keys))
			for i, k := range keys {
				refs[i].ID = k.Name
			}
			return editGroups(tx, s.db, refs, j.Group, false, cutoff)
		})
		if stop || err != nil {
			return res, err
		}
		cursor = next.String()
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

// edit runs one batch of a job in a transaction that first re-reads the
// pair and asks decide (adding or removing) whether the job goes on, then
// applies change. It adds what changed to res, and reports whether the job
// stopped (res.Stopped says why).
func (s *Service) edit(ctx context.Context, j Job, res *Result, decide func(Job, pair) (string, error),
	change func(*datastore.Transaction, pair) ([]string, error)) (bool, error) {
	var changed []string
	var stop string
	err := s.db.RunInTransaction(ctx, func(tx *datastore.Transaction) error {
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
	key := s.keys(j)[1]
	err := s.db.RunInTransaction(ctx, func(tx *datastore.Transaction) error {
		var (
			fe            graph.Ended
			ge            groups.Ended
			dst           any
			removal, done *int64
		)
		if j.Group == "" {
			dst, removal, done = &fe, &fe.Removal, &fe.Done
		} else {
			dst, removal, done = &ge, &ge.Removal, &ge.Done
		}
		if err := tx.Get(key, dst); err != nil {
			return err
		}
		if *removal != j.Gen || *done >= j.Gen {
			return nil
		}
		*done = j.Gen
		_, err := tx.Put(key, dst)
		return err
	})
	if err != nil {
		return fmt.Errorf("rebuild.finishRemoval(%s): %w", j.taskName(), err)
	}
	return nil
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
	case (j.Kind == KindFollow || j.Kind == KindUnfollow) && (j.Follower == "" || j.Group != ""):
		return errors.New("malformed job: no follower")
	case (j.Kind == KindJoin || j.Kind == KindLeave) && (j.Group == "" || j.Follower != ""):
		return errors.New("malformed job: no group")
	case j.Kind != KindFollow && j.Kind != KindUnfollow && j.Kind != KindJoin && j.Kind != KindLeave:
		return errors.New("malformed job: unknown kind")
	}
	if j.Cursor != "" {
		if _, err := datastore.DecodeCursor(j.Cursor); err != nil {
			return errors.New("malformed job: cursor")
		}
	}
	return nil
}

// editGroups adds or removes group on each activity's groupIds; a removal
// spares activities not surely posted before cutoff, unless it is zero.
func editGroups(tx *datastore.Transaction, db *store.DB, batch []activities.Ref, group string, add bool, cutoff time.Time) ([]string, error) {
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
		has := slices.Contains(a.GroupIDs, group)
		switch {
		case add && !has && len(a.GroupIDs) < 2*groups.MaxGroupsPerUser:
			a.GroupIDs = append(a.GroupIDs, group)
		case !add && has && (cutoff.IsZero() || ids.MintedBefore(a.Seq, cutoff)):
			a.GroupIDs = slices.DeleteFunc(a.GroupIDs, func(g string) bool { return g == group })
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
