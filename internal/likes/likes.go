// Package likes owns likes of activities: Like/{activityId}_{userId}, one
// root entity per user and activity, so likes of a popular activity never
// contend. The activity's likesCount changes in the same transaction as the
// like (see activities.Stats).
package likes

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/activities"
	"socialstream/internal/store"
)

// Service manages likes.
type Service struct {
	db  *store.DB
	act *activities.Service
	now func() time.Time
}

// New returns a Service.
func New(db *store.DB, act *activities.Service) (*Service, error) {
	if db == nil || act == nil {
		return nil, errors.New("likes.New: nil dependency")
	}
	return &Service{db: db, act: act, now: time.Now}, nil
}

// Like records user's like of an activity and returns the activity's
// author and whether the like is new. Liking again changes nothing. The
// like and the activity's likesCount change in one transaction.
func (s *Service) Like(ctx context.Context, user, activity string) (author string, added bool, err error) {
	if _, err := s.act.Exists(ctx, activity); err != nil {
		return "", false, err
	}
	err = s.db.RunInTransaction(ctx, func(tx *datastore.Transaction) error {
		added = false
		a, counts, liked, err := s.read(tx, user, activity)
		if err != nil {
			return err
		}
		if author = a.UserID; liked {
			return nil
		}
		likeKey := activities.LikeKey(s.db, activity, user)
		if _, err := tx.Put(likeKey, &activities.Like{ActivityID: activity, UserID: user, Created: s.now().UTC()}); err != nil {
			return err
		}
		added = true
		return counts.Add(tx, 1, 0)
	})
	if err != nil {
		return "", false, fmt.Errorf("likes.Like(%s, %s): %w", user, activity, err)
	}
	return author, added, nil
}

// Unlike removes user's like of an activity, if any, and counts it.
func (s *Service) Unlike(ctx context.Context, user, activity string) error {
	if _, err := s.act.Exists(ctx, activity); err != nil {
		return err
	}
	err := s.db.RunInTransaction(ctx, func(tx *datastore.Transaction) error {
		_, counts, liked, err := s.read(tx, user, activity)
		if err != nil || !liked {
			return err
		}
		if err := tx.Delete(activities.LikeKey(s.db, activity, user)); err != nil {
			return err
		}
		return counts.Add(tx, -1, 0)
	})
	if err != nil {
		return fmt.Errorf("likes.Unlike(%s, %s): %w", user, activity, err)
	}
	return nil
}

// read reads, in tx and in one lookup, an activity, its counts and
// whether user likes it.
func (s *Service) read(tx *datastore.Transaction, user, activity string) (*activities.Activity, *activities.Counts, bool, error) {
	var like activities.Like
	a, counts, missing, err := activities.ReadReaction(tx, s.db, activity, []*datastore.Key{activities.LikeKey(s.db, activity, user)}, []any{&like})
	if err != nil {
		return nil, nil, false, err
	}
	return a, counts, !missing[0], nil
}

// Likers lists who likes an activity, newest like first, as ids.
func (s *Service) Likers(ctx context.Context, activity string, p store.PageRequest) ([]string, string, error) {
	if _, err := s.act.Exists(ctx, activity); err != nil {
		return nil, "", err
	}
	q := s.db.Query(activities.KindLike).FilterField("activityId", "=", activity).Order("-created")
	_, vals, next, err := store.Page[activities.Like](ctx, s.db, q, "likes:"+activity, p)
	if err != nil {
		return nil, "", err
	}
	out := make([]string, len(vals))
	for i, l := range vals {
		out[i] = l.UserID
	}
	return out, next, nil
}
