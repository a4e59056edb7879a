package store

import (
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
