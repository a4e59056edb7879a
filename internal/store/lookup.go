package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/paging"
)

// A Lookup is one batch read of entities that several packages add to:
// in a transaction (with its guard), on a write request's first read
// (with its actor), or for a page, through the instance's cache and the
// tier the instances share.

// Lookup is one batch lookup that several owners add their entities to:
// each Add returns a Ref that, once Run has run, tells whether that entity
// was found. A transaction's lookup lets an operation read another
// package's entities in the same round trip as its own.
type Lookup struct {
	db    *DB
	tx    *datastore.Transaction
	guard *guarded // the transaction's
	keys  []*datastore.Key
	dst   []any
	found []bool
	then  []func()
	// cached: a page's, read through the DB's cache, begun when; lag: how
	// long before it an ask for changes may have begun and serve it.
	cached bool
	begun  time.Time
	lag    time.Duration
}

// Lookup starts a batch lookup outside any transaction.
func (db *DB) Lookup() *Lookup { return &Lookup{db: db} }

// PageLookup starts a batch lookup outside any transaction for what a
// page shows: the entities of the kinds the DB's cache keeps are read
// from it when it has them, and kept once read. Nothing that decides a
// write reads through one.
func (db *DB) PageLookup() *Lookup {
	l := &Lookup{db: db, cached: db.cache != nil}
	if l.cached {
		l.begun = db.cache.now()
	}
	return l
}

// Lagging has a page lookup take an ask for changes begun up to d
// before its request, beside the cache's Share: for what may show a
// change made on another instance that late (an unread count's reader's
// state), so that it need not ask for itself.
func (l *Lookup) Lagging(d time.Duration) *Lookup {
	l.lag = d
	return l
}

// Lookup starts a batch lookup in the transaction.
func (tx *Tx) Lookup() *Lookup { return &Lookup{db: tx.db, tx: tx.tx, guard: tx.guard} }

// DB returns the DB the lookup reads, for its keys.
func (l *Lookup) DB() *DB { return l.db }

// InTx reports whether the lookup is a transaction's.
func (l *Lookup) InTx() bool { return l.tx != nil }

// Then has f called once the entities added so far are loaded. f may add
// more, which Run loads in a further round: for an entity whose own fields
// say what else to read, which is rare (else it costs a round trip). A
// Then that f adds is called after that round, or at once if f added
// nothing to read.
func (l *Lookup) Then(f func()) { l.then = append(l.then, f) }

// Ref is one entity of a Lookup.
type Ref struct {
	l *Lookup
	i int
}

// Add adds the entity at key, to be loaded into dst, a pointer to a struct.
func (l *Lookup) Add(key *datastore.Key, dst any) Ref {
	l.keys = append(l.keys, key)
	l.dst = append(l.dst, dst)
	return Ref{l: l, i: len(l.keys) - 1}
}

// Found reports whether the entity exists; it is false before Run.
func (r Ref) Found() bool { return r.l != nil && r.i < len(r.l.found) && r.l.found[r.i] }

// Len returns how many entities the lookup holds.
func (l *Lookup) Len() int { return len(l.keys) }

// MaxLookup is the most keys Datastore looks up in one call.
const MaxLookup = 1000

// Run loads every entity added, in one call (one per MaxLookup keys), and
// then what the functions given to Then add. A missing entity is not an
// error; its Ref says so. In a transaction, ctx is the transaction's.
func (l *Lookup) Run(ctx context.Context) error {
	l.found = l.found[:0]
	for done := 0; ; {
		l.found = append(l.found, make([]bool, len(l.keys)-done)...)
		step := MaxLookup - 2 // room for the guard: the actor and the token
		for from := done; from < len(l.keys); from += step {
			if err := l.run(ctx, from, min(len(l.keys), from+step)); err != nil {
				return err
			}
		}
		done = len(l.keys)
		then := l.then
		l.then = nil
		for _, f := range then {
			f()
		}
		if len(l.keys) == done && len(l.then) == 0 {
			return nil // a Then added with no read before it runs too
		}
	}
}

func (l *Lookup) run(ctx context.Context, from, to int) error {
	keys, dst := l.keys[from:to], l.dst[from:to]
	if l.tx != nil {
		// The transaction's guard rides with its first read.
		var g []int
		keys, dst, g = l.guard.add(keys, dst)
		found := make([]bool, len(keys))
		if err := getMulti(found, keys, func() error { return l.tx.GetMulti(keys, dst) }); err != nil {
			return err
		}
		copy(l.found[from:to], found)
		if g != nil {
			return l.guard.check(found, dst, g)
		}
		return nil
	}
	if g := outside(ctx); g != nil {
		// A write request's first read: its actor rides with it.
		st := &guarded{g: g}
		keys, dst, i := st.add(keys, dst)
		found := make([]bool, len(keys))
		if err := getMulti(found, keys, func() error { return l.db.client.GetMulti(ctx, keys, dst) }); err != nil {
			return err
		}
		copy(l.found[from:to], found)
		if err := st.check(found, dst, i); err != nil {
			return err
		}
		g.checked.Store(true)
		return nil
	}
	if l.cached {
		return l.runCached(ctx, from, to)
	}
	return getMulti(l.found[from:to], keys, func() error { return l.db.client.GetMulti(ctx, keys, dst) })
}

// runCached is run for a page's lookup: what the cache holds is loaded
// from it, the rest read, and what the cache keeps of that kept.
func (l *Lookup) runCached(ctx context.Context, from, to int) error {
	c := l.db.cache
	// What changed before the page began leaves the cache first, on the
	// first round that could answer from it.
	if c.fresh(l.keys[from:to]) {
		if err := c.sync(ctx, l.db, paging.Begun(ctx, l.begun).Add(-l.lag)); err != nil {
			return err
		}
	}
	epoch, at := c.begin(), c.now()
	// What the cache does not answer is read: keys, into dst (the
	// properties, for a kind the cache keeps), for the lookup's entities
	// at index.
	var keys []*datastore.Key
	var dst []any
	var index []int
	for i := from; i < to; i++ {
		k := l.keys[i]
		if !c.holds(k) {
			keys, dst, index = append(keys, k), append(dst, l.dst[i]), append(index, i)
			continue
		}
		if ok, err := c.get(k, l.dst[i]); err != nil {
			return fmt.Errorf("store: a cached %s: %w", k.Kind, err)
		} else if ok {
			l.found[i] = true
			continue
		}
		keys, dst, index = append(keys, k), append(dst, &datastore.PropertyList{}), append(index, i)
	}
	if keys, dst, index = l.runShared(ctx, keys, dst, index, epoch); len(keys) == 0 {
		return nil
	}
	found := make([]bool, len(keys))
	if err := getMulti(found, keys, func() error { return l.db.client.GetMulti(ctx, keys, dst) }); err != nil {
		return err
	}
	var shared []string
	var props []datastore.PropertyList
	for j, i := range index {
		l.found[i] = found[j]
		p, ok := dst[j].(*datastore.PropertyList)
		if !ok || !c.holds(keys[j]) || !found[j] {
			continue
		}
		if err := load(l.dst[i], *p); err != nil {
			return fmt.Errorf("store: a %s: %w", keys[j].Kind, err)
		}
		c.put(keys[j], *p, l.dst[i], epoch, at)
		shared, props = append(shared, cacheKey(keys[j])), append(props, *p)
	}
	if c.shared != nil {
		c.shared.put(ctx, shared, props, at, c.ttl)
	}
	return nil
}

// runShared looks for what the instance's cache did not hold (keys, to
// read into dst, for the lookup's entities at index) in the tier the
// instances share, loads what it may take, and keeps it in the
// instance's cache with the time it was read from the Datastore; it
// returns what is left to read.
func (l *Lookup) runShared(ctx context.Context, keys []*datastore.Key, dst []any, index []int, epoch uint64) ([]*datastore.Key, []any, []int) {
	c := l.db.cache
	if c.shared == nil {
		return keys, dst, index
	}
	var names []string
	var at []int // of keys, those the cache keeps
	for j, k := range keys {
		if c.holds(k) {
			names, at = append(names, cacheKey(k)), append(at, j)
		}
	}
	if len(names) == 0 {
		return keys, dst, index
	}
	got := c.shared.get(ctx, names, c.ttl, c.now())
	taken := map[int]bool{}
	for n, e := range got {
		j := at[n]
		if e == nil {
			continue
		}
		i := index[j]
		if err := load(l.dst[i], e.Props); err != nil {
			// Kept by another version: read it from the Datastore, into
			// a destination with nothing of the half-done load.
			if v := reflect.ValueOf(l.dst[i]); v.Kind() == reflect.Pointer && !v.IsNil() {
				v.Elem().SetZero()
			}
			continue
		}
		l.found[i], taken[j] = true, true
		c.put(keys[j], e.Props, l.dst[i], epoch, time.Unix(0, e.At))
	}
	if len(taken) == 0 {
		return keys, dst, index
	}
	var k2 []*datastore.Key
	var d2 []any
	var i2 []int
	for j := range keys {
		if !taken[j] {
			k2, d2, i2 = append(k2, keys[j]), append(d2, dst[j]), append(i2, index[j])
		}
	}
	return k2, d2, i2
}

// getMulti runs get, a GetMulti of keys, and marks in found those found.
func getMulti(found []bool, keys []*datastore.Key, get func() error) error {
	err := get()
	if err == nil {
		for i := range found {
			found[i] = true
		}
		return nil
	}
	var me datastore.MultiError
	if !errors.As(err, &me) || len(me) != len(keys) {
		return Convert(err)
	}
	for i, e := range me {
		switch {
		case e == nil:
			found[i] = true
		case errors.Is(e, datastore.ErrNoSuchEntity):
		default:
			return Convert(e)
		}
	}
	return nil
}
