package rebuild_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"socialstream/internal/accounts"
	"socialstream/internal/activities"
	"socialstream/internal/app"
	"socialstream/internal/derrors"
	"socialstream/internal/federation"
	"socialstream/internal/graph"
	"socialstream/internal/groups"
	"socialstream/internal/ids"
	"socialstream/internal/queue"
	"socialstream/internal/rebuild"
	"socialstream/internal/store"
	"socialstream/internal/testenv"
	"socialstream/internal/trends"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// capture is a Queue that holds tasks for the test to run in any order,
// refusing a taken name as Cloud Tasks does.
type capture struct {
	mu    sync.Mutex
	names map[string]bool
	tasks []queue.Task
	// hook, when set, sees the next rebuild task as it is enqueued, before
	// the change that enqueues it commits.
	hook func(queue.Task)
}

func (c *capture) Enqueue(_ context.Context, t queue.Task) error {
	c.mu.Lock()
	if t.Name != "" && c.names[t.Name] {
		c.mu.Unlock()
		return nil
	}
	c.names[t.Name] = true
	c.tasks = append(c.tasks, t)
	hook := c.hook
	if t.Path == rebuild.RunJob.Path() {
		c.hook = nil
	} else {
		hook = nil
	}
	c.mu.Unlock()
	if hook != nil {
		hook(t)
	}
	return nil
}

// beforeCommit has f run when the next rebuild job is enqueued: before the
// change that enqueues it commits.
func (f *fixture) beforeCommit(run func(rebuild.Job)) {
	f.q.mu.Lock()
	defer f.q.mu.Unlock()
	f.q.hook = func(t queue.Task) {
		var j rebuild.Job
		if err := json.Unmarshal(t.Body, &j); err != nil {
			f.t.Error(err)
			return
		}
		run(j)
	}
}

func noCopies() *int { n := 0; return &n }

// take removes and returns the queued tasks.
func (c *capture) take() []queue.Task {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.tasks
	c.tasks = nil
	return out
}

type fixture struct {
	t      *testing.T
	db     *store.DB
	q      *capture
	acc    *accounts.Service
	graph  *graph.Service
	groups *groups.Service
	act    *activities.Service
	rb     *rebuild.Service
}

func newFixture(t *testing.T, cfg rebuild.Config) *fixture {
	t.Helper()
	db := testenv.DB(t)
	gen := ids.New()
	f := &fixture{t: t, db: db, q: &capture{names: map[string]bool{}}}
	var err error
	if f.acc, err = accounts.New(db, gen, accounts.Config{BcryptCost: bcrypt.MinCost}); err != nil {
		t.Fatal(err)
	}
	svc, err := app.NewServices(db, gen, f.acc, f.q, slog.New(slog.DiscardHandler), cfg, app.Pictures{}, app.Push{}, federation.Config{}, trends.Config{})
	if err != nil {
		t.Fatal(err)
	}
	f.graph, f.groups, f.act, f.rb = svc.Graph, svc.Groups, svc.Activities, svc.Rebuild
	return f
}

func (f *fixture) user(name string) string {
	f.t.Helper()
	p, _, err := f.acc.Register(context.Background(), "user_"+name, "password1", "")
	if err != nil {
		f.t.Fatal(err)
	}
	return p.ID
}

// posts makes n activities by author, oldest first, and returns their ids
// newest first.
func (f *fixture) posts(author string, n int) []string {
	f.t.Helper()
	var out []string
	for i := 0; i < n; i++ {
		v, _, err := f.act.Post(context.Background(), author, activities.PostInput{Title: fmt.Sprint("post ", i)})
		if err != nil {
			f.t.Fatal(err)
		}
		out = append([]string{v.ID}, out...)
	}
	return out
}

// jobs decodes the queued rebuild jobs (and drops fan-out tasks, which no
// test here needs).
func (f *fixture) jobs() []rebuild.Job {
	f.t.Helper()
	var out []rebuild.Job
	for _, t := range f.q.take() {
		if t.Path != rebuild.RunJob.Path() {
			continue
		}
		var j rebuild.Job
		if err := json.Unmarshal(t.Body, &j); err != nil {
			f.t.Fatal(err)
		}
		out = append(out, j)
	}
	return out
}

func (f *fixture) run(j rebuild.Job) rebuild.Result {
	f.t.Helper()
	res, err := f.rb.Run(context.Background(), j)
	if err != nil {
		f.t.Fatalf("Run(%+v): %v", j, err)
	}
	return res
}

// drain runs queued jobs, and those they enqueue, until none is left.
func (f *fixture) drain() {
	f.t.Helper()
	for i := 0; i < 100; i++ {
		js := f.jobs()
		if len(js) == 0 {
			return
		}
		for _, j := range js {
			f.run(j)
		}
	}
	f.t.Fatal("jobs keep enqueuing jobs")
}

// home returns the ids on viewer's home feed.
func (f *fixture) home(viewer string) []string {
	f.t.Helper()
	list, _, err := f.act.Feed(context.Background(), activities.FeedRequest{Viewer: viewer, Selector: activities.Friends, UserID: viewer, Page: store.PageRequest{Count: 100}})
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, v := range list {
		out = append(out, v.ID)
	}
	return out
}

func (f *fixture) wantHome(viewer string, want []string) {
	f.t.Helper()
	if want == nil {
		want = []string{}
	}
	got := f.home(viewer)
	if got == nil {
		got = []string{}
	}
	if !slices.Equal(got, want) {
		f.t.Errorf("home = %v\nwant   %v", got, want)
	}
}

func TestFollowCopiesNewestN(t *testing.T) {
	f := newFixture(t, rebuild.Config{CopyLimit: 5})
	ctx := context.Background()
	a, b := f.user("a"), f.user("b")
	posts := f.posts(b, 8)
	if _, err := f.graph.Follow(ctx, a, b, nil); err != nil {
		t.Fatal(err)
	}
	js := f.jobs()
	if len(js) != 1 || js[0].Kind != rebuild.JobFollow || js[0].Limit != 5 {
		t.Fatalf("jobs = %+v", js)
	}
	res := f.run(js[0])
	if len(res.Changed) != 5 || res.NextStep {
		t.Errorf("first run: %+v", res)
	}
	f.wantHome(a, posts[:5])
	// Running again changes nothing.
	if res := f.run(js[0]); len(res.Changed) != 0 {
		t.Errorf("second run changed %v", res.Changed)
	}
	f.wantHome(a, posts[:5])

	// A per-call copyLimit; 0 copies none and starts no job.
	c := f.user("c")
	two, zero := 2, 0
	if _, err := f.graph.Follow(ctx, c, b, &two); err != nil {
		t.Fatal(err)
	}
	f.drain()
	f.wantHome(c, posts[:2])
	d := f.user("d")
	if _, err := f.graph.Follow(ctx, d, b, &zero); err != nil {
		t.Fatal(err)
	}
	if js := f.jobs(); len(js) != 0 {
		t.Errorf("copyLimit 0 enqueued %+v", js)
	}
	f.wantHome(d, nil)
	// New posts reach every follower, whatever their copyLimit.
	p := f.posts(b, 1)[0]
	f.wantHome(d, []string{p})
}

func TestUnfollowRemovesUnlessKeepHistory(t *testing.T) {
	f := newFixture(t, rebuild.Config{})
	ctx := context.Background()
	a, c, b := f.user("a"), f.user("c"), f.user("b")
	posts := f.posts(b, 3)
	for _, u := range []string{a, c} {
		if _, err := f.graph.Follow(ctx, u, b, nil); err != nil {
			t.Fatal(err)
		}
	}
	f.drain()
	f.wantHome(a, posts)
	if err := f.graph.Unfollow(ctx, a, b, false); err != nil {
		t.Fatal(err)
	}
	if err := f.graph.Unfollow(ctx, c, b, true); err != nil {
		t.Fatal(err)
	}
	js := f.jobs()
	if len(js) != 1 || js[0].Kind != rebuild.JobUnfollow || js[0].Follower != a {
		t.Fatalf("jobs = %+v (keepHistory must enqueue none)", js)
	}
	if res := f.run(js[0]); len(res.Changed) != 3 {
		t.Errorf("unfollow job: %+v", res)
	}
	f.wantHome(a, nil)
	f.wantHome(c, posts)
	if res := f.run(js[0]); len(res.Changed) != 0 {
		t.Errorf("unfollow job again changed %v", res.Changed)
	}
}

// Follow, unfollow, follow, with the jobs run in every order: it always
// ends followed, with the copies. A job that asks to be retried (the second
// follow's, while the removal is under way) goes to the back, as the queue
// would retry it.
func TestFlappingEndsFollowedInAnyOrder(t *testing.T) {
	orders := [][]int{{0, 1, 2}, {2, 1, 0}, {1, 0, 2}, {2, 0, 1}, {1, 2, 0}, {0, 2, 1}}
	for _, order := range orders {
		t.Run(fmt.Sprint(order), func(t *testing.T) {
			f := newFixture(t, rebuild.Config{})
			ctx := context.Background()
			a, b := f.user("a"), f.user("b")
			posts := f.posts(b, 3)
			var js []rebuild.Job
			for i, step := range []func() error{
				func() error { _, err := f.graph.Follow(ctx, a, b, nil); return err },
				func() error { return f.graph.Unfollow(ctx, a, b, false) },
				func() error { _, err := f.graph.Follow(ctx, a, b, nil); return err },
			} {
				if err := step(); err != nil {
					t.Fatal(err)
				}
				got := f.jobs()
				if len(got) != 1 {
					t.Fatalf("step %d enqueued %d jobs", i, len(got))
				}
				js = append(js, got[0])
				time.Sleep(2 * time.Millisecond) // distinct generations
			}
			var pending []rebuild.Job
			for _, i := range order {
				pending = append(pending, js[i])
			}
			for n := 0; len(pending) > 0; n++ {
				if n > 10 {
					t.Fatalf("jobs keep asking to be retried: %+v", pending)
				}
				j := pending[0]
				pending = pending[1:]
				if _, err := f.rb.Run(ctx, j); errors.Is(err, derrors.Unavailable) {
					pending = append(pending, j)
				} else if err != nil {
					t.Fatal(err)
				}
			}
			f.drain()
			f.wantHome(a, posts)
		})
	}
}

// Follow then unfollow, whichever job runs first: nothing stays copied.
func TestFollowThenUnfollowLeavesNothing(t *testing.T) {
	for _, followJobFirst := range []bool{true, false} {
		t.Run(fmt.Sprint("follow job first ", followJobFirst), func(t *testing.T) {
			f := newFixture(t, rebuild.Config{})
			ctx := context.Background()
			a, b := f.user("a"), f.user("b")
			f.posts(b, 3)
			if _, err := f.graph.Follow(ctx, a, b, nil); err != nil {
				t.Fatal(err)
			}
			follow := f.jobs()[0]
			if followJobFirst {
				f.run(follow) // runs while still followed: copies
			}
			if err := f.graph.Unfollow(ctx, a, b, false); err != nil {
				t.Fatal(err)
			}
			unfollow := f.jobs()[0]
			f.run(unfollow)
			res := f.run(follow) // late: must see the unfollow and stop
			if res.Stopped == "" || len(res.Changed) != 0 {
				t.Errorf("late follow job: %+v", res)
			}
			f.wantHome(a, nil)
		})
	}
}

// A job that arrives before its change commits asks to be retried, and
// gives up once the change can no longer commit.
func TestJobBeforeCommitRetriesThenGivesUp(t *testing.T) {
	f := newFixture(t, rebuild.Config{GiveUpAfter: 300 * time.Millisecond})
	a, b := f.user("a"), f.user("b")
	posts := f.posts(b, 2)
	var j rebuild.Job
	f.beforeCommit(func(job rebuild.Job) {
		j = job
		if _, err := f.rb.Run(context.Background(), j); !errors.Is(err, derrors.Unavailable) {
			t.Errorf("job before its follow committed: %v, want a retryable error", err)
		}
	})
	if _, err := f.graph.Follow(context.Background(), a, b, nil); err != nil {
		t.Fatal(err)
	}
	f.q.take()
	if res := f.run(j); len(res.Changed) != 2 {
		t.Errorf("retried job: %+v", res)
	}
	f.wantHome(a, posts)

	orphan := rebuild.Job{Kind: rebuild.JobFollow, Owner: b, Follower: f.user("c"), Gen: time.Now().Add(-time.Second).UnixMicro(), Limit: 10}
	if res := f.run(orphan); res.Stopped != "never committed" {
		t.Errorf("job whose follow never committed: %+v", res)
	}
}

// Jobs of many followers edit the same audience chunks at once: each
// transaction re-reads the chunk, so no follower is lost.
func TestConcurrentJobsLoseNoUpdate(t *testing.T) {
	f := newFixture(t, rebuild.Config{})
	ctx := context.Background()
	b := f.user("b")
	posts := f.posts(b, 4)
	var fans []string
	for i := 0; i < 6; i++ {
		fans = append(fans, f.user(fmt.Sprint("fan", i)))
	}
	for _, fan := range fans {
		if _, err := f.graph.Follow(ctx, fan, b, nil); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for _, j := range f.jobs() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := f.rb.Run(ctx, j); err != nil {
				t.Errorf("concurrent job: %v", err)
			}
		}()
	}
	wg.Wait()
	for _, fan := range fans {
		f.wantHome(fan, posts)
	}
}

// Posts racing a follow: whatever the interleaving, once the jobs settle
// the follower's home has every post.
func TestPostRacingFollowIsNotLost(t *testing.T) {
	f := newFixture(t, rebuild.Config{})
	ctx := context.Background()
	a, b := f.user("a"), f.user("b")
	const n = 12
	var wg sync.WaitGroup
	ids := make([]string, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, _, err := f.act.Post(ctx, b, activities.PostInput{Title: fmt.Sprint("race ", i)})
			if err != nil {
				t.Errorf("post: %v", err)
				return
			}
			ids[i] = v.ID
		}()
		if i == n/2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := f.graph.Follow(ctx, a, b, nil); err != nil {
					t.Errorf("follow: %v", err)
				}
			}()
		}
	}
	wg.Wait()
	f.drain()
	got := f.home(a)
	for _, id := range ids {
		if !slices.Contains(got, id) {
			t.Errorf("post %s missing from the follower's home", id)
		}
	}
}

func TestBackfillChainIsBoundedAndStopsOnUnfollow(t *testing.T) {
	f := newFixture(t, rebuild.Config{CopyLimit: 4, BackfillBatch: 3, BackfillMax: 7})
	ctx := context.Background()
	a, b := f.user("a"), f.user("b")
	posts := f.posts(b, 15)
	if _, err := f.graph.Follow(ctx, a, b, nil); err != nil {
		t.Fatal(err)
	}
	f.drain()
	// 4 at once, then 3 + 3 + 1 by backfill: the newest 11.
	f.wantHome(a, posts[:11])

	c := f.user("c")
	if _, err := f.graph.Follow(ctx, c, b, nil); err != nil {
		t.Fatal(err)
	}
	first := f.jobs()
	f.run(first[0])
	step := f.jobs()
	if len(step) != 1 || step[0].Step != 1 || step[0].Before == 0 {
		t.Fatalf("backfill step = %+v", step)
	}
	if err := f.graph.Unfollow(ctx, c, b, true); err != nil { // keepHistory: no removal job
		t.Fatal(err)
	}
	f.jobs()
	if res := f.run(step[0]); res.Stopped == "" || res.NextStep || len(res.Changed) != 0 {
		t.Errorf("backfill after unfollow: %+v", res)
	}
	f.wantHome(c, posts[:4])
}

func TestJoinAndLeaveCopyGroupIDs(t *testing.T) {
	f := newFixture(t, rebuild.Config{})
	ctx := context.Background()
	owner, u := f.user("owner"), f.user("member")
	posts := f.posts(u, 3)
	g, err := f.groups.Create(ctx, owner, "g", "", groups.Open)
	if err != nil {
		t.Fatal(err)
	}
	feed := func() []string {
		list, _, err := f.act.Feed(ctx, activities.FeedRequest{Viewer: owner, Selector: g.ID, Page: store.PageRequest{Count: 50}})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, v := range list {
			out = append(out, v.ID)
		}
		return out
	}
	if _, _, err := f.groups.Join(ctx, u, g.ID, u); err != nil {
		t.Fatal(err)
	}
	f.drain()
	if got := feed(); !slices.Equal(got, posts) {
		t.Errorf("group feed after join = %v, want %v", got, posts)
	}
	if err := f.groups.Leave(ctx, u, g.ID, u); err != nil {
		t.Fatal(err)
	}
	f.drain()
	if got := feed(); len(got) != 0 {
		t.Errorf("group feed after leave = %v", got)
	}
	// Refused changes enqueue nothing.
	if err := f.groups.Leave(ctx, u, g.ID, owner); !errors.Is(err, derrors.PermissionDenied) {
		t.Errorf("member removes owner: %v", err)
	}
	if js := f.jobs(); len(js) != 0 {
		t.Errorf("refused change enqueued %+v", js)
	}
}

// An unfollow job can run before the unfollow commits (it is enqueued
// first): finding the very follow it is to remove, it asks to be retried,
// and removes once the unfollow has committed.
func TestRemovalJobBeforeCommitRetries(t *testing.T) {
	f := newFixture(t, rebuild.Config{})
	ctx := context.Background()
	a, b := f.user("a"), f.user("b")
	posts := f.posts(b, 2)
	if _, err := f.graph.Follow(ctx, a, b, nil); err != nil {
		t.Fatal(err)
	}
	f.drain()
	f.wantHome(a, posts)
	var j rebuild.Job
	f.beforeCommit(func(job rebuild.Job) {
		j = job
		if _, err := f.rb.Run(ctx, j); !errors.Is(err, derrors.Unavailable) {
			t.Errorf("removal job before the unfollow committed: %v, want a retryable error", err)
		}
		f.wantHome(a, posts)
	})
	if err := f.graph.Unfollow(ctx, a, b, false); err != nil {
		t.Fatal(err)
	}
	f.q.take()
	if res := f.run(j); len(res.Changed) != 2 {
		t.Errorf("retried removal: %+v", res)
	}
	f.wantHome(a, nil)
}

// A follow job can create an activity's audience chunk before the post's
// fan-out job writes it; the fan-out job must merge into it, or the rest
// of that chunk's followers would never see the post.
func TestFanoutMergesIntoChunkAFollowJobCreated(t *testing.T) {
	f := newFixture(t, rebuild.Config{})
	ctx := context.Background()
	b := f.user("big")
	filler := make([]string, graph.ChunkCap)
	for i := range filler {
		filler[i] = fmt.Sprint(6_000_000_000 + i)
	}
	if err := f.graph.ImportFollowers(ctx, b, filler); err != nil {
		t.Fatal(err)
	}
	early := f.user("early") // lands in follower chunk 1
	if _, err := f.graph.Follow(ctx, early, b, noCopies()); err != nil {
		t.Fatal(err)
	}
	post := f.posts(b, 1)[0]
	var fanouts []queue.Task
	for _, task := range f.q.take() {
		if task.Path == activities.FanoutJob.Path() {
			fanouts = append(fanouts, task)
		}
	}
	// A new follower, also in chunk 1; its job runs before any fan-out job.
	late := f.user("late")
	if _, err := f.graph.Follow(ctx, late, b, nil); err != nil {
		t.Fatal(err)
	}
	f.drain()
	f.wantHome(late, []string{post})

	// Now the fan-out: the plan job, then the chunk jobs it enqueues.
	for len(fanouts) > 0 {
		var next []queue.Task
		for _, task := range fanouts {
			var ft activities.FanoutTask
			if err := json.Unmarshal(task.Body, &ft); err != nil {
				t.Fatal(err)
			}
			if _, err := f.act.Fanout(ctx, ft); err != nil {
				t.Fatal(err)
			}
		}
		for _, task := range f.q.take() {
			if task.Path == activities.FanoutJob.Path() {
				next = append(next, task)
			}
		}
		fanouts = next
	}
	f.wantHome(early, []string{post})
	f.wantHome(late, []string{post})
	f.wantHome(filler[graph.ChunkCap-1], []string{post})
}
