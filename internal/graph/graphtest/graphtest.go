// Package graphtest writes, for tests, the data of earlier versions that
// the graph and the counts still read.
package graphtest

import (
	"context"
	"fmt"

	"cloud.google.com/go/datastore"

	"socialstream/internal/accounts"
	"socialstream/internal/graph"
	"socialstream/internal/store"
)

// followerCount is a follower count shard as earlier versions wrote it.
type followerCount struct {
	Followers int64 `datastore:"followers,noindex"`
}

// SpreadAsEarlier spreads a user as earlier versions did a celebrity's:
// their follower count moves to accounts.CountShards shards (all written,
// at zero) and their follows to graph.Lanes lanes of root chunks after
// those they have. It returns the user's index as spread.
func SpreadAsEarlier(ctx context.Context, db *store.DB, user string) (graph.Index, error) {
	var idx graph.Index
	err := db.Update(ctx, func(tx *store.Tx) error {
		var u accounts.User
		var c accounts.Counts
		l := tx.Lookup()
		l.Add(graph.IndexKey(db, user), &idx)
		l.Add(accounts.CountsKey(db, user), &c)
		found := l.Add(accounts.UserKey(db, user), &u)
		if err := l.Run(ctx); err != nil {
			return err
		}
		if !found.Found() || u.Shards > 0 || len(idx.Lanes) > 0 {
			return fmt.Errorf("graphtest: %s is missing or spread already", user)
		}
		u.Shards = accounts.CountShards
		keys, vals := []*datastore.Key{accounts.UserKey(db, user), accounts.CountsKey(db, user)}, []any{&u, earlierCard(&c)}
		for n := range accounts.CountShards {
			keys, vals = append(keys, accounts.CountKey(db, user, n)), append(vals, &followerCount{})
		}
		if len(idx.Sizes) == 0 {
			idx.Sizes = []int64{0}
		}
		idx.RootFrom = int64(len(idx.Sizes))
		for range graph.Lanes {
			idx.Lanes = append(idx.Lanes, int64(len(idx.Sizes)))
			idx.Sizes = append(idx.Sizes, 0)
		}
		keys, vals = append(keys, graph.IndexKey(db, user)), append(vals, &idx)
		return tx.PutMulti(keys, vals)
	})
	return idx, err
}

// CountInShard adds n followers to a spread user's count shard i, as an
// earlier version's follows counted them.
func CountInShard(ctx context.Context, db *store.DB, user string, i int, n int64) error {
	return db.Update(ctx, func(tx *store.Tx) error {
		var c followerCount
		if _, err := tx.Get(accounts.CountKey(db, user, i), &c); err != nil {
			return err
		}
		c.Followers += n
		return tx.Put(accounts.CountKey(db, user, i), &c)
	})
}

// CountOnUser adds to a user's counts where the version before Counts kept
// them: on the User itself.
func CountOnUser(ctx context.Context, db *store.DB, user string, followers, following int64) error {
	return db.Update(ctx, func(tx *store.Tx) error {
		var u accounts.User
		var c accounts.Counts
		l := tx.Lookup()
		found := l.Add(accounts.UserKey(db, user), &u)
		l.Add(accounts.CountsKey(db, user), &c)
		if err := l.Run(ctx); err != nil || !found.Found() {
			return fmt.Errorf("graphtest: user %s: found %v: %w", user, found.Found(), err)
		}
		u.FollowersCount += followers
		u.FollowingCount += following
		return tx.PutMulti([]*datastore.Key{accounts.UserKey(db, user), accounts.CountsKey(db, user)}, []any{&u, earlierCard(&c)})
	})
}

// earlierCard is a user's Counts as the versions before cards wrote it:
// counts alone, no names.
func earlierCard(c *accounts.Counts) *accounts.Counts {
	return &accounts.Counts{Followers: c.Followers, Following: c.Following}
}
