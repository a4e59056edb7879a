package store_test

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/store"
	"socialstream/internal/testenv"
)

// A page's lookup reads a kept entity from the cache until the TTL has
// passed since it was read; a write through any DB sharing the cache
// (a transaction's too, a transform's too) drops it at once; a write by
// another instance shows once the TTL is over; kinds the cache does not
// keep, plain lookups and transactions always read the Datastore.
func TestPageLookupReadsThroughTheCache(t *testing.T) {
	ctx := context.Background()
	other := testenv.DB(t) // another instance: no cache of this one's
	clock := time.Now()
	c := store.NewCache(store.CacheConfig{Kinds: []string{"Pair"}, TTL: time.Minute, Entries: 100})
	store.SetCacheClock(c, func() time.Time { return clock })
	db := other.WithCache(c)
	k, loose := db.NameKey("Pair", "k", nil), db.NameKey("Loose", "k", nil)
	if err := other.PutMulti(ctx, []*datastore.Key{k, loose}, []any{&pair{A: 1}, &pair{A: 1}}); err != nil {
		t.Fatal(err)
	}
	read := func(l *store.Lookup, key *datastore.Key) int64 {
		t.Helper()
		var p pair
		r := l.Add(key, &p)
		if err := l.Run(ctx); err != nil {
			t.Fatal(err)
		}
		if !r.Found() {
			return -1
		}
		return p.A
	}
	page := func() int64 { return read(db.PageLookup(), k) }
	if got := page(); got != 1 {
		t.Fatalf("first read: %d", got)
	}
	// Another instance writes: this one shows what it read, for the TTL.
	if err := other.Put(ctx, k, &pair{A: 2}); err != nil {
		t.Fatal(err)
	}
	if err := other.Put(ctx, loose, &pair{A: 2}); err != nil {
		t.Fatal(err)
	}
	if got := page(); got != 1 {
		t.Errorf("within the TTL: %d, want the kept 1", got)
	}
	if got := read(db.PageLookup(), loose); got != 2 {
		t.Errorf("a kind the cache does not keep: %d, want 2", got)
	}
	if got := read(db.Lookup(), k); got != 2 {
		t.Errorf("a plain lookup: %d, want 2", got)
	}
	clock = clock.Add(time.Minute)
	if got := page(); got != 2 {
		t.Errorf("past the TTL: %d, want 2", got)
	}
	// This instance writes: dropped at once, by a put, a transform and a
	// delete alike.
	if err := db.Put(ctx, k, &pair{A: 3}); err != nil {
		t.Fatal(err)
	}
	if got := page(); got != 3 {
		t.Errorf("after this instance's put: %d, want 3", got)
	}
	if err := db.Update(ctx, func(tx *store.Tx) error { return tx.Increment(k, map[string]int64{"a": 1}) }); err != nil {
		t.Fatal(err)
	}
	if got := page(); got != 4 {
		t.Errorf("after this instance's increment: %d, want 4", got)
	}
	if err := db.Delete(ctx, k); err != nil {
		t.Fatal(err)
	}
	if got := page(); got != -1 {
		t.Errorf("after this instance's delete: %d, want none", got)
	}
	// A read begun before a write keeps nothing: what it read may be
	// older than the write.
	if err := other.Put(ctx, k, &pair{A: 5}); err != nil {
		t.Fatal(err)
	}
	epoch := store.BeginRead(c)
	if err := db.Put(ctx, k, &pair{A: 6}); err != nil {
		t.Fatal(err)
	}
	store.KeepRead(c, k, datastore.PropertyList{{Name: "a", Value: int64(5)}}, epoch, clock)
	if got := page(); got != 6 {
		t.Errorf("a read from before a write was kept: %d, want 6", got)
	}
}

type tagged struct {
	Tags []string `datastore:"tags"`
}

// What a page reads from the cache is its own: changing it changes
// nothing kept.
func TestCachedEntitiesAreCopies(t *testing.T) {
	ctx := context.Background()
	db := testenv.DB(t).WithCache(store.NewCache(store.CacheConfig{Kinds: []string{"Tagged"}, TTL: time.Minute, Entries: 10}))
	k := db.NameKey("Tagged", "k", nil)
	if err := db.Put(ctx, k, &tagged{Tags: []string{"a", "b"}}); err != nil {
		t.Fatal(err)
	}
	read := func() *tagged {
		t.Helper()
		var v tagged
		l := db.PageLookup()
		l.Add(k, &v)
		if err := l.Run(ctx); err != nil {
			t.Fatal(err)
		}
		return &v
	}
	first := read()  // from the Datastore, and kept
	second := read() // from the cache
	first.Tags[0], second.Tags[1] = "changed", "changed"
	if got := read().Tags; len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Errorf("kept tags %v, want [a b]", got)
	}
}

type tagCount struct {
	Tags []string `datastore:"tags"`
	N    int64    `datastore:"n,omitempty"`
}

// An entity is kept as the type that first read it: a page that reads it
// into another type reads the Datastore, and finds what is stored.
func TestCachedEntityOfAnotherType(t *testing.T) {
	ctx := context.Background()
	other := testenv.DB(t)
	db := other.WithCache(store.NewCache(store.CacheConfig{Kinds: []string{"Tagged"}, TTL: time.Minute, Entries: 10}))
	k := db.NameKey("Tagged", "k", nil)
	if err := db.Put(ctx, k, &tagged{Tags: []string{"a"}}); err != nil {
		t.Fatal(err)
	}
	l := db.PageLookup()
	l.Add(k, &tagged{})
	if err := l.Run(ctx); err != nil { // kept as tagged
		t.Fatal(err)
	}
	if err := other.Put(ctx, k, &tagCount{Tags: []string{"b"}, N: 2}); err != nil { // another instance's write
		t.Fatal(err)
	}
	var got tagCount
	l = db.PageLookup()
	r := l.Add(k, &got)
	if err := l.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if !r.Found() || got.N != 2 || len(got.Tags) != 1 || got.Tags[0] != "b" {
		t.Errorf("read as another type: found %v, %+v, want what is stored", r.Found(), got)
	}
}
