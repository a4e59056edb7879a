package activities

import (
	"context"
	"fmt"
	"math"
	"slices"
	"socialstream/internal/graph"
	"socialstream/internal/ids"
	"socialstream/internal/notifications"
	"socialstream/internal/queue"
	"socialstream/internal/store"
	"time"
)

// The fan-out of a post to its author's followers past the first chunk:
// a planning job, then a job per follower chunk, each copying the post
// to the chunk's followers (and telling those who follow with notify).

// ErrNotYet says a job came before the activity it works on was committed;
// the queue retries it.
var ErrNotYet = queue.NotYet("the activity")

// A planning job that finds its activity not yet committed, within
// planWaitWindow of the id being minted, looks again planWaits times,
// planWait apart, before it returns ErrNotYet.
const (
	planWaits      = 10
	planWait       = 25 * time.Millisecond
	planWaitWindow = 5 * time.Second
)

// FanoutResult says what a fan-out job did, for its log line.
type FanoutResult struct {
	Enqueued int // chunk jobs planned
	Written  int // ids written to an audience chunk
	Skipped  string
}

// Fanout runs a fan-out job. It can run any number of times, in any order,
// with the same end state.
func (s *Service) Fanout(ctx context.Context, t FanoutTask) (FanoutResult, error) {
	seq, ok := ids.Parse(t.ActivityID)
	if !ok || t.Chunk < 0 || t.Chunk > 10000 {
		return FanoutResult{Skipped: "malformed task"}, nil
	}
	if edge := s.homeEdge(); seq < edge {
		return FanoutResult{Skipped: "past the home feed's edge"}, nil
	}
	if t.Chunk == 0 {
		return s.planFanout(ctx, t.ActivityID, seq)
	}
	return s.copyChunk(ctx, t)
}

// planFanout is the planning job of activity id: it enqueues the jobs of
// its other chunks.
func (s *Service) planFanout(ctx context.Context, id string, seq int64) (FanoutResult, error) {
	key := Key(s.db, id)
	var a Activity
	var found, deleted bool
	var foundAt int64 // a time after the commit
	// The post enqueued this job just before its commit, which lands
	// milliseconds later: wait a little rather than fail and wait for the
	// queue's backoff (half a second or more). It stamps its commit just
	// after it (Committed): wait for that a little too.
	err := s.awaitPost(ctx, seq, func() (bool, error) {
		ok, err := s.db.Get(ctx, key, &a)
		if err != nil || !ok {
			deleted = found
			return deleted, err
		}
		if !found {
			found, foundAt = true, s.now().UnixMicro()
		}
		return a.Committed != 0 || a.Chunks <= 1, nil
	})
	if err != nil {
		return FanoutResult{}, err
	}
	f := planFacts{found: found, deleted: deleted, chunks: a.Chunks, committed: a.Committed, foundAt: foundAt,
		late: s.now().Sub(ids.Time(seq)) > s.cfg.GiveUpAfter}
	before, skipped, err := decidePlan(f)
	if err != nil || skipped != "" {
		return FanoutResult{Skipped: skipped}, err
	}
	for n := 1; n < a.Chunks; n++ {
		if err := s.enqueueFanout(ctx, id, n, before); err != nil {
			return FanoutResult{Enqueued: n - 1}, err
		}
	}
	return FanoutResult{Enqueued: max(0, a.Chunks-1)}, nil
}

// awaitPost runs check until it reports done, planWait apart, planWaits
// times at most and while the post of seq is younger than planWaitWindow.
func (s *Service) awaitPost(ctx context.Context, seq int64, check func() (bool, error)) error {
	done, err := check()
	for i := 0; i < planWaits && err == nil && !done && s.now().Sub(ids.Time(seq)) < planWaitWindow; i++ {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(planWait):
		}
		done, err = check()
	}
	return err
}

// planFacts is what a planning job found of its activity.
type planFacts struct {
	found     bool
	deleted   bool // since it was found
	chunks    int
	committed int64 // its stamp, Unix microseconds; 0 if none
	foundAt   int64 // Unix microseconds: a time after the commit, if found
	late      bool  // the post is past GiveUpAfter
}

// decidePlan decides what time a planning job hands the jobs of the other
// chunks (FanoutTask.Before), or why it does none, or that it must wait.
func decidePlan(f planFacts) (before int64, skipped string, err error) {
	switch {
	case f.deleted:
		return 0, "activity deleted", nil
	case !f.found && f.late:
		return 0, "activity never committed or deleted", nil
	case !f.found:
		return 0, "", ErrNotYet
	case f.committed != 0 || f.chunks <= 1:
		return f.committed, "", nil
	case !f.late:
		// The post answers after its stamp: a follow that began since is
		// not this post's to copy, and only the stamp tells which.
		return 0, "", ErrNotYet
	}
	return f.foundAt, "", nil // the stamp failed: a time after the commit
}

// copyChunk is the job of one chunk of an activity's followers.
func (s *Service) copyChunk(ctx context.Context, t FanoutTask) (FanoutResult, error) {
	key := Key(s.db, t.ActivityID)
	var res FanoutResult
	var bells []string
	var posted Activity
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		res, bells = FanoutResult{}, nil
		var a Activity
		ok, err := tx.Get(key, &a)
		if err != nil {
			return err
		}
		before, skipped := decideChunk(ok, &a, t.Before)
		if skipped != "" {
			res.Skipped = skipped
			return nil
		}
		chunk, ok, err := graph.ReadChunk(tx, a.UserID, t.Chunk, before)
		if err != nil {
			return err
		} else if !ok {
			res.Skipped = "no such follower chunk"
			return nil
		}
		bells, posted = chunk.Bells, a
		if a.Celebrity {
			res.Skipped = "a celebrity's post: the bells alone"
			return nil // their homes merge it in
		}
		followers := reached(&a, chunk.IDs, chunk.Quiet)
		// A reply to someone else: those who follow them too.
		if followers, err = replyFollowers(ctx, s.db, &a, followers); err != nil {
			return err
		}
		// Merge, never overwrite: a follow job may have created this
		// chunk first, with the ids of new followers.
		ref := Ref{ID: t.ActivityID, Seq: a.Seq, Author: a.UserID, Repost: a.RepostOf != ""}
		if a.answersOther() {
			ref.Answers = a.InReplyToUser
		}
		n, err := mergeIDs(tx, ref, t.Chunk, followers)
		res.Written = n
		if n == 0 {
			res.Skipped = "chunk already up to date"
		}
		return err
	})
	if err == nil && len(bells) > 0 && rings(&posted) {
		// After the commit: a retry merges nothing more and enqueues the
		// same named job again, which adds nothing.
		err = s.notes.Notify(ctx, statusEvent(t.ActivityID, &posted, t.Chunk, bells))
	}
	return res, err
}

// reached returns those of a chunk's followers a post's copies reach
// (before its reply's narrowing): all, but for a repost those who take
// none of its author's (quiet).
func reached(a *Activity, followers, quiet []string) []string {
	if a.RepostOf == "" || len(quiet) == 0 {
		return followers
	}
	return slices.DeleteFunc(slices.Clone(followers), func(f string) bool { return slices.Contains(quiet, f) })
}

// rings reports whether a post tells those who follow its author with
// notify (Mastodon's): an original post or a thread of one's own, for
// more than the mentioned; not a repost, nor a reply to someone else.
func rings(a *Activity) bool {
	return a.RepostOf == "" && !a.answersOther() && a.reachesFollowers()
}

// statusEvent is the notification of a post, of its chunk n, to those
// of the chunk who follow its author with notify (bells).
func statusEvent(id string, a *Activity, n int, bells []string) notifications.Event {
	return notifications.Event{Type: notifications.Status, ActorID: a.UserID, Recipients: bells, ActivityID: id,
		ID: fmt.Sprintf("status-%s-%d", id, n)}
}

// decideChunk decides whose follows a chunk's job copies the activity
// to (those begun before the time it returns), or why it copies none.
func decideChunk(found bool, a *Activity, taskBefore int64) (before int64, skipped string) {
	switch {
	case !found:
		return 0, "activity deleted"
	case !a.reachesFollowers():
		return 0, "for the mentioned alone"
	}
	// Those who followed after the post committed do not get it from
	// here: their follow's own job copies it, if it copies any.
	switch {
	case taskBefore != 0:
		return taskBefore, ""
	case a.Committed != 0:
		return a.Committed, ""
	}
	return math.MaxInt64, "" // no stamp was written: everyone
}
