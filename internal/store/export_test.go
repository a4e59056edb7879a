package store

import (
	"context"
	"slices"
	"time"

	"cloud.google.com/go/datastore"
)

// SetCacheClock sets the clock a cache judges its TTL by.
func SetCacheClock(c *Cache, now func() time.Time) { c.now = now }

// BeginRead and KeepRead are a page lookup's two halves: the start of
// its read, and the keeping of what it read.
func BeginRead(c *Cache) uint64 { return c.begin() }

func KeepRead(c *Cache, k *datastore.Key, props datastore.PropertyList, epoch uint64, at time.Time) {
	c.put(k, props, nil, epoch, at)
}

// Asks is how many times c asked the Datastore for marks of changes.
func Asks(c *Cache) int64 { return c.asks.Load() }

// SetSyncLimit sets how many marks one ask reads at most.
func SetSyncLimit(n int) (restore func()) {
	old := syncLimit
	syncLimit = n
	return func() { syncLimit = old }
}

// Remarks is how many writes marked their changes again.
func Remarks(c *Cache) int64 { return c.remarks.Load() }

// ChangeTime is the time of a mark's place.
func ChangeTime(at string) (time.Time, bool) { return changeTime(at) }

// SharedKeep keeps props in s as what a read of k at at found, as a page
// whose fill came late would.
func SharedKeep(s *Shared, k *datastore.Key, props datastore.PropertyList, at time.Time, ttl time.Duration) {
	s.put(context.Background(), []string{cacheKey(k)}, []datastore.PropertyList{props}, at, ttl)
}

// MarksOf returns the places of the marks of changes in db's namespace
// that name k, and how many marks there are in all.
func MarksOf(ctx context.Context, db *DB, k *datastore.Key) (places []string, all int, err error) {
	var marks []change
	if _, err := db.client.GetAll(ctx, db.Query(KindChange), &marks); err != nil {
		return nil, 0, err
	}
	for _, m := range marks {
		if slices.Contains(m.Names, k.String()) {
			places = append(places, m.At)
		}
	}
	return places, len(marks), nil
}

// ChangeAt is the place of a mark of name made at t among shards.
func ChangeAt(name string, shards int, t time.Time) string { return changeAt(name, shards, t) }

// MaxTouched is the most subjects a commit names a family's answers by.
const MaxTouched = maxTouched
