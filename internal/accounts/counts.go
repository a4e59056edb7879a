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

// KindCounts is the kind of a user's counts: Counts/{userId}, a root
// entity beside the User, changed only by server-side increments in the
// commit of the follow or unfollow they count (Record.Count), which read
// nothing: a celebrity's followers do not wait on each other's locks, and
// nothing that reads the User to see the person is there waits on them.
//
// Earlier versions kept the counts on the User (followersCount,
// followingCount), and before that spread a celebrity's follower count
// over CountShards FollowerCount shards (User.Shards of them). Both are
// read, added up with Counts, and never written again, so counts stay
// exact without a migration. The erasure deletes them all.
const KindCounts = "Counts"

// Counts is a user's follower and following counts, since this version.
type Counts struct {
	Followers int64 `datastore:"followers,noindex"`
	Following int64 `datastore:"following,noindex"`
}

// CountsKey returns the key of a user's Counts.
func CountsKey(db *store.DB, user string) *datastore.Key {
	return db.NameKey(KindCounts, user, nil)
}

// KindFollowerCount is the kind of the follower count shards of earlier
// versions: FollowerCount/{userId}-{n}, root entities.
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

// addShards adds r's count shards from len(r.shards) up to n to a lookup.
func (r *Record) addShards(l *store.Lookup, n int) {
	for i := len(r.shards); i < n; i++ {
		c := &followerCount{}
		l.Add(CountKey(l.DB(), r.id, i), c)
		r.shards = append(r.shards, c)
	}
}

// Load reads a person outside any transaction, with every count.
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
