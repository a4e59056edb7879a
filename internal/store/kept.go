package store

import (
	"context"
	"strings"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/paging"
)

// A kept count is what a count made of entities came to (a count of an
// index, say, with what a reader's state hides left out), kept by the
// page cache under a name no entity has, beside the entities it keeps,
// and dropped as they are: a write of an entity it is made of drops it
// wherever that write drops the entity (CacheConfig.Derived says which
// count a written key changes). So a count asked again and again, of
// what seldom changes, is counted once a change.

// Count is what a kept count's fill counted: N, and until when it may be
// kept (zero: the cache's TTL), should time alone change it (a mute that
// ends). Volatile says it may not be kept at all: it was made of what no
// write it would hear of changes (its fill took a path that reads more).
type Count struct {
	N        int64
	Until    time.Time
	Volatile bool
}

// KeptCount returns the count kept under name, or, if the cache keeps
// none it may take, what fill counts, which it then keeps. lag is how
// long before the request an ask for changes may have begun and serve it
// (Lookup.Lagging): a change shows in the count at most that, and the
// cache's Share, after its write. fill reads what the count is made of
// (a page lookup lagging as much, a query); what it counts is kept as of
// the oldest time a read of it may show, the ask's, so that a change
// marked since drops it.
func (db *DB) KeptCount(ctx context.Context, name string, lag time.Duration, fill func(context.Context) (Count, error)) (int64, error) {
	c := db.cache
	if c == nil || c.derive == nil {
		// No cache, or one told of no count's entities: nothing would
		// drop the count.
		got, err := fill(ctx)
		return got.N, err
	}
	key := db.namespace + "\x00" + name
	begun := paging.Begun(ctx, c.now()).Add(-lag)
	if c.keepsCount(key) {
		if err := c.sync(ctx, db, begun); err != nil {
			return 0, err
		}
		if n, ok := c.getCount(key); ok {
			return n, nil
		}
	}
	epoch, at := c.begin(), begun.Add(-c.share)
	if c.shared != nil {
		if e := c.shared.get(ctx, []string{key}, c.ttl, c.now())[0]; e != nil {
			if n, until, ok := countOf(e.Props); ok && (until.IsZero() || c.now().Before(until)) {
				c.putCount(key, n, until, epoch, time.Unix(0, e.At))
				return n, nil
			}
		}
	}
	got, err := fill(ctx)
	if err != nil || got.Volatile {
		return got.N, err
	}
	c.putCount(key, got.N, got.Until, epoch, at)
	if c.shared != nil {
		life := c.ttl
		if !got.Until.IsZero() {
			life = min(life, got.Until.Sub(at))
		}
		c.shared.put(ctx, []string{key}, []datastore.PropertyList{countProps(got.N, got.Until)}, at, life)
	}
	return got.N, nil
}

// countProps are what the cache keeps of a count, as an entity's
// properties: the count, and until when it may be kept (Unix
// nanoseconds; 0: the TTL).
func countProps(n int64, until time.Time) datastore.PropertyList {
	var u int64
	if !until.IsZero() {
		u = until.UnixNano()
	}
	return datastore.PropertyList{{Name: "n", Value: n, NoIndex: true}, {Name: "until", Value: u, NoIndex: true}}
}

// countOf reads what countProps made (ok false for anything else).
func countOf(props datastore.PropertyList) (n int64, until time.Time, ok bool) {
	if len(props) != 2 || props[0].Name != "n" || props[1].Name != "until" {
		return 0, time.Time{}, false
	}
	n, ok1 := props[0].Value.(int64)
	u, ok2 := props[1].Value.(int64)
	if !ok1 || !ok2 {
		return 0, time.Time{}, false
	}
	if u != 0 {
		until = time.Unix(0, u)
	}
	return n, until, true
}

// keepsCount reports whether the instance keeps a count at key (as
// cacheKey names it) that it may still take, once the changes are asked.
func (c *Cache) keepsCount(key string) bool {
	v, ok := c.lru.Peek(key)
	return ok && c.live(v)
}

// getCount returns the count kept at key, if it may be taken.
func (c *Cache) getCount(key string) (int64, bool) {
	v, ok := c.lru.Get(key)
	if !ok || !c.live(v) {
		return 0, false
	}
	n, _, ok := countOf(v.props)
	return n, ok
}

// putCount keeps n at key, as counted by a read begun at epoch of what
// showed at at, until until (zero: the TTL), unless a change of what it
// is made of was dropped since the read began.
func (c *Cache) putCount(key string, n int64, until time.Time, epoch uint64, at time.Time) {
	if c.sharedOnly {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, ok := c.dropped[key]; ok && d.epoch >= epoch || c.purged >= epoch {
		return
	}
	c.lru.Add(key, cached{props: countProps(n, until), at: at, until: until})
}

// live reports whether what is kept in v may be taken now: read less
// than the TTL ago, and before its own end, if it has one.
func (c *Cache) live(v cached) bool {
	now := c.now()
	return now.Sub(v.at) < c.ttl && (v.until.IsZero() || now.Before(v.until))
}

// derived returns the names, as cacheKey names them, of the kept counts
// that a write of the entities names (cacheKey's) changes
// (CacheConfig.Derived), each with its entity's element of at.
func (c *Cache) derived(names []string, at []time.Time) ([]string, []time.Time) {
	if c.derive == nil {
		return nil, nil
	}
	var out []string
	var when []time.Time
	for i, n := range names {
		ns, name, ok := strings.Cut(n, "\x00")
		if !ok {
			continue
		}
		if d := c.derive(name); d != "" {
			out = append(out, ns+"\x00"+d)
			if at != nil {
				when = append(when, at[i])
			}
		}
	}
	return out, when
}
