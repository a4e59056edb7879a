package wired_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"cloud.google.com/go/datastore/apiv1/datastorepb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sync/errgroup"

	"socialstream/internal/activities"
	"socialstream/internal/app"
	"socialstream/internal/app/apptest"
	"socialstream/internal/federation"
	"socialstream/internal/graph"
	"socialstream/internal/ids"
	"socialstream/internal/meter"
	"socialstream/internal/rebuild"
	"socialstream/internal/store"
	"socialstream/internal/tasksemu"
	"socialstream/internal/testenv"
	"socialstream/internal/trends"
)

// celebrityEnv builds the services with CELEBRITY_FOLLOWERS at
// threshold, and returns the tasks they enqueue too.
func celebrityEnv(t *testing.T, threshold int64) (*apptest.Env, *tasksemu.Server) {
	t.Helper()
	return celebrityEnvOn(t, testenv.DB(t), threshold)
}

// celebrityEnvOn is celebrityEnv on db.
func celebrityEnvOn(t *testing.T, db *store.DB, threshold int64) (*apptest.Env, *tasksemu.Server) {
	t.Helper()
	gen := ids.New()
	acc := apptest.Accounts(t, db, gen)
	tasks := testenv.StartTasks(t)
	svc, err := app.NewServices(db, gen, acc, tasks.Queue, slog.New(slog.DiscardHandler),
		rebuild.Config{CelebrityFollowers: threshold}, app.Pictures{}, app.Push{}, federation.Config{}, trends.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return &apptest.Env{T: t, DB: db, Gen: gen, Acc: acc, Svc: svc}, tasks.Server
}

// enqueued reports whether a task whose name holds name is pending.
func enqueued(tasks *tasksemu.Server, name string) bool {
	return slices.ContainsFunc(tasks.Describe(), func(line string) bool { return strings.Contains(line, name) })
}

// celebrate runs the celebrity job of user whole, as the queue would.
func celebrate(t *testing.T, e *apptest.Env, user string) {
	t.Helper()
	ctx := context.Background()
	if _, err := e.Svc.Graph.Celebrate(ctx, graph.CelebrityTask{User: user}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Svc.Graph.Celebrate(ctx, graph.CelebrityTask{User: user, Chunk: 1}); err != nil {
		t.Fatal(err)
	}
}

// homeIDs returns the ids of a page of viewer's home.
func homeIDs(t *testing.T, e *apptest.Env, viewer string, r activities.FeedRequest) ([]string, string) {
	t.Helper()
	r.Viewer, r.Selector, r.UserID = viewer, activities.Friends, viewer
	vs, next, err := e.Svc.Activities.Feed(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, v := range vs {
		out = append(out, v.ID)
	}
	return out, next
}

// post posts title as author and runs its job that keeps a celebrity's
// post among their newest, as the queue would.
func post(t *testing.T, e *apptest.Env, author, title string) activities.View {
	t.Helper()
	v := e.Post(author, title)
	keep(t, e, v.ID)
	return v
}

func keep(t *testing.T, e *apptest.Env, id string) {
	t.Helper()
	if _, err := e.Svc.Activities.Keep(context.Background(), activities.KeepTask{ActivityID: id}); err != nil {
		t.Fatal(err)
	}
}

// starWithFan registers a star and a fan who follows them, and makes the
// star a celebrity (at a threshold of 1) by a post and its job.
func starWithFan(t *testing.T, e *apptest.Env) (star, fan string) {
	t.Helper()
	star, fan = e.Person("star"), e.Person("fan")
	if _, err := e.Svc.Graph.Follow(context.Background(), fan, star, nil); err != nil {
		t.Fatal(err)
	}
	post(t, e, star, "before the mark")
	celebrate(t, e, star)
	return star, fan
}

func isCelebrityPost(t *testing.T, e *apptest.Env, id string) bool {
	t.Helper()
	var a activities.Activity
	if _, err := e.DB.Get(context.Background(), activities.Key(e.DB, id), &a); err != nil {
		t.Fatal(err)
	}
	return a.Celebrity
}

// TestCelebrityPostsKeptInNoTransaction: the jobs of a celebrity's posts,
// run all at once and each twice, keep the newest posts in no
// transaction: each added its post in one once, over the one entity they
// all write, and in the convergence checker's run (seed 7, alone on the
// machine) nine jobs of one author's posts, delivered twice and under
// faults, were still waiting on each other's locks three minutes on. And
// a job that finds an older list stored than its posts (another job's
// write overtook its own) writes the newest all the same.
func TestCelebrityPostsKeptInNoTransaction(t *testing.T) {
	index, err := testenv.RepoFile("index.yaml")
	if err != nil {
		t.Fatal(err)
	}
	yaml, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	m, err := meter.New(yaml)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := celebrityEnvOn(t, testenv.DBWith(t, m.Option()), 1)
	ctx := context.Background()
	star, fan := starWithFan(t, e)
	var want []string // newest first
	for i := range 12 {
		want = slices.Insert(want, 0, e.Post(star, fmt.Sprint("post ", i)).ID)
	}
	m.Take()
	var g errgroup.Group
	for _, id := range append(slices.Clone(want), want...) {
		g.Go(func() error {
			_, err := e.Svc.Activities.Keep(ctx, activities.KeepTask{ActivityID: id})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatalf("a job of a celebrity's post: %v", err)
	}
	if b := m.Take(); b.Calls["BeginTransaction"] != 0 || b.Calls["Commit"] != 2*len(want) {
		t.Errorf("the jobs of %d posts, each twice: %v; want no transaction and a write each", len(want), b.Calls)
	}
	kept := func() []string {
		var c activities.CelebrityPosts
		if _, err := e.DB.Get(ctx, activities.CelebrityPostsKey(e.DB, star), &c); err != nil {
			t.Fatal(err)
		}
		return c.IDs
	}
	if diff := cmp.Diff(want, kept()); diff != "" {
		t.Fatalf("kept (-want +got):\n%s", diff)
	}
	if got, _ := homeIDs(t, e, fan, activities.FeedRequest{Page: store.PageRequest{Count: 12}}); !slices.Equal(got, want) {
		t.Fatalf("the fan's home: %v, want %v", got, want)
	}
	// An older list, as another job's write overtaken by a newer post
	// leaves it: the job of the oldest post writes the newest.
	if err := e.DB.Put(ctx, activities.CelebrityPostsKey(e.DB, star), &activities.CelebrityPosts{IDs: want[9:]}); err != nil {
		t.Fatal(err)
	}
	keep(t, e, want[11])
	if diff := cmp.Diff(want, kept()); diff != "" {
		t.Fatalf("kept after an older list was stored (-want +got):\n%s", diff)
	}
}

// A celebrity's post's job that a newer post overtakes after every write
// of the newest posts gives up after a few rounds and fails, so that its
// task comes back; the next run, not overtaken, writes the newest. Each
// write here lets a newer post commit first, as a celebrity posting
// faster than the job writes would.
func TestCelebrityPostsKeptGivesUpWhenOvertaken(t *testing.T) {
	var overtake atomic.Pointer[func()]
	var writes atomic.Int32
	db := testenv.DBWith(t, option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(func(ctx context.Context, m string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if c, ok := req.(*datastorepb.CommitRequest); ok && slices.ContainsFunc(c.GetMutations(), func(mu *datastorepb.Mutation) bool {
			path := mu.GetUpsert().GetKey().GetPath()
			return len(path) == 1 && path[0].GetKind() == activities.KindCelebrityPosts
		}) {
			writes.Add(1)
			if f := overtake.Load(); f != nil {
				(*f)()
			}
		}
		return invoker(ctx, m, req, reply, cc, opts...)
	})))
	e, _ := celebrityEnvOn(t, db, 1)
	ctx := context.Background()
	star, fan := starWithFan(t, e)
	first := e.Post(star, "the first").ID
	newer := []string{first}
	f := func() { newer = slices.Insert(newer, 0, e.Post(star, fmt.Sprint("newer ", len(newer))).ID) }
	overtake.Store(&f)
	_, err := e.Svc.Activities.Keep(ctx, activities.KeepTask{ActivityID: first})
	overtake.Store(nil)
	if err == nil || !strings.Contains(err.Error(), "overtaken") {
		t.Fatalf("a job overtaken at every write answered %v, want an error that gives its task back", err)
	}
	if n := writes.Load(); n != 5 {
		t.Errorf("the overtaken job wrote %d times, want 5", n)
	}
	var c activities.CelebrityPosts
	if _, err := e.DB.Get(ctx, activities.CelebrityPostsKey(e.DB, star), &c); err != nil {
		t.Fatal(err)
	}
	if slices.Equal(c.IDs, newer) {
		t.Fatalf("the overtaken job's last write holds the newest post %s, which committed after it", newer[0])
	}
	keep(t, e, first) // the task again
	if _, err := e.DB.Get(ctx, activities.CelebrityPostsKey(e.DB, star), &c); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(newer, c.IDs); diff != "" {
		t.Fatalf("kept once the job ran again (-want +got):\n%s", diff)
	}
	if got, _ := homeIDs(t, e, fan, activities.FeedRequest{Page: store.PageRequest{Count: len(newer)}}); !slices.Equal(got, newer) {
		t.Fatalf("the fan's home: %v, want %v", got, newer)
	}
}

// TestCelebrityPostsAreMergedNotCopied: once a person's followers reach
// the threshold, their next post makes them a celebrity; their posts
// after that copy no follower, and reach every follower's home all the
// same, a new follower's at once, and leave an unfollower's at once. A
// reply to someone else and a repost are still copied, to whom they
// reach.
func TestCelebrityPostsAreMergedNotCopied(t *testing.T) {
	e, tasks := celebrityEnv(t, 3)
	ctx := context.Background()
	star, other := e.Person("star"), e.Person("other")
	fans := []string{e.Person("fan0"), e.Person("fan1"), e.Person("fan2")}
	for _, f := range fans {
		if _, err := e.Svc.Graph.Follow(ctx, f, star, nil); err != nil {
			t.Fatal(err)
		}
	}
	if e.Post(other, "not followed enough"); enqueued(tasks, "celebrity-"+other) {
		t.Fatal("a post of someone under the threshold made them a celebrity")
	}
	if _, err := e.Svc.Graph.Follow(ctx, fans[0], other, nil); err != nil {
		t.Fatal(err)
	}
	before := post(t, e, star, "before").ID
	if isCelebrityPost(t, e, before) {
		t.Fatal("the post that finds the threshold reached is a celebrity's")
	}
	if !enqueued(tasks, "celebrity-"+star+"-0") {
		t.Fatalf("the post that finds the threshold reached made no celebrity job: %v", tasks.Describe())
	}
	celebrate(t, e, star)
	for _, f := range fans {
		got, err := graph.CelebritiesFollowed(ctx, e.DB, f)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, []string{star}) {
			t.Fatalf("celebrities %s follows = %v, want [%s]", f, got, star)
		}
	}

	private, _, err := e.Svc.Activities.Post(ctx, star, activities.PostInput{Title: "for followers", Visibility: activities.FollowersOnly})
	if err != nil {
		t.Fatal(err)
	}
	// The post's own transaction does not write the celebrity's newest
	// posts: a server sending several of theirs at once made each wait
	// on the others' commits (a request 84 s long, under the checker's
	// faults). Its job does.
	if got, _ := homeIDs(t, e, fans[0], activities.FeedRequest{Page: store.PageRequest{Count: 10}}); slices.Contains(got, private.ID) {
		t.Fatalf("a celebrity's post is in a home before its job kept it: %v", got)
	}
	keep(t, e, private.ID)
	keep(t, e, private.ID) // again, as the queue may run it: nothing more
	if !enqueued(tasks, "celebrity-post-"+private.ID) {
		t.Fatalf("a celebrity's post enqueued no job to keep it: %v", tasks.Describe())
	}
	after := post(t, e, star, "after").ID
	if !isCelebrityPost(t, e, after) {
		t.Fatal("a celebrity's post is not marked as one")
	}
	if n, err := activities.AudienceSize(ctx, e.DB, after); err != nil || n != 1 {
		t.Fatalf("audience of a celebrity's post = %d (%v), want the author alone", n, err)
	}
	if !isCelebrityPost(t, e, private.ID) {
		t.Fatal("a celebrity's post for followers is not merged")
	}
	for _, f := range fans {
		if got, _ := homeIDs(t, e, f, activities.FeedRequest{Page: store.PageRequest{Count: 10}}); !slices.Equal(got, []string{after, private.ID, before}) {
			t.Fatalf("home of %s = %v, want [%s %s %s]", f, got, after, private.ID, before)
		}
	}
	// Someone who does not follow them sees none of it at home.
	if got, _ := homeIDs(t, e, other, activities.FeedRequest{Page: store.PageRequest{Count: 10}}); slices.Contains(got, after) {
		t.Fatalf("home of someone who does not follow the celebrity = %v", got)
	}

	// A reply to someone else reaches those who follow both, by copies.
	said := e.Post(other, "said").ID
	reply, _, err := e.Svc.Activities.Post(ctx, star, activities.PostInput{Title: "@other yes", InReplyTo: said})
	if err != nil {
		t.Fatal(err)
	}
	if isCelebrityPost(t, e, reply.ID) {
		t.Fatal("a celebrity's reply to someone else is merged, not copied to whom it reaches")
	}
	if got, _ := homeIDs(t, e, fans[0], activities.FeedRequest{Page: store.PageRequest{Count: 10}}); !slices.Contains(got, reply.ID) {
		t.Fatalf("home of a follower of both = %v, without the reply", got)
	}
	if got, _ := homeIDs(t, e, fans[1], activities.FeedRequest{Page: store.PageRequest{Count: 10}}); slices.Contains(got, reply.ID) {
		t.Fatalf("home of a follower of the celebrity alone = %v, with their reply to someone else", got)
	}

	// A new follow is marked as it begins: the celebrity's posts are in
	// its home before any job runs.
	late := e.Person("late")
	if _, err := e.Svc.Graph.Follow(ctx, late, star, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := homeIDs(t, e, late, activities.FeedRequest{Page: store.PageRequest{Count: 10}}); !slices.Equal(got, []string{after, private.ID}) {
		t.Fatalf("home of a new follower = %v, want [%s %s]", got, after, private.ID)
	}
	// An unfollow takes them out at once (the copies of the post before
	// go with the removal's job).
	if err := e.Svc.Graph.Unfollow(ctx, fans[1], star, false); err != nil {
		t.Fatal(err)
	}
	if got, _ := homeIDs(t, e, fans[1], activities.FeedRequest{Page: store.PageRequest{Count: 10}}); slices.Contains(got, after) {
		t.Fatalf("home of an unfollower = %v, still with %s", got, after)
	}
	// A list's timeline merges them as a home does: its reader follows
	// the celebrity, marked as the membership begins.
	title := "stars"
	list, err := e.Svc.Graph.CreateList(ctx, fans[2], graph.ListInput{Title: &title})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Svc.Graph.AddToList(ctx, fans[2], list.ID, []string{star}, nil); err != nil {
		t.Fatal(err)
	}
	lv, _, err := e.Svc.Activities.Feed(ctx, activities.FeedRequest{Viewer: fans[2], Selector: activities.ListPrefix + list.ID, UserID: fans[2],
		Page: store.PageRequest{Count: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if len(lv) != 2 || lv[0].ID != after || lv[1].ID != private.ID {
		t.Fatalf("list of the celebrity = %v, want [%s %s] (the post before them is the follow job's to copy)", lv, after, private.ID)
	}
	// A follow job copies none of a celebrity's posts.
	n, err := e.Svc.Rebuild.Run(ctx, rebuild.Job{Kind: rebuild.JobFollow, Owner: star, Follower: late, Gen: followGen(t, e, late, star), Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(n.Changed, after) {
		t.Fatalf("the follow job copied a celebrity's post: %+v", n)
	}
}

func followGen(t *testing.T, e *apptest.Env, follower, followee string) int64 {
	t.Helper()
	f, ok, err := e.Svc.Graph.Get(context.Background(), follower, followee)
	if err != nil || !ok {
		t.Fatalf("follow %s→%s: %v %v", follower, followee, ok, err)
	}
	return f.Gen()
}

// TestCelebrityHomePaging: a home that merges a celebrity's posts with
// copies pages through them all, each once and in order, by cursor, by
// offset, and above an id (min_id), past what the celebrity's newest
// posts keep.
func TestCelebrityHomePaging(t *testing.T) {
	e, _ := celebrityEnv(t, 1)
	ctx := context.Background()
	star, friend, reader := e.Person("star"), e.Person("friend"), e.Person("reader")
	for _, who := range []string{star, friend} {
		if _, err := e.Svc.Graph.Follow(ctx, reader, who, nil); err != nil {
			t.Fatal(err)
		}
	}
	first := post(t, e, star, "before the mark").ID
	celebrate(t, e, star)
	var want []string                                   // newest first
	for i := range activities.KeptCelebrityPosts + 20 { // 48 of the celebrity's
		who := star
		if i%5 == 4 {
			who = friend
		}
		want = slices.Insert(want, 0, post(t, e, who, fmt.Sprint("post ", i)).ID)
	}
	want = append(want, first)

	var got []string
	cursor := ""
	for range 50 {
		page, next := homeIDs(t, e, reader, activities.FeedRequest{Page: store.PageRequest{Count: 7, Cursor: cursor}})
		got = append(got, page...)
		if next == "" {
			break
		}
		cursor = next
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("home by cursor (-want +got):\n%s", diff)
	}
	// A page of Mastodon's largest, and the one after it.
	page, next := homeIDs(t, e, reader, activities.FeedRequest{Page: store.PageRequest{Count: activities.KeptCelebrityPosts}})
	rest, _ := homeIDs(t, e, reader, activities.FeedRequest{Page: store.PageRequest{Count: activities.KeptCelebrityPosts, Cursor: next}})
	if diff := cmp.Diff(want, append(page, rest...)); diff != "" {
		t.Fatalf("home by pages of %d (-want +got):\n%s", activities.KeptCelebrityPosts, diff)
	}
	for _, offset := range []int{0, 13, 38, 41} {
		page, _ := homeIDs(t, e, reader, activities.FeedRequest{Page: store.PageRequest{Count: 9, Offset: offset}})
		if diff := cmp.Diff(want[offset:min(offset+9, len(want))], page); diff != "" {
			t.Fatalf("home from offset %d (-want +got):\n%s", offset, diff)
		}
	}
	// The page just above an id, far past what is kept.
	at := len(want) - 3
	page, _ = homeIDs(t, e, reader, activities.FeedRequest{After: want[at], Page: store.PageRequest{Count: 5}})
	if diff := cmp.Diff(want[at-5:at], page); diff != "" {
		t.Fatalf("home above %s (-want +got):\n%s", want[at], diff)
	}
	// Below an id (max_id), likewise.
	page, _ = homeIDs(t, e, reader, activities.FeedRequest{Before: want[44], Page: store.PageRequest{Count: 6}})
	if diff := cmp.Diff(want[45:min(51, len(want))], page); diff != "" {
		t.Fatalf("home below %s (-want +got):\n%s", want[44], diff)
	}
}

// TestCelebrityMarkingSparesEndedFollows: a follow ended between the
// mark and the step that marks its chunk is not marked (nor written back),
// and the step run twice changes nothing more. (The step reads each follow
// in its transaction, so one ended after it read the chunk is not written
// back either: the convergence checker's unfollows meet that under
// faults.)
func TestCelebrityMarkingSparesEndedFollows(t *testing.T) {
	e, _ := celebrityEnv(t, 2)
	ctx := context.Background()
	star, stays, leaves := e.Person("star"), e.Person("stays"), e.Person("leaves")
	for _, f := range []string{stays, leaves} {
		if _, err := e.Svc.Graph.Follow(ctx, f, star, nil); err != nil {
			t.Fatal(err)
		}
	}
	// The mark, then the unfollow, then the step over the chunk.
	if _, err := e.Svc.Graph.Celebrate(ctx, graph.CelebrityTask{User: star}); err != nil {
		t.Fatal(err)
	}
	if err := e.Svc.Graph.Unfollow(ctx, leaves, star, false); err != nil {
		t.Fatal(err)
	}
	for range 2 { // and again, as the queue may run it
		if _, err := e.Svc.Graph.Celebrate(ctx, graph.CelebrityTask{User: star, Chunk: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok, err := e.Svc.Graph.Get(ctx, leaves, star); err != nil || ok {
		t.Fatalf("an ended follow after the marking: there %v (%v)", ok, err)
	}
	for who, want := range map[string][]string{stays: {star}, leaves: nil} {
		got, err := graph.CelebritiesFollowed(ctx, e.DB, who)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("celebrities %s follows = %v, want %v", who, got, want)
		}
	}
}

// A post taken by an inbox (PostOnly: no answer read) makes its author a
// celebrity as Post does, once their followers reach the threshold, and
// one taken again by its external id is the first, not made again.
func TestPostOnlyCelebratesAndTakesOnce(t *testing.T) {
	e, tasks := celebrityEnv(t, 2)
	ctx := context.Background()
	far := e.Person("far")
	in := activities.PostInput{Title: "from elsewhere", ExternalID: "x:first"}
	if _, made, err := e.Svc.Activities.PostOnly(ctx, far, in); err != nil || !made || enqueued(tasks, "celebrity-"+far) {
		t.Fatalf("PostOnly under the threshold: made %v, %v; celebrity job %v", made, err, enqueued(tasks, "celebrity-"+far))
	}
	for _, f := range []string{e.Person("fan0"), e.Person("fan1")} {
		if _, err := e.Svc.Graph.Follow(ctx, f, far, nil); err != nil {
			t.Fatal(err)
		}
	}
	in.ExternalID = "x:second"
	id, made, err := e.Svc.Activities.PostOnly(ctx, far, in)
	if err != nil || !made || !enqueued(tasks, "celebrity-"+far+"-0") {
		t.Fatalf("PostOnly at the threshold: %q made %v, %v; jobs %v", id, made, err, tasks.Describe())
	}
	again, made, err := e.Svc.Activities.PostOnly(ctx, far, in)
	if err != nil || made || again != id {
		t.Errorf("the same external id again: %q made %v, %v; want %q, not made", again, made, err, id)
	}
	if vs, err := e.Svc.Activities.Get(ctx, far, far, "", []string{id}); err != nil || len(vs) != 1 || vs[0].Title != "from elsewhere" {
		t.Errorf("the post PostOnly made: %+v, %v", vs, err)
	}
}
