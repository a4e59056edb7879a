package store

import (
	"context"
	"slices"
	"sync/atomic"

	"cloud.google.com/go/datastore"
)

// A Guard is an entity every transaction of a request reads and checks
// before it commits: the account of the person acting, whose standing
// decides whether they may write at all. A request carries it in its
// context (WithGuard); every transaction run with that context adds the
// guard's key to its first read (a Get or a Lookup's first round), so no
// round trip is added, and fails with Check's error when Check refuses.
// A transaction that reads nothing reads the guard alone before its
// commit. Read in the transaction, the entity is locked until the commit:
// a change of standing that commits first is seen, one that commits
// after waits for this write.
//
// A write request's guard is checked before anything else it reads, too
// (WithWrites): its first batch lookup outside a transaction carries the
// entity, so an operation that decides from what it read before its
// transaction (a change that changes nothing, a refusal that names its
// target) answers the actor's refusal first.
//
// So an operation cannot forget its actor: a path added later is covered
// without being named. What an account's owner may do whatever their
// standing (end their session) runs with Unguarded.
//
// Also are further entities read and checked alike, in the same read:
// the request's token, which a logout or a revocation deletes, so that
// no token cache lets a write through once it is gone.
type Guard struct {
	Key *datastore.Key
	// New returns a fresh destination for the entity.
	New func() any
	// Check decides, from whether the entity was found and what it holds,
	// whether the transaction may go on.
	Check func(found bool, dst any) error
	Also  []GuardPart
	// writes: checked with the first lookup outside a transaction too;
	// checked says that was done.
	writes  bool
	checked atomic.Bool
}

// GuardPart is one more entity a guard reads and checks.
type GuardPart struct {
	Key   *datastore.Key
	New   func() any
	Check func(found bool, dst any) error
}

// parts are the guard's entities: its own, then Also.
func (g *Guard) parts() []GuardPart {
	return append([]GuardPart{{Key: g.Key, New: g.New, Check: g.Check}}, g.Also...)
}

// WithWrites returns ctx whose guard, if any, is checked with the first
// lookup outside a transaction too: for a request that writes.
func WithWrites(ctx context.Context) context.Context {
	g := GuardOf(ctx)
	if g == nil {
		return ctx
	}
	return WithGuard(ctx, &Guard{Key: g.Key, New: g.New, Check: g.Check, Also: g.Also, writes: true})
}

// outside returns the guard a lookup outside a transaction must check,
// nil if none.
func outside(ctx context.Context) *Guard {
	g := GuardOf(ctx)
	if g == nil || !g.writes || g.checked.Load() {
		return nil
	}
	return g
}

type guardKey struct{}

// WithGuard returns ctx with g to check in every transaction run with it.
func WithGuard(ctx context.Context, g *Guard) context.Context {
	return context.WithValue(ctx, guardKey{}, g)
}

// Unguarded returns ctx without its guard.
func Unguarded(ctx context.Context) context.Context {
	return context.WithValue(ctx, guardKey{}, (*Guard)(nil))
}

// GuardOf returns ctx's guard, nil if it has none.
func GuardOf(ctx context.Context) *Guard {
	g, _ := ctx.Value(guardKey{}).(*Guard)
	return g
}

// guarded is a transaction's state of its guard.
type guarded struct {
	g    *Guard
	done bool
}

// pending returns the guard still to check, nil if none.
func (s *guarded) pending() *Guard {
	if s == nil || s.done || s.g == nil {
		return nil
	}
	return s.g
}

// add adds the guard's entities to a batch of keys and destinations: it
// returns them, and the index of each of the guard's entities (one
// already there is shared); nil when no guard is pending.
func (s *guarded) add(keys []*datastore.Key, dst []any) ([]*datastore.Key, []any, []int) {
	g := s.pending()
	if g == nil {
		return keys, dst, nil
	}
	keys, dst = keys[:len(keys):len(keys)], dst[:len(dst):len(dst)]
	var at []int
	for _, p := range g.parts() {
		i := slices.IndexFunc(keys, p.Key.Equal)
		if i < 0 {
			keys, dst, i = append(keys, p.Key), append(dst, p.New()), len(keys)
		}
		at = append(at, i)
	}
	return keys, dst, at
}

// check checks the guard against what a read found, at the indexes add
// gave.
func (s *guarded) check(found []bool, dst []any, at []int) error {
	s.done = true
	for j, p := range s.g.parts() {
		if err := p.Check(found[at[j]], dst[at[j]]); err != nil {
			return err
		}
	}
	return nil
}

// checkAlone reads the guard's entities by themselves, for a transaction
// that read nothing else, and checks them.
func (s *guarded) checkAlone(t *datastore.Transaction) error {
	if s.pending() == nil {
		return nil
	}
	keys, dst, at := s.add(nil, nil)
	ok := make([]bool, len(keys))
	if err := getMulti(ok, keys, func() error { return t.GetMulti(keys, dst) }); err != nil {
		return err
	}
	return s.check(ok, dst, at)
}
