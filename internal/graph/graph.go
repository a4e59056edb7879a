// Package graph owns who follows whom.
//
// Entities:
//   - Follow/{follower}_{followee}: one follow, for the @friends and
//     @followers lists (queries on follower or followee, newest first).
//   - FollowerIndex/{user}: how many ids each of the user's follower chunks
//     holds.
//   - FollowerIndex/{user}/FollowerChunk/{n}: up to ChunkCap follower ids,
//     unindexed; a spread user's later chunks are root entities,
//     FollowerChunk/{user}_{n} (see Index: a celebrity's follows go into
//     lanes that do not contend).
//
// The chunks exist so that posting never queries the follow graph: a post
// copies chunk n of its author's followers into audience chunk n of the
// activity by key lookup (package activities). A query over every follower
// would cost time in proportion to the follower count, and the Datastore
// emulator takes minutes over 100,000 matches. Follow and Unfollow keep the
// Follow entity, the chunk, the index and both users' counts (through
// package accounts) in one transaction, so they always agree.
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
	"slices"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/accounts"
	"socialstream/internal/blocks"
	"socialstream/internal/derrors"
	"socialstream/internal/notifications"
	"socialstream/internal/pair"
	"socialstream/internal/store"
)

// Kinds of the entities this package owns.
const (
	KindFollow        = "Follow"
	KindFollowerIndex = "FollowerIndex"
	KindFollowerChunk = "FollowerChunk"
	KindFollowEnded   = "FollowEnded"
)

// ChunkCap is the number of follower ids one chunk holds: one fewer than an
// audience chunk (activities.AudienceChunkSize, which explains the number),
// since audience chunk 0 also holds the author.
const ChunkCap = 4999

// ErrSelfFollow refuses a follow of oneself.
var ErrSelfFollow = derrors.New(derrors.InvalidArgument, "you cannot follow yourself")

// Follow is one follow.
type Follow struct {
	Follower string    `datastore:"follower"`
	Followee string    `datastore:"followee"`
	Created  time.Time `datastore:"created"`
	Chunk    int       `datastore:"chunk,noindex"` // the follower chunk holding Follower
	Root     bool      `datastore:"root,noindex"`  // that chunk is a root entity (LaneChunkKey)
}

// chunkKey returns the key of the chunk holding the follower.
func (f *Follow) chunkKey(db *store.DB) *datastore.Key {
	if f.Root {
		return LaneChunkKey(db, f.Followee, f.Chunk)
	}
	return ChunkKey(db, f.Followee, f.Chunk)
}

// Gen returns the generation of a follow: its creation time in
// microseconds, the precision Datastore keeps.
func (f Follow) Gen() int64 { return f.Created.UnixMicro() }

// InChunk returns the follower chunk that holds the follower (pair.Link).
func (f *Follow) InChunk() int { return f.Chunk }

// Index records a user's follower chunks.
//
// A user starts with one lane: a follow adds its follower to the first
// chunk with room, and Sizes says how many ids each chunk holds, kept by
// every follow and unfollow. When follows of the user contend (a celebrity
// gaining followers fast: a follow's transaction retried), spread gives
// the user Lanes lanes, each filling a fresh chunk of its own: a follow
// adds its follower to the chunk of the lane its id hashes to, writing
// that chunk alone, and opens the lane a new chunk when it is full (the
// only follow that writes the Index). No lane fills chunk 0, which a post
// reads in its transaction, so the follows do not slow the user's posts.
// Spread, Sizes keeps only the chunk count (its length); unfollows leave
// their holes.
type Index struct {
	Sizes []int64 `datastore:"sizes,noindex"`
	// Lanes are the chunks each lane fills; empty: one lane, unspread.
	Lanes []int64 `datastore:"lanes,noindex"`
	// RootFrom, when set, is the first chunk stored as a root entity
	// (LaneChunkKey) rather than a child of the index: the chunks spread
	// made and those after. The emulator, like legacy Datastore,
	// serialises transactions on one entity group, which would make the
	// lanes one hot spot again.
	RootFrom int64 `datastore:"rootFrom,noindex"`
}

// chunkKey returns the key of the user's chunk n.
func (x *Index) chunkKey(db *store.DB, user string, n int) *datastore.Key {
	if x.root(n) {
		return LaneChunkKey(db, user, n)
	}
	return ChunkKey(db, user, n)
}

// root reports whether chunk n is a root entity.
func (x *Index) root(n int) bool { return x.RootFrom > 0 && int64(n) >= x.RootFrom }

// Lanes is how many lanes a spread user's follows fill.
const Lanes = accounts.CountShards

// chunkFor returns the chunk a follow by follower goes to, or -1 for a
// new one at the end.
func (x *Index) chunkFor(follower string) int {
	if len(x.Lanes) > 0 {
		return int(x.Lanes[store.Shard(follower, len(x.Lanes))])
	}
	return slices.IndexFunc(x.Sizes, func(size int64) bool { return size < ChunkCap })
}

// Chunk is one follower chunk.
type Chunk struct {
	IDs []string `datastore:"ids,noindex"`
	// Since holds when each follow of IDs began (Follow.Gen), in the same
	// order; an id past its end (a chunk of an earlier version) is 0. A
	// fan-out job, which may run long after its post, copies only the
	// followers whose follow began before the post.
	Since []int64 `datastore:"since,noindex"`
	// Left are followers who unfollowed keeping their copies, with when
	// their follow began and ended (see leave).
	Left      []string `datastore:"left,noindex"`
	LeftSince []int64  `datastore:"leftSince,noindex"`
	LeftAt    []int64  `datastore:"leftAt,noindex"`
}

// A chunk keeps a trace of a follower who unfollowed keeping their copies
// for leftTTL, and of leftMax of them at most: a fan-out job of a post made
// while they followed, which runs after they left, still copies it to them.
// A fan-out job that runs later than that (a week of retries) misses them.
const (
	leftTTL = 7 * 24 * time.Hour
	leftMax = 1000
)

// leave keeps a trace of a follower whose follow, begun at since, ended at
// now, keeping the copies, and forgets traces past leftTTL or leftMax.
func (c *Chunk) leave(id string, since, now int64) {
	c.Left, c.LeftSince, c.LeftAt = append(c.Left, id), append(c.LeftSince, since), append(c.LeftAt, now)
	drop := max(0, len(c.Left)-leftMax)
	for drop < len(c.LeftAt) && c.LeftAt[drop] < now-leftTTL.Microseconds() {
		drop++
	}
	c.Left, c.LeftSince, c.LeftAt = c.Left[drop:], c.LeftSince[drop:], c.LeftAt[drop:]
}

// add adds a follower whose follow began at since.
func (c *Chunk) add(id string, since int64) {
	for len(c.Since) < len(c.IDs) {
		c.Since = append(c.Since, 0)
	}
	c.IDs, c.Since = append(c.IDs, id), append(c.Since[:len(c.IDs)], since)
}

// remove takes a follower out.
func (c *Chunk) remove(id string) {
	if i := slices.Index(c.IDs, id); i >= 0 {
		c.IDs = slices.Delete(c.IDs, i, i+1)
		if i < len(c.Since) {
			c.Since = slices.Delete(c.Since, i, i+1)
		}
	}
}

// before returns the followers at time t: whose follow began before t,
// and those who left since keeping their copies (one may be in both, after
// following again; audience merges drop the second).
func (c *Chunk) before(t int64) []string {
	var out []string
	for i, id := range c.IDs {
		if i >= len(c.Since) || c.Since[i] < t {
			out = append(out, id)
		}
	}
	for i, id := range c.Left {
		if i < len(c.LeftSince) && i < len(c.LeftAt) && c.LeftSince[i] < t && t <= c.LeftAt[i] {
			out = append(out, id)
		}
	}
	return out
}

// FollowKey returns the key of follower's follow of followee.
func FollowKey(db *store.DB, follower, followee string) *datastore.Key {
	return db.NameKey(KindFollow, follower+"_"+followee, nil)
}

// IndexKey returns the key of a user's follower index.
func IndexKey(db *store.DB, user string) *datastore.Key {
	return db.NameKey(KindFollowerIndex, user, nil)
}

// ChunkKey returns the key of a user's follower chunk n, a child of their
// index, as chunks are until the user is spread (see Index.RootFrom).
func ChunkKey(db *store.DB, user string, n int) *datastore.Key {
	return db.NameKey(KindFollowerChunk, strconv.Itoa(n), IndexKey(db, user))
}

// LaneChunkKey returns the key of a spread user's follower chunk n, a root
// entity.
func LaneChunkKey(db *store.DB, user string, n int) *datastore.Key {
	return db.NameKey(KindFollowerChunk, user+"_"+strconv.Itoa(n), nil)
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
	notes *notifications.Service
	jobs  Jobs
	now   func() time.Time
}

// New returns a Service.
func New(db *store.DB, notes *notifications.Service, jobs Jobs) (*Service, error) {
	if db == nil || notes == nil || jobs == nil {
		return nil, errors.New("graph.New: nil dependency")
	}
	return &Service{db: db, notes: notes, jobs: jobs, now: time.Now}, nil
}

// Follow makes follower follow followee and returns the followee. It
// enqueues the job that copies the followee's newest copyLimit activities
// (nil: the default; 0: none) before the commit, and notifies the followee
// in the same transaction. Following again changes nothing.
func (s *Service) Follow(ctx context.Context, follower, followee string, copyLimit *int) (accounts.Person, error) {
	limit, err := s.jobs.CopyLimit(copyLimit)
	if err != nil {
		return accounts.Person{}, err
	}
	if follower == followee {
		return accounts.Person{}, ErrSelfFollow
	}
	// A follow that exists, or a followee that does not, or a block,
	// needs no job. The same lookup reads the followee's index and how
	// their count is kept, so that the transaction reads the chunk and
	// count shard it writes in its one lookup.
	var seen struct {
		idx Index
		u   int // the followee's count shards
	}
	l := s.db.Lookup()
	f := l.Add(FollowKey(s.db, follower, followee), &Follow{})
	to := accounts.Read(l, followee)
	blocked := blocks.ReadBetween(l, follower, followee)
	l.Add(IndexKey(s.db, followee), &seen.idx)
	if err := l.Run(ctx); err != nil {
		return accounts.Person{}, fmt.Errorf("graph.Follow(%s, %s): %w", follower, followee, err)
	}
	seen.u = to.Shards()
	if p, ok := to.Person(); !ok {
		return accounts.Person{}, accounts.ErrNoSuchPerson
	} else if f.Found() {
		return p, nil // following already: nothing to do
	} else if blocked.Any() {
		return accounts.Person{}, blocks.ErrBlocked
	}
	created := s.now().UTC().Truncate(time.Microsecond)
	if limit > 0 {
		if err := s.jobs.Followed(ctx, follower, followee, created.UnixMicro(), limit); err != nil {
			return accounts.Person{}, err
		}
	}
	// One follow notification per pair and UTC day: following, unfollowing
	// and following again is no megaphone.
	event := notifications.Event{Type: notifications.Follow, ActorID: follower, Recipients: []string{followee},
		ID: fmt.Sprintf("follow-%s-%s-%s", follower, followee, created.UTC().Format("20060102"))}
	if err := s.notes.Expect(ctx, event); err != nil {
		return accounts.Person{}, err
	}
	var person accounts.Person
	var exact bool
	attempts := 0
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		attempts++
		// Spread, the transaction reads nothing every other follow of the
		// followee reads too (their User, their index): only its lane's
		// chunk and count shard, and the follower's own entities.
		spread := seen.u > 0 && len(seen.idx.Lanes) > 0
		var (
			f     Follow
			idx   Index
			ended pair.Ended
			chunk Chunk
			note  *notifications.Pending
			l     = tx.Lookup()
		)
		exists := l.Add(FollowKey(s.db, follower, followee), &f)
		from, to := accounts.Read(l, follower), accounts.ReadCounted(l, followee, follower, seen.u)
		if spread {
			note = s.notes.PrepareChecked(l, event)
		} else {
			l.Add(IndexKey(s.db, followee), &idx)
			note = s.notes.Prepare(l, event)
		}
		l.Add(EndedKey(s.db, follower, followee), &ended)
		blocked := blocks.ReadBetween(l, follower, followee)
		// The chunk this follow goes to, as the index read before said.
		hint := seen.idx.chunkFor(follower)
		if hint >= 0 {
			l.Add(seen.idx.chunkKey(s.db, followee, hint), &chunk)
		}
		if err := l.Run(ctx); err != nil {
			return err
		}
		person, _ = to.Person()
		exact = to.Exact()
		switch {
		case exists.Found():
			return nil // followed meanwhile
		case !from.Exists():
			return accounts.ErrBadToken // deleted meanwhile
		case !to.Exists():
			return accounts.ErrNoSuchPerson
		case blocked.Any():
			return blocks.ErrBlocked
		}
		keys := []*datastore.Key{FollowKey(s.db, follower, followee)}
		vals := []any{&Follow{Follower: follower, Followee: followee, Created: created}}
		n, writeIndex := hint, !spread
		if spread && (n < 0 || len(chunk.IDs) >= ChunkCap) {
			// The lane's chunk is full, or moved on since the index was
			// read: read it now.
			if _, err := tx.Get(IndexKey(s.db, followee), &idx); err != nil {
				return err
			}
		}
		if !spread || n < 0 || len(chunk.IDs) >= ChunkCap {
			seen.idx = idx // a retry reads the chunk this one saw
			if m := idx.chunkFor(follower); m != n {
				n, chunk = m, Chunk{}
				if n >= 0 {
					if _, err := tx.Get(idx.chunkKey(s.db, followee, n), &chunk); err != nil {
						return err
					}
				}
			}
		}
		if n < 0 || len(chunk.IDs) >= ChunkCap {
			// A new chunk: the first lane's, or this lane's next.
			n, chunk, writeIndex = len(idx.Sizes), Chunk{}, true
			idx.Sizes = append(idx.Sizes, 0)
			if len(idx.Lanes) > 0 {
				idx.Lanes[store.Shard(follower, len(idx.Lanes))] = int64(n)
			}
		}
		chunk.add(follower, created.UnixMicro())
		if spread && idx.RootFrom == 0 {
			idx = seen.idx // not read in this transaction: the one read before
		}
		vals[0].(*Follow).Chunk, vals[0].(*Follow).Root = n, idx.root(n)
		keys, vals = append(keys, idx.chunkKey(s.db, followee, n)), append(vals, &chunk)
		if writeIndex {
			if len(idx.Lanes) == 0 {
				idx.Sizes[n] = int64(len(chunk.IDs))
			}
			keys, vals = append(keys, IndexKey(s.db, followee)), append(vals, &idx)
		}
		if ended.Begin(created.UnixMicro()) {
			// A removal is under way: it must spare what this follow sees.
			ended.Of(follower, followee)
			keys, vals = append(keys, EndedKey(s.db, follower, followee)), append(vals, &ended)
		}
		if err := tx.PutMulti(keys, vals); err != nil {
			return err
		}
		if err := from.Count(tx, 0, 1); err != nil {
			return err
		}
		if err := to.Count(tx, 1, 0); err != nil {
			return err
		}
		if !spread {
			seen.u = to.Shards()
		}
		person, _ = to.Person()
		_, err := note.Write(tx)
		return err
	})
	if err != nil {
		return accounts.Person{}, fmt.Errorf("graph.Follow(%s, %s): %w", follower, followee, err)
	}
	if attempts > 1 && seen.u == 0 {
		// Follows of followee contend: spread them. Best effort: the
		// follow is done, and the next contended one tries again.
		_ = s.Spread(ctx, followee)
		exact = false
	}
	if !exact {
		return s.load(ctx, followee)
	}
	return person, nil
}

// load reads a person with exact counts, after a transaction that read
// them without their count shards.
func (s *Service) load(ctx context.Context, id string) (accounts.Person, error) {
	p, ok, err := accounts.Load(ctx, s.db, id)
	if err == nil && !ok {
		err = accounts.ErrNoSuchPerson
	}
	return p, err
}

// Spread gives a user's follows Lanes lanes, each filling a fresh chunk,
// and their count CountShards shards (see Index), unless spread already.
// Follow calls it when follows of the user contend; an operator may call
// it ahead of a known celebrity's launch.
func (s *Service) Spread(ctx context.Context, user string) error {
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		var idx Index
		l := tx.Lookup()
		l.Add(IndexKey(s.db, user), &idx)
		r := accounts.Read(l, user)
		if err := l.Run(ctx); err != nil {
			return err
		}
		if ok, err := accounts.Spread(tx, r); err != nil || !ok || len(idx.Lanes) > 0 {
			return err
		}
		// Lanes open their chunks as their first follows come, at the end:
		// numbers reserved here, so no two lanes share one, and none is
		// chunk 0 (which posts read), nor a child of the index.
		if len(idx.Sizes) == 0 {
			idx.Sizes = []int64{0}
		}
		idx.RootFrom = int64(len(idx.Sizes))
		for range Lanes {
			idx.Lanes = append(idx.Lanes, int64(len(idx.Sizes)))
			idx.Sizes = append(idx.Sizes, 0)
		}
		return tx.Put(IndexKey(s.db, user), &idx)
	})
	if err != nil {
		return fmt.Errorf("graph.Spread(%s): %w", user, err)
	}
	return nil
}

// Unfollow ends follower's follow of followee, if there is one. Unless
// keepHistory, it enqueues, before the commit, the job that removes
// follower from every one of followee's activities.
func (s *Service) Unfollow(ctx context.Context, follower, followee string, keepHistory bool) error {
	if ok, err := s.db.Get(ctx, FollowKey(s.db, follower, followee), &Follow{}); err != nil || !ok {
		return err
	}
	var removal int64
	if !keepHistory {
		removal = s.now().UnixMicro()
		if err := s.jobs.Unfollowed(ctx, follower, followee, removal); err != nil {
			return err
		}
	}
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		var f Follow
		l := tx.Lookup()
		exists := l.Add(FollowKey(s.db, follower, followee), &f)
		from, to := accounts.Read(l, follower), accounts.Read(l, followee)
		if err := l.Run(ctx); err != nil || !exists.Found() {
			return err
		}
		return s.end(ctx, tx, []*Follow{&f}, removal, keepHistory, map[string]*accounts.Record{follower: from, followee: to})
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
	idx := map[string]*Index{}
	idxFound := map[string]store.Ref{}
	chunks := map[*datastore.Key]*Chunk{}
	chunkFound := map[*datastore.Key]store.Ref{}
	chunkKeys := make([]*datastore.Key, len(fs))
	ended := make([]pair.Ended, len(fs))
	for i, f := range fs {
		if idx[f.Followee] == nil {
			idx[f.Followee] = &Index{}
			idxFound[f.Followee] = l.Add(IndexKey(s.db, f.Followee), idx[f.Followee])
		}
		key := f.chunkKey(s.db)
		for k := range chunks {
			if k.Equal(key) {
				key = k
			}
		}
		if chunks[key] == nil {
			chunks[key] = &Chunk{}
			chunkFound[key] = l.Add(key, chunks[key])
		}
		chunkKeys[i] = key
		l.Add(EndedKey(s.db, f.Follower, f.Followee), &ended[i])
	}
	if err := l.Run(ctx); err != nil {
		return err
	}
	var keys, gone []*datastore.Key
	var vals []any
	followers, following := map[string]int64{}, map[string]int64{}
	for i, f := range fs {
		if c := chunks[chunkKeys[i]]; chunkFound[chunkKeys[i]].Found() {
			c.remove(f.Follower)
			if keep {
				c.leave(f.Follower, f.Gen(), s.now().UnixMicro())
			}
			if x := idx[f.Followee]; idxFound[f.Followee].Found() && f.Chunk < len(x.Sizes) {
				x.Sizes[f.Chunk] = int64(len(c.IDs))
			}
		}
		ended[i].End(f.Gen(), removal)
		ended[i].Of(f.Follower, f.Followee)
		keys, vals = append(keys, EndedKey(s.db, f.Follower, f.Followee)), append(vals, &ended[i])
		gone = append(gone, FollowKey(s.db, f.Follower, f.Followee))
		followers[f.Followee]--
		following[f.Follower]--
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
	for k, c := range chunks {
		if chunkFound[k].Found() {
			keys, vals = append(keys, k), append(vals, c)
		}
	}
	for user, x := range idx {
		// A spread user's index keeps only the chunk count: unfollows do
		// not write it, as follows do not.
		if idxFound[user].Found() && len(x.Lanes) == 0 {
			keys, vals = append(keys, IndexKey(s.db, user)), append(vals, x)
		}
	}
	if err := tx.PutMulti(keys, vals); err != nil {
		return err
	}
	return tx.DeleteMulti(gone)
}

var errUnplanned = errors.New("graph: a follow to end has no removal job enqueued")

// Block makes blocker block blocked and returns the blocked person. The
// same transaction ends the follows between them both ways, each with the
// job that removes its copies, enqueued before the commit (as an
// unfollow's), so neither sees the other's activities at home; from then
// on neither can follow the other. Blocking again changes nothing.
func (s *Service) Block(ctx context.Context, blocker, blocked string) (accounts.Person, error) {
	if blocker == blocked {
		return accounts.Person{}, blocks.ErrSelfBlock
	}
	removal := s.now().UnixMicro()
	planned := map[string]bool{} // follows whose removal job is enqueued
	var person accounts.Person
	var err error
	for attempt := 0; ; attempt++ {
		l := s.db.Lookup()
		ab, ba := l.Add(FollowKey(s.db, blocker, blocked), &Follow{}), l.Add(FollowKey(s.db, blocked, blocker), &Follow{})
		to := accounts.Read(l, blocked)
		if err := l.Run(ctx); err != nil {
			return accounts.Person{}, fmt.Errorf("graph.Block(%s, %s): %w", blocker, blocked, err)
		}
		if !to.Exists() {
			return accounts.Person{}, accounts.ErrNoSuchPerson
		}
		for _, f := range []struct {
			ref                store.Ref
			follower, followee string
		}{{ab, blocker, blocked}, {ba, blocked, blocker}} {
			if f.ref.Found() && !planned[f.follower] {
				if err := s.jobs.Unfollowed(ctx, f.follower, f.followee, removal); err != nil {
					return accounts.Person{}, err
				}
				planned[f.follower] = true
			}
		}
		err = s.db.Update(ctx, func(tx *store.Tx) error {
			var fab, fba Follow
			l := tx.Lookup()
			ab, ba := l.Add(FollowKey(s.db, blocker, blocked), &fab), l.Add(FollowKey(s.db, blocked, blocker), &fba)
			people := map[string]*accounts.Record{blocker: accounts.Read(l, blocker), blocked: accounts.Read(l, blocked)}
			already := blocks.ReadBetween(l, blocker, blocked)
			if err := l.Run(ctx); err != nil {
				return err
			}
			switch {
			case !people[blocker].Exists():
				return accounts.ErrBadToken // deleted meanwhile
			case !people[blocked].Exists():
				return accounts.ErrNoSuchPerson
			}
			person, _ = people[blocked].Person()
			if already.First() {
				return nil
			}
			var ending []*Follow
			for _, f := range []struct {
				ref    store.Ref
				follow *Follow
			}{{ab, &fab}, {ba, &fba}} {
				if !f.ref.Found() {
					continue
				}
				if !planned[f.follow.Follower] {
					return errUnplanned // followed since the read above
				}
				ending = append(ending, f.follow)
			}
			if len(ending) > 0 {
				if err := s.end(ctx, tx, ending, removal, false, people); err != nil {
					return err
				}
				person, _ = people[blocked].Person()
			}
			return blocks.Set(tx, blocker, blocked, s.now())
		})
		if errors.Is(err, errUnplanned) && attempt < 3 {
			continue
		}
		break
	}
	if err != nil {
		return accounts.Person{}, fmt.Errorf("graph.Block(%s, %s): %w", blocker, blocked, err)
	}
	if person.ID != "" {
		return s.load(ctx, blocked) // with every count shard of a spread person
	}
	return person, nil
}

// Unblock ends blocker's block of blocked, if any. It restores no follow:
// either may follow the other again.
func (s *Service) Unblock(ctx context.Context, blocker, blocked string) error {
	err := s.db.Update(ctx, func(tx *store.Tx) error { return blocks.Clear(tx, blocker, blocked) })
	if err != nil {
		return fmt.Errorf("graph.Unblock(%s, %s): %w", blocker, blocked, err)
	}
	return nil
}

// Blocks reports whether blocker blocks blocked.
func (s *Service) Blocks(ctx context.Context, blocker, blocked string) (bool, error) {
	l := s.db.Lookup()
	b := blocks.ReadBetween(l, blocker, blocked)
	if err := l.Run(ctx); err != nil {
		return false, fmt.Errorf("graph.Blocks: %w", err)
	}
	return b.First(), nil
}

// Blocked lists the people user blocks, newest block first, as ids.
func (s *Service) Blocked(ctx context.Context, user string, p store.PageRequest) ([]string, string, error) {
	return blocks.List(ctx, s.db, user, p)
}

// eraseBatch is how many follows one transaction of an erasure ends.
const eraseBatch = 25

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
// up to n of what is left of them: their follower index and chunks, and
// the history of every pair they were in. It returns how many it deleted.
func EraseRest(ctx context.Context, db *store.DB, user string, n int) (int, error) {
	keys, _, err := db.KeysFrom(ctx, db.Query(KindFollowEnded).FilterField("pair", "=", user).KeysOnly(), "", n)
	if err == nil && len(keys) < n {
		var chunks []*datastore.Key
		chunks, _, err = db.KeysFrom(ctx, db.Query(KindFollowerChunk).Ancestor(IndexKey(db, user)).KeysOnly(), "", n-len(keys))
		keys = append(keys, chunks...)
		var idx Index
		if err == nil && len(keys) < n {
			_, err = db.Get(ctx, IndexKey(db, user), &idx)
		}
		// A spread user's root chunks, those still there (so that the
		// steps move on to the index once they are gone).
		l := db.Lookup()
		var refs []store.Ref
		var roots []*datastore.Key
		for c := idx.RootFrom; err == nil && idx.RootFrom > 0 && c < int64(len(idx.Sizes)) && len(keys)+len(roots) < n; c++ {
			roots = append(roots, LaneChunkKey(db, user, int(c)))
			refs = append(refs, l.Add(roots[len(roots)-1], &Chunk{}))
		}
		if err == nil {
			err = l.Run(ctx)
		}
		for i, r := range refs {
			if r.Found() {
				keys = append(keys, roots[i])
			}
		}
		if err == nil && len(keys) < n {
			keys = append(keys, IndexKey(db, user))
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

// ChunkCount returns how many follower chunks user has.
func ChunkCount(ctx context.Context, db *store.DB, user string) (int, error) {
	var idx Index
	if _, err := db.Get(ctx, IndexKey(db, user), &idx); err != nil {
		return 0, fmt.Errorf("graph.ChunkCount(%s): %w", user, err)
	}
	return len(idx.Sizes), nil
}

// Followers is what a post reads of its author's followers, in its own
// transaction's lookup.
type Followers struct {
	idx    Index
	chunk0 Chunk
}

// ReadFollowers adds user's follower index and first chunk to a lookup.
func ReadFollowers(l *store.Lookup, user string) *Followers {
	f := &Followers{}
	l.Add(IndexKey(l.DB(), user), &f.idx)
	l.Add(ChunkKey(l.DB(), user, 0), &f.chunk0)
	return f
}

// Chunks returns how many follower chunks the user has.
func (f *Followers) Chunks() int { return len(f.idx.Sizes) }

// First returns the ids of the first follower chunk.
func (f *Followers) First() []string { return f.chunk0.IDs }

// RootFrom returns, for an activity's record of its author's chunks, the
// first chunk stored as a root entity (0: none).
func (f *Followers) RootFrom() int64 { return f.idx.RootFrom }

// ChunkIDs reads, in tx, the ids of user's follower chunk n whose follow
// began before the time before (µs since the epoch), and whether the chunk
// exists. rootFrom is the user's Index.RootFrom as a post recorded it.
func ChunkIDs(tx *store.Tx, user string, n int, rootFrom, before int64) ([]string, bool, error) {
	var c Chunk
	idx := Index{RootFrom: rootFrom}
	ok, err := tx.Get(idx.chunkKey(tx.DB(), user, n), &c)
	return c.before(before), ok, err
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
