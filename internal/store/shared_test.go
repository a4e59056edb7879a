package store_test

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/paging"
	"socialstream/internal/redisserver"
	"socialstream/internal/store"
	"socialstream/internal/testenv"
)

// sharedPairs returns n instances' DBs over base, each with a cache of its
// own over one shared tier, and the tier.
func sharedPairs(t *testing.T, base *store.DB, n int) ([]*store.DB, *store.Shared) {
	t.Helper()
	return sharedInstances(t, base, n, false)
}

// sharedInstances is sharedPairs, with the tier alone when alone.
func sharedInstances(t *testing.T, base *store.DB, n int, alone bool) ([]*store.DB, *store.Shared) {
	t.Helper()
	shared, err := store.NewShared(context.Background(), testenv.Redis(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shared.Close() })
	cfg := keptPairs
	cfg.Shared, cfg.SharedOnly = shared, alone
	dbs := make([]*store.DB, n)
	for i := range dbs {
		dbs[i] = base.WithCache(store.NewCache(cfg))
	}
	return dbs, shared
}

// What one instance read from the Datastore another finds in the shared
// tier without a read; a write through any instance leaves a tombstone,
// and the next page anywhere shows the change.
func TestSharedTierServesAnotherInstance(t *testing.T) {
	ctx := context.Background()
	base := testenv.DB(t)
	dbs, shared := sharedPairs(t, base, 3)
	k := base.NameKey("Pair", "shared", nil)
	if err := base.Put(ctx, k, &pair{A: 1}); err != nil {
		t.Fatal(err)
	}
	if got := pageOf(t, dbs[0], k)[0]; got != 1 {
		t.Fatalf("first read %d, want 1", got)
	}
	// Changed where no mark and no tombstone says so: an instance that
	// shows 1 read the tier, not the Datastore.
	if err := base.Put(ctx, k, &pair{A: 2}); err != nil {
		t.Fatal(err)
	}
	if got := pageOf(t, dbs[1], k)[0]; got != 1 || shared.Stats().Hits != 1 {
		t.Fatalf("another instance read %d, %+v; want 1 from the tier", got, shared.Stats())
	}
	// A write through an instance: every instance's next page shows it.
	if err := dbs[2].Put(ctx, k, &pair{A: 3}); err != nil {
		t.Fatal(err)
	}
	for i, db := range dbs {
		if got := pageOf(t, db, k)[0]; got != 3 {
			t.Errorf("instance %d after the write: %d, want 3", i, got)
		}
	}
	// A transaction's write and a delete too.
	if err := dbs[0].Update(ctx, func(tx *store.Tx) error { return tx.Put(k, &pair{A: 4}) }); err != nil {
		t.Fatal(err)
	}
	if got := pageOf(t, dbs[1], k)[0]; got != 4 {
		t.Errorf("after a transaction's put: %d, want 4", got)
	}
	if err := dbs[0].Delete(ctx, k); err != nil {
		t.Fatal(err)
	}
	if got := pageOf(t, dbs[2], k)[0]; got != -1 {
		t.Errorf("after a delete: %d, want none", got)
	}
	if s := shared.Stats(); s.Tombs != 3 || s.Failed != 0 {
		t.Errorf("tier %+v, want 3 tombstones and no failure", s)
	}
}

// A fill that comes after a write's tombstone, of what was read before
// the write, is never taken; one read the margin after it is.
func TestSharedTierRefusesWhatWasReadBeforeATombstone(t *testing.T) {
	ctx := context.Background()
	base := testenv.DB(t)
	dbs, shared := sharedPairs(t, base, 3)
	k := base.NameKey("Pair", "late", nil)
	before := time.Now()
	if err := dbs[0].Put(ctx, k, &pair{A: 2}); err != nil {
		t.Fatal(err)
	}
	stale := datastore.PropertyList{{Name: "a", Value: int64(1)}, {Name: "b", Value: ""}}
	store.SharedKeep(shared, k, stale, before, keptPairs.TTL)
	if got := pageOf(t, dbs[1], k)[0]; got != 2 {
		t.Errorf("with a fill read before the write: %d, want 2 (the Datastore's)", got)
	}
	time.Sleep(store.SyncMargin)
	later := datastore.PropertyList{{Name: "a", Value: int64(7)}, {Name: "b", Value: ""}}
	store.SharedKeep(shared, k, later, time.Now(), keptPairs.TTL)
	if got := pageOf(t, dbs[2], k)[0]; got != 7 {
		t.Errorf("with a fill read the margin after the write: %d, want 7 (the tier's)", got)
	}
	// Past the TTL, nothing is taken.
	store.SharedKeep(shared, k, later, time.Now().Add(-keptPairs.TTL+time.Second), time.Hour)
	time.Sleep(time.Second)
	fresh := base.WithCache(store.NewCache(store.CacheConfig{Kinds: keptPairs.Kinds, TTL: keptPairs.TTL, Entries: 10, Shared: shared}))
	if got := pageOf(t, fresh, k)[0]; got != 2 {
		t.Errorf("with a fill older than the TTL: %d, want 2 (the Datastore's)", got)
	}
}

// A tier that stops answering costs pages nothing but its reads: they
// read the Datastore, and writes go on.
func TestSharedTierDownReadsTheDatastore(t *testing.T) {
	ctx := context.Background()
	base := testenv.DB(t)
	srv, err := redisserver.Start(ctx, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	shared, err := store.NewShared(ctx, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer shared.Close()
	srv.Stop()
	cfg := keptPairs
	cfg.Shared = shared
	db := base.WithCache(store.NewCache(cfg))
	k := base.NameKey("Pair", "down", nil)
	if err := db.Put(ctx, k, &pair{A: 5}); err != nil {
		t.Fatalf("a write with the tier down: %v", err)
	}
	if got := pageOf(t, db, k)[0]; got != 5 {
		t.Errorf("a page with the tier down: %d, want 5", got)
	}
	if s := shared.Stats(); s.Failed < 2 {
		t.Errorf("tier %+v, want its failures counted", s)
	}
}

// With the tier alone, an instance keeps nothing of its own and its
// writes leave no marks of changes: tombstones alone tell the others,
// and the next page anywhere shows the change.
func TestSharedTierAlone(t *testing.T) {
	ctx := context.Background()
	base := testenv.DB(t)
	dbs, _ := sharedInstances(t, base, 2, true)
	a, b := dbs[0], dbs[1]
	k := base.NameKey("Pair", "alone", nil)
	if err := a.Put(ctx, k, &pair{A: 1}); err != nil {
		t.Fatal(err)
	}
	if _, all, err := store.MarksOf(ctx, base, k); err != nil || all != 0 {
		t.Errorf("a write with the tier alone left %d marks (%v)", all, err)
	}
	time.Sleep(store.SyncMargin) // what is read within the margin of a write is not taken
	if got := pageOf(t, a, k)[0]; got != 1 || a.Cache().Len() != 0 {
		t.Fatalf("a page: %d, %d kept on the instance; want 1, none", got, a.Cache().Len())
	}
	if err := base.Put(ctx, k, &pair{A: 2}); err != nil { // no tombstone: the tier still has 1
		t.Fatal(err)
	}
	if got := pageOf(t, b, k)[0]; got != 1 {
		t.Fatalf("another instance read %d, want 1 from the tier", got)
	}
	if err := b.Put(ctx, k, &pair{A: 3}); err != nil {
		t.Fatal(err)
	}
	for i, db := range []*store.DB{a, b} {
		if got := pageOf(t, db, k)[0]; got != 3 {
			t.Errorf("instance %d after the write: %d, want 3", i, got)
		}
	}
	if n := store.Asks(a.Cache()) + store.Asks(b.Cache()); n != 0 {
		t.Errorf("%d asks for marks, want none", n)
	}
}

// An entry this version cannot load (kept by another, whose entity had
// other types) is read from the Datastore, into a destination that
// keeps nothing of the half-done load.
func TestSharedTierEntryThatDoesNotLoad(t *testing.T) {
	ctx := context.Background()
	base := testenv.DB(t)
	dbs, shared := sharedPairs(t, base, 1)
	k := base.NameKey("Pair", "odd", nil)
	if err := base.Put(ctx, k, &datastore.PropertyList{{Name: "a", Value: int64(2)}}); err != nil {
		t.Fatal(err)
	}
	odd := datastore.PropertyList{{Name: "b", Value: "stale"}, {Name: "a", Value: "not a number"}}
	store.SharedKeep(shared, k, odd, time.Now(), keptPairs.TTL)
	var p pair
	l := dbs[0].PageLookup()
	ref := l.Add(k, &p)
	if err := l.Run(paging.WithBegun(ctx, time.Now())); err != nil {
		t.Fatal(err)
	}
	if !ref.Found() || p.A != 2 || p.B != "" {
		t.Errorf("read %+v (found %v), want the Datastore's {A:2 B:}", p, ref.Found())
	}
}
