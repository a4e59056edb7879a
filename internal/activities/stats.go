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

// Counts are an activity's counts as a reaction's transaction read them.
type Counts struct {
	key *datastore.Key
	st  Stats
}

// ReadReaction reads, in tx and in one lookup, an activity, its counts and
// the caller's own entities (keys and dst, as GetMulti takes them), and
// reports which of the caller's are missing. A missing activity is
// ErrNoSuchActivity.
func ReadReaction(tx *datastore.Transaction, db *store.DB, activity string, keys []*datastore.Key, dst []any) (*Activity, *Counts, []bool, error) {
	a := &Activity{}
	c := &Counts{key: StatsKey(db, activity)}
	err := tx.GetMulti(append([]*datastore.Key{Key(db, activity), c.key}, keys...), append([]any{a, &c.st}, dst...))
	missing, ok := store.IsMissing(err, 2+len(keys))
	switch {
	case !ok:
		return nil, nil, nil, err
	case missing[0]:
		return nil, nil, nil, ErrNoSuchActivity
	}
	return a, c, missing[2:], nil
}

// Add adds likes and comments to the counts, never below zero, and writes
// them in tx. The transaction must have read the change it counts.
func (c *Counts) Add(tx *datastore.Transaction, likes, comments int64) error {
	c.st.Likes = max(0, c.st.Likes+likes)
	c.st.Comments = max(0, c.st.Comments+comments)
	_, err := tx.Put(c.key, &c.st)
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
