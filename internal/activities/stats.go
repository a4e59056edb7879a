package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/ids"
	"socialstream/internal/store"
)

// Kinds of the reactions to an activity. They are root entities with an
// activityId property, not children of the Activity: children share an
// entity group, and the emulator (like legacy Datastore) serialises writes
// to one group, so thousands of likes would contend.
const (
	KindLike    = "Like"    // Like/{activityId}_{userId}
	KindComment = "Comment" // Comment/{commentId}
	KindStats   = "Stats"   // Stats/{activityId}
)

// Counting likes and comments.
//
// Each like is an entity of its own (Like/{activity}_{user}), so liking
// twice is a no-op and unliking is deleting it. The counts live in one
// Stats entity per activity, changed in the same transaction as the like,
// unlike, comment or deletion that changes them: exact as soon as the
// answer arrives, and exact under retries, since the transaction re-reads
// whether the like or comment is there before it counts. A popular
// activity's Stats entity is contended; transactions retry (store.MaxAttempts).

// Stats are an activity's counts.
type Stats struct {
	Likes    int64 `datastore:"likes,noindex"`
	Comments int64 `datastore:"comments,noindex"`
	// Counted was set by the recount job of earlier versions; kept so
	// their entities still load.
	Counted time.Time `datastore:"counted,noindex"`
}

// StatsKey returns the key of an activity's counts.
func StatsKey(db *store.DB, activity string) *datastore.Key {
	return db.NameKey(KindStats, activity, nil)
}

// Like is one user's like of an activity.
type Like struct {
	ActivityID string    `datastore:"activityId"`
	UserID     string    `datastore:"userId,noindex"`
	Created    time.Time `datastore:"created"`
}

// LikeKey returns the key of user's like of an activity.
func LikeKey(db *store.DB, activity, user string) *datastore.Key {
	return db.NameKey(KindLike, activity+"_"+user, nil)
}

// CountIn adds delta likes and comments to an activity's counts, in tx,
// never below zero. The transaction must have read the change it counts.
func CountIn(tx *datastore.Transaction, db *store.DB, activity string, likes, comments int64) error {
	var st Stats
	key := StatsKey(db, activity)
	if err := tx.Get(key, &st); err != nil && !errors.Is(err, datastore.ErrNoSuchEntity) {
		return err
	}
	st.Likes = max(0, st.Likes+likes)
	st.Comments = max(0, st.Comments+comments)
	_, err := tx.Put(key, &st)
	return err
}

// Exists checks that an activity exists and returns it.
func (s *Service) Exists(ctx context.Context, id string) (*Activity, error) {
	if _, ok := ids.Parse(id); !ok {
		return nil, ErrNoSuchActivity
	}
	var a Activity
	err := s.db.Client.Get(ctx, Key(s.db, id), &a)
	if errors.Is(err, datastore.ErrNoSuchEntity) {
		return nil, ErrNoSuchActivity
	}
	if err != nil {
		return nil, fmt.Errorf("activities.Exists(%s): %w", id, store.Convert(err))
	}
	return &a, nil
}
