package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/paging"
	"socialstream/internal/store"
	"socialstream/internal/testenv"
)

// Two instances, each with a cache of its own: whatever one writes (a
// put, a put of many, a transaction's put, a transform, a delete) shows
// on the other's next page, though the TTL is long; a page with nothing
// kept asks for no marks; a page asks once, however many rounds its
// lookup makes.
func TestAnotherInstancesChangeShowsOnTheNextPage(t *testing.T) {
	ctx := context.Background()
	base := testenv.DB(t)
	here, there := store.NewCache(keptPairs), store.NewCache(keptPairs)
	db, other := base.WithCache(here), base.WithCache(there)
	k, k2 := db.NameKey("Pair", "k", nil), db.NameKey("Pair", "k2", nil)
	if err := other.PutMulti(ctx, []*datastore.Key{k, k2}, []pair{{A: 1}, {A: 1}}); err != nil {
		t.Fatal(err)
	}
	page := func() int64 { return pageOf(t, db, k)[0] }
	if got := page(); got != 1 || store.Asks(here) != 0 {
		t.Fatalf("a cold page: %d, %d asks; want 1, none", got, store.Asks(here))
	}
	if got := page(); got != 1 || store.Asks(here) != 1 {
		t.Fatalf("a warm page: %d, %d asks; want 1, one", got, store.Asks(here))
	}
	writes := []struct {
		name  string
		write func() error
		want  int64
	}{
		{"a put", func() error { return other.Put(ctx, k, &pair{A: 2}) }, 2},
		{"a put of many", func() error {
			return other.PutMulti(ctx, []*datastore.Key{k2, k}, []*pair{{A: 9}, {A: 3}})
		}, 3},
		{"a transaction's put", func() error {
			return other.Update(ctx, func(tx *store.Tx) error { return tx.Put(k, &pair{A: 4}) })
		}, 4},
		{"a transform", func() error {
			return other.Update(ctx, func(tx *store.Tx) error { return tx.Increment(k, map[string]int64{"a": 1}) })
		}, 5},
		{"a delete", func() error { return other.Delete(ctx, k) }, -1},
		{"a put again", func() error { return other.Put(ctx, k, &pair{A: 6}) }, 6},
	}
	for _, w := range writes {
		page() // kept, if it was not
		if err := w.write(); err != nil {
			t.Fatalf("%s: %v", w.name, err)
		}
		if got := page(); got != w.want {
			t.Errorf("after another instance's %s: %d, want %d", w.name, got, w.want)
		}
	}

	// One ask a page, though its lookup reads in two rounds.
	asks := store.Asks(here)
	var p, p2 pair
	l := db.PageLookup()
	l.Add(k, &p)
	l.Then(func() { l.Add(k2, &p2) })
	if err := l.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if n := store.Asks(here) - asks; n != 1 || p.A != 6 || p2.A != 9 {
		t.Errorf("a page of two rounds: %d asks, read %d and %d; want 1, 6 and 9", n, p.A, p2.A)
	}

	// One ask a request, though it makes two lookups, each after the
	// request began; one more for the next request.
	asks = store.Asks(here)
	req := paging.WithBegun(ctx, time.Now())
	for range 2 {
		l := db.PageLookup()
		l.Add(k, &p)
		if err := l.Run(req); err != nil {
			t.Fatal(err)
		}
	}
	if n := store.Asks(here) - asks; n != 1 {
		t.Errorf("a request of two lookups asked %d times, want 1", n)
	}
	if err := other.Put(ctx, k, &pair{A: 7}); err != nil {
		t.Fatal(err)
	}
	if got := page(); got != 7 || store.Asks(here)-asks != 2 {
		t.Errorf("the next request: %d, %d asks in all; want 7, 2", got, store.Asks(here)-asks)
	}
}

// With the marks spread over shards, each of their ranges takes some of
// them, and an ask reads every range: another instance's change shows
// whichever shard its mark is in. Past syncLimit marks in one shard, the
// instance forgets everything.
func TestShardedMarksAreAllRead(t *testing.T) {
	ctx := context.Background()
	base := testenv.DB(t)
	cfg := keptPairs
	cfg.Shards = 4
	db, other := base.WithCache(store.NewCache(cfg)), base.WithCache(store.NewCache(cfg))
	var keys []*datastore.Key
	for i := range 12 {
		keys = append(keys, db.NameKey("Pair", fmt.Sprint("sharded-", i), nil))
	}
	putEach := func(db *store.DB) {
		t.Helper()
		for _, k := range keys {
			if err := db.Put(ctx, k, &pair{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	putEach(other) // a mark each
	shards := map[string]bool{}
	for _, k := range keys {
		places, _, err := store.MarksOf(ctx, base, k)
		if err != nil || len(places) != 1 {
			t.Fatalf("%s: marks at %v (%v), want one", k.Name, places, err)
		}
		shard, _, _ := strings.Cut(places[0], "/")
		shards[shard] = true
	}
	if len(shards) < 2 {
		t.Fatalf("12 marks all in shard(s) %v, want them spread over 4", shards)
	}
	for i, k := range keys {
		pageOf(t, db, keys...) // kept
		if err := other.Put(ctx, k, &pair{A: int64(i + 1)}); err != nil {
			t.Fatal(err)
		}
		if got := pageOf(t, db, keys...)[i]; got != int64(i+1) {
			t.Errorf("%s: %d after another instance's put, want %d", k.Name, got, i+1)
		}
	}

	// Past the limit in one shard, everything goes.
	defer store.SetSyncLimit(2)()
	unmarked := db.NameKey("Pair", "sharded-unmarked", nil)
	if err := base.Put(ctx, unmarked, &pair{A: 1}); err != nil {
		t.Fatal(err)
	}
	pageOf(t, db, unmarked)
	if err := base.Put(ctx, unmarked, &pair{A: 2}); err != nil {
		t.Fatal(err)
	}
	putEach(other)
	if got := pageOf(t, db, unmarked)[0]; got != 2 {
		t.Errorf("after 12 marks in 4 shards of 2 at most: %d, want the unmarked change read again (2)", got)
	}
}

// A commit leaves one mark, naming every key it wrote of the kinds the
// cache keeps and none other: a put of many, and a transaction's writes.
// A mark an older version left, one a key named by that key, is applied
// too.
func TestACommitLeavesOneMark(t *testing.T) {
	ctx := context.Background()
	base := testenv.DB(t)
	db, other := base.WithCache(store.NewCache(keptPairs)), base.WithCache(store.NewCache(keptPairs))
	a, b, c := db.NameKey("Pair", "a", nil), db.NameKey("Pair", "b", nil), db.NameKey("Pair", "c", nil)
	unkept := db.NameKey("Unkept", "u", nil)
	if err := other.PutMulti(ctx, []*datastore.Key{a, b}, []pair{{A: 1}, {A: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := other.Update(ctx, func(tx *store.Tx) error {
		return tx.PutMulti([]*datastore.Key{c, unkept, a}, []pair{{A: 1}, {A: 1}, {A: 2}})
	}); err != nil {
		t.Fatal(err)
	}
	want := map[*datastore.Key]int{a: 2, b: 1, c: 1, unkept: 0}
	for k, n := range want {
		places, all, err := store.MarksOf(ctx, base, k)
		if err != nil {
			t.Fatal(err)
		}
		if len(places) != n || all != 2 {
			t.Errorf("%s: named by %d of %d marks, want %d of 2", k, len(places), all, n)
		}
	}

	time.Sleep(store.SyncMargin)
	pageOf(t, db, a)                                      // kept
	if err := base.Put(ctx, a, &pair{A: 3}); err != nil { // no mark
		t.Fatal(err)
	}
	var old struct {
		At      string    `datastore:"at"`
		Expires time.Time `datastore:"expires,noindex"`
	}
	old.At, old.Expires = store.ChangeAt(a.String(), 1, time.Now()), time.Now().Add(time.Hour)
	if err := base.Put(ctx, base.NameKey(store.KindChange, a.String(), nil), &old); err != nil {
		t.Fatal(err)
	}
	if got := pageOf(t, db, a)[0]; got != 3 {
		t.Errorf("after an older version's mark: %d, want 3", got)
	}
}

// An instance that finds more marks than one ask reads forgets all it
// keeps, what no mark names too, and shows what is stored.
func TestManyChangesForgetEverything(t *testing.T) {
	defer store.SetSyncLimit(3)()
	ctx := context.Background()
	base := testenv.DB(t)
	db, other := base.WithCache(store.NewCache(keptPairs)), base.WithCache(store.NewCache(keptPairs))
	keys := []*datastore.Key{db.NameKey("Pair", "a", nil), db.NameKey("Pair", "b", nil), db.NameKey("Pair", "c", nil), db.NameKey("Pair", "d", nil)}
	unmarked := db.NameKey("Pair", "e", nil)
	for _, k := range keys { // a mark each
		if err := other.Put(ctx, k, &pair{A: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := base.Put(ctx, unmarked, &pair{A: 1}); err != nil { // a DB with no cache leaves no mark
		t.Fatal(err)
	}
	time.Sleep(store.SyncMargin + 100*time.Millisecond)
	all := append(slices.Clone(keys), unmarked)
	pageOf(t, db, all...) // cold: all kept, each read past the margin after its change
	if err := base.Put(ctx, unmarked, &pair{A: 2}); err != nil {
		t.Fatal(err)
	}
	// The ask finds the 4 marks of the first writes: more than it reads,
	// so everything goes, and the unmarked change shows.
	if got := pageOf(t, db, all...); got[4] != 2 {
		t.Errorf("after more marks than an ask reads: %v, want e read again (2)", got)
	}
	if db.Cache().Len() != len(all) {
		t.Errorf("the cache holds %d, want the %d read again", db.Cache().Len(), len(all))
	}
}

// What a page read at least the margin after its change is kept when an
// ask finds that change's mark; what it read sooner is read again.
func TestAnEntityReadAfterItsChangeIsKept(t *testing.T) {
	ctx := context.Background()
	base := testenv.DB(t)
	db, other := base.WithCache(store.NewCache(keptPairs)), base.WithCache(store.NewCache(keptPairs))
	soon, late := db.NameKey("Pair", "soon", nil), db.NameKey("Pair", "late", nil)
	page := func() (int64, int64) { got := pageOf(t, db, soon, late); return got[0], got[1] }
	if err := other.Put(ctx, late, &pair{A: 1}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(store.SyncMargin + 100*time.Millisecond)
	if err := other.Put(ctx, soon, &pair{A: 1}); err != nil {
		t.Fatal(err)
	}
	page() // cold: both kept
	// Written where no mark is left (a DB with no cache): only what is
	// read from the Datastore shows it.
	if err := base.PutMulti(ctx, []*datastore.Key{soon, late}, []pair{{A: 2}, {A: 2}}); err != nil {
		t.Fatal(err)
	}
	// The ask finds both marks, and keeps late alone.
	if a, b := page(); a != 2 || b != 1 {
		t.Errorf("read %d (changed just before its read) and %d (changed long before); want 2, read again, and 1, kept", a, b)
	}
}

// A write whose commit waited (here on another transaction's lock) as
// long as a mark's time may come before its commit shows marks again
// once it returns.
func TestASlowCommitMarksAgain(t *testing.T) {
	ctx := context.Background()
	base := testenv.DB(t)
	c := store.NewCache(keptPairs)
	db := base.WithCache(c)
	k := db.NameKey("Pair", "k", nil)
	if err := db.Put(ctx, k, &pair{A: 1}); err != nil {
		t.Fatal(err)
	}
	if n := store.Remarks(c); n != 0 {
		t.Fatalf("a quick put marked again (%d)", n)
	}
	locked, done := make(chan struct{}), make(chan error, 1)
	go func() {
		done <- base.Update(ctx, func(tx *store.Tx) error {
			var p pair
			if _, err := tx.Get(k, &p); err != nil {
				return err
			}
			close(locked)
			time.Sleep(2 * time.Second)
			return nil
		})
	}()
	<-locked
	if err := db.Update(ctx, func(tx *store.Tx) error {
		var p pair
		if _, err := tx.Get(k, &p); err != nil {
			return err
		}
		return tx.Put(k, &pair{A: p.A + 1})
	}); err != nil {
		t.Fatal(err)
	}
	returned := time.Now()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Whether its commit waited (and it marked again) or an attempt
	// was aborted and the next was quick, its mark's time is within a
	// second of when the write returned: no ask can miss it.
	places, _, err := store.MarksOf(ctx, base, k)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(places) // one shard: the last is the newest
	if len(places) == 0 {
		t.Fatal("no mark names the write")
	}
	changed, ok := store.ChangeTime(places[len(places)-1])
	if !ok {
		t.Fatalf("the mark's place %q holds no time", places[len(places)-1])
	}
	if late := returned.Sub(changed); late > time.Second {
		t.Errorf("the mark's time is %v before the write returned (%d marked again), want at most 1s", late, store.Remarks(c))
	}
}

// An ask reads again the marks of the margin before the last: a mark it
// applied already drops nothing again, so what a page read after that
// drop stays kept.
func TestAMarkIsAppliedOnce(t *testing.T) {
	ctx := context.Background()
	base := testenv.DB(t)
	db, other := base.WithCache(store.NewCache(keptPairs)), base.WithCache(store.NewCache(keptPairs))
	k := db.NameKey("Pair", "k", nil)
	page := func() int64 { return pageOf(t, db, k)[0] }
	if err := other.Put(ctx, k, &pair{A: 1}); err != nil {
		t.Fatal(err)
	}
	page() // kept, read within the margin of its change
	page() // asks: the mark drops it, and it is read again, after
	// Written where no mark is left: only a read from the Datastore
	// shows it.
	if err := base.Put(ctx, k, &pair{A: 2}); err != nil {
		t.Fatal(err)
	}
	if got := page(); got != 1 { // asks within the margin: the same mark
		t.Errorf("after an ask that found the applied mark again: %d, want the kept 1", got)
	}
}

// With a Share, a request begun within it of the last ask's start is
// served by that ask: another instance's change shows on the first page
// begun the Share after the ask that missed it.
func TestRequestsWithinTheShareShareAnAsk(t *testing.T) {
	ctx := context.Background()
	base := testenv.DB(t)
	const share = 4 * time.Second
	shared := keptPairs
	shared.Share = share
	c := store.NewCache(shared)
	db, other := base.WithCache(c), base.WithCache(store.NewCache(keptPairs))
	k := db.NameKey("Pair", "k", nil)
	if err := other.Put(ctx, k, &pair{A: 1}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(store.SyncMargin)
	page := func() int64 { return pageOf(t, db, k)[0] }
	page()              // cold: kept
	page()              // asks
	asked := time.Now() // (just after the ask began)
	if err := other.Put(ctx, k, &pair{A: 2}); err != nil {
		t.Fatal(err)
	}
	if got := page(); got != 1 || store.Asks(c) != 1 {
		t.Errorf("within the share: %d after %d asks, want the kept 1 after 1", got, store.Asks(c))
	}
	time.Sleep(share - time.Since(asked) + 50*time.Millisecond)
	if got := page(); got != 2 || store.Asks(c) != 2 {
		t.Errorf("past the share: %d after %d asks, want 2 after 2", got, store.Asks(c))
	}
}

// A lagging lookup takes an ask begun up to its lag before it: another
// instance's change shows there once an ask begun after it is that old,
// or on the first lagging lookup past the lag, which asks.
func TestALaggingLookupTakesAnOlderAsk(t *testing.T) {
	ctx := context.Background()
	base := testenv.DB(t)
	const lag = 3 * time.Second
	c := store.NewCache(keptPairs)
	db, other := base.WithCache(c), base.WithCache(store.NewCache(keptPairs))
	k := db.NameKey("Pair", "k", nil)
	if err := other.Put(ctx, k, &pair{A: 1}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(store.SyncMargin)
	lagging := func() int64 {
		t.Helper()
		var p pair
		l := db.PageLookup().Lagging(lag)
		l.Add(k, &p)
		if err := l.Run(ctx); err != nil {
			t.Fatal(err)
		}
		return p.A
	}
	pageOf(t, db, k)    // cold: kept
	pageOf(t, db, k)    // asks
	asked := time.Now() // (just after the ask began)
	if err := other.Put(ctx, k, &pair{A: 2}); err != nil {
		t.Fatal(err)
	}
	if got := lagging(); got != 1 || store.Asks(c) != 1 {
		t.Errorf("within the lag: %d after %d asks, want the kept 1 after 1", got, store.Asks(c))
	}
	time.Sleep(lag - time.Since(asked) + 50*time.Millisecond)
	if got := lagging(); got != 2 || store.Asks(c) != 2 {
		t.Errorf("past the lag: %d after %d asks, want 2 after 2", got, store.Asks(c))
	}
}

// pageOf reads keys' pairs through a page lookup of db, in a request
// begun now: each one's A, -1 for one not there.
func pageOf(t *testing.T, db *store.DB, keys ...*datastore.Key) []int64 {
	t.Helper()
	ps := make([]pair, len(keys))
	l := db.PageLookup()
	refs := make([]store.Ref, len(keys))
	for i, k := range keys {
		refs[i] = l.Add(k, &ps[i])
	}
	if err := l.Run(paging.WithBegun(context.Background(), time.Now())); err != nil {
		t.Fatal(err)
	}
	out := make([]int64, len(keys))
	for i, p := range ps {
		out[i] = p.A
		if !refs[i].Found() {
			out[i] = -1
		}
	}
	return out
}

// Pages begun at once share one ask, however many: each waits for the
// one under way, begun after it.
func TestPagesAtOnceShareOneAsk(t *testing.T) {
	ctx := context.Background()
	base := testenv.DB(t)
	c := store.NewCache(keptPairs)
	db := base.WithCache(c)
	k := db.NameKey("Pair", "k", nil)
	if err := db.Put(ctx, k, &pair{A: 1}); err != nil {
		t.Fatal(err)
	}
	pageOf(t, db, k) // kept
	begun := time.Now()
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			var p pair
			l := db.PageLookup()
			l.Add(k, &p)
			errs <- l.Run(paging.WithBegun(ctx, begun))
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := store.Asks(c); n != 1 {
		t.Errorf("8 pages begun at once asked %d times, want 1", n)
	}
}

// A write of more than one commit takes with its marks writes them in a
// commit of their own, right after: another instance shows every change.
func TestAWriteTooLargeForItsMarksMarksAfter(t *testing.T) {
	ctx := context.Background()
	base := testenv.DB(t)
	cfg := keptPairs
	cfg.Entries = 1000
	db, other := base.WithCache(store.NewCache(cfg)), base.WithCache(store.NewCache(cfg))
	keys := make([]*datastore.Key, 500) // 501 mutations with their mark
	ones, twos := make([]pair, len(keys)), make([]pair, len(keys))
	for i := range keys {
		keys[i] = db.NameKey("Pair", fmt.Sprintf("k%03d", i), nil)
		ones[i], twos[i] = pair{A: 1}, pair{A: 2}
	}
	if err := other.PutMulti(ctx, keys, ones); err != nil {
		t.Fatal(err)
	}
	time.Sleep(store.SyncMargin)
	pageOf(t, db, keys...) // kept
	if err := other.PutMulti(ctx, keys, twos); err != nil {
		t.Fatal(err)
	}
	for i, got := range pageOf(t, db, keys...) {
		if got != 2 {
			t.Fatalf("%s: %d after another instance's write, want 2", keys[i].Name, got)
		}
	}
	if err := other.DeleteMulti(ctx, keys); err != nil {
		t.Fatal(err)
	}
	for i, got := range pageOf(t, db, keys...) {
		if got != -1 {
			t.Fatalf("%s: %d after another instance's delete, want none", keys[i].Name, got)
		}
	}
}

// keptPairs is the cache the marks' tests give each instance: pairs,
// for ten minutes.
var keptPairs = store.CacheConfig{Kinds: []string{"Pair"}, TTL: 10 * time.Minute, Entries: 100}

// How long a commit may take before its marks are written again is the
// cache's to say (CacheConfig.RemarkAfter): the bill sets it past any
// commit, so that a loaded machine's slow commit adds no write to an
// operation's bill.
func TestRemarkAfterIsConfigured(t *testing.T) {
	ctx := context.Background()
	base := testenv.DB(t)
	for _, c := range []struct {
		after time.Duration
		want  int64
	}{{time.Nanosecond, 1}, {time.Hour, 0}} {
		cfg := keptPairs
		cfg.RemarkAfter = c.after
		cache := store.NewCache(cfg)
		db := base.WithCache(cache)
		if err := db.Put(ctx, db.NameKey("Pair", fmt.Sprint("remark-", c.after), nil), &pair{A: 1}); err != nil {
			t.Fatal(err)
		}
		if n := store.Remarks(cache); n != c.want {
			t.Errorf("RemarkAfter %v: a put marked again %d times, want %d", c.after, n, c.want)
		}
	}
}
