package store

import (
	"context"
	"sync"
	"time"

	"cloud.google.com/go/datastore"
)

// The service's own entities: its keys (the cursors', the picture links',
// the VAPID keys), made once by the first instance that needs them and
// read by every instance, each keeping what it read for a while.

// MakeOnce reads the service's own entity at key into dst, or, when
// there is none (or empty says it holds nothing), makes it with make (which
// fills what it is given) and writes it in a transaction, unless another
// instance made it meanwhile: then dst holds theirs, and what was made
// is dropped. make runs before the transaction, not in it: it may take
// long (a key pair's generation, seconds on a busy instance), and the
// transaction's read of the missing entity holds its lock until the
// commit, so that others making it at once waited on each other's locks
// and made theirs again on every try. No request's guard rides with it:
// the many first requests of a new deployment would each lock their
// actor and token behind the one entity they all write.
func MakeOnce[T any](ctx context.Context, db *DB, key *datastore.Key, dst *T, empty func(*T) bool, make func(*T) error) error {
	ok, err := db.Get(ctx, key, dst)
	if err != nil || ok && !empty(dst) {
		return err
	}
	var made T
	if err := make(&made); err != nil {
		return err
	}
	return db.Update(Unguarded(ctx), func(tx *Tx) error {
		var zero T
		*dst = zero
		ok, err := tx.Get(key, dst)
		if err != nil || ok && !empty(dst) {
			return err
		}
		*dst = made
		return tx.Put(key, dst)
	})
}

// Refreshed is a value an instance reads, and keeps for a while: read
// again once older than its period, and when a read fails, the value read
// before is kept until a later read succeeds.
type Refreshed[T any] struct {
	period time.Duration
	read   func(context.Context) (T, error)
	now    func() time.Time

	mu   sync.Mutex
	val  T
	ok   bool
	when time.Time
}

// NewRefreshed returns the value read, every period of the clock now
// (nil: time.Now), by read.
func NewRefreshed[T any](period time.Duration, read func(context.Context) (T, error), now func() time.Time) *Refreshed[T] {
	if now == nil {
		now = time.Now
	}
	return &Refreshed[T]{period: period, read: read, now: now}
}

// Get returns the value, read now if it is older than the period; it
// reads without the lock, so that other callers go on with what they
// have.
func (r *Refreshed[T]) Get(ctx context.Context) (T, error) {
	r.mu.Lock()
	val, ok, fresh := r.val, r.ok, r.ok && r.now().Sub(r.when) < r.period
	r.mu.Unlock()
	if fresh {
		return val, nil
	}
	got, err := r.read(ctx)
	if err != nil {
		if ok {
			return val, nil // what was read before still holds; the next call reads again
		}
		return got, err
	}
	r.mu.Lock()
	r.val, r.ok, r.when = got, true, r.now()
	r.mu.Unlock()
	return got, nil
}
