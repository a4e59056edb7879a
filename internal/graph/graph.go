// Package graph owns who follows whom.
//
// Entities:
//   - Follow/{follower}_{followee}: one follow, for the @friends and
//     @followers lists (queries on follower or followee, newest first).
//   - FollowerIndex/{user}: how many ids each of the user's follower chunks
//     holds.
//   - FollowerIndex/{user}/FollowerChunk/{n}: up to ChunkCap follower ids,
//     unindexed.
//
// The chunks exist so that posting never queries the follow graph: a post
// copies chunk n of its author's followers into audience chunk n of the
// activity by key lookup (package activities). A query over every follower
// would cost time in proportion to the follower count, and the Datastore
// emulator takes minutes over 100,000 matches. Follow and Unfollow keep the
// Follow entity, the chunk, the index and both users' counts in one
// transaction, so they always agree.
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
	"socialstream/internal/derrors"
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

var (
	ErrSelfFollow   = derrors.New(derrors.InvalidArgument, "you cannot follow yourself")
	ErrNoSuchPerson = derrors.New(derrors.NotFound, "no such person")
)

// Follow is one follow.
type Follow struct {
	Follower string    `datastore:"follower"`
	Followee string    `datastore:"followee"`
	Created  time.Time `datastore:"created"`
	Chunk    int       `datastore:"chunk,noindex"` // the follower chunk holding Follower
}

// Index records how many ids each of a user's follower chunks holds.
type Index struct {
	Sizes []int64 `datastore:"sizes,noindex"`
}

// Ended is the history of the follows between two users (key
// FollowEnded/{follower}_{followee}) that jobs need to decide, whenever
// they run, what their change still asks for:
//   - Gen is the generation of the last follow that ended, so a late job
//     can tell a follow that was undone from one not committed yet.
//   - Removal names the newest unfollow that asked for the follower's
//     copies to be removed (its time, µs); Done is the newest removal that
//     finished. Removal > Done means one is under way, and follow jobs wait
//     for it, so a removal never undoes what a later follow copied.
//   - Cutoff is the generation of the first follow after that removal was
//     asked for: the removal leaves activities posted since then alone
//     (those were posted while following again). Zero means none yet.
type Ended struct {
	Gen     int64 `datastore:"gen,noindex"`
	Removal int64 `datastore:"removal,noindex"`
	Cutoff  int64 `datastore:"cutoff,noindex"`
	Done    int64 `datastore:"done,noindex"`
}

// Pending reports whether a removal is under way.
func (e Ended) Pending() bool { return e.Removal > e.Done }

// EndedKey returns the key of follower's Ended record for followee.
func EndedKey(db *store.DB, follower, followee string) *datastore.Key {
	return db.NameKey(KindFollowEnded, follower+"_"+followee, nil)
}

// Chunk is one follower chunk.
type Chunk struct {
	IDs []string `datastore:"ids,noindex"`
}

// Service manages follows.
type Service struct {
	db  *store.DB
	now func() time.Time
}

// New returns a Service.
func New(db *store.DB) (*Service, error) {
	if db == nil {
		return nil, errors.New("graph.New: nil store")
	}
	return &Service{db: db, now: time.Now}, nil
}

// FollowKey returns the key of follower's follow of followee.
func FollowKey(db *store.DB, follower, followee string) *datastore.Key {
	return db.NameKey(KindFollow, follower+"_"+followee, nil)
}

// IndexKey returns the key of a user's follower index.
func IndexKey(db *store.DB, user string) *datastore.Key {
	return db.NameKey(KindFollowerIndex, user, nil)
}

// ChunkKey returns the key of a user's follower chunk n.
func ChunkKey(db *store.DB, user string, n int) *datastore.Key {
	return db.NameKey(KindFollowerChunk, strconv.Itoa(n), IndexKey(db, user))
}

// Follow makes follower follow followee now. It reports whether the follow
// is new; following again changes nothing.
func (s *Service) Follow(ctx context.Context, follower, followee string) (bool, error) {
	return s.FollowAt(ctx, follower, followee, s.now())
}

// FollowAt is Follow with the follow's creation time given: its generation,
// which jobs enqueued before the commit use to recognise it.
func (s *Service) FollowAt(ctx context.Context, follower, followee string, created time.Time) (bool, error) {
	if follower == followee {
		return false, ErrSelfFollow
	}
	var isNew bool
	err := s.db.RunInTransaction(ctx, func(tx *datastore.Transaction) error {
		isNew = false
		var (
			f         Follow
			from, to  accounts.User
			idx       Index
			ended     Ended
			followKey = FollowKey(s.db, follower, followee)
			fromKey   = accounts.UserKey(s.db, follower)
			toKey     = accounts.UserKey(s.db, followee)
			idxKey    = IndexKey(s.db, followee)
			endedKey  = EndedKey(s.db, follower, followee)
		)
		err := tx.GetMulti([]*datastore.Key{followKey, fromKey, toKey, idxKey, endedKey}, []any{&f, &from, &to, &idx, &ended})
		missing, ok := store.IsMissing(err, 5)
		if !ok {
			return err
		}
		switch {
		case !missing[0]:
			return nil // already following
		case missing[1], missing[2]:
			return ErrNoSuchPerson
		}
		// The first chunk with room, so unfollows leave no long-lived holes.
		n := slices.IndexFunc(idx.Sizes, func(size int64) bool { return size < ChunkCap })
		var chunk Chunk
		if n < 0 {
			n = len(idx.Sizes)
			idx.Sizes = append(idx.Sizes, 0)
		} else if err := tx.Get(ChunkKey(s.db, followee, n), &chunk); err != nil && !errors.Is(err, datastore.ErrNoSuchEntity) {
			return err
		}
		chunk.IDs = append(chunk.IDs, follower)
		idx.Sizes[n] = int64(len(chunk.IDs))
		from.FollowingCount++
		to.FollowersCount++
		keys := []*datastore.Key{followKey, fromKey, toKey, idxKey, ChunkKey(s.db, followee, n)}
		vals := []any{&Follow{Follower: follower, Followee: followee, Created: created.UTC(), Chunk: n}, &from, &to, &idx, &chunk}
		if ended.Pending() && ended.Cutoff == 0 {
			// A removal is under way: it must spare what this follow sees.
			ended.Cutoff = created.UnixMicro()
			keys, vals = append(keys, endedKey), append(vals, &ended)
		}
		_, err = tx.PutMulti(keys, vals)
		isNew = err == nil
		return err
	})
	if err != nil {
		return false, fmt.Errorf("graph.Follow(%s, %s): %w", follower, followee, err)
	}
	return isNew, nil
}

// Unfollow ends follower's follow of followee. It reports whether there was
// one to end. A non-zero removal names the job, enqueued by the caller,
// that removes follower's copies of followee's activities; zero keeps them.
func (s *Service) Unfollow(ctx context.Context, follower, followee string, removal int64) (bool, error) {
	var removed bool
	err := s.db.RunInTransaction(ctx, func(tx *datastore.Transaction) error {
		removed = false
		var f Follow
		followKey := FollowKey(s.db, follower, followee)
		if err := tx.Get(followKey, &f); errors.Is(err, datastore.ErrNoSuchEntity) {
			return nil
		} else if err != nil {
			return err
		}
		var (
			from, to accounts.User
			idx      Index
			chunk    Chunk
			ended    Ended
			fromKey  = accounts.UserKey(s.db, follower)
			toKey    = accounts.UserKey(s.db, followee)
			idxKey   = IndexKey(s.db, followee)
			chunkKey = ChunkKey(s.db, followee, f.Chunk)
			endedKey = EndedKey(s.db, follower, followee)
		)
		err := tx.GetMulti([]*datastore.Key{fromKey, toKey, idxKey, chunkKey, endedKey}, []any{&from, &to, &idx, &chunk, &ended})
		missing, ok := store.IsMissing(err, 5)
		if !ok {
			return err
		}
		keys := []*datastore.Key{}
		vals := []any{}
		if !missing[0] {
			from.FollowingCount = max(0, from.FollowingCount-1)
			keys, vals = append(keys, fromKey), append(vals, &from)
		}
		if !missing[1] {
			to.FollowersCount = max(0, to.FollowersCount-1)
			keys, vals = append(keys, toKey), append(vals, &to)
		}
		if !missing[3] {
			chunk.IDs = slices.DeleteFunc(chunk.IDs, func(id string) bool { return id == follower })
			keys, vals = append(keys, chunkKey), append(vals, &chunk)
			if !missing[2] && f.Chunk < len(idx.Sizes) {
				idx.Sizes[f.Chunk] = int64(len(chunk.IDs))
				keys, vals = append(keys, idxKey), append(vals, &idx)
			}
		}
		ended.Gen = f.Gen()
		if removal > 0 {
			ended.Removal, ended.Cutoff = max(removal, ended.Removal), 0
		}
		keys, vals = append(keys, endedKey), append(vals, &ended)
		if _, err := tx.PutMulti(keys, vals); err != nil {
			return err
		}
		removed = true
		return tx.Delete(followKey)
	})
	if err != nil {
		return false, fmt.Errorf("graph.Unfollow(%s, %s): %w", follower, followee, err)
	}
	return removed, nil
}

// Get returns follower's follow of followee, and whether there is one.
func (s *Service) Get(ctx context.Context, follower, followee string) (Follow, bool, error) {
	var f Follow
	ok, err := s.db.Find(ctx, FollowKey(s.db, follower, followee), &f)
	if err != nil {
		return Follow{}, false, fmt.Errorf("graph.Get: %w", err)
	}
	return f, ok, nil
}

// Gen returns the generation of a follow: its creation time in
// microseconds, the precision Datastore keeps.
func (f Follow) Gen() int64 { return f.Created.UnixMicro() }

// ChunkCount returns how many follower chunks user has.
func (s *Service) ChunkCount(ctx context.Context, user string) (int, error) {
	var idx Index
	err := s.db.Client.Get(ctx, IndexKey(s.db, user), &idx)
	if errors.Is(err, datastore.ErrNoSuchEntity) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("graph.ChunkCount(%s): %w", user, store.Convert(err))
	}
	return len(idx.Sizes), nil
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
