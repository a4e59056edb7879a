package accounts

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"cloud.google.com/go/datastore"
	"github.com/hashicorp/golang-lru/v2/expirable"

	"socialstream/internal/store"
)

// KindFollowerCount is the kind of a spread user's follower count shards:
// FollowerCount/{userId}-{n}, root entities.
const KindFollowerCount = "FollowerCount"

// CountShards is how many follower count shards a user is spread over.
//
// A user's follower count starts in the User entity, which every follow of
// them writes. When follows of one user contend (a celebrity gaining
// followers fast; package graph says when), Spread moves the counting of
// their followers to CountShards shards: a follow writes the shard its
// follower's id hashes to, the User entity is only read, and the count is
// the User's plus the shards'. A shard may go below zero (a follower
// counted in one, the unfollow in another); only the sum means anything.
const CountShards = 16

type followerCount struct {
	Followers int64 `datastore:"followers,noindex"`
}

// CountKey returns the key of a user's follower count shard n.
func CountKey(db *store.DB, user string, n int) *datastore.Key {
	return db.NameKey(KindFollowerCount, user+"-"+strconv.Itoa(n), nil)
}

// spreadUsers remembers, per instance, the users whose counts are spread,
// so a lookup of them reads their shards in its first round; a user met
// for the first time costs a second round (store.Lookup.Then). Spreading
// is never undone, so an entry cannot be wrong, only missing.
var spreadUsers = expirable.NewLRU[string, int](10_000, nil, time.Hour)

func spreadName(db *store.DB, user string) string { return db.Namespace() + "/" + user }

// addCounts adds r's count shards from len(r.counts) up to n to a lookup.
func (r *Record) addCounts(l *store.Lookup, n int) {
	for i := len(r.counts); i < n; i++ {
		c := &followerCount{}
		l.Add(CountKey(l.DB(), r.id, i), c)
		r.counts = append(r.counts, c)
	}
}

// Exact reports whether Person's counts are exact: a lookup outside a
// transaction reads a spread user's count shards, one in a transaction
// does not (so that it conflicts with no follow); Load reads them after.
func (r *Record) Exact() bool { return !r.partial && (!r.ref.Found() || len(r.counts) >= r.u.Shards) }

// ReadCounted adds user id to a transaction's lookup, for a follow or
// unfollow by follower that counts them. seen is how many count shards the
// user had when read before the transaction. Not spread (0), it reads the
// User as Read does. Spread, it reads only the count shard follower's
// changes go to, which also says the user is there (Spread writes them
// all, a deletion deletes them all): a celebrity's follows do not all read
// their User at once. Such a Record counts followers only, and its Person
// is not Exact.
func ReadCounted(l *store.Lookup, id, follower string, seen int) *Record {
	if seen == 0 {
		return Read(l, id)
	}
	r := &Record{id: id, partial: true, shard: store.Shard(follower, seen)}
	r.u.Shards = seen
	r.ref = l.Add(CountKey(l.DB(), id, r.shard), &r.count)
	return r
}

// Spread moves, in tx, the counting of a user's followers to CountShards
// shards, and reports whether it did (false: spread already, or gone).
func Spread(tx *store.Tx, r *Record) (bool, error) {
	if !r.ref.Found() || r.u.Shards > 0 || r.partial {
		return false, nil
	}
	r.u.Shards = CountShards
	// Every shard exists from now: a follow reads its own to know the
	// user is there (ReadCounted).
	keys := append([]*datastore.Key{UserKey(tx.DB(), r.id)}, countKeys(tx.DB(), r.id)...)
	vals := []any{&r.u}
	for range CountShards {
		vals = append(vals, &followerCount{})
	}
	return true, tx.PutMulti(keys, vals)
}

// Shards returns how many count shards the user's followers are counted
// in (0: not spread).
func (r *Record) Shards() int { return r.u.Shards }

// Load reads a person outside any transaction, with every count shard.
func Load(ctx context.Context, db *store.DB, id string) (Person, bool, error) {
	l := db.Lookup()
	r := Read(l, id)
	if err := l.Run(ctx); err != nil {
		return Person{}, false, fmt.Errorf("accounts.Load(%s): %w", id, err)
	}
	p, ok := r.Person()
	return p, ok, nil
}

// countKeys returns the keys of every count shard a user may have.
func countKeys(db *store.DB, user string) []*datastore.Key {
	keys := make([]*datastore.Key, CountShards)
	for i := range keys {
		keys[i] = CountKey(db, user, i)
	}
	return keys
}
