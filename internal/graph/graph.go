// Package graph owns who follows whom.
//
// Entities:
//   - Follow/{follower}_{followee}: one follow, for the @friends and
//     @followers lists (queries on follower or followee, newest first).
//   - FollowerIndex/{user}: how many follower chunks the user has (see
//     Index); written only when a follow opens a new chunk.
//   - FollowerIndex/{user}/FollowerChunk/{n}: up to ChunkCap follower ids,
//     unindexed, changed by server-side transforms (see Chunk).
//
// The chunks exist so that posting never queries the follow graph: a post
// copies chunk n of its author's followers into audience chunk n of the
// activity by key lookup (package activities). A query over every follower
// would cost time in proportion to the follower count, and the Datastore
// emulator takes minutes over 100,000 matches. Follow and Unfollow keep the
// Follow entity, the chunk, the index and both users' counts (through
// package accounts) in one transaction, so they always agree; none of them
// reads what a celebrity's other followers write at the same time (the
// chunk and the counts change by transforms that read nothing).
//
//   - FollowEnded/{follower}_{followee}: the pair's history (pair.Ended)
//     that the rebuild jobs read.
//
// A follow or an unfollow is one operation with all its side effects: the
// rebuild job (Jobs, enqueued before the commit) and the followee's
// notification (written in the same transaction). Other packages read the
// graph through the functions here that add to their lookups.
package graph

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/accounts"
	"socialstream/internal/blocks"
	"socialstream/internal/derrors"
	"socialstream/internal/ids"
	"socialstream/internal/notifications"
	"socialstream/internal/outbox"
	"socialstream/internal/pair"
	"socialstream/internal/queue"
	"socialstream/internal/store"
)

// Kinds of the entities this package owns.
const (
	KindFollow        = "Follow"
	KindFollowerIndex = "FollowerIndex"
	KindFollowerChunk = "FollowerChunk"
	KindFollowEnded   = "FollowEnded"
)

// ChunkCap is the number of follower ids a chunk takes before follows
// open the next: under an audience chunk's (activities.AudienceChunkSize,
// which explains the number) by the author, whom audience chunk 0 also
// holds, and by 97 more. Follows join a chunk without reading it, so the
// follows under way when it fills may all join it; the audience copies
// spill what does not fit into overflow chunks.
const ChunkCap = 4900

// ErrSelfFollow refuses a follow of oneself.
var ErrSelfFollow = derrors.New(derrors.InvalidArgument, "you cannot follow yourself")

// Follow is one follow, or a list's membership (lists.go): the list's
// reader follows the member.
type Follow struct {
	Follower string    `datastore:"follower"`
	Followee string    `datastore:"followee"`
	Created  time.Time `datastore:"created"`
	Chunk    int       `datastore:"chunk,noindex"` // the follower chunk holding Follower
	// Owner, on a membership alone, is the list's owner.
	Owner string `datastore:"owner,omitempty"`
	// Notify: the follower is told of each post of the followee's
	// (Mastodon's notify); NoReposts: the followee's reposts do not
	// reach the follower's home (Mastodon's reblogs=false). The chunk
	// holding the follower lists them in Bells and Quiet alike.
	Notify    bool `datastore:"notify,noindex,omitempty"`
	NoReposts bool `datastore:"noReposts,noindex,omitempty"`
	// Celebrity: the followee is a celebrity (celebrity.go), whose posts
	// the follower's home merges in; indexed, for CelebritiesFollowed.
	Celebrity bool `datastore:"celebrity,omitempty"`
}

// Save saves a follow; a membership's follower and followee are saved
// as list and member, so that no query of follows finds it.
func (f *Follow) Save() ([]datastore.Property, error) {
	ps, err := datastore.SaveStruct(f)
	if err != nil || !IsReader(f.Follower) {
		return ps, err
	}
	for i := range ps {
		switch ps[i].Name {
		case "follower":
			ps[i].Name = listProp
		case "followee":
			ps[i].Name = memberProp
		}
	}
	return ps, nil
}

// Load loads a follow or a membership.
func (f *Follow) Load(ps []datastore.Property) error {
	for i := range ps {
		switch ps[i].Name {
		case listProp:
			ps[i].Name = "follower"
		case memberProp:
			ps[i].Name = "followee"
		}
	}
	return datastore.LoadStruct(f, ps)
}

// chunkKey returns the key of the chunk holding the follower.
func (f *Follow) chunkKey(db *store.DB) *datastore.Key {
	return ChunkKey(db, f.Followee, f.Chunk)
}

// Gen returns the generation of a follow: its creation time in
// microseconds, the precision Datastore keeps.
func (f Follow) Gen() int64 { return f.Created.UnixMicro() }

// InChunk returns the follower chunk that holds the follower (pair.Link).
func (f *Follow) InChunk() int { return f.Chunk }

// FollowKey returns the key of follower's follow of followee.
func FollowKey(db *store.DB, follower, followee string) *datastore.Key {
	return db.NameKey(KindFollow, follower+"_"+followee, nil)
}

// IndexKey returns the key of a user's follower index.
func IndexKey(db *store.DB, user string) *datastore.Key {
	return db.NameKey(KindFollowerIndex, user, nil)
}

// ChunkKey returns the key of a user's follower chunk n, a child of their
// index.
func ChunkKey(db *store.DB, user string, n int) *datastore.Key {
	return db.NameKey(KindFollowerChunk, strconv.Itoa(n), IndexKey(db, user))
}

// EndedKey returns the key of follower's history with followee.
func EndedKey(db *store.DB, follower, followee string) *datastore.Key {
	return db.NameKey(KindFollowEnded, follower+"_"+followee, nil)
}

// Jobs are the jobs a change of the graph needs, enqueued before it
// commits (package rebuild).
type Jobs interface {
	// CopyLimit checks a follow's copyLimit (nil: the default) and
	// returns the one to use; 0 copies nothing.
	CopyLimit(limit *int) (int, error)
	// Followed enqueues the copying of followee's newest limit
	// activities to follower, for the follow of generation gen.
	Followed(ctx context.Context, follower, followee string, gen int64, limit int) error
	// Unfollowed enqueues the removal of follower from followee's
	// activities, named removal.
	Unfollowed(ctx context.Context, follower, followee string, removal int64) error
}

// Service manages follows.
type Service struct {
	db    *store.DB
	ids   *ids.Generator // lists' ids
	notes *notifications.Service
	jobs  Jobs
	queue queue.Queue // for the unlock jobs
	now   func() time.Time
	// remote, when set, tells other servers of what their people's
	// follows became (package federation).
	remote *outbox.Jobs
}

// New returns a Service.
//
// remote, when the deployment federates, makes the jobs that tell other
// servers of follows, decisions and blocks of their people (nil: none).
func New(db *store.DB, gen *ids.Generator, notes *notifications.Service, jobs Jobs, q queue.Queue, remote *outbox.Jobs) (*Service, error) {
	if db == nil || gen == nil || notes == nil || jobs == nil || q == nil {
		return nil, errors.New("graph.New: nil dependency")
	}
	return &Service{db: db, ids: gen, notes: notes, jobs: jobs, queue: q, remote: remote, now: time.Now}, nil
}

// copying is the job that copies followee's newest limit activities to
// follower, for the follow of generation gen, to enqueue ahead of its
// commit (queue.Ahead).
func (s *Service) copying(follower, followee string, gen int64, limit int) queue.Pending {
	return queue.PendingFunc(fmt.Sprintf("followed/%s/%s/%d", follower, followee, gen), func(ctx context.Context) error {
		return s.jobs.Followed(ctx, follower, followee, gen, limit)
	})
}

// removing is the job that removes follower from followee's activities,
// named removal, to enqueue ahead of the commit that ends the follow.
func (s *Service) removing(follower, followee string, removal int64) queue.Pending {
	return queue.PendingFunc(fmt.Sprintf("unfollowed/%s/%s/%d", follower, followee, removal), func(ctx context.Context) error {
		return s.jobs.Unfollowed(ctx, follower, followee, removal)
	})
}

// Follow makes follower follow followee and returns the followee, as Ask
// does, whatever Ask's outcome.
func (s *Service) Follow(ctx context.Context, follower, followee string, copyLimit *int) (accounts.Person, error) {
	p, _, err := s.Ask(ctx, follower, followee, copyLimit)
	return p, err
}

// Ask makes follower follow followee and returns the followee. It
// enqueues the job that copies the followee's newest copyLimit activities
// (nil: the default; 0: none) before the commit, and notifies the followee
// in the same transaction. Following again changes nothing. A followee
// who locked their account gets a request instead (Requested), which
// they decide.
func (s *Service) Ask(ctx context.Context, follower, followee string, copyLimit *int) (accounts.Person, Outcome, error) {
	limit, err := s.jobs.CopyLimit(copyLimit)
	if err != nil {
		return accounts.Person{}, Followed, err
	}
	if follower == followee {
		return accounts.Person{}, Followed, ErrSelfFollow
	}
	for attempt := 0; ; attempt++ {
		p, out, err := s.follow(ctx, follower, followee, limit, false)
		if errors.Is(err, errLockChanged) && attempt < 3 {
			continue
		}
		if errors.Is(err, errLockChanged) {
			err = derrors.New(derrors.Unavailable, "the person is locking or unlocking their account: try again")
		}
		return p, out, err
	}
}

// follow makes follower follow followee, or asks to (request) if followee
// is locked, unless approval: then it is followee's approval of the
// pending request, which it ends.
func (s *Service) follow(ctx context.Context, follower, followee string, limit int, approval bool) (accounts.Person, Outcome, error) {
	// A follow that exists, or a followee that does not, or a block,
	// needs no job. The same lookup reads the followee's index, so that
	// the transaction reads the chunk it writes in its one lookup.
	var (
		seen      Index
		seenChunk Chunk
		hint      int
	)
	l := s.db.Lookup()
	f := l.Add(FollowKey(s.db, follower, followee), &Follow{})
	to := accounts.Read(l, followee)
	blocked := blocks.ReadBetween(l, follower, followee)
	l.Add(IndexKey(s.db, followee), &seen)
	l.Then(func() {
		// The chunk this follow goes to, and whether it has room: read
		// here, outside the transaction, which writes it blind.
		hint = seen.chunkFor()
		l.Add(seen.chunkKey(s.db, followee, hint), &seenChunk)
	})
	if err := l.Run(ctx); err != nil {
		return accounts.Person{}, Followed, fmt.Errorf("graph.Follow(%s, %s): %w", follower, followee, err)
	}
	p, found := to.Person()
	switch ask, err := decideAsk(askFacts{approval: approval, found: found, seen: to.SeenBy(follower), exists: f.Found(),
		blocked: blocked.Any(), locked: to.Standing().Locked}); {
	case err != nil:
		return accounts.Person{}, Followed, err
	case ask == askAlready:
		return p, Followed, nil // following already: nothing to do
	case ask == askRequest:
		return s.request(ctx, follower, followee, limit, p.Remote())
	}
	created := s.now().UTC().Truncate(time.Microsecond)
	// One follow notification per pair and UTC day: following, unfollowing
	// and following again is no megaphone. An approval notifies no one:
	// the followee made it.
	event := notifications.Event{Type: notifications.Follow, ActorID: follower, Recipients: []string{followee},
		ID: fmt.Sprintf("follow-%s-%s-%s", follower, followee, created.UTC().Format("20060102"))}
	var expected []queue.Pending
	if limit > 0 {
		expected = append(expected, s.copying(follower, followee, created.UnixMicro(), limit))
	}
	if !approval {
		expected = append(expected, s.notes.Expecting(event))
	} else if s.remote != nil {
		expected = append(expected, s.remote.Answering(follower, followee, true))
	}
	var jobs queue.Ahead
	err := jobs.Commit(ctx, expected, func() error {
		return s.db.Update(ctx, func(tx *store.Tx) error {
			r, err := s.readFollow(ctx, tx, follower, followee, approval, event)
			if err != nil {
				return err
			}
			switch step, err := decideFollow(r.facts); {
			case err != nil:
				return err
			case step == followEndRequest:
				return endRequest(tx, follower, followee)
			case step == followNothing:
				return nil
			}
			return s.writeFollow(tx, r, Follow{Follower: follower, Followee: followee, Created: created}, hint, seenChunk)
		})
	})
	if errors.Is(err, errLockChanged) || errors.Is(err, ErrNoRequest) {
		return accounts.Person{}, Followed, err
	}
	if err != nil {
		return accounts.Person{}, Followed, fmt.Errorf("graph.Follow(%s, %s): %w", follower, followee, err)
	}
	p, err = s.load(ctx, followee)
	return p, Followed, err
}

// askFacts is what a follow reads before its transaction.
type askFacts struct {
	approval bool // the followee approves a request
	found    bool // the followee is there
	seen     bool // and the follower may see them (not suspended)
	exists   bool // the follow
	blocked  bool // either way
	locked   bool // the followee's account
}

type askStep int

const (
	askFollow  askStep = iota // on to the transaction
	askAlready                // following already
	askRequest                // a request, for a locked account
)

// decideAsk decides, before its transaction, what a follow does.
func decideAsk(f askFacts) (askStep, error) {
	switch {
	// A follow asked for of someone suspended finds no one there; an
	// approval is the followee's to make, whoever the follower is now.
	case !f.found, !f.approval && !f.seen:
		return askFollow, accounts.ErrNoSuchPerson
	case f.exists && !f.approval:
		return askAlready, nil
	case f.blocked:
		return askFollow, blocks.ErrBlocked
	case f.locked && !f.approval:
		return askRequest, nil
	}
	return askFollow, nil
}

// followRead is what a follow's transaction read.
type followRead struct {
	facts    followFacts
	idx      Index
	ended    pair.Ended
	from, to *accounts.Record
	note     *notifications.Pending
}

func (s *Service) readFollow(ctx context.Context, tx *store.Tx, follower, followee string, approval bool, event notifications.Event) (*followRead, error) {
	// Both people are read, to see that they are there (their Users
	// change only when they do); their counts change by increments
	// that read nothing, so a celebrity's followers do not wait on
	// each other's locks.
	r := &followRead{facts: followFacts{approval: approval}}
	l := tx.Lookup()
	exists := l.Add(FollowKey(s.db, follower, followee), &Follow{})
	r.from, r.to = accounts.Read(l, follower), accounts.Read(l, followee)
	l.Add(IndexKey(s.db, followee), &r.idx)
	if !approval {
		r.note = s.notes.PrepareChecked(l, event, r.from)
	}
	l.Add(EndedKey(s.db, follower, followee), &r.ended)
	blocked := blocks.ReadBetween(l, follower, followee)
	var asked store.Ref // read by an approval alone
	if approval {
		asked = l.Add(RequestKey(s.db, follower, followee), &Request{})
	}
	if err := l.Run(ctx); err != nil {
		return nil, err
	}
	r.facts.fromExists, r.facts.fromMayAct = r.from.Exists(), r.from.MayAct()
	r.facts.toExists, r.facts.toSeen, r.facts.toLocked = r.to.Exists(), r.to.SeenBy(follower), r.to.Standing().Locked
	r.facts.exists, r.facts.blocked = exists.Found(), blocked.Any()
	r.facts.asked = approval && asked.Found()
	return r, nil
}

// followFacts is what a follow's transaction decides on.
type followFacts struct {
	approval                   bool
	fromExists                 bool
	fromMayAct                 error // the follower's standing
	toExists, toSeen, toLocked bool
	exists                     bool // the follow
	asked                      bool // the request an approval approves
	blocked                    bool
}

type followStep int

const (
	followWrite      followStep = iota // the follow is written
	followNothing                      // nothing to do
	followEndRequest                   // the follow is there: its request ends
)

// decideFollow decides what a follow's transaction writes.
func decideFollow(f followFacts) (followStep, error) {
	switch {
	case !f.fromExists:
		return followNothing, accounts.ErrBadToken // deleted meanwhile
	case !f.approval && f.fromMayAct != nil:
		return followNothing, f.fromMayAct // the follower acts: suspended
	case !f.toExists, !f.approval && !f.toSeen:
		return followNothing, accounts.ErrNoSuchPerson // gone, or suspended: not there
	case f.exists && f.approval && f.asked:
		return followEndRequest, nil
	case f.exists:
		return followNothing, nil // followed meanwhile (or approved: a retry after the commit)
	case f.approval && !f.asked:
		return followNothing, ErrNoRequest // withdrawn, decided or erased meanwhile
	case f.blocked:
		return followNothing, blocks.ErrBlocked
	case !f.approval && f.toLocked:
		return followNothing, errLockChanged // locked meanwhile: a request
	}
	return followWrite, nil
}

// writeFollow writes follow, read as r says, in tx.
func (s *Service) writeFollow(tx *store.Tx, r *followRead, follow Follow, hint int, seenChunk Chunk) error {
	if err := s.join(tx, &follow, r.idx, hint, seenChunk, &r.ended); err != nil {
		return err
	}
	follower, followee := follow.Follower, follow.Followee
	if err := r.from.Count(tx, 0, 1); err != nil {
		return err
	}
	if err := r.to.Count(tx, 1, 0); err != nil {
		return err
	}
	if r.facts.approval {
		return endRequest(tx, follower, followee)
	}
	_, err := r.note.Write(tx)
	return err
}

// join writes, in tx, follow and its follower in the followee's last
// chunk (idx, as tx read it; hint and seenChunk, that chunk as read
// before tx), and the pair's history ended (as tx read it) should a
// removal be under way: a follow's, or a list's membership (lists.go).
func (s *Service) join(tx *store.Tx, follow *Follow, idx Index, hint int, seenChunk Chunk, ended *pair.Ended) error {
	follower, followee := follow.Follower, follow.Followee
	// A celebrity's follow is marked as it begins: read here, in tx, so
	// that the job that marks the follows of a new celebrity, which reads
	// their chunks after their mark commits, misses no follow.
	var c Celebrity
	celebrity, err := tx.Get(CelebrityKey(s.db, followee), &c)
	if err != nil {
		return err
	}
	follow.Celebrity = celebrity
	keys := []*datastore.Key{FollowKey(s.db, follower, followee)}
	vals := []any{follow}
	// The follower joins its chunk by transforms that read nothing,
	// unless the index moved on since it was read, or the chunk is
	// full (once in ChunkCap follows): then the chunk is read here,
	// and a full one is followed by a new one, written whole with the
	// index (so two follows opening one conflict on the index).
	gen, now := follow.Created.UnixMicro(), s.now().UnixMicro()
	n, chunk, joins := idx.chunkFor(), seenChunk, []datastore.PropertyTransform(nil)
	if n != hint {
		chunk = Chunk{}
		if _, err := tx.Get(idx.chunkKey(s.db, followee, n), &chunk); err != nil {
			return err
		}
	}
	if len(chunk.IDs) < ChunkCap {
		joins = chunk.joins(follower, gen, now)
	} else {
		n, chunk = idx.chunks(), Chunk{}
		chunk.add(follower, gen)
		idx.Count = n + 1
		keys, vals = append(keys, idx.chunkKey(s.db, followee, n), IndexKey(s.db, followee)), append(vals, &chunk, &idx)
	}
	follow.Chunk = n
	if ended.Begin(gen) {
		// A removal is under way: it must spare what this follow sees.
		ended.Of(follower, followee)
		keys, vals = append(keys, EndedKey(s.db, follower, followee)), append(vals, ended)
	}
	if err := tx.PutMulti(keys, vals); err != nil {
		return err
	}
	if joins != nil {
		return tx.TransformAny(idx.chunkKey(s.db, followee, n), joins...)
	}
	return nil
}

// load reads a person with exact counts after the commit of a change that
// counted them.
func (s *Service) load(ctx context.Context, id string) (accounts.Person, error) {
	p, ok, err := accounts.Load(ctx, s.db, id)
	if err == nil && !ok {
		err = accounts.ErrNoSuchPerson
	}
	return p, err
}

// Unfollow ends follower's follow of followee, if there is one, or their
// pending request to follow them. Unless
// keepHistory, it enqueues, before the commit, the job that removes
// follower from every one of followee's activities.
func (s *Service) Unfollow(ctx context.Context, follower, followee string, keepHistory bool) error {
	for attempt := 0; ; attempt++ {
		err := s.unfollow(ctx, follower, followee, keepHistory)
		if errors.Is(err, errApprovedMeanwhile) && attempt < 3 {
			continue // the follow an approval began is ended
		}
		if errors.Is(err, errApprovedMeanwhile) {
			err = derrors.New(derrors.Unavailable, "the request is being approved: try again")
		}
		return err
	}
}

// errApprovedMeanwhile says a request an unfollow found pending, and was
// to withdraw, was approved in between: the follow it began is what the
// unfollow ends.
var errApprovedMeanwhile = errors.New("graph: the request was approved meanwhile")

func (s *Service) unfollow(ctx context.Context, follower, followee string, keepHistory bool) error {
	// With federation on, the followee's card says whether they are of
	// another server, whose Undo is sent: read in the same lookup (off,
	// it is not read at all).
	l := s.db.Lookup()
	follows := Follows(l, follower, followee)
	var to *accounts.Record
	if s.remote != nil {
		to = accounts.Read(l, followee)
	}
	if err := l.Run(ctx); err != nil {
		return err
	}
	var expected []queue.Pending
	if to != nil && to.Remote() {
		expected = append(expected, s.remote.Ending(follower, followee))
	}
	if !follows.Found() {
		var jobs queue.Ahead // a request, if any, is withdrawn
		return jobs.Commit(ctx, expected, func() error { return s.withdraw(ctx, follower, followee, true) })
	}
	// The followee leaves the follower's lists first: a list holds none
	// but people its owner follows.
	if err := s.leaveLists(ctx, follower, followee); err != nil {
		return fmt.Errorf("graph.Unfollow(%s, %s): %w", follower, followee, err)
	}
	var removal int64
	if !keepHistory {
		removal = s.now().UnixMicro()
		expected = append(expected, s.removing(follower, followee, removal))
	}
	var jobs queue.Ahead
	err := jobs.Commit(ctx, expected, func() error {
		return s.db.Update(ctx, func(tx *store.Tx) error {
			var f Follow
			l := tx.Lookup()
			exists := l.Add(FollowKey(s.db, follower, followee), &f)
			from, to := accounts.Read(l, follower), accounts.Read(l, followee)
			if err := l.Run(ctx); err != nil || !exists.Found() {
				return err
			}
			return s.end(ctx, tx, []*Follow{&f}, removal, keepHistory, map[string]*accounts.Record{follower: from, followee: to})
		})
	})
	if err != nil {
		return fmt.Errorf("graph.Unfollow(%s, %s): %w", follower, followee, err)
	}
	return nil
}

// end ends follows read in tx: it takes each follower out of its
// followee's chunk (leaving a trace there if keep: an unfollow that keeps
// the copies), records the pair's history (naming removal, when not
// zero, as the job that removes the copies), counts both people in people
// (those that exist: a person erased is not counted) and deletes the
// follows. people must hold both ends of every follow.
func (s *Service) end(ctx context.Context, tx *store.Tx, fs []*Follow, removal int64, keep bool, people map[string]*accounts.Record) error {
	l := tx.Lookup()
	ended := make([]pair.Ended, len(fs))
	for i, f := range fs {
		l.Add(EndedKey(s.db, f.Follower, f.Followee), &ended[i])
	}
	if err := l.Run(ctx); err != nil {
		return err
	}
	var keys, gone []*datastore.Key
	var vals []any
	now := s.now().UnixMicro()
	// One mutation per chunk, however many of the follows it holds.
	chunks := map[string]*datastore.Key{}
	leaving := map[string][]datastore.PropertyTransform{}
	followers, following := map[string]int64{}, map[string]int64{}
	for i, f := range fs {
		k := f.chunkKey(s.db)
		chunks[k.String()] = k
		leaving[k.String()] = append(leaving[k.String()], leaves(f.Follower, f.Gen(), now, keep)...)
		ended[i].End(f.Gen(), removal)
		ended[i].Of(f.Follower, f.Followee)
		keys, vals = append(keys, EndedKey(s.db, f.Follower, f.Followee)), append(vals, &ended[i])
		gone = append(gone, FollowKey(s.db, f.Follower, f.Followee))
		followers[f.Followee]--
		following[f.Follower]--
	}
	for name, k := range chunks {
		if err := tx.TransformAny(k, leaving[name]...); err != nil {
			return err
		}
	}
	// One write per person, however many of the follows they are in.
	for id, r := range people {
		if followers[id] == 0 && following[id] == 0 {
			continue
		}
		if err := r.Count(tx, followers[id], following[id]); err != nil {
			return err
		}
	}
	if err := tx.PutMulti(keys, vals); err != nil {
		return err
	}
	return tx.DeleteMulti(gone)
}

// Erase ends up to n follows of a deleted user, both ways, and returns how
// many it ended: each leaves its follower chunk, and the other person's
// count drops. It enqueues no job: the erasure deletes the user's
// activities and takes the user out of every audience itself. Nothing
// new appears once the user is gone: a follow checks both people in its
// transaction.
func (s *Service) Erase(ctx context.Context, user string, n int) (int, error) {
	done := 0
	for _, field := range []string{"follower", "followee"} {
		q := s.db.Query(KindFollow).FilterField(field, "=", user).KeysOnly()
		k, err := s.db.Drain(ctx, q, n-done, eraseBatch, func(keys []*datastore.Key) error {
			return s.db.Update(ctx, func(tx *store.Tx) error {
				l := tx.Lookup()
				fs := make([]Follow, len(keys))
				found := make([]store.Ref, len(keys))
				people := map[string]*accounts.Record{}
				for i, k := range keys {
					found[i] = l.Add(k, &fs[i])
					follower, followee, _ := strings.Cut(k.Name, "_")
					for _, id := range []string{follower, followee} {
						if people[id] == nil {
							people[id] = accounts.Read(l, id)
						}
					}
				}
				if err := l.Run(ctx); err != nil {
					return err
				}
				var ending []*Follow
				for i := range fs {
					if found[i].Found() {
						ending = append(ending, &fs[i])
					}
				}
				return s.end(ctx, tx, ending, 0, false, people)
			})
		})
		if done += k; err != nil {
			return done, fmt.Errorf("graph.Erase(%s): %w", user, err)
		}
		if done >= n {
			break
		}
	}
	return done, nil
}

// EraseRest deletes, once Erase has ended every follow of a deleted user,
// up to n of what is left of them: the follow requests they made or
// received, their follower index and chunks, their mark as a celebrity,
// and the history of every pair they were in. It returns how many it
// deleted.
func EraseRest(ctx context.Context, db *store.DB, user string, n int) (int, error) {
	keys, err := eraseRequests(ctx, db, user, n)
	if err == nil && len(keys) < n {
		var ended []*datastore.Key
		ended, _, err = db.KeysFrom(ctx, db.Query(KindFollowEnded).FilterField("pair", "=", user).KeysOnly(), "", n-len(keys))
		keys = append(keys, ended...)
	}
	if err == nil && len(keys) < n {
		var chunks []*datastore.Key
		chunks, _, err = db.KeysFrom(ctx, db.Query(KindFollowerChunk).Ancestor(IndexKey(db, user)).KeysOnly(), "", n-len(keys))
		keys = append(keys, chunks...)
		// Last, the index and the mark, as many as there is room for: a
		// call that deletes fewer than n says nothing is left.
		for _, k := range []*datastore.Key{IndexKey(db, user), CelebrityKey(db, user)} {
			if err == nil && len(keys) < n {
				keys = append(keys, k)
			}
		}
	}
	if err == nil {
		err = db.DeleteMulti(ctx, keys)
	}
	if err != nil {
		return 0, fmt.Errorf("graph.EraseRest(%s): %w", user, err)
	}
	return len(keys), nil
}

// Get returns follower's follow of followee, and whether there is one.
func (s *Service) Get(ctx context.Context, follower, followee string) (Follow, bool, error) {
	var f Follow
	ok, err := s.db.Get(ctx, FollowKey(s.db, follower, followee), &f)
	if err != nil {
		return Follow{}, false, fmt.Errorf("graph.Get: %w", err)
	}
	return f, ok, nil
}

// ReadPair adds follower's follow of followee and its history to a lookup.
func ReadPair(l *store.Lookup, follower, followee string) *pair.Reader[Follow, *Follow] {
	return pair.Read[Follow](l, FollowKey(l.DB(), follower, followee), EndedKey(l.DB(), follower, followee))
}

// FinishRemoval records that the removal of follower's copies of
// followee's activities named removal is done, so the follow jobs that
// wait for it go on.
func FinishRemoval(ctx context.Context, db *store.DB, follower, followee string, removal int64) error {
	return pair.Finish(ctx, db, EndedKey(db, follower, followee), removal)
}

// Following lists whom user follows, newest follow first, as ids.
func (s *Service) Following(ctx context.Context, user string, p store.PageRequest) ([]string, string, error) {
	q := s.db.Query(KindFollow).FilterField("follower", "=", user).Order("-created").KeysOnly()
	return s.page(ctx, q, "following:"+user, p, func(follower, followee string) string { return followee })
}

// Followers lists user's followers, newest first, as ids.
func (s *Service) Followers(ctx context.Context, user string, p store.PageRequest) ([]string, string, error) {
	q := s.db.Query(KindFollow).FilterField("followee", "=", user).Order("-created").KeysOnly()
	return s.page(ctx, q, "followers:"+user, p, func(follower, followee string) string { return follower })
}

func (s *Service) page(ctx context.Context, q *datastore.Query, tag string, p store.PageRequest, pick func(follower, followee string) string) ([]string, string, error) {
	keys, _, next, err := store.Page[Follow](ctx, s.db, q, tag, p)
	if err != nil {
		return nil, "", err
	}
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		follower, followee, _ := strings.Cut(k.Name, "_")
		out = append(out, pick(follower, followee))
	}
	return out, next, nil
}

// Each calls f with each person user follows (or, with followers, each of
// user's followers) and since when, newest follow first, a page at a time
// (for an export).
func Each(ctx context.Context, db *store.DB, user string, followers bool, f func(id string, since time.Time) error) error {
	field := "follower"
	if followers {
		field = "followee"
	}
	q := db.Query(KindFollow).FilterField(field, "=", user).Order("-created")
	return store.Each[Follow](ctx, db, q, 500, func(_ *datastore.Key, fl *Follow) error {
		if followers {
			return f(fl.Follower, fl.Created)
		}
		return f(fl.Followee, fl.Created)
	})
}
