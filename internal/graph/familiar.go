package graph

import (
	"context"
	"fmt"
	"strings"

	"socialstream/internal/blocks"
)

// Familiar followers: of the people someone looks at, those of their
// followers whom the reader follows (Mastodon's familiar_followers).
// Bounded by reads, not by the graph: the reader's newest FamiliarScan
// follows (one keys-only query) against each person's newest
// FamiliarScan followers (one keys-only query each), so a celebrity's
// familiar followers are found among their newest followers alone.

// FamiliarScan is how many follows each side of Familiar reads.
const FamiliarScan = 1000

// Familiar returns, for each of people (those reader may see: the
// caller's to check), up to per of their followers whom reader follows,
// newest follow first, none for someone reader blocks or is blocked by.
// Whether the familiar followers may be shown is the caller's to decide.
func (s *Service) Familiar(ctx context.Context, reader string, people []string, per int) (map[string][]string, error) {
	out := make(map[string][]string, len(people))
	if len(people) == 0 || per <= 0 {
		return out, nil
	}
	follows, err := s.followedBy(ctx, reader)
	if err != nil || len(follows) == 0 {
		return out, err
	}
	l := s.db.Lookup()
	between := make([]*blocks.Between, len(people))
	for i, p := range people {
		between[i] = blocks.ReadBetween(l, reader, p)
	}
	if err := l.Run(ctx); err != nil {
		return nil, fmt.Errorf("graph.Familiar(%s): %w", reader, err)
	}
	for i, p := range people {
		if between[i].Any() || p == reader {
			continue
		}
		keys, err := s.newestKeys(ctx, "followee", p)
		if err != nil {
			return nil, err
		}
		if familiar := pickFamiliar(keys, follows, reader, per); len(familiar) > 0 {
			out[p] = familiar
		}
	}
	return out, nil
}

// followedBy returns whom reader follows, of their newest FamiliarScan
// follows.
func (s *Service) followedBy(ctx context.Context, reader string) (map[string]bool, error) {
	followed, err := s.newestKeys(ctx, "follower", reader)
	if err != nil {
		return nil, err
	}
	follows := make(map[string]bool, len(followed))
	for _, k := range followed {
		_, followee, _ := strings.Cut(k, "_")
		follows[followee] = true
	}
	return follows, nil
}

// pickFamiliar returns, of the followers the follows' keys name (newest
// first), up to per of those reader follows, reader left out.
func pickFamiliar(keys []string, follows map[string]bool, reader string, per int) []string {
	var out []string
	for _, k := range keys {
		follower, _, _ := strings.Cut(k, "_")
		if follows[follower] && follower != reader && len(out) < per {
			out = append(out, follower)
		}
	}
	return out
}

// newestKeys returns the names of the keys of the newest FamiliarScan
// follows whose field (follower or followee) is user.
func (s *Service) newestKeys(ctx context.Context, field, user string) ([]string, error) {
	q := s.db.Query(KindFollow).FilterField(field, "=", user).Order("-created").KeysOnly().Limit(FamiliarScan)
	keys, err := s.db.GetAll(ctx, q, nil)
	if err != nil {
		return nil, fmt.Errorf("graph: the follows of %s: %w", user, err)
	}
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.Name
	}
	return names, nil
}
