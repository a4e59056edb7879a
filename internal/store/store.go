// Package store is the Datastore plumbing every domain package shares: a
// client bound to one namespace, key and query helpers that apply it,
// reads, writes and transactions that convert Datastore and gRPC errors into
// derrors kinds once, here, and batch lookups that say what was found by
// the entity asked for, not by its position in a list.
//
// The client itself is not exposed: a domain package reads and writes only
// through DB, Tx and Lookup, and only its own kinds (see docs/layout.md).
//
// Tests give each test a namespace of its own; a deployment may set one to
// keep several environments in one project.
package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"cloud.google.com/go/datastore"
	pb "cloud.google.com/go/datastore/apiv1/datastorepb"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"socialstream/internal/derrors"
)

// MaxAttempts bounds the retries of a contended transaction. The client's
// default of 3 gives up too soon when many requests update one entity (a
// popular user's follower count); its backoff starts at 20ms and grows by
// 1.3 a try, so 25 tries wait up to about a minute in all, jittered.
const MaxAttempts = 25

// DB is a Datastore client bound to a namespace.
type DB struct {
	client    *datastore.Client
	namespace string
	cache     *Cache // what PageLookups read through; nil: none
}

// New returns a DB; client must not be nil.
func New(client *datastore.Client, namespace string) (*DB, error) {
	if client == nil {
		return nil, errors.New("store.New: nil client")
	}
	return &DB{client: client, namespace: namespace}, nil
}

// WithCache returns a DB of the same client and namespace whose page
// lookups read through c, and whose every write drops what it writes
// from c. Every DB of an instance should share one Cache.
func (db *DB) WithCache(c *Cache) *DB {
	return &DB{client: db.client, namespace: db.namespace, cache: c}
}

// Cache returns what the DB's page lookups read through (nil: none).
func (db *DB) Cache() *Cache { return db.cache }

// Namespace returns the DB's namespace.
func (db *DB) Namespace() string { return db.namespace }

// Open connects to Datastore for project. A non-empty emulatorHost connects to
// that emulator without credentials; extra options (a gRPC interceptor, say)
// are applied after.
func Open(ctx context.Context, project, emulatorHost string, opts ...option.ClientOption) (*datastore.Client, error) {
	var o []option.ClientOption
	if emulatorHost != "" {
		o = append(o,
			option.WithEndpoint("passthrough:///"+emulatorHost),
			option.WithoutAuthentication(),
			option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())),
		)
	}
	// The library spans every call itself (datastoreClient.Lookup, and
	// so on); the gRPC layer's telemetry, a span per RPC beside it, ran
	// on every call, traced or not: a third of the unread count's CPU.
	o = append(o, option.WithTelemetryDisabled())
	c, err := datastore.NewClient(ctx, project, append(o, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("store.Open(%q): %w", project, err)
	}
	return c, nil
}

// NameKey returns a key with a string name in the DB's namespace.
func (db *DB) NameKey(kind, name string, parent *datastore.Key) *datastore.Key {
	k := datastore.NameKey(kind, name, parent)
	k.Namespace = db.namespace
	return k
}

// IDKey returns a key with an integer id in the DB's namespace.
func (db *DB) IDKey(kind string, id int64, parent *datastore.Key) *datastore.Key {
	k := datastore.IDKey(kind, id, parent)
	k.Namespace = db.namespace
	return k
}

// Query returns a query of kind in the DB's namespace.
func (db *DB) Query(kind string) *datastore.Query {
	return datastore.NewQuery(kind).Namespace(db.namespace)
}

// Convert maps Datastore and gRPC errors to derrors kinds, keeping the
// original in the chain. Errors that already carry a kind pass unchanged.
func Convert(err error) error {
	if err == nil {
		return nil
	}
	var de *derrors.Error
	if errors.As(err, &de) {
		return err
	}
	switch {
	case errors.Is(err, datastore.ErrNoSuchEntity):
		return fmt.Errorf("%w: %w", derrors.NotFound, err)
	case errors.Is(err, datastore.ErrConcurrentTransaction):
		return fmt.Errorf("%w: %w", derrors.Unavailable, err)
	}
	if s, ok := status.FromError(err); ok {
		switch s.Code() {
		case codes.AlreadyExists:
			return fmt.Errorf("%w: %w", derrors.Conflict, err)
		case codes.NotFound: // a Transform of an entity that is not there
			return fmt.Errorf("%w: %w", ErrGone, err)
		case codes.Canceled: // the request's client went away
			return fmt.Errorf("%w: %w", derrors.Canceled, err)
		case codes.Aborted, codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted:
			return fmt.Errorf("%w: %w", derrors.Unavailable, err)
		}
	}
	return err
}

// found turns the error of a single Get into whether the entity exists.
func found(err error) (bool, error) {
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, datastore.ErrNoSuchEntity):
		return false, nil
	}
	return false, Convert(err)
}

// Get loads the entity at key into dst and reports whether it exists; a
// missing entity is not an error.
func (db *DB) Get(ctx context.Context, key *datastore.Key, dst any) (bool, error) {
	if outside(ctx) != nil { // a write request's first read: its guard rides with it
		l := db.Lookup()
		r := l.Add(key, dst)
		if err := l.Run(ctx); err != nil {
			return false, err
		}
		return r.Found(), nil
	}
	return found(db.client.Get(ctx, key, dst))
}

// CheckGuard checks the guard of a write request (see Guard) that has not
// read its actor yet: for a write that finds nothing to change before it
// reads anything by key (a query's), so that it answers the actor's
// refusal all the same. It reads nothing otherwise.
func (db *DB) CheckGuard(ctx context.Context) error {
	if outside(ctx) == nil {
		return nil
	}
	return db.Lookup().run(ctx, 0, 0)
}

// Put writes one entity. Under a guard (a request's), it is a
// transaction that checks it; so are PutMulti, Delete and DeleteMulti.
func (db *DB) Put(ctx context.Context, key *datastore.Key, src any) error {
	if GuardOf(ctx) != nil {
		return db.Update(ctx, func(tx *Tx) error { return tx.Put(key, src) })
	}
	keys := []*datastore.Key{key}
	defer db.cache.drop(keys, nil)
	if marks := db.marks(keys, nil); marks != nil {
		return db.mutate(ctx, keys, []*datastore.Mutation{datastore.NewUpsert(key, src)}, marks)
	}
	_, err := db.client.Put(ctx, key, src)
	return Convert(err)
}

// PutMulti writes entities: src is a slice as long as keys.
func (db *DB) PutMulti(ctx context.Context, keys []*datastore.Key, src any) error {
	if GuardOf(ctx) != nil {
		return db.Update(ctx, func(tx *Tx) error { return tx.PutMulti(keys, src) })
	}
	defer db.cache.drop(keys, nil)
	if marks := db.marks(keys, nil); marks != nil {
		return db.mutate(ctx, keys, upserts(keys, src), marks)
	}
	_, err := db.client.PutMulti(ctx, keys, src)
	return Convert(err)
}

// Delete deletes one entity; a missing one is not an error.
func (db *DB) Delete(ctx context.Context, key *datastore.Key) error {
	if GuardOf(ctx) != nil {
		return db.Update(ctx, func(tx *Tx) error { return tx.Delete(key) })
	}
	return db.DeleteMulti(ctx, []*datastore.Key{key})
}

// DeleteMulti deletes entities; missing ones are not an error.
func (db *DB) DeleteMulti(ctx context.Context, keys []*datastore.Key) error {
	if GuardOf(ctx) != nil {
		return db.Update(ctx, func(tx *Tx) error { return tx.DeleteMulti(keys) })
	}
	defer db.cache.drop(keys, nil)
	if marks := db.marks(keys, nil); marks != nil {
		muts := make([]*datastore.Mutation, len(keys))
		for i, k := range keys {
			muts[i] = datastore.NewDelete(k)
		}
		return db.mutate(ctx, keys, muts, marks)
	}
	return Convert(db.client.DeleteMulti(ctx, keys))
}

// GetAll runs q and loads its results into dst, a pointer to a slice (nil
// for a keys-only query), returning their keys.
func (db *DB) GetAll(ctx context.Context, q *datastore.Query, dst any) ([]*datastore.Key, error) {
	keys, err := db.client.GetAll(ctx, q, dst)
	return keys, Convert(err)
}

// Count returns how many entities q matches, counted by Datastore (an
// aggregation query: one read per 1,000 index entries it matches, none of
// the entities).
func (db *DB) Count(ctx context.Context, q *datastore.Query) (int64, error) {
	res, err := db.client.RunAggregationQuery(ctx, q.NewAggregationQuery().WithCount("n"))
	if err != nil {
		return 0, Convert(err)
	}
	v, ok := res["n"]
	if !ok {
		return 0, errors.New("store.Count: no count in the answer")
	}
	switch n := v.(type) {
	case int64:
		return n, nil
	case *pb.Value:
		return n.GetIntegerValue(), nil
	}
	return 0, fmt.Errorf("store.Count: a count of type %T", v)
}

// DeleteAll deletes what a keys-only query q finds, batch keys at a time,
// until it finds nothing, and returns how many it deleted. Whatever writes
// the kind must have stopped making new matches.
func (db *DB) DeleteAll(ctx context.Context, q *datastore.Query, batch int) (int, error) {
	n := 0
	for {
		keys, err := db.GetAll(ctx, q.Limit(batch), nil)
		if err == nil && len(keys) > 0 {
			err = db.DeleteMulti(ctx, keys)
		}
		if err != nil || len(keys) == 0 {
			return n, err
		}
		n += len(keys)
	}
}

// Rewrite writes up to n entities of kind again from cursor (empty: the
// first), each read into a T and put as T saves it, 100 a transaction:
// what a new version derives on saving (places, search terms) for the
// entities an older one stored. It returns how many it wrote and the
// cursor of the rest ("": none). A run beside the service is safe.
func Rewrite[T any](ctx context.Context, db *DB, kind, cursor string, n int) (int, string, error) {
	done := 0
	next, err := db.UpdatePage(ctx, db.Query(kind).KeysOnly(), cursor, n, 100, func(tx *Tx, keys []*datastore.Key) error {
		l := tx.Lookup()
		vals := make([]T, len(keys))
		refs := make([]Ref, len(keys))
		for i, k := range keys {
			refs[i] = l.Add(k, &vals[i])
		}
		if err := l.Run(ctx); err != nil {
			return err
		}
		for i, k := range keys {
			if refs[i].Found() {
				if err := tx.Put(k, &vals[i]); err != nil {
					return err
				}
			}
		}
		done += len(keys)
		return nil
	})
	return done, next, err
}

// UpdatePage runs f on the keys of the keys-only query q from cursor, n
// at most, in a transaction for each batch of them, and returns the
// cursor of the rest ("" once q has no more): a step of a job that goes
// through a query's entities, its cursor in its body.
func (db *DB) UpdatePage(ctx context.Context, q *datastore.Query, cursor string, n, batch int, f func(tx *Tx, keys []*datastore.Key) error) (string, error) {
	keys, next, err := db.KeysFrom(ctx, q, cursor, n)
	if err != nil {
		return "", err
	}
	for from := 0; from < len(keys); from += batch {
		part := keys[from:min(len(keys), from+batch)]
		if err := db.Update(ctx, func(tx *Tx) error { return f(tx, part) }); err != nil {
			return "", err
		}
	}
	if len(keys) < n {
		next = ""
	}
	return next, nil
}

// KeysFrom runs the keys-only query q from cursor (empty: the start) for
// up to limit results, and returns their keys and the cursor after them.
// The cursor is Datastore's own, for a job to carry in its body.
func (db *DB) KeysFrom(ctx context.Context, q *datastore.Query, cursor string, limit int) ([]*datastore.Key, string, error) {
	q = q.Limit(limit)
	if cursor != "" {
		c, err := datastore.DecodeCursor(cursor)
		if err != nil {
			return nil, "", ErrBadCursor
		}
		q = q.Start(c)
	}
	it := db.client.Run(ctx, q)
	var keys []*datastore.Key
	for {
		k, err := it.Next(nil)
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			if cursor != "" && status.Code(err) == codes.InvalidArgument {
				return nil, "", ErrBadCursor
			}
			return nil, "", Convert(err)
		}
		keys = append(keys, k)
	}
	next, err := it.Cursor()
	if err != nil {
		return nil, "", Convert(err)
	}
	return keys, next.String(), nil
}

// ValidCursor reports whether s is a cursor KeysFrom can start from.
func ValidCursor(s string) bool {
	_, err := datastore.DecodeCursor(s)
	return err == nil
}

// Tx is a transaction under way. Writes are buffered and sent with the
// commit; reads are consistent with it.
type Tx struct {
	db    *DB
	tx    *datastore.Transaction
	guard *guarded
	// wrote are the keys of what tx writes, for the cache to drop once
	// the transaction is over; touched, by cacheKey, the subjects whose
	// answers the writes of some of them change (Touches).
	wrote   *[]*datastore.Key
	touched map[string][]string
}

// writes notes keys as written by tx.
func (tx *Tx) writes(keys ...*datastore.Key) {
	if tx.db.cache != nil {
		*tx.wrote = append(*tx.wrote, keys...)
	}
}

// DB returns the DB the transaction runs on, for its keys.
func (tx *Tx) DB() *DB { return tx.db }

// Update runs f in a transaction, retrying contention up to MaxAttempts
// times, and converts the error. f may run more than once: it must set
// anything it reports afresh each time.
//
// A transaction that does not commit is rolled back, so that its locks go
// at once: one left open holds them until the Datastore expires it, a
// minute later, and every writer of what it read waits and fails
// meanwhile. The client library gives up on a rollback that fails with
// anything but a timeout; Update tries again.
func (db *DB) Update(ctx context.Context, f func(tx *Tx) error) error {
	var last *datastore.Transaction
	g := GuardOf(ctx)
	// Whatever any attempt wrote may have committed, even one that
	// answered an error: the cache drops it all.
	var wrote []*datastore.Key
	touched := map[string][]string{}
	defer func() { db.cache.drop(wrote, touched) }()
	// The last attempt's start and writes: marked again should it take
	// long (remark).
	var begun time.Time
	var last0 int
	_, err := db.client.RunInTransaction(ctx, func(t *datastore.Transaction) error {
		last = t
		from := len(wrote)
		if db.cache != nil {
			begun, last0 = db.cache.now(), from
		}
		tx := &Tx{db: db, tx: t, guard: &guarded{g: g}, wrote: &wrote, touched: touched}
		if err := f(tx); err != nil {
			return err
		}
		// The marks of what this attempt writes go in its commit.
		if marks := db.marks(wrote[from:], touched); marks != nil {
			if _, err := t.Mutate(marks...); err != nil {
				return err
			}
		}
		return tx.guard.checkAlone(t)
	}, datastore.MaxAttempts(MaxAttempts))
	if err != nil && last != nil {
		rollBack(last)
	}
	if db.cache != nil && len(wrote) > last0 {
		db.remark(ctx, wrote[last0:], touched, begun)
	}
	return Convert(err)
}

// rollBack rolls back a transaction the client library may have failed to
// roll back, trying again while the error says the call may not have
// reached the Datastore. One rolled back already, or committed, answers at
// once without a call, or with an error that ends the tries.
func rollBack(t *datastore.Transaction) {
	wait := 20 * time.Millisecond
	for range 5 {
		s, ok := status.FromError(t.Rollback())
		switch {
		case !ok: // not a call: rolled back or committed already
			return
		case s.Code() != codes.Unavailable && s.Code() != codes.DeadlineExceeded && s.Code() != codes.Aborted && s.Code() != codes.Internal:
			return // done (OK), or refused for good
		}
		time.Sleep(wait)
		wait *= 2
	}
}

// Get loads the entity at key into dst and reports whether it exists.
func (tx *Tx) Get(key *datastore.Key, dst any) (bool, error) {
	if tx.guard.pending() == nil {
		return found(tx.tx.Get(key, dst))
	}
	l := tx.Lookup()
	r := l.Add(key, dst)
	if err := l.Run(context.Background()); err != nil {
		return false, err
	}
	return r.Found(), nil
}

// Put writes one entity with the commit.
func (tx *Tx) Put(key *datastore.Key, src any) error {
	tx.writes(key)
	_, err := tx.tx.Put(key, src)
	return err
}

// PutMulti writes entities with the commit: src is a slice as long as keys.
func (tx *Tx) PutMulti(keys []*datastore.Key, src any) error {
	if len(keys) == 0 {
		return nil
	}
	tx.writes(keys...)
	_, err := tx.tx.PutMulti(keys, src)
	return err
}

// Delete deletes one entity with the commit.
func (tx *Tx) Delete(key *datastore.Key) error {
	tx.writes(key)
	return tx.tx.Delete(key)
}

// ErrGone is the error of a commit whose Transform found no entity.
var ErrGone = derrors.New(derrors.NotFound, "not found")

// Transform changes properties of the entity at key on the server, with
// the commit and without reading it (datastore.Increment,
// AppendMissingElements, RemoveAllFromArray): the way to change what many
// transactions change at once, as none of them holds a lock on it until
// its commit. The entity must exist then, or the commit fails with
// ErrGone: a transform is also a check that it is there. The
// transforms apply after any Put of the same entity in tx.
func (tx *Tx) Transform(key *datastore.Key, ts ...datastore.PropertyTransform) error {
	if len(ts) > 0 {
		tx.writes(key)
	}
	_, err := tx.tx.Mutate(datastore.NewUpdate(key, &none{}).WithPropertyMask().WithTransforms(ts...))
	return err
}

// Check makes tx's commit fail with ErrGone unless the entity at key is
// there then. It reads nothing and changes nothing (a Transform of no
// property): how a transaction writes about what many others change at
// once, such as a popular activity, without holding a lock on it.
func (tx *Tx) Check(key *datastore.Key) error { return tx.Transform(key) }

// TransformAny is Transform for an entity that may not exist: it makes
// one of only the transformed properties if there is none.
func (tx *Tx) TransformAny(key *datastore.Key, ts ...datastore.PropertyTransform) error {
	tx.writes(key)
	_, err := tx.tx.Mutate(datastore.NewUpsert(key, &none{}).WithPropertyMask().WithTransforms(ts...))
	return err
}

// Increment adds each non-zero delta to its property of the entity at key,
// as Transform does: on the server, with the commit, reading nothing.
func (tx *Tx) Increment(key *datastore.Key, deltas map[string]int64) error {
	if ts := increments(deltas); len(ts) > 0 {
		return tx.Transform(key, ts...)
	}
	return nil
}

// IncrementAny is Increment as TransformAny: the entity is made, of only
// those properties, if there is none.
func (tx *Tx) IncrementAny(key *datastore.Key, deltas map[string]int64) error {
	if ts := increments(deltas); len(ts) > 0 {
		return tx.TransformAny(key, ts...)
	}
	return nil
}

func increments(deltas map[string]int64) []datastore.PropertyTransform {
	var ts []datastore.PropertyTransform
	for _, name := range slices.Sorted(maps.Keys(deltas)) {
		if n := deltas[name]; n != 0 {
			ts = append(ts, datastore.Increment(name, n))
		}
	}
	return ts
}

// none is an entity of no properties: the base of a Transform, whose
// empty property mask keeps every property the entity has.
type none struct{}

// DeleteMulti deletes entities with the commit.
func (tx *Tx) DeleteMulti(keys []*datastore.Key) error {
	if len(keys) == 0 {
		return nil
	}
	tx.writes(keys...)
	return tx.tx.DeleteMulti(keys)
}

// Drain runs the keys-only query q for batch keys at a time and hands each
// batch to f, which must take them out of q's matches (delete or edit
// them), until f has been given n keys or q finds no more. It returns how
// many keys f was given. An erasure's steps are made of it.
func (db *DB) Drain(ctx context.Context, q *datastore.Query, n, batch int, f func([]*datastore.Key) error) (int, error) {
	done := 0
	for done < n {
		keys, err := db.GetAll(ctx, q.Limit(min(batch, n-done)), nil)
		if err != nil || len(keys) == 0 {
			return done, err
		}
		if err := f(keys); err != nil {
			return done, err
		}
		done += len(keys)
	}
	return done, nil
}

// DeleteWhere deletes up to n entities of kind whose property field, for
// each of fields in turn, equals value (an erased account's, by any
// property that names it), 500 at a time, and returns how many.
func (db *DB) DeleteWhere(ctx context.Context, kind string, fields []string, value string, n int) (int, error) {
	return db.deleteWhere(ctx, kind, fields, value, n, 500, func(keys []*datastore.Key) error { return db.DeleteMulti(ctx, keys) })
}

// DeleteWhereWith is DeleteWhere, batch entities at a time, each batch
// deleted in a transaction that also runs with: what must change in the
// same commit as the entities go.
func (db *DB) DeleteWhereWith(ctx context.Context, kind string, fields []string, value string, n, batch int,
	with func(tx *Tx, keys []*datastore.Key) error) (int, error) {
	return db.deleteWhere(ctx, kind, fields, value, n, batch, func(keys []*datastore.Key) error {
		return db.Update(ctx, func(tx *Tx) error {
			if err := with(tx, keys); err != nil {
				return err
			}
			return tx.DeleteMulti(keys)
		})
	})
}

func (db *DB) deleteWhere(ctx context.Context, kind string, fields []string, value string, n, batch int, del func([]*datastore.Key) error) (int, error) {
	deleted := 0
	for _, field := range fields {
		k, err := db.Drain(ctx, db.Query(kind).FilterField(field, "=", value).KeysOnly(), n-deleted, batch, del)
		if deleted += k; err != nil || deleted >= n {
			return deleted, err
		}
	}
	return deleted, nil
}
