package graph

import (
	"context"
	"fmt"
	"strings"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/queue"
	"socialstream/internal/store"
)

// Celebrities: people with so many followers that their posts are read
// at read time rather than copied (the hybrid of fan-out on write and on
// read). Once a person's followers reach the deployment's threshold
// (activities.Config.CelebrityFollowers), their next post makes them a
// celebrity for good: a Celebrity entity, then a job that marks every
// follow of them (Follow.Celebrity). From then on their posts for their
// followers carry no copy of the followers' ids; a home page finds the
// celebrities its reader follows by one keys-only query of those marked
// follows (CelebritiesFollowed) and merges their newest posts in.
//
// Every follow reads the followee's Celebrity entity in its transaction
// and marks itself when it is there. So a follow either commits before
// the Celebrity entity, and is in the follower chunk the marking job
// reads after it, or sees it: no follow of a celebrity is left unmarked.
// An unfollow deletes the follow, mark and all, so it leaves the merge
// at once.

// KindCelebrity is the kind of the mark of a celebrity:
// Celebrity/{user}.
const KindCelebrity = "Celebrity"

// Celebrity marks a person as a celebrity.
type Celebrity struct {
	Since time.Time `datastore:"since,noindex"`
}

// CelebrityKey returns the key of user's mark.
func CelebrityKey(db *store.DB, user string) *datastore.Key {
	return db.NameKey(KindCelebrity, user, nil)
}

// ReadCelebrity adds user's mark to a lookup: Found says they are a
// celebrity.
func ReadCelebrity(l *store.Lookup, user string) store.Ref {
	return l.Add(CelebrityKey(l.DB(), user), &Celebrity{})
}

// MaxCelebritiesFollowed is how many of the celebrities a reader follows
// a home page merges at most: the first that many by id.
const MaxCelebritiesFollowed = 500

// CelebritiesFollowed returns the celebrities reader (a person, or a
// list's reader) follows: one keys-only query of their marked follows.
func CelebritiesFollowed(ctx context.Context, db *store.DB, reader string) ([]string, error) {
	field := "follower"
	if IsReader(reader) {
		field = listProp
	}
	q := db.Query(KindFollow).FilterField(field, "=", reader).FilterField("celebrity", "=", true).KeysOnly().Limit(MaxCelebritiesFollowed)
	keys, err := db.GetAll(ctx, q, nil)
	if err != nil {
		return nil, fmt.Errorf("graph.CelebritiesFollowed(%s): %w", reader, err)
	}
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		if _, followee, ok := strings.Cut(k.Name, "_"); ok {
			out = append(out, followee)
		}
	}
	return out, nil
}

// CelebrityJob makes a person a celebrity: its first step writes their
// mark and enqueues a step for each follower chunk, which marks the
// follows of the chunk's followers.
var CelebrityJob = queue.Job[CelebrityTask]{Name: "celebrity", Queue: queue.Rebuild,
	TaskName: func(t CelebrityTask) string { return fmt.Sprintf("celebrity-%s-%d", t.User, t.Chunk) }}

// CelebrityTask is one step of the making of a celebrity: Chunk 0 the
// first, which writes the mark; chunk n+1 marks the follows of follower
// chunk n.
type CelebrityTask struct {
	User  string `json:"user"`
	Chunk int    `json:"chunk,omitempty"`
}

// Celebrating returns what makes the job that makes user a celebrity.
func Celebrating(q queue.Queue, user string) queue.Pending {
	return CelebrityJob.Pending(q, CelebrityTask{User: user}, 0)
}

// markBatch is how many follows one transaction of a marking step reads
// and writes.
const markBatch = 200

// Celebrate runs a step of CelebrityJob and returns how many follows it
// marked. Every step can run again, in any order: the mark is written
// once, and a follow already marked is left alone.
func (s *Service) Celebrate(ctx context.Context, t CelebrityTask) (int, error) {
	if t.User == "" || t.Chunk < 0 || t.Chunk > 10000 {
		return 0, nil // malformed
	}
	if t.Chunk == 0 {
		return 0, s.celebrate(ctx, t.User)
	}
	var c Chunk
	if _, err := s.db.Get(ctx, ChunkKey(s.db, t.User, t.Chunk-1), &c); err != nil {
		return 0, fmt.Errorf("graph.Celebrate(%s, %d): %w", t.User, t.Chunk, err)
	}
	marked := 0
	for start := 0; start < len(c.IDs); start += markBatch {
		batch := c.IDs[start:min(start+markBatch, len(c.IDs))]
		n, err := s.markFollows(ctx, batch, t.User)
		if marked += n; err != nil {
			return marked, fmt.Errorf("graph.Celebrate(%s, %d): %w", t.User, t.Chunk, err)
		}
	}
	return marked, nil
}

// celebrate writes user's mark, unless it is there, and enqueues the
// marking of each follower chunk. The chunks are counted after the
// mark's commit: a follow that opens a chunk after it marks itself.
func (s *Service) celebrate(ctx context.Context, user string) error {
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		var c Celebrity
		if ok, err := tx.Get(CelebrityKey(s.db, user), &c); err != nil || ok {
			return err
		}
		return tx.Put(CelebrityKey(s.db, user), &Celebrity{Since: s.now().UTC()})
	})
	if err != nil {
		return fmt.Errorf("graph.Celebrate(%s): %w", user, err)
	}
	var idx Index
	if _, err := s.db.Get(ctx, IndexKey(s.db, user), &idx); err != nil {
		return fmt.Errorf("graph.Celebrate(%s): %w", user, err)
	}
	for n := range idx.chunks() {
		if err := CelebrityJob.Enqueue(ctx, s.queue, CelebrityTask{User: user, Chunk: n + 1}, 0); err != nil {
			return err
		}
	}
	return nil
}

// markFollows marks the follows of followee by followers that are not
// marked yet, in one transaction, and returns how many it marked. A
// follow ended meanwhile is not there to mark.
func (s *Service) markFollows(ctx context.Context, followers []string, followee string) (int, error) {
	marked := 0
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		marked = 0
		l := tx.Lookup()
		fs := make([]Follow, len(followers))
		found := make([]store.Ref, len(followers))
		for i, f := range followers {
			found[i] = l.Add(FollowKey(s.db, f, followee), &fs[i])
		}
		if err := l.Run(ctx); err != nil {
			return err
		}
		var keys []*datastore.Key
		var vals []any
		for i := range fs {
			if found[i].Found() && !fs[i].Celebrity {
				fs[i].Celebrity = true
				keys, vals = append(keys, FollowKey(s.db, followers[i], followee)), append(vals, &fs[i])
			}
		}
		marked = len(keys)
		if len(keys) == 0 {
			return nil
		}
		return tx.PutMulti(keys, vals)
	})
	return marked, err
}
