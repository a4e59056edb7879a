package accounts

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"cloud.google.com/go/datastore"
	"github.com/hashicorp/golang-lru/v2/expirable"

	"socialstream/internal/store"
)

// KindFollowerCount is the kind of the follower count shards of earlier
// versions: FollowerCount/{userId}-{n}, root entities.
//
// Counts are properties of the User (followersCount, followingCount),
// changed by server-side increments in the commit of the change they count
// (Count), which read nothing: a celebrity's followers do not wait on each
// other's locks. Earlier versions moved a celebrity's follower count to
// CountShards shards (User.Shards of them); those shards are read, added to
// the User's count, and never written again, so counts stay exact without
// a migration. The erasure deletes them.
const KindFollowerCount = "FollowerCount"

// CountShards is how many follower count shards an earlier version gave a
// celebrity.
const CountShards = 16

type followerCount struct {
	Followers int64 `datastore:"followers,noindex"`
}

// CountKey returns the key of a user's follower count shard n.
func CountKey(db *store.DB, user string, n int) *datastore.Key {
	return db.NameKey(KindFollowerCount, user+"-"+strconv.Itoa(n), nil)
}

// spreadUsers remembers, per instance, the users of earlier versions whose
// counts are in shards, so a lookup of them reads their shards in its
// first round; a user met for the first time costs a second round
// (store.Lookup.Then). Nothing spreads a user any more, so an entry
// cannot be wrong, only missing.
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

// Exact reports whether Person's counts are exact: a lookup in a
// transaction does not read the count shards of earlier versions; Load
// reads them after.
func (r *Record) Exact() bool { return !r.ref.Found() || len(r.counts) >= r.u.Shards }

// Counted returns a Record of user id that a transaction counts in
// without reading it (a follow counting its followee: a celebrity's
// followers would otherwise all hold a lock on one User). Count checks at
// the commit that the user is there: the commit fails with ErrNoSuchPerson
// (see Err) if not. It has no Person.
func Counted(id string) *Record { return &Record{id: id, blind: true} }

// Err returns the error of a transaction that counted in a Record as its
// caller should see it: ErrNoSuchPerson if a Counted user was gone at the
// commit.
func Err(err error) error {
	if errors.Is(err, store.ErrGone) {
		return ErrNoSuchPerson
	}
	return err
}

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
