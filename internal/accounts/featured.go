package accounts

import (
	"context"
	"fmt"
	"slices"

	"socialstream/internal/derrors"
	"socialstream/internal/store"
)

// A person's featured hashtags (Mastodon's featured tags) are on their
// card, as their pins are: at most MaxFeatured names, the last featured
// last, shown on their profile with no read more than the card. What
// each counts (their public posts with it, and the last) is read from
// their posts' places when shown (package activities).

// MaxFeatured is how many hashtags a person features, as Mastodon.
const MaxFeatured = 10

var (
	ErrTooManyFeatured = derrors.New(derrors.InvalidArgument, fmt.Sprintf("at most %d featured hashtags", MaxFeatured))
	ErrNotFeatured     = derrors.New(derrors.NotFound, "no such featured hashtag")
)

// Featured returns the hashtags the user features, as their card says
// (nil in a transaction, which reads no card).
func (r *Record) Featured() []string {
	if r.counts == nil || !r.Exists() {
		return nil
	}
	return r.counts.Featured
}

// Feature adds tag (normalized by the caller) to user's featured
// hashtags, and returns them; featuring one again changes nothing.
func (s *Service) Feature(ctx context.Context, user, tag string) ([]string, error) {
	return s.changeFeatured(ctx, user, func(list []string) ([]string, error) {
		switch {
		case slices.Contains(list, tag):
			return list, nil
		case len(list) >= MaxFeatured:
			return nil, ErrTooManyFeatured
		}
		return append(list, tag), nil
	})
}

// Unfeature takes tag from user's featured hashtags.
func (s *Service) Unfeature(ctx context.Context, user, tag string) error {
	_, err := s.changeFeatured(ctx, user, func(list []string) ([]string, error) {
		if !slices.Contains(list, tag) {
			return nil, ErrNotFeatured
		}
		return slices.DeleteFunc(list, func(t string) bool { return t == tag }), nil
	})
	return err
}

// changeFeatured changes, in a transaction, user's featured hashtags.
func (s *Service) changeFeatured(ctx context.Context, user string, f func([]string) ([]string, error)) ([]string, error) {
	var out []string
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		var c Counts
		k := CountsKey(s.db, user)
		if found, err := tx.Get(k, &c); err != nil {
			return err
		} else if !found {
			return ErrNoSuchPerson
		}
		list, err := f(slices.Clone(c.Featured))
		if err != nil || slices.Equal(list, c.Featured) {
			out = c.Featured
			return err
		}
		c.Featured, out = list, list
		return tx.Put(k, &c)
	})
	if err != nil {
		return nil, fmt.Errorf("accounts: featured hashtags of %s: %w", user, err)
	}
	return out, nil
}
