package graph_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"socialstream/internal/accounts"
	"socialstream/internal/app"
	"socialstream/internal/graph"
	"socialstream/internal/graph/graphtest"
	"socialstream/internal/ids"
	"socialstream/internal/rebuild"
	"socialstream/internal/store"
	"socialstream/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

func setup(t *testing.T, n int) (*store.DB, *accounts.Service, *graph.Service, []string) {
	t.Helper()
	db := testenv.DB(t)
	acc, err := accounts.New(db, ids.New(), accounts.Config{BcryptCost: bcrypt.MinCost})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := app.NewServices(db, ids.New(), acc, testenv.StartTasks(t).Queue, slog.New(slog.DiscardHandler), rebuild.Config{}, app.Pictures{})
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
	// The follows contended, so they may have spread over lanes: the
	// followers are those of every chunk, each once.
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
	acc, err := accounts.New(db, ids.New(), accounts.Config{BcryptCost: bcrypt.MinCost})
	if err != nil {
		t.Fatal(err)
	}
	q := testenv.StartTasks(t).Queue
	svc, err := app.NewServices(db, ids.New(), acc, q, slog.New(slog.DiscardHandler), rebuild.Config{}, app.Pictures{})
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
	g, err := graph.New(db, svc.Notifications, jobs, q)
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

// A user an earlier version spread (a celebrity: followers counted in
// count shards, follows filling lanes of root chunks) keeps working: a
// follow joins its lane's chunk, not chunk 0 (which posts read), a full
// lane opens a new chunk at the end, and the counts, the User's own plus
// the shards', stay exact across follows and unfollows of followers from
// The version before Counts kept counts on the User: they are read and
// added to, never written, and a follow or unfollow now counts in Counts
// alone.
func TestCountsKeptOnTheUserByTheLastVersion(t *testing.T) {
	ctx := context.Background()
	db, acc, g, users := setup(t, 3)
	a, b, c := users[0], users[1], users[2]
	if err := graphtest.CountOnUser(ctx, db, a, 5, 2); err != nil {
		t.Fatal(err)
	}
	for _, f := range [][2]string{{b, a}, {c, a}, {a, b}} {
		if _, err := g.Follow(ctx, f[0], f[1], nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Unfollow(ctx, c, a, false); err != nil {
		t.Fatal(err)
	}
	p, err := acc.Get(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if p.FollowersCount != 5+2-1 || p.FollowingCount != 2+1 {
		t.Errorf("counts %d/%d, want %d/%d", p.FollowersCount, p.FollowingCount, 5+2-1, 2+1)
	}
	var u accounts.User
	if _, err := db.Get(ctx, accounts.UserKey(db, a), &u); err != nil || u.FollowersCount != 5 || u.FollowingCount != 2 {
		t.Errorf("the User's counts moved to %d/%d (%v), want 5/2 as the earlier version left them", u.FollowersCount, u.FollowingCount, err)
	}
	// The erasure takes the Counts with the User.
	if err := acc.Delete(ctx, a, "password1", func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if ok, err := db.Get(ctx, accounts.CountsKey(db, a), &accounts.Counts{}); err != nil || ok {
		t.Errorf("Counts after the erasure: found %v, %v; want gone", ok, err)
	}
}

// before and after the change of version.
func TestFollowsOfAUserSpreadByAnEarlierVersion(t *testing.T) {
	ctx := context.Background()
	db, acc, g, users := setup(t, 24)
	star, early, fans := users[0], users[1:4], users[4:]
	for _, u := range early {
		if _, err := g.Follow(ctx, u, star, nil); err != nil {
			t.Fatal(err)
		}
	}
	idx, err := graphtest.SpreadAsEarlier(ctx, db, star)
	if err != nil {
		t.Fatal(err)
	}
	// A full lane: the follow landing there opens a new chunk at the end.
	full := fans[0]
	lane := store.Shard(full, graph.Lanes)
	filler := make([]string, graph.ChunkCap)
	for i := range filler {
		filler[i] = fmt.Sprint(7_000_000_000 + i)
	}
	lanes := map[int]*graph.Chunk{lane: {IDs: filler}}
	// Two followers the earlier version added to lanes and counted in
	// shards.
	old, fans := fans[len(fans)-2:], fans[:len(fans)-2]
	for _, u := range old {
		l := store.Shard(u, graph.Lanes)
		if lanes[l] == nil {
			lanes[l] = &graph.Chunk{}
		}
		lanes[l].IDs = append(lanes[l].IDs, u)
		f := &graph.Follow{Follower: u, Followee: star, Created: time.Now().UTC(), Chunk: int(idx.Lanes[l]), Root: true}
		if err := db.Put(ctx, graph.FollowKey(db, u, star), f); err != nil {
			t.Fatal(err)
		}
		if err := graphtest.CountInShard(ctx, db, star, store.Shard(u, accounts.CountShards), 1); err != nil {
			t.Fatal(err)
		}
	}
	for l, c := range lanes {
		if err := db.Put(ctx, graph.LaneChunkKey(db, star, int(idx.Lanes[l])), c); err != nil {
			t.Fatal(err)
		}
	}
	if p, err := acc.Get(ctx, star); err != nil || p.FollowersCount != int64(len(early)+len(old)) {
		t.Fatalf("followersCount after the spreading: %d, %v; want %d", p.FollowersCount, err, len(early)+len(old))
	}
	var before accounts.User
	if _, err := db.Get(ctx, accounts.UserKey(db, star), &before); err != nil {
		t.Fatal(err)
	}
	var countsBefore accounts.Counts
	if _, err := db.Get(ctx, accounts.CountsKey(db, star), &countsBefore); err != nil {
		t.Fatal(err)
	}
	for _, u := range fans {
		p, err := g.Follow(ctx, u, star, nil)
		if err != nil {
			t.Fatal(err)
		}
		if u == fans[len(fans)-1] && p.FollowersCount != int64(len(early)+len(old)+len(fans)) {
			t.Errorf("the last follow answers followersCount %d, want %d", p.FollowersCount, len(early)+len(old)+len(fans))
		}
	}
	var after accounts.User
	if _, err := db.Get(ctx, accounts.UserKey(db, star), &after); err != nil {
		t.Fatal(err)
	}
	var countsAfter accounts.Counts
	if _, err := db.Get(ctx, accounts.CountsKey(db, star), &countsAfter); err != nil {
		t.Fatal(err)
	}
	if after.FollowersCount != before.FollowersCount || countsAfter.Followers-countsBefore.Followers != int64(len(fans)) {
		t.Errorf("the User's count moved from %d to %d, its Counts from %d to %d; want the follows counted in Counts alone, by %d",
			before.FollowersCount, after.FollowersCount, countsBefore.Followers, countsAfter.Followers, len(fans))
	}
	var c0 graph.Chunk
	if _, err := db.Get(ctx, graph.ChunkKey(db, star, 0), &c0); err != nil || len(c0.IDs) != len(early) {
		t.Errorf("chunk 0 = %v, %v; want the %d early followers only", c0.IDs, err, len(early))
	}
	var idx2 graph.Index
	if _, err := db.Get(ctx, graph.IndexKey(db, star), &idx2); err != nil {
		t.Fatal(err)
	}
	if n := int(idx2.Lanes[lane]); n != 1+graph.Lanes {
		t.Errorf("the full lane fills chunk %d, want the new chunk %d", n, 1+graph.Lanes)
	}
	f, ok, err := g.Get(ctx, full, star)
	if err != nil || !ok || f.Chunk != 1+graph.Lanes {
		t.Errorf("the follow into the full lane is in chunk %d (%v %v), want %d", f.Chunk, ok, err, 1+graph.Lanes)
	}
	// Unfollows from chunk 0, from the lanes, of followers of both
	// versions.
	for _, u := range []string{early[0], old[0], fans[0], fans[5]} {
		if err := g.Unfollow(ctx, u, star, true); err != nil {
			t.Fatal(err)
		}
	}
	want := len(early) + len(old) + len(fans) - 4
	if p, err := acc.Get(ctx, star); err != nil || p.FollowersCount != int64(want) {
		t.Errorf("followersCount %d, %v; want %d", p.FollowersCount, err, want)
	}
	chunks := allChunks(t, db, star)
	ids := 0
	for _, c := range chunks {
		for _, id := range c.IDs {
			if !slices.Contains(filler, id) {
				ids++
			}
		}
	}
	if ids != want {
		t.Errorf("%d followers in the chunks, want %d", ids, want)
	}
}

// allChunks reads every follower chunk of user: children of the index,
// and, once spread, root entities.
func allChunks(t *testing.T, db *store.DB, user string) []graph.Chunk {
	t.Helper()
	ctx := context.Background()
	var chunks []graph.Chunk
	if _, err := db.GetAll(ctx, db.Query(graph.KindFollowerChunk).Ancestor(graph.IndexKey(db, user)), &chunks); err != nil {
		t.Fatal(err)
	}
	var idx graph.Index
	if _, err := db.Get(ctx, graph.IndexKey(db, user), &idx); err != nil {
		t.Fatal(err)
	}
	for n := idx.RootFrom; idx.RootFrom > 0 && n < int64(len(idx.Sizes)); n++ {
		var c graph.Chunk
		if ok, err := db.Get(ctx, graph.LaneChunkKey(db, user, int(n)), &c); err != nil {
			t.Fatal(err)
		} else if ok {
			chunks = append(chunks, c)
		}
	}
	return chunks
}
