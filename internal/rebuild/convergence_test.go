package rebuild_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/activities"
	"socialstream/internal/derrors"
	"socialstream/internal/graph"
	"socialstream/internal/groups"
	"socialstream/internal/ids"
	"socialstream/internal/rebuild"
	"socialstream/internal/store"
	"socialstream/internal/testenv"
)

// groupFeed returns the ids on a group's feed, read by viewer.
func (f *fixture) groupFeed(viewer, group string) []string {
	f.t.Helper()
	list, _, err := f.act.Feed(context.Background(), activities.FeedRequest{Viewer: viewer, Selector: group, Page: store.PageRequest{Count: 100}})
	if err != nil {
		f.t.Fatal(err)
	}
	out := []string{}
	for _, v := range list {
		out = append(out, v.ID)
	}
	return out
}

// A job runs before its change commits and finds nothing to scan; a post
// lands between the job and the commit, reading the graph from before the
// change. The job must not end "done": it asks to be retried, and its retry
// brings the post into line. Before, a job with nothing to scan never
// looked at the change at all, and such a post stayed wrong for good.
func TestJobWithNothingToScanWaitsForItsChange(t *testing.T) {
	for _, kind := range []string{rebuild.JobFollow, rebuild.JobUnfollow, rebuild.JobJoin, rebuild.JobLeave} {
		t.Run(kind, func(t *testing.T) {
			f := newFixture(t, rebuild.Config{})
			ctx := context.Background()
			owner, other := f.user("owner"), f.user("other")
			g, err := f.groups.Create(ctx, other, "g", "", groups.Open)
			if err != nil {
				t.Fatal(err)
			}
			// The starting state: removals start from a follow or a
			// membership, with nothing posted yet.
			switch kind {
			case rebuild.JobUnfollow:
				if _, err := f.graph.Follow(ctx, other, owner, nil); err != nil {
					t.Fatal(err)
				}
			case rebuild.JobLeave:
				if _, _, err := f.groups.Join(ctx, owner, g.ID, owner); err != nil {
					t.Fatal(err)
				}
			}
			f.drain()
			// The job runs as soon as it is enqueued, before its change
			// commits; then a post lands, reading the graph from before
			// the change; then the change commits.
			var j rebuild.Job
			var post []string
			f.beforeCommit(func(job rebuild.Job) {
				j = job
				if res, err := f.rb.Run(ctx, j); !errors.Is(err, derrors.Unavailable) {
					t.Errorf("job before its change committed, nothing to scan: %+v, %v; want a retryable error", res, err)
				}
				post = f.posts(owner, 1)
			})
			switch kind {
			case rebuild.JobFollow:
				_, err = f.graph.Follow(ctx, other, owner, nil)
			case rebuild.JobUnfollow:
				err = f.graph.Unfollow(ctx, other, owner, false)
			case rebuild.JobJoin:
				_, _, err = f.groups.Join(ctx, owner, g.ID, owner)
			case rebuild.JobLeave:
				err = f.groups.Leave(ctx, owner, g.ID, owner)
			}
			if err != nil {
				t.Fatal(err)
			}
			if j.Kind != kind {
				t.Fatalf("the %s enqueued job %+v", kind, j)
			}
			f.run(j)
			f.drain()
			var got []string
			if j.Group == "" {
				got = f.home(other)
			} else {
				got = f.groupFeed(other, g.ID)
			}
			var want []string
			if kind == rebuild.JobFollow || kind == rebuild.JobJoin {
				want = post
			}
			if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
				t.Errorf("after the retried job: feed %v, want %v", got, want)
			}
		})
	}
}

// putOldActivities writes n activities by author straight into the
// Datastore, as if years of posting had happened while follower followed
// and author belonged to group: each carries both copies. Posting a
// thousand through the service would take minutes.
func putOldActivities(t *testing.T, db *store.DB, author, follower, group string, n int) {
	t.Helper()
	ctx := context.Background()
	start := time.Now().Add(-365 * 24 * time.Hour)
	gen := ids.NewNode(7, func() time.Time { return start })
	var keys []*datastore.Key
	var vals []any
	for i := 0; i < n; i++ {
		seq := gen.Next()
		id := strconv.FormatInt(seq, 10)
		keys = append(keys, activities.Key(db, id), activities.AudienceKey(db, id, 0))
		vals = append(vals,
			&activities.Activity{Seq: seq, UserID: author, Title: fmt.Sprint("old ", i), GroupIDs: []string{group}, Chunks: 1, PostedTime: start.UnixMilli()},
			&activities.Audience{FollowerIDs: []string{author, follower}, Seq: seq, UserID: author})
		if len(keys) == 500 || i == n-1 {
			if err := db.PutMulti(ctx, keys, vals); err != nil {
				t.Fatal(err)
			}
			keys, vals = nil, nil
		}
	}
}

// An unfollow and a leave remove every copy, however old: more than the
// newest thousand and the backfill's budget, which is where removals used
// to stop.
func TestRemovalsReachEveryCopy(t *testing.T) {
	f := newFixture(t, rebuild.Config{BackfillMax: 10, RemovalsPerJob: 400})
	ctx := context.Background()
	a, b, owner := f.user("a"), f.user("b"), f.user("owner")
	g, err := f.groups.Create(ctx, owner, "g", "", groups.Closed)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.graph.Follow(ctx, a, b, noCopies()); err != nil {
		t.Fatal(err)
	}
	if _, out, err := f.groups.Join(ctx, owner, g.ID, b); err != nil || out != groups.Invited {
		t.Fatalf("invite: %v %v", out, err)
	}
	if _, out, err := f.groups.Join(ctx, b, g.ID, b); err != nil || out != groups.Joined {
		t.Fatalf("accept: %v %v", out, err)
	}
	const n = 1100
	putOldActivities(t, f.db, b, a, g.ID, n)
	if got := len(f.home(a)); got != 100 { // a full page: they are there
		t.Fatalf("home before: %d activities", got)
	}
	if err := f.graph.Unfollow(ctx, a, b, false); err != nil {
		t.Fatal(err)
	}
	if err := f.groups.Leave(ctx, owner, g.ID, b); err != nil {
		t.Fatal(err)
	}
	f.drain()
	if got := f.home(a); len(got) != 0 {
		t.Errorf("home after unfollow still shows %d of %d old activities", len(got), n)
	}
	if got := f.groupFeed(owner, g.ID); len(got) != 0 {
		t.Errorf("group feed after the owner removed b still shows %d of %d old activities", len(got), n)
	}
}

// A follower who came back into another follower chunk, after an unfollow
// that kept its copies, and then unfollows for good: every copy goes, in
// either chunk. A removal used to edit only the chunk the follower was in
// when it was enqueued.
func TestRemovalReachesCopiesInEveryChunk(t *testing.T) {
	f := newFixture(t, rebuild.Config{})
	ctx := context.Background()
	a, b := f.user("a"), f.user("b")
	// Made-up followers, imported in bulk.
	fillers := make([]string, graph.ChunkCap-1)
	for i := range fillers {
		fillers[i] = fmt.Sprint("filler", i)
	}
	if err := f.graph.ImportFollowers(ctx, b, fillers); err != nil {
		t.Fatal(err)
	}
	if _, err := f.graph.Follow(ctx, a, b, nil); err != nil { // the last place in chunk 0
		t.Fatal(err)
	}
	f.drain()
	old := f.posts(b, 1) // a is in its audience chunk 0
	if err := f.graph.Unfollow(ctx, a, b, true); err != nil {
		t.Fatal(err)
	}
	if _, err := f.graph.Follow(ctx, f.user("c"), b, noCopies()); err != nil { // fills chunk 0 again
		t.Fatal(err)
	}
	if _, err := f.graph.Follow(ctx, a, b, nil); err != nil {
		t.Fatal(err)
	}
	f.drain()
	if fl, _, _ := f.graph.Get(ctx, a, b); fl.Chunk != 1 {
		t.Fatalf("a came back into chunk %d, want 1", fl.Chunk)
	}
	f.wantHome(a, old)
	if err := f.graph.Unfollow(ctx, a, b, false); err != nil {
		t.Fatal(err)
	}
	f.drain()
	f.wantHome(a, nil)
}

// Jobs whose loss leaves copies wrong retry for as long as an outage may
// last: every queue that carries them keeps retrying a failing task for a
// day at least before it drops it (and the job's last attempt says so).
func TestJobQueuesRetryForADay(t *testing.T) {
	qs := testenv.Queues(t)
	must := map[string]bool{"rebuild": true, "backfill": true, "fanout": true, "cleanup": true}
	for _, q := range qs {
		if !must[q.Name] {
			continue
		}
		delete(must, q.Name)
		var retrying time.Duration
		for i := 1; i <= q.Retry.RetryLimit; i++ {
			retrying += q.Retry.Backoff(i)
		}
		if q.Retry.RetryLimit < 0 || q.Retry.AgeLimit != 0 || retrying < 24*time.Hour {
			t.Errorf("queue %s: retry limit %d, age limit %v: retries for %v, want a limit of a day at least", q.Name, q.Retry.RetryLimit, q.Retry.AgeLimit, retrying)
		}
	}
	for name := range must {
		t.Errorf("queue.yaml has no queue %s", name)
	}
}

// A removal whose job gave up (its unfollow committed later than
// GiveUpAfter) would keep the next follow's job waiting for good: that
// job starts the removal again, and both then finish.
func TestStalledRemovalIsStartedAgain(t *testing.T) {
	f := newFixture(t, rebuild.Config{GiveUpAfter: 200 * time.Millisecond})
	ctx := context.Background()
	a, b := f.user("a"), f.user("b")
	posts := f.posts(b, 2)
	if _, err := f.graph.Follow(ctx, a, b, nil); err != nil {
		t.Fatal(err)
	}
	f.drain()
	f.wantHome(a, posts)
	// The unfollow commits with no job left to do its removal (its job
	// lost, or given up), and the give-up window passes.
	f.beforeCommit(func(rebuild.Job) { f.q.take() })
	if err := f.graph.Unfollow(ctx, a, b, false); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	none := 0
	if _, err := f.graph.Follow(ctx, a, b, &none); err != nil {
		t.Fatal(err)
	}
	js := f.jobs()
	if len(js) != 0 {
		t.Fatalf("follow with copyLimit 0 enqueued %d jobs", len(js))
	}
	// copyLimit 0 has no job of its own; a follow with copies does.
	if err := f.graph.Unfollow(ctx, a, b, true); err != nil {
		t.Fatal(err)
	}
	one := 1
	if _, err := f.graph.Follow(ctx, a, b, &one); err != nil {
		t.Fatal(err)
	}
	follow := f.jobs()
	if len(follow) != 1 {
		t.Fatalf("follow enqueued %d jobs", len(follow))
	}
	if _, err := f.rb.Run(ctx, follow[0]); !errors.Is(err, derrors.Unavailable) {
		t.Fatalf("follow job while a removal is pending: %v, want a retryable error", err)
	}
	restarted := f.jobs()
	if len(restarted) != 1 || restarted[0].Kind != rebuild.JobUnfollow {
		t.Fatalf("the waiting follow job enqueued %+v, want the removal again", restarted)
	}
	f.run(restarted[0])
	f.run(follow[0])
	f.drain()
	f.wantHome(a, posts[:1]) // the removal took both, the follow copied the newest one
}

// A malformed job can never succeed: it is done at once (no retry), having
// changed and enqueued nothing.
func TestMalformedJobsAreDropped(t *testing.T) {
	f := newFixture(t, rebuild.Config{})
	now := time.Now().UnixMicro()
	for name, j := range map[string]rebuild.Job{
		"no owner":           {Kind: rebuild.JobFollow, Follower: "1", Gen: now, Limit: 5},
		"unknown kind":       {Kind: "befriend", Owner: "1", Follower: "2", Gen: now, Limit: 5},
		"follow, no limit":   {Kind: rebuild.JobFollow, Owner: "1", Follower: "2", Gen: now},
		"follow and group":   {Kind: rebuild.JobUnfollow, Owner: "1", Follower: "2", Group: "3", Gen: now},
		"leave, no group":    {Kind: rebuild.JobLeave, Owner: "1", Gen: now},
		"no generation":      {Kind: rebuild.JobUnfollow, Owner: "1", Follower: "2"},
		"cursor of garbage":  {Kind: rebuild.JobUnfollow, Owner: "1", Follower: "2", Gen: now, Cursor: "%%%"},
		"limit over the max": {Kind: rebuild.JobJoin, Owner: "1", Group: "3", Gen: now, Limit: rebuild.MaxCopyLimit + 1},
	} {
		res, err := f.rb.Run(context.Background(), j)
		if err != nil || !strings.HasPrefix(res.Stopped, "malformed job") || len(res.Changed) != 0 {
			t.Errorf("%s: %+v, %v; want stopped as malformed", name, res, err)
		}
	}
	if js := f.q.take(); len(js) != 0 {
		t.Errorf("malformed jobs enqueued %d tasks", len(js))
	}
}
