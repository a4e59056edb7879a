package store_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"socialstream/internal/store"
	"socialstream/internal/testenv"
)

// groupCounts keeps, beside the pairs, the count of each group's: a pair
// named "group_n" is one of group's, and a write of it changes the
// group's count.
func groupCounts(cfg store.CacheConfig) store.CacheConfig {
	cfg.Derived = func(name string) string {
		if rest, ok := strings.CutPrefix(name, "/Pair,"); ok {
			if group, _, ok := strings.Cut(rest, "_"); ok {
				return "/GroupCount," + group
			}
		}
		return ""
	}
	return cfg
}

// instances returns two instances over base, each with a cache of its
// own made as cfg says.
func instances(base *store.DB, cfg store.CacheConfig) (*store.DB, *store.DB) {
	return base.WithCache(store.NewCache(cfg)), base.WithCache(store.NewCache(cfg))
}

// counter counts a group's pairs through db's kept counts, and reports
// how many times the count was made (not kept).
type counter struct {
	fills    atomic.Int64
	until    time.Time
	volatile bool
}

func (c *counter) count(t *testing.T, db *store.DB, group string) int64 {
	t.Helper()
	ctx := context.Background()
	n, err := db.KeptCount(ctx, "/GroupCount,"+group, 0, func(ctx context.Context) (store.Count, error) {
		c.fills.Add(1)
		n, err := db.Count(ctx, db.Query("Pair").FilterField("b", "=", group))
		return store.Count{N: n, Until: c.until, Volatile: c.volatile}, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A count is kept until a write of what it is made of: this instance's
// drops it at once, another's on the next ask for changes; a write of
// anything else leaves it. A volatile count is never kept, and one kept
// until a time is made again then.
func TestAKeptCountFollowsItsEntities(t *testing.T) {
	ctx := context.Background()
	base := testenv.DB(t)
	db, other := instances(base, groupCounts(keptPairs))
	var c counter
	steps := []struct {
		name      string
		write     func() error
		want      int64
		madeAgain bool
	}{
		{"first", nil, 0, true},
		{"asked again", nil, 0, false},
		{"another instance's write", func() error { return other.Put(ctx, db.NameKey("Pair", "g_1", nil), &pair{B: "g"}) }, 1, true},
		{"kept again", nil, 1, false},
		{"this instance's write", func() error {
			err := db.Put(ctx, db.NameKey("Pair", "g_2", nil), &pair{B: "g"})
			// What is read within the margin of a change is dropped by its
			// mark, as an entity would be: read past it.
			time.Sleep(store.SyncMargin)
			return err
		}, 2, true},
		{"another group's pair", func() error { return other.Put(ctx, db.NameKey("Pair", "h_1", nil), &pair{B: "h"}) }, 2, false},
		{"a delete, in a transaction", func() error {
			return other.Update(ctx, func(tx *store.Tx) error { return tx.Delete(db.NameKey("Pair", "g_1", nil)) })
		}, 1, true},
	}
	for _, s := range steps {
		if s.write != nil {
			if err := s.write(); err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
		}
		before := c.fills.Load()
		if got := c.count(t, db, "g"); got != s.want || (c.fills.Load() > before) != s.madeAgain {
			t.Errorf("%s: %d, made again %v; want %d, %v", s.name, got, c.fills.Load() > before, s.want, s.madeAgain)
		}
	}

	// Kept until a time: taken before it, made again after.
	clock := time.Now()
	timed := store.NewCache(groupCounts(keptPairs))
	store.SetCacheClock(timed, func() time.Time { return clock })
	tdb := base.WithCache(timed)
	c = counter{until: clock.Add(time.Minute)}
	c.count(t, tdb, "t")
	c.count(t, tdb, "t")
	clock = clock.Add(time.Minute)
	c.count(t, tdb, "t")
	if n := c.fills.Load(); n != 2 {
		t.Errorf("a count kept for a minute, asked at once and a minute on: made %d times, want 2", n)
	}
	c = counter{volatile: true}
	c.count(t, db, "v")
	c.count(t, db, "v")
	if n := c.fills.Load(); n != 2 {
		t.Errorf("a volatile count asked twice: made %d times, want 2", n)
	}
}

// With the shared tier alone, a count made on one instance is taken on
// another; a write of what it is made of leaves a tombstone that every
// instance heeds.
func TestAKeptCountInTheSharedTier(t *testing.T) {
	ctx := context.Background()
	base := testenv.DB(t)
	shared, err := store.NewShared(ctx, testenv.Redis(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shared.Close() })
	cfg := groupCounts(keptPairs)
	cfg.Shared, cfg.SharedOnly = shared, true
	a, b := base.WithCache(store.NewCache(cfg)), base.WithCache(store.NewCache(cfg))
	if err := base.Put(ctx, base.NameKey("Pair", "g_1", nil), &pair{B: "g"}); err != nil {
		t.Fatal(err)
	}
	var c counter
	if got := c.count(t, a, "g"); got != 1 {
		t.Fatalf("first count: %d", got)
	}
	if got := c.count(t, b, "g"); got != 1 || c.fills.Load() != 1 {
		t.Fatalf("another instance: %d, made %d times; want 1, once (from the tier)", got, c.fills.Load())
	}
	if err := b.Put(ctx, base.NameKey("Pair", "g_2", nil), &pair{B: "g"}); err != nil {
		t.Fatal(err)
	}
	for i, db := range []*store.DB{a, b} {
		if got := c.count(t, db, "g"); got != 2 {
			t.Errorf("instance %d after the write: %d, want 2", i, got)
		}
	}
	if n := store.Asks(a.Cache()) + store.Asks(b.Cache()); n != 0 {
		t.Errorf("%d asks for marks, want none", n)
	}

	// A count kept until a time is taken from the tier before it, and
	// made again past it, whatever the tier still holds.
	clock := time.Now()
	timed := func() *store.DB {
		c := store.NewCache(cfg)
		store.SetCacheClock(c, func() time.Time { return clock })
		return base.WithCache(c)
	}
	early, late := timed(), timed()
	c = counter{until: clock.Add(time.Minute)}
	c.count(t, early, "t")
	c.count(t, late, "t")
	if n := c.fills.Load(); n != 1 {
		t.Errorf("a count kept for a minute, asked on two instances at once: made %d times, want once", n)
	}
	clock = clock.Add(time.Minute)
	c.count(t, late, "t")
	if n := c.fills.Load(); n != 2 {
		t.Errorf("the same, asked again a minute on: made %d times in all, want twice", n)
	}
}
