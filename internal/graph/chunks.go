package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"socialstream/internal/derrors"
	"socialstream/internal/store"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/datastore"
)

// Follower chunks: a user's followers, in chunks a post copies to its
// audience by key (see the package's doc), with the bells and the quiet
// of the follows that have them; and the index of the chunks.

// Index records a user's follower chunks.
//
// Follows fill the last chunk; the follow that finds it full opens the
// next, the only follow that writes the Index. Count is the chunk count
// (every user has chunk 0, written by their first follow, so a user with
// one chunk may have no Index at all). Unfollows leave holes that no
// follow refills.
type Index struct {
	Count int `datastore:"count,noindex"`
}

// chunkKey returns the key of the user's chunk n.
func (x *Index) chunkKey(db *store.DB, user string, n int) *datastore.Key {
	return ChunkKey(db, user, n)
}

// chunks returns how many follower chunks the user has. Every user has
// chunk 0, written by the first follow that joins it: the follows of a new
// user write neither the index nor each other's reads.
func (x *Index) chunks() int { return max(1, x.Count) }

// chunkFor returns the chunk a follow goes to: the last one.
func (x *Index) chunkFor() int { return x.chunks() - 1 }

// Chunk is one follower chunk.
//
// Follows and unfollows change a chunk by server-side transforms that read
// nothing (AppendMissingElements, RemoveAllFromArray): a celebrity's
// followers do not wait on each other's locks. So each list is one of
// self-describing entries, never two lists kept in step.
type Chunk struct {
	IDs []string `datastore:"ids,noindex"`
	// Began holds "id@µs" for each follow of IDs: when it began
	// (Follow.Gen). A fan-out job, which may run long after its post,
	// copies only the followers whose follow began before the post.
	Began []string `datastore:"began,noindex"`
	// Gone holds "id@began@ended" (µs) for each follower who unfollowed
	// keeping their copies (see prune).
	Gone []string `datastore:"gone,noindex"`
	// Bells are the followers told of each post (Follow.Notify), Quiet
	// those whose home takes no reposts (Follow.NoReposts): a post, or
	// its fan-out, reads them with the chunk, and queries no one.
	Bells []string `datastore:"bells,noindex"`
	Quiet []string `datastore:"quiet,noindex"`
}

// A chunk keeps a trace of a follower who unfollowed keeping their copies
// for leftTTL, and of leftMax of them at most: a fan-out job of a post made
// while they followed, which runs after they left, still copies it to them.
// A fan-out job that runs later than that (a week of retries) misses them.
const (
	leftTTL = 7 * 24 * time.Hour
	leftMax = 1000
)

func beganEntry(id string, since int64) string { return id + "@" + strconv.FormatInt(since, 10) }

func goneEntry(id string, since, ended int64) string {
	return beganEntry(id, since) + "@" + strconv.FormatInt(ended, 10)
}

// parseEntry splits "id@n@m..." into the id and its numbers.
func parseEntry(e string) (string, []int64) {
	parts := strings.Split(e, "@")
	nums := make([]int64, 0, len(parts)-1)
	for _, p := range parts[1:] {
		n, _ := strconv.ParseInt(p, 10, 64)
		nums = append(nums, n)
	}
	return parts[0], nums
}

// joins returns the transforms that add a follower whose follow began at
// since, and take out the traces prune finds stale as of now.
func (c *Chunk) joins(id string, since, now int64) []datastore.PropertyTransform {
	ts := []datastore.PropertyTransform{
		datastore.AppendMissingElements("ids", id),
		datastore.AppendMissingElements("began", beganEntry(id, since)),
	}
	if stale := c.prune(now); len(stale) > 0 {
		ts = append(ts, datastore.RemoveAllFromArray("gone", stale...))
	}
	return ts
}

// leaves returns the transforms that take out a follower whose follow
// began at since, leaving a trace if it ended at ended keeping the copies
// (keep).
func leaves(id string, since, ended int64, keep bool) []datastore.PropertyTransform {
	ts := []datastore.PropertyTransform{
		datastore.RemoveAllFromArray("ids", id),
		datastore.RemoveAllFromArray("began", beganEntry(id, since)),
		datastore.RemoveAllFromArray("bells", id),
		datastore.RemoveAllFromArray("quiet", id),
	}
	if keep {
		ts = append(ts, datastore.AppendMissingElements("gone", goneEntry(id, since, ended)))
	}
	return ts
}

// prune returns the traces of leavers that are past leftTTL as of now, or
// beyond the newest leftMax, for a follow to take out as it joins.
func (c *Chunk) prune(now int64) []any {
	var stale []any
	for i, e := range c.Gone {
		if _, n := parseEntry(e); len(n) < 2 || n[1] < now-leftTTL.Microseconds() || i < len(c.Gone)-leftMax {
			stale = append(stale, e)
		}
	}
	return stale
}

// add adds a follower whose follow began at since, as joins does on the
// server, to a chunk about to be written whole.
func (c *Chunk) add(id string, since int64) {
	c.IDs, c.Began = append(c.IDs, id), append(c.Began, beganEntry(id, since))
}

// before returns the followers at time t: whose follow began before t,
// and those who left since keeping their copies (one may be in both, after
// following again; audience merges drop the second).
func (c *Chunk) before(t int64) []string {
	began := make(map[string]int64, len(c.Began))
	for _, e := range c.Began {
		if id, n := parseEntry(e); len(n) == 1 {
			began[id] = n[0]
		}
	}
	var out []string
	for _, id := range c.IDs {
		if began[id] < t {
			out = append(out, id)
		}
	}
	for _, e := range c.Gone {
		if id, n := parseEntry(e); len(n) == 2 && n[0] < t && t <= n[1] {
			out = append(out, id)
		}
	}
	return out
}

// ChunkCount returns how many follower chunks user has.
func ChunkCount(ctx context.Context, db *store.DB, user string) (int, error) {
	var idx Index
	if _, err := db.Get(ctx, IndexKey(db, user), &idx); err != nil {
		return 0, fmt.Errorf("graph.ChunkCount(%s): %w", user, err)
	}
	return idx.chunks(), nil
}

// ReadChunkCount adds user's follower index to a lookup; what it returns
// says, once the lookup has run, how many follower chunks they have.
func ReadChunkCount(l *store.Lookup, user string) func() int {
	idx := &Index{}
	l.Add(IndexKey(l.DB(), user), idx)
	return idx.chunks
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
func (f *Followers) Chunks() int { return f.idx.chunks() }

// First returns the ids of the first follower chunk.
func (f *Followers) First() []string { return f.chunk0.IDs }

// FirstBells returns those of the first chunk told of each post, and
// FirstQuiet those whose home takes no reposts.
func (f *Followers) FirstBells() []string { return f.chunk0.following(f.chunk0.Bells) }
func (f *Followers) FirstQuiet() []string { return f.chunk0.following(f.chunk0.Quiet) }

// following returns those of ids who are in the chunk.
func (c *Chunk) following(ids []string) []string {
	var out []string
	for _, id := range ids {
		if slices.Contains(c.IDs, id) {
			out = append(out, id)
		}
	}
	return out
}

// ReadQuiet adds followee's follower chunk n to a lookup; the function
// it returns says, once the lookup has run, whether a follower there
// takes none of followee's reposts (Follow.NoReposts).
func ReadQuiet(l *store.Lookup, followee string, n int) func(follower string) bool {
	var c Chunk
	l.Add(ChunkKey(l.DB(), followee, n), &c)
	return func(follower string) bool { return slices.Contains(c.Quiet, follower) }
}

// ChunkRead is what a fan-out job reads of a follower chunk.
type ChunkRead struct {
	// IDs are the followers whose follow began before the post.
	IDs []string
	// Bells and Quiet are, of those, the ones told of each post and the
	// ones whose home takes no reposts.
	Bells, Quiet []string
}

// ReadChunk reads, in tx, user's follower chunk n as of the time before
// (µs since the epoch), and whether the chunk exists.
func ReadChunk(tx *store.Tx, user string, n int, before int64) (ChunkRead, bool, error) {
	var c Chunk
	ok, err := tx.Get(ChunkKey(tx.DB(), user, n), &c)
	ids := c.before(before)
	in := func(list []string) []string {
		return slices.DeleteFunc(slices.Clone(list), func(id string) bool { return !slices.Contains(ids, id) })
	}
	return ChunkRead{IDs: ids, Bells: in(c.Bells), Quiet: in(c.Quiet)}, ok, err
}

// ErrNotFollowing refuses to set how a follow notifies where there is no
// follow.
var ErrNotFollowing = derrors.New(derrors.InvalidArgument, "you do not follow this person")

// FollowOptions sets, on follower's follow of followee, whether each of
// followee's posts tells them (notify) and whether followee's reposts
// reach their home (reposts), where not nil: on the follow and, by
// transforms that read nothing, on its chunk. From the next post on.
func (s *Service) FollowOptions(ctx context.Context, follower, followee string, notify, reposts *bool) error {
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		var f Follow
		if ok, err := tx.Get(FollowKey(s.db, follower, followee), &f); err != nil {
			return err
		} else if !ok {
			return ErrNotFollowing
		}
		var ts []datastore.PropertyTransform
		set := func(prop string, on bool) datastore.PropertyTransform {
			if on {
				return datastore.AppendMissingElements(prop, follower)
			}
			return datastore.RemoveAllFromArray(prop, follower)
		}
		if notify != nil && *notify != f.Notify {
			f.Notify = *notify
			ts = append(ts, set("bells", f.Notify))
		}
		if reposts != nil && *reposts == f.NoReposts {
			f.NoReposts = !*reposts
			ts = append(ts, set("quiet", f.NoReposts))
		}
		if len(ts) == 0 {
			return nil
		}
		if err := tx.Put(FollowKey(s.db, follower, followee), &f); err != nil {
			return err
		}
		return tx.TransformAny(f.chunkKey(s.db), ts...)
	})
	if err != nil && !errors.Is(err, ErrNotFollowing) {
		return fmt.Errorf("graph.FollowOptions(%s, %s): %w", follower, followee, err)
	}
	return err
}
