package graph

import (
	"context"
	"fmt"

	"cloud.google.com/go/datastore"
	"golang.org/x/sync/errgroup"

	"socialstream/internal/accounts"
	"socialstream/internal/store"
)

// ImportFollowers gives followee, a user with no followers yet, the given
// followers in bulk: Follow entities, chunks, index and followersCount,
// written in parallel batches rather than one transaction per follow. It is
// for seeding a large graph (load tests, migrations); it does not update the
// followers' followingCount and must not race with Follow or Unfollow of the
// same followee.
func (s *Service) ImportFollowers(ctx context.Context, followee string, followers []string) error {
	var idx Index
	var first Chunk
	l := s.db.Lookup()
	l.Add(IndexKey(s.db, followee), &idx)
	l.Add(ChunkKey(s.db, followee, 0), &first)
	celebrity := ReadCelebrity(l, followee) // their follows marked, as a follow's are
	if err := l.Run(ctx); err != nil {
		return err
	} else if idx.Count > 0 || len(first.IDs) > 0 {
		return fmt.Errorf("graph.ImportFollowers(%s): already has followers", followee)
	}
	now := s.now().UTC()
	const batch = 500 // entities per commit
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for start := 0; start < len(followers); start += batch {
		part := followers[start:min(start+batch, len(followers))]
		first := start
		g.Go(func() error {
			keys := make([]*datastore.Key, len(part))
			ents := make([]Follow, len(part))
			for i, f := range part {
				keys[i] = FollowKey(s.db, f, followee)
				ents[i] = Follow{Follower: f, Followee: followee, Created: now, Chunk: (first + i) / ChunkCap, Celebrity: celebrity.Found()}
			}
			return s.db.PutMulti(gctx, keys, ents)
		})
	}
	for n := 0; n*ChunkCap < len(followers); n++ {
		ids := followers[n*ChunkCap : min((n+1)*ChunkCap, len(followers))]
		idx.Count = n + 1
		key := ChunkKey(s.db, followee, n)
		g.Go(func() error {
			return s.db.Put(gctx, key, &Chunk{IDs: ids})
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("graph.ImportFollowers(%s): %w", followee, err)
	}
	return s.db.Update(ctx, func(tx *store.Tx) error {
		l := tx.Lookup()
		u := accounts.Read(l, followee)
		if err := l.Run(ctx); err != nil {
			return err
		}
		if !u.Exists() {
			return accounts.ErrNoSuchPerson
		}
		if err := u.Count(tx, int64(len(followers)), 0); err != nil {
			return err
		}
		return tx.Put(IndexKey(s.db, followee), &idx)
	})
}
