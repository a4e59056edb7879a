package graph

import (
	"context"
	"fmt"

	"socialstream/internal/store"
)

// What other packages read of follows, outside this package's own
// operations.

// Records are the follows, as the packages below this one read them
// (notifications.Graph).
type Records struct{}

// Follows adds follower's follow of followee to a lookup (Follows).
func (Records) Follows(l *store.Lookup, follower, followee string) store.Ref {
	return Follows(l, follower, followee)
}

// FollowersAmong reports which of candidates follow followee
// (FollowersAmong).
func (Records) FollowersAmong(ctx context.Context, db *store.DB, followee string, candidates []string) (map[string]bool, error) {
	return FollowersAmong(ctx, db, followee, candidates)
}

// Follows adds follower's follow of followee to a lookup: its Ref says
// whether follower follows followee.
func Follows(l *store.Lookup, follower, followee string) store.Ref {
	return l.Add(FollowKey(l.DB(), follower, followee), &Follow{})
}

// FollowersAmong returns which of candidates follow followee, read outside
// any transaction at the least cost: their follows by key (a read each),
// or followee's follower chunks (a read each, and one of the index) when
// those are fewer. A reply's fan-out asks it of its author's followers
// and the person answered.
func FollowersAmong(ctx context.Context, db *store.DB, followee string, candidates []string) (map[string]bool, error) {
	out := make(map[string]bool, len(candidates))
	if len(candidates) == 0 {
		return out, nil
	}
	l := db.Lookup()
	if len(candidates) > 2 {
		n, err := ChunkCount(ctx, db, followee)
		if err != nil {
			return nil, err
		}
		if n < len(candidates)-1 {
			chunks := make([]Chunk, n)
			for i := range chunks {
				l.Add(ChunkKey(db, followee, i), &chunks[i])
			}
			if err := l.Run(ctx); err != nil {
				return nil, fmt.Errorf("graph.FollowersAmong(%s): %w", followee, err)
			}
			want := make(map[string]bool, len(candidates))
			for _, c := range candidates {
				want[c] = true
			}
			for _, c := range chunks {
				for _, id := range c.IDs {
					if want[id] {
						out[id] = true
					}
				}
			}
			return out, nil
		}
	}
	refs := make([]store.Ref, len(candidates))
	for i, c := range candidates {
		refs[i] = Follows(l, c, followee)
	}
	if err := l.Run(ctx); err != nil {
		return nil, fmt.Errorf("graph.FollowersAmong(%s): %w", followee, err)
	}
	for i, c := range candidates {
		if refs[i].Found() {
			out[c] = true
		}
	}
	return out, nil
}
