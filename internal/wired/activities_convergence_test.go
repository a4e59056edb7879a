package wired_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/datastore"
	"cloud.google.com/go/datastore/apiv1/datastorepb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"

	"socialstream/internal/accounts"
	"socialstream/internal/activities"
	"socialstream/internal/app"
	"socialstream/internal/app/apptest"
	"socialstream/internal/derrors"
	"socialstream/internal/graph"
	"socialstream/internal/ids"
	"socialstream/internal/likes"
	"socialstream/internal/notifications"
	"socialstream/internal/polls"
	"socialstream/internal/queue"
	"socialstream/internal/rebuild"
	"socialstream/internal/store"
	"socialstream/internal/testenv"
)

// recorder is a Queue that records the names of the tasks it takes, or
// refuses every task while failing is set. With deliver set, it hands it
// each task as it takes it: a task Cloud Tasks runs at once, before the
// commit of the change that enqueued it.
type recorder struct {
	mu      sync.Mutex
	names   []string
	tasks   []queue.Task
	failing atomic.Bool
	deliver func(queue.Task)
}

func (r *recorder) Enqueue(_ context.Context, t queue.Task) error {
	if r.failing.Load() {
		return derrors.New(derrors.Unavailable, "queue down")
	}
	r.mu.Lock()
	r.names = append(r.names, t.Name)
	r.tasks = append(r.tasks, t)
	deliver := r.deliver
	r.mu.Unlock()
	if deliver != nil {
		deliver(t)
	}
	return nil
}

func (r *recorder) has(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range r.names {
		if n == name {
			return true
		}
	}
	return false
}

// An author passes from one follower chunk to two between the post's first
// read of its follower index and its commit, and the queue is down. The
// post must not commit without its fan-out planning job: it fails, and the
// retry with the same externalId makes the activity and its job. Before,
// the post committed, its after-commit enqueue failed, and the retry
// returned the existing activity, so followers past the first chunk never
// got it.
func TestPostNeverCommitsWithoutItsFanout(t *testing.T) {
	ctx := context.Background()
	// The post's own client: right after its first, non-transactional read
	// of the follower index, another follow gives the author a second
	// chunk.
	var armed atomic.Bool
	var g *graph.Service
	var author, late string
	r := newRace(t, func(k *datastorepb.Key) {
		if path := k.GetPath(); len(path) == 1 && path[0].GetKind() == graph.KindFollowerIndex && armed.CompareAndSwap(true, false) {
			if _, ferr := g.Follow(ctx, late, author, nil); ferr != nil {
				t.Errorf("the racing follow: %v", ferr)
			}
		}
	})
	direct, db, gen, acc := r.direct, r.db, r.gen, r.acc
	g = apptest.Services(t, direct, gen, acc, &recorder{}).Graph
	author, late = r.register("author"), r.register("late")
	fullChunk(t, g, author, graph.ChunkCap)
	armed.Store(true)
	q := &recorder{}
	act := apptest.Services(t, db, gen, acc, q).Activities

	q.failing.Store(true)
	in := activities.PostInput{Title: "hello", ExternalID: "once"}
	if _, _, err := act.Post(ctx, author, in); err == nil {
		t.Fatal("post with the queue down and a second chunk: no error")
	}
	if armed.Load() {
		t.Fatal("the racing follow never ran")
	}
	if n, _ := graph.ChunkCount(ctx, direct, author); n != 2 {
		t.Fatalf("author has %d follower chunks, want 2", n)
	}
	q.failing.Store(false)
	v, created, err := act.Post(ctx, author, in)
	if err != nil {
		t.Fatal(err)
	}
	if !created {
		t.Errorf("the failed post committed: the retry found activity %s", v.ID)
	}
	if name := "fanout-" + v.ID + "-0"; !q.has(name) {
		t.Errorf("activity %s has no fan-out planning job (tasks: %s)", v.ID, strings.Join(q.names, ", "))
	}
}

// Deleting an activity cannot commit without the job that cleans up after
// it: with the queue down, the delete fails and the activity stays. The
// job, run before the delete commits, asks to be retried; run after, it
// removes every reaction, vote in its poll and audience chunk, and again
// changes nothing.
// Before, the delete cleaned up on the request's context after its commit,
// best effort.
func TestDeleteCommitsOnlyWithItsCleanupJob(t *testing.T) {
	ctx := context.Background()
	q := &recorder{}
	db, acc, svc := recorded(t, q)
	act := svc.Activities
	p, _, err := acc.Register(ctx, "author", "password1", "")
	if err != nil {
		t.Fatal(err)
	}
	v, _, err := act.Post(ctx, p.ID, activities.PostInput{Title: "doomed",
		Poll: &polls.Input{Options: []string{"yes", "no"}, ExpiresIn: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	fan, _, err := acc.Register(ctx, "fan", "password1", "")
	if err != nil {
		t.Fatal(err)
	}
	// A reaction, a vote in its poll and a job-made audience chunk.
	if _, err := svc.Likes.Like(ctx, fan.ID, v.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := act.Vote(ctx, fan.ID, v.ID, []int{0}); err != nil {
		t.Fatal(err)
	}
	like := likes.LikeKey(db, v.ID, fan.ID)
	vote, counts := polls.VoteKey(db, v.ID, fan.ID), polls.CountKey(db, v.ID)
	extra := activities.AudienceKey(db, v.ID, 3)
	if err := db.Put(ctx, extra, &activities.Audience{FollowerIDs: []string{fan.ID}, UserID: p.ID}); err != nil {
		t.Fatal(err)
	}

	q.failing.Store(true)
	if err := act.Delete(ctx, p.ID, v.ID); err == nil {
		t.Fatal("delete with the queue down: no error")
	}
	if _, err := act.Exists(ctx, v.ID); err != nil {
		t.Fatalf("the failed delete removed the activity: %v", err)
	}
	task := activities.CleanupTask{ActivityID: v.ID, At: time.Now().UnixMicro(), Poll: true} // as the delete names it: the post had a poll
	if _, _, err := act.Cleanup(ctx, task); !errors.Is(err, activities.ErrNotYet) {
		t.Fatalf("cleanup before the delete committed: %v, want ErrNotYet", err)
	}
	// A job whose delete was asked for long ago and never committed gives
	// up, touching nothing.
	stale := activities.CleanupTask{ActivityID: v.ID, At: time.Now().Add(-time.Hour).UnixMicro()}
	if gone, n, err := act.Cleanup(ctx, stale); err != nil || gone || n != 0 {
		t.Fatalf("cleanup of a delete that never committed: gone %v, deleted %d, %v", gone, n, err)
	}
	q.failing.Store(false)
	if err := act.Delete(ctx, p.ID, v.ID); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(q.names, func(n string) bool { return strings.HasPrefix(n, "cleanup-"+v.ID+"-") }) {
		t.Fatalf("delete enqueued no cleanup job: %v", q.names)
	}
	for i := 0; i < 2; i++ {
		gone, _, err := act.Cleanup(ctx, task)
		if err != nil || !gone {
			t.Fatalf("cleanup %d: gone %v, %v", i, gone, err)
		}
	}
	var left []*datastore.Key
	for _, k := range []*datastore.Key{like, extra, vote, counts} {
		var dst datastore.PropertyList
		if ok, err := db.Get(ctx, k, &dst); ok || err != nil {
			left = append(left, k)
		}
	}
	if len(left) > 0 {
		t.Errorf("after cleanup these remain: %v", left)
	}
}

// An erased author's activities are deleted by the erasure's steps, each
// enqueueing the cleanup jobs of its activities before its commit. A
// cleanup job that runs before that commit must wait for it, however long
// after the account's deletion the step runs: one that took the erasure's
// start for the delete's and gave up left the activity's likes, comments,
// reposts and the notifications about them behind for good (its retry's
// enqueue is the same task, which the queue takes for done).
func TestAnErasedAuthorsActivitiesAreCleanedUpAfterALateStep(t *testing.T) {
	ctx := context.Background()
	q := &recorder{}
	db, acc, svc := recorded(t, q)
	act := svc.Activities
	author, _, err := acc.Register(ctx, "author", "password1", "")
	if err != nil {
		t.Fatal(err)
	}
	fan, _, err := acc.Register(ctx, "fan", "password1", "")
	if err != nil {
		t.Fatal(err)
	}
	v, _, err := act.Post(ctx, author.ID, activities.PostInput{Title: "soon gone"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Likes.Like(ctx, fan.ID, v.ID); err != nil {
		t.Fatal(err)
	}
	like := likes.LikeKey(db, v.ID, fan.ID)
	note := notifications.Key(db, author.ID, fmt.Sprintf("like-%s-%s", v.ID, fan.ID))
	if ok, err := db.Get(ctx, note, &notifications.Notification{}); err != nil || !ok {
		t.Fatalf("the like's notification: %v, %v", ok, err)
	}

	// The step runs long after the deletion was asked for; its cleanup
	// job runs before its commit, as the queue may deliver it.
	var early []activities.CleanupTask
	q.mu.Lock()
	q.deliver = func(task queue.Task) {
		var c activities.CleanupTask
		if task.Path != activities.CleanupJob.Path() || json.Unmarshal(task.Body, &c) != nil {
			return
		}
		if _, _, err := act.Cleanup(ctx, c); errors.Is(err, activities.ErrNotYet) {
			early = append(early, c) // the queue retries it
		} else if err != nil {
			t.Errorf("cleanup before the commit: %v", err)
		}
	}
	q.mu.Unlock()
	if _, err := act.EraseAuthored(ctx, author.ID, time.Now().Add(-time.Hour).UnixMicro(), 100); err != nil {
		t.Fatal(err)
	}
	q.mu.Lock()
	q.deliver = nil
	q.mu.Unlock()
	if len(early) == 0 {
		t.Fatal("the cleanup job that ran before the commit did not ask to be retried")
	}
	for _, c := range early {
		if gone, _, err := act.Cleanup(ctx, c); err != nil || !gone {
			t.Fatalf("cleanup retried after the commit: gone %v, %v", gone, err)
		}
	}
	for _, k := range []*datastore.Key{like, note} {
		if ok, err := db.Get(ctx, k, &datastore.PropertyList{}); ok || err != nil {
			t.Errorf("%v outlives the erased activity (%v)", k, err)
		}
	}
}

// fullChunk gives user n made-up followers, imported in bulk.
func fullChunk(t *testing.T, g *graph.Service, user string, n int) {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprint("filler", i)
	}
	if err := g.ImportFollowers(context.Background(), user, ids); err != nil {
		t.Fatal(err)
	}
}

// recorded builds the services over a test store and q (a recorder: no
// job runs by itself).
func recorded(t *testing.T, q *recorder) (*store.DB, *accounts.Service, *app.Services) {
	t.Helper()
	db, gen := testenv.DB(t), ids.New()
	acc := apptest.Accounts(t, db, gen)
	return db, acc, apptest.Services(t, db, gen, acc, q)
}

// A follow begun between a block's first read and its transaction ends in
// that transaction, whose commit then needs the job that removes the
// follow's copies: queue.Ahead enqueues it and runs the transaction
// again, so the job is there before the commit; with the queue down, the
// block does not commit, and the follow stands.
func TestBlockNeverCommitsWithoutItsRemoval(t *testing.T) {
	ctx := context.Background()
	// The block's own client: right after its first read, outside the
	// transaction, of the follows between the two (none), the blocked
	// person follows the blocker.
	var race atomic.Pointer[[2]string] // follower, followee
	var g *graph.Service
	r := newRace(t, func(k *datastorepb.Key) {
		if path := k.GetPath(); len(path) == 1 && path[0].GetKind() == graph.KindFollow {
			if p := race.Swap(nil); p != nil {
				if _, ferr := g.Follow(ctx, p[0], p[1], nil); ferr != nil {
					t.Errorf("the racing follow: %v", ferr)
				}
			}
		}
	})
	direct, db, gen, acc, register := r.direct, r.db, r.gen, r.acc, r.register
	g = apptest.Services(t, direct, gen, acc, &recorder{}).Graph
	follows := func(follower, followee string) bool {
		t.Helper()
		ok, err := direct.Get(ctx, graph.FollowKey(direct, follower, followee), &graph.Follow{})
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	q := &recorder{}
	blocking := apptest.Services(t, db, gen, acc, q).Graph
	removal := func(follower, followee string) (found bool) {
		q.mu.Lock()
		defer q.mu.Unlock()
		for _, task := range q.tasks {
			var j rebuild.Job
			if task.Path == rebuild.RunJob.Path() && json.Unmarshal(task.Body, &j) == nil &&
				j.Kind == rebuild.JobUnfollow && j.Follower == follower && j.Owner == followee {
				found = true
			}
		}
		return found
	}

	t.Run("the job before the commit", func(t *testing.T) {
		a, b := register("ann"), register("bob")
		stoodAtEnqueue := false
		q.mu.Lock()
		q.deliver = func(task queue.Task) {
			if task.Path == rebuild.RunJob.Path() {
				stoodAtEnqueue = follows(b, a)
			}
		}
		q.mu.Unlock()
		defer func() { q.mu.Lock(); q.deliver = nil; q.mu.Unlock() }()
		race.Store(&[2]string{b, a})
		if _, err := blocking.Block(ctx, a, b); err != nil {
			t.Fatal(err)
		}
		if race.Load() != nil {
			t.Fatal("the racing follow never ran")
		}
		if !removal(b, a) || !stoodAtEnqueue {
			t.Errorf("removal job enqueued %v, while the follow stood %v; want both", removal(b, a), stoodAtEnqueue)
		}
		if follows(b, a) {
			t.Error("the follow outlived the block")
		}
	})
	t.Run("the queue down", func(t *testing.T) {
		c, d := register("cat"), register("dan")
		race.Store(&[2]string{d, c})
		q.failing.Store(true)
		if _, err := blocking.Block(ctx, c, d); err == nil {
			t.Fatal("a block that needs a job the queue refuses: no error")
		}
		q.failing.Store(false)
		if race.Load() != nil {
			t.Fatal("the racing follow never ran")
		}
		if !follows(d, c) {
			t.Fatal("the block committed without its removal job: the follow is gone")
		}
		if _, err := blocking.Block(ctx, c, d); err != nil {
			t.Fatal(err)
		}
		if follows(d, c) || !removal(d, c) {
			t.Errorf("after the retry: follow stands %v, removal job %v", follows(d, c), removal(d, c))
		}
	})
}

// race is a test's two clients of one namespace: direct, and db, whose
// non-transactional lookups call onKey, once they are answered, with each
// key they read (where a test makes a change race the operation).
type race struct {
	t          *testing.T
	direct, db *store.DB
	gen        *ids.Generator
	acc        *accounts.Service
}

func newRace(t *testing.T, onKey func(*datastorepb.Key)) *race {
	t.Helper()
	ctx := context.Background()
	host, ns := testenv.EmulatorHost(t), testenv.Namespace(t)
	intercept := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		err := invoker(ctx, method, req, reply, cc, opts...)
		lr, ok := req.(*datastorepb.LookupRequest)
		if !ok || err != nil || lr.GetReadOptions().GetTransaction() != nil || lr.GetReadOptions().GetNewTransaction() != nil {
			return err
		}
		for _, k := range lr.GetKeys() {
			onKey(k)
		}
		return err
	}
	r := &race{t: t, gen: ids.New()}
	for _, c := range []struct {
		db   **store.DB
		opts []option.ClientOption
	}{{&r.direct, nil}, {&r.db, []option.ClientOption{option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(intercept))}}} {
		client, err := store.Open(ctx, testenv.Project, host, c.opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { client.Close() })
		if *c.db, err = store.New(client, ns); err != nil {
			t.Fatal(err)
		}
	}
	r.acc = apptest.Accounts(t, r.direct, r.gen)
	return r
}

// register registers name and returns its id.
func (r *race) register(name string) string {
	r.t.Helper()
	p, _, err := r.acc.Register(context.Background(), name, "password1", "")
	if err != nil {
		r.t.Fatal(err)
	}
	return p.ID
}
