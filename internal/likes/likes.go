// Package likes owns likes of activities: Like/{activityId}_{userId}, one
// root entity per user and activity, so likes of a popular activity never
// contend. The activity's likesCount is kept by a recount job (see
// activities.Stats).
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
// author and whether the like is new. Liking again changes nothing.
func (s *Service) Like(ctx context.Context, user, activity string) (author string, added bool, err error) {
	a, err := s.act.Exists(ctx, activity)
	if err != nil {
		return "", false, err
	}
	// A recount is scheduled before the commit, so a committed like always
	// has one, and again after it, so one runs after the commit: recounts
	// are named by the second and run a second later, and a transaction
	// can take longer than that under load.
	if err := s.act.ScheduleRecount(ctx, activity); err != nil {
		return "", false, err
	}
	err = s.db.RunInTransaction(ctx, func(tx *datastore.Transaction) error {
		added = false
		var (
			act  activities.Activity
			like activities.Like
		)
		likeKey := activities.LikeKey(s.db, activity, user)
		err := tx.GetMulti([]*datastore.Key{activities.Key(s.db, activity), likeKey}, []any{&act, &like})
		missing, ok := store.IsMissing(err, 2)
		switch {
		case !ok:
			return err
		case missing[0]:
			return activities.ErrNoSuchActivity
		case !missing[1]:
			return nil
		}
		_, err = tx.Put(likeKey, &activities.Like{ActivityID: activity, UserID: user, Created: s.now().UTC()})
		added = err == nil
		return err
	})
	if err != nil {
		return "", false, fmt.Errorf("likes.Like(%s, %s): %w", user, activity, err)
	}
	// Liking is idempotent, so a client retries if this fails.
	if err := s.act.ScheduleRecount(ctx, activity); err != nil {
		return "", false, err
	}
	return a.UserID, added, nil
}

// Unlike removes user's like of an activity, if any.
func (s *Service) Unlike(ctx context.Context, user, activity string) error {
	if _, err := s.act.Exists(ctx, activity); err != nil {
		return err
	}
	if err := s.act.ScheduleRecount(ctx, activity); err != nil {
		return err
	}
	if err := s.db.Client.Delete(ctx, activities.LikeKey(s.db, activity, user)); err != nil {
		return fmt.Errorf("likes.Unlike(%s, %s): %w", user, activity, store.Convert(err))
	}
	return s.act.ScheduleRecount(ctx, activity) // after the commit too, as in Like
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
