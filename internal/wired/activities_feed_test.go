package wired_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/api/option"
	"google.golang.org/grpc"

	"socialstream/internal/accounts"
	"socialstream/internal/activities"
	"socialstream/internal/app"
	"socialstream/internal/app/apptest"
	"socialstream/internal/graph"
	"socialstream/internal/groups"
	"socialstream/internal/ids"
	"socialstream/internal/likes"
	"socialstream/internal/store"
	"socialstream/internal/testenv"
)

// calls counts the Datastore RPCs a client makes, by method.
type calls struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *calls) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	c.mu.Lock()
	c.n[method[strings.LastIndex(method, "/")+1:]]++
	c.mu.Unlock()
	return invoker(ctx, method, req, reply, cc, opts...)
}

func (c *calls) reset() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.n
	c.n = map[string]int{}
	return old
}

type fixture struct {
	db     *store.DB
	calls  *calls
	acc    *accounts.Service
	graph  *graph.Service
	groups *groups.Service
	act    *activities.Service
	likes  *likes.Service
	svc    *app.Services
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	c := &calls{n: map[string]int{}}
	db := intercepted(t, c.intercept)
	gen := ids.New()
	f := &fixture{db: db, calls: c}
	f.acc = apptest.Accounts(t, db, gen)
	svc := apptest.Services(t, db, gen, f.acc, testenv.StartTasks(t).Queue)
	f.graph, f.groups, f.act, f.likes, f.svc = svc.Graph, svc.Groups, svc.Activities, svc.Likes, svc
	return f
}

// intercepted returns a store on the test's namespace over a Datastore
// client whose calls go through interceptor.
func intercepted(t *testing.T, interceptor grpc.UnaryClientInterceptor) *store.DB {
	t.Helper()
	client, err := store.Open(context.Background(), testenv.Project, testenv.EmulatorHost(t),
		option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(interceptor)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	db, err := store.New(client, testenv.Namespace(t))
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// register registers a user and returns their id.
func register(t *testing.T, acc *accounts.Service, name string) string {
	t.Helper()
	p, _, err := acc.Register(context.Background(), name, "password1", "")
	if err != nil {
		t.Fatal(err)
	}
	return p.ID
}

func (f *fixture) user(t *testing.T, name string) string {
	t.Helper()
	p, _, err := f.acc.Register(context.Background(), name, "password1", "")
	if err != nil {
		t.Fatal(err)
	}
	return p.ID
}

// users registers n people named prefix0, prefix1, ..., and returns
// their ids.
func (f *fixture) users(t *testing.T, prefix string, n int) []string {
	t.Helper()
	out := make([]string, n)
	for i := range out {
		out[i] = f.user(t, fmt.Sprint(prefix, i))
	}
	return out
}

// at runs each of n calls of do at once, and reports their errors.
func at(t *testing.T, n int, do func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() { errs <- do(i) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// TestFeedCallCounts checks the query-on-read claim by counting RPCs: every
// feed is one query and one batch lookup (two for home), whether the
// reader follows 2 people or 12.
func TestFeedCallCounts(t *testing.T) {
	ctx := context.Background()
	for _, followees := range []int{2, 12} {
		t.Run(fmt.Sprint(followees, " followees"), func(t *testing.T) {
			f := newFixture(t)
			viewer := f.user(t, "viewer")
			g, err := f.groups.Create(ctx, viewer, "g", "", groups.Open)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < followees; i++ {
				author := f.user(t, fmt.Sprintf("author%02d", i))
				if _, err := f.graph.Follow(ctx, viewer, author, nil); err != nil {
					t.Fatal(err)
				}
				if _, _, err := f.groups.Join(ctx, author, g.ID, author); err != nil {
					t.Fatal(err)
				}
				for j := 0; j < 3; j++ {
					if _, _, err := f.act.Post(ctx, author, activities.PostInput{Title: fmt.Sprintf("hello @viewer %d", j)}); err != nil {
						t.Fatal(err)
					}
				}
			}
			if _, _, err := f.act.Post(ctx, viewer, activities.PostInput{Title: "my own"}); err != nil {
				t.Fatal(err)
			}
			page := store.PageRequest{Count: 20}
			tests := []struct {
				selector string
				want     map[string]int
			}{
				{activities.Self, map[string]int{"RunQuery": 1, "Lookup": 1}},
				// @all: a keys-only query a shard, a lookup of the page's
				// activities, then the lookup of the rest.
				{activities.All, map[string]int{"RunQuery": activities.PublicShards, "Lookup": 2}},
				{activities.Mentions, map[string]int{"RunQuery": 1, "Lookup": 1}},
				{g.ID, map[string]int{"RunQuery": 1, "Lookup": 1}},
				{activities.Friends, map[string]int{"RunQuery": 1, "Lookup": 2}},
			}
			for _, tt := range tests {
				f.calls.reset()
				user := viewer
				list, _, err := f.act.Feed(ctx, activities.FeedRequest{Viewer: viewer, Selector: tt.selector, UserID: user, Page: page})
				if err != nil {
					t.Fatalf("%s: %v", tt.selector, err)
				}
				if len(list) == 0 {
					t.Errorf("%s: empty feed", tt.selector)
				}
				for _, v := range list {
					if v.Author == nil {
						t.Errorf("%s: activity %s without author", tt.selector, v.ID)
					}
				}
				if diff := cmp.Diff(tt.want, f.calls.reset()); diff != "" {
					t.Errorf("%s: Datastore calls mismatch (-want +got):\n%s", tt.selector, diff)
				}
			}
		})
	}
}

// Two instances whose generators draw the same node and mint in the same
// millisecond make the same id; the insert-if-absent post mints again.
func TestIDCollisionAcrossInstances(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	author := f.user(t, "author")
	clock := ids.Epoch.Add(1e12)
	now := func() time.Time { return clock }
	var posted []string
	for i := 0; i < 2; i++ {
		gen := ids.NewNode(7, now) // a fresh "instance" each time: same first id
		svc := apptest.Services(t, f.db, gen, f.acc, testenv.StartTasks(t).Queue).Activities
		v, _, err := svc.Post(ctx, author, activities.PostInput{Title: fmt.Sprint("post ", i)})
		if err != nil {
			t.Fatal(err)
		}
		posted = append(posted, v.ID)
	}
	if posted[0] == posted[1] {
		t.Fatalf("both posts got id %s", posted[0])
	}
	list, _, err := f.act.Feed(ctx, activities.FeedRequest{Viewer: author, Selector: activities.Self, UserID: author, Page: store.PageRequest{Count: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Title == list[1].Title {
		t.Errorf("feed after a collision: %+v", list)
	}
}
