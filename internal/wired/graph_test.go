package wired_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"

	"socialstream/internal/accounts"
	"socialstream/internal/app"
	"socialstream/internal/app/apptest"
	"socialstream/internal/federation"
	"socialstream/internal/graph"
	"socialstream/internal/ids"
	"socialstream/internal/rebuild"
	"socialstream/internal/store"
	"socialstream/internal/testenv"
	"socialstream/internal/trends"
)

func setup(t *testing.T, n int) (*store.DB, *accounts.Service, *graph.Service, []string) {
	t.Helper()
	db := testenv.DB(t)
	acc := apptest.Accounts(t, db, ids.New())
	svc, err := app.NewServices(db, ids.New(), acc, testenv.StartTasks(t).Queue, slog.New(slog.DiscardHandler), rebuild.Config{}, app.Pictures{}, app.Push{}, federation.Config{}, trends.Config{})
	if err != nil {
		t.Fatal(err)
	}
	g := svc.Graph
	var users []string
	for i := 0; i < n; i++ {
		p, _, err := acc.Register(context.Background(), fmt.Sprintf("user%02d", i), "password1", "")
		if err != nil {
			t.Fatal(err)
		}
		users = append(users, p.ID)
	}
	return db, acc, g, users
}

// Many users follow and unfollow one user at once: the counts and the
// follower chunks end exactly as the follows do.
func TestConcurrentFollowsKeepCountsExact(t *testing.T) {
	ctx := context.Background()
	db, acc, g, users := setup(t, 16)
	star, fans := users[0], users[1:]

	// Every fan follows (twice, to race the idempotent path too); the odd
	// ones then unfollow, while the even ones follow again.
	var wg sync.WaitGroup
	errs := make(chan error, 4*len(fans))
	for i, fan := range fans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 2; k++ {
				if _, err := g.Follow(ctx, fan, star, nil); err != nil {
					errs <- err
				}
			}
			var err error
			if i%2 == 1 {
				err = g.Unfollow(ctx, fan, star, true)
			} else {
				_, err = g.Follow(ctx, fan, star, nil)
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent follow: %v", err)
	}

	var want []string
	for i, fan := range fans {
		if i%2 == 0 {
			want = append(want, fan)
		}
	}
	p, err := acc.Get(ctx, star)
	if err != nil {
		t.Fatal(err)
	}
	if p.FollowersCount != int64(len(want)) {
		t.Errorf("followersCount = %d, want %d", p.FollowersCount, len(want))
	}
	for i, fan := range fans {
		fp, err := acc.Get(ctx, fan)
		if err != nil {
			t.Fatal(err)
		}
		if w := int64(1 - i%2); fp.FollowingCount != w {
			t.Errorf("fan %d followingCount = %d, want %d", i, fp.FollowingCount, w)
		}
	}
	// The followers are those of every chunk, each once.
	chunks := allChunks(t, db, star)
	var got []string
	for _, c := range chunks {
		got = append(got, c.IDs...)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("follower chunk = %v, want %v", got, want)
	}
	list, _, err := g.Followers(ctx, star, store.PageRequest{Count: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != len(want) {
		t.Errorf("@followers lists %d, want %d", len(list), len(want))
	}
}

// Follows fill the last chunk, and open a new one when it is full. Room an
// unfollow frees in an earlier chunk stays free: a follow joins its chunk
// without reading the others.
func TestChunksFillInOrder(t *testing.T) {
	ctx := context.Background()
	db, _, g, users := setup(t, 3)
	star := users[0]
	// Fill chunk 0 by import, then follow: the follow lands in chunk 1.
	filler := make([]string, graph.ChunkCap)
	for i := range filler {
		filler[i] = fmt.Sprint(7_000_000_000 + i)
	}
	if err := g.ImportFollowers(ctx, star, filler); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Follow(ctx, users[1], star, nil); err != nil {
		t.Fatal(err)
	}
	if n, err := graph.ChunkCount(ctx, db, star); err != nil || n != 2 {
		t.Fatalf("ChunkCount = %d, %v; want 2", n, err)
	}
	var c1 graph.Chunk
	if _, err := db.Get(ctx, graph.ChunkKey(db, star, 1), &c1); err != nil || !slices.Equal(c1.IDs, []string{users[1]}) {
		t.Errorf("chunk 1 = %v, %v", c1.IDs, err)
	}
	if err := g.Unfollow(ctx, filler[10], star, true); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Follow(ctx, users[2], star, nil); err != nil {
		t.Fatal(err)
	}
	var c0 graph.Chunk
	if _, err := db.Get(ctx, graph.ChunkKey(db, star, 0), &c0); err != nil {
		t.Fatal(err)
	}
	if len(c0.IDs) != graph.ChunkCap-1 || slices.Contains(c0.IDs, filler[10]) {
		t.Errorf("chunk 0 after the unfollow: %d ids, has the unfollower %v", len(c0.IDs), slices.Contains(c0.IDs, filler[10]))
	}
	if _, err := db.Get(ctx, graph.ChunkKey(db, star, 1), &c1); err != nil || !slices.Equal(c1.IDs, []string{users[1], users[2]}) {
		t.Errorf("chunk 1 = %v, %v; want both follows", c1.IDs, err)
	}
	if n, err := graph.ChunkCount(ctx, db, star); err != nil || n != 2 {
		t.Errorf("ChunkCount = %d, %v; want 2", n, err)
	}
}

// hookJobs runs hook (once) when the first removal job is enqueued, and
// records the removals enqueued.
type hookJobs struct {
	graph.Jobs
	hook     func()
	removals [][2]string
}

func (h *hookJobs) Unfollowed(ctx context.Context, follower, followee string, removal int64) error {
	h.removals = append(h.removals, [2]string{follower, followee})
	if f := h.hook; f != nil {
		h.hook = nil
		f()
	}
	return h.Jobs.Unfollowed(ctx, follower, followee, removal)
}

// A follow that commits between a block's look at the pair and its
// transaction is ended by the block too, with its removal job enqueued
// before the commit: the block plans again rather than end a follow
// whose copies no job would remove.
func TestBlockEndsAFollowMadeWhileItPlans(t *testing.T) {
	ctx := context.Background()
	db := testenv.DB(t)
	acc := apptest.Accounts(t, db, ids.New())
	q := testenv.StartTasks(t).Queue
	svc, err := app.NewServices(db, ids.New(), acc, q, slog.New(slog.DiscardHandler), rebuild.Config{}, app.Pictures{}, app.Push{}, federation.Config{}, trends.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var people []string
	for _, name := range []string{"blocker", "blocked"} {
		p, _, err := acc.Register(ctx, name, "password1", "")
		if err != nil {
			t.Fatal(err)
		}
		people = append(people, p.ID)
	}
	a, b := people[0], people[1]
	if _, err := svc.Graph.Follow(ctx, a, b, nil); err != nil {
		t.Fatal(err)
	}
	jobs := &hookJobs{Jobs: svc.Rebuild, hook: func() {
		if _, err := svc.Graph.Follow(ctx, b, a, nil); err != nil {
			t.Error(err)
		}
	}}
	g, err := graph.New(db, ids.New(), svc.Notifications, jobs, q, nil)
	if err != nil {
		t.Fatal(err)
	}
	person, err := g.Block(ctx, a, b)
	if err != nil {
		t.Fatal(err)
	}
	if person.FollowersCount != 0 || person.FollowingCount != 0 {
		t.Errorf("blocked person's counts %d/%d, want 0/0", person.FollowersCount, person.FollowingCount)
	}
	for _, pair := range [][2]string{{a, b}, {b, a}} {
		if _, ok, err := g.Get(ctx, pair[0], pair[1]); err != nil || ok {
			t.Errorf("follow %v survives the block: %v, %v", pair, ok, err)
		}
		if !slices.Contains(jobs.removals, pair) {
			t.Errorf("no removal job for %v; enqueued %v", pair, jobs.removals)
		}
	}
	if p, err := acc.Get(ctx, a); err != nil || p.FollowersCount != 0 || p.FollowingCount != 0 {
		t.Errorf("blocker's counts %+v, %v; want 0/0", p, err)
	}
}

// allChunks reads every follower chunk of user.
func allChunks(t *testing.T, db *store.DB, user string) []graph.Chunk {
	t.Helper()
	var chunks []graph.Chunk
	if _, err := db.GetAll(context.Background(), db.Query(graph.KindFollowerChunk).Ancestor(graph.IndexKey(db, user)), &chunks); err != nil {
		t.Fatal(err)
	}
	return chunks
}

// Which of some people follow someone is read either way, by their
// follows or by the follower chunks, whichever is fewer reads, and both
// ways answer the same, across chunks.
func TestFollowersAmong(t *testing.T) {
	ctx := context.Background()
	db, _, g, users := setup(t, 4)
	star := users[0]
	filler := make([]string, graph.ChunkCap)
	for i := range filler {
		filler[i] = fmt.Sprint(8_000_000_000 + i)
	}
	if err := g.ImportFollowers(ctx, star, filler); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Follow(ctx, users[1], star, nil); err != nil { // in chunk 1
		t.Fatal(err)
	}
	want := map[string]bool{filler[3]: true, users[1]: true}
	for _, candidates := range [][]string{
		{filler[3], users[2]}, // by key: two
		{filler[3], users[1], users[2], users[3], "9999999999"}, // by the two chunks: fewer than five keys
	} {
		got, err := graph.FollowersAmong(ctx, db, star, candidates)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range candidates {
			if got[c] != want[c] {
				t.Errorf("among %v: %s follows %v, want %v", candidates, c, got[c], want[c])
			}
		}
	}
}
