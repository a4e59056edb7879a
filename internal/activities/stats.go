package activities

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/ids"
	"socialstream/internal/store"
)

// KindStats is the kind of an activity's counts: Stats/{activityId}, a
// root entity, not a child of the Activity (children share an entity
// group, which the emulator, like legacy Datastore, serialises).
const KindStats = "Stats"

// Counting likes and comments.
//
// Likes (package likes) and comments (package comments) are entities of
// their own. The counts live in one Stats entity per activity, changed in
// the same transaction as the like, unlike, comment or deletion that
// changes them (through Reaction): exact as soon as the answer arrives,
// and exact under retries, since the transaction re-reads whether the like
// or comment is there before it counts. A popular activity's Stats entity
// is contended; transactions retry (store.MaxAttempts).

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

// Reaction is an activity and its counts as the transaction of a reaction
// to it (a like, a comment) read them.
type Reaction struct {
	id    string
	a     Activity
	found store.Ref
	st    Stats
}

// ReadReaction adds an activity and its counts to a transaction's lookup.
func ReadReaction(l *store.Lookup, activity string) *Reaction {
	r := &Reaction{id: activity}
	r.found = l.Add(Key(l.DB(), activity), &r.a)
	l.Add(StatsKey(l.DB(), activity), &r.st)
	return r
}

// Err is ErrNoSuchActivity when the activity does not exist.
func (r *Reaction) Err() error {
	if !r.found.Found() {
		return ErrNoSuchActivity
	}
	return nil
}

// Author returns the activity's author.
func (r *Reaction) Author() string { return r.a.UserID }

// Count adds likes and comments to the counts, never below zero, and
// writes them in tx. The transaction must have read the change it counts.
func (r *Reaction) Count(tx *store.Tx, likes, comments int64) error {
	r.st.Likes = max(0, r.st.Likes+likes)
	r.st.Comments = max(0, r.st.Comments+comments)
	return tx.Put(StatsKey(tx.DB(), r.id), &r.st)
}

// Exists checks that an activity exists and returns it.
func (s *Service) Exists(ctx context.Context, id string) (*Activity, error) {
	if _, ok := ids.Parse(id); !ok {
		return nil, ErrNoSuchActivity
	}
	var a Activity
	ok, err := s.db.Get(ctx, Key(s.db, id), &a)
	if err != nil {
		return nil, fmt.Errorf("activities.Exists(%s): %w", id, err)
	}
	if !ok {
		return nil, ErrNoSuchActivity
	}
	return &a, nil
}
