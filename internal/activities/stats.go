package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/ids"
	"socialstream/internal/queue"
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
// A popular activity is liked by thousands at once, and one entity
// sustains about one write a second, so no request increments a shared
// count. Each like is an entity of its own (Like/{activity}_{user}), so
// likes never contend, and unliking is deleting it. The counts live in one
// Stats entity per activity that only a recount job writes: every like,
// unlike, comment or deletion schedules a recount named after the activity
// and the current second, so however many arrive in a second, one job runs,
// a second later, and sets the counts by counting the
// children (keys-only). The Stats entity is written at most about once a second, the
// counts are exact as soon as the job has run, and nothing is lost when
// requests race: the last job counts what is there. Feeds read Stats in
// the batch lookup they already make.

// Stats are an activity's counts.
type Stats struct {
	Likes    int64     `datastore:"likes,noindex"`
	Comments int64     `datastore:"comments,noindex"`
	Counted  time.Time `datastore:"counted,noindex"`
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

// ReactionKeys returns the keys of an activity's likes and comments.
func (s *Service) ReactionKeys(ctx context.Context, activity string) ([]*datastore.Key, error) {
	var all []*datastore.Key
	for _, kind := range []string{KindLike, KindComment} {
		keys, err := s.db.Client.GetAll(ctx, s.db.Query(kind).FilterField("activityId", "=", activity).KeysOnly(), nil)
		if err != nil {
			return nil, store.Convert(err)
		}
		all = append(all, keys...)
	}
	return all, nil
}

// RecountTask is the body of a recount job.
type RecountTask struct {
	ActivityID string `json:"activityId"`
}

// RecountPath is where recount jobs are sent.
const RecountPath = "/_tasks/recount"

// recountDelay lets a burst of changes in one second share one job.
const recountDelay = time.Second

// ScheduleRecount asks for the counts of an activity to be recounted.
func (s *Service) ScheduleRecount(ctx context.Context, activity string) error {
	body, _ := json.Marshal(RecountTask{ActivityID: activity})
	return s.queue.Enqueue(ctx, queue.Task{
		Queue: s.cfg.CountersQueue, Path: RecountPath, Body: body, Delay: recountDelay,
		Name: fmt.Sprintf("recount-%s-%d", activity, s.now().Unix()),
	})
}

// Recount sets an activity's counts from its likes and comments.
func (s *Service) Recount(ctx context.Context, activity string) (Stats, error) {
	if _, ok := ids.Parse(activity); !ok {
		return Stats{}, nil
	}
	key := Key(s.db, activity)
	// A keys-only query, not a COUNT aggregation: the Datastore emulator
	// does not implement aggregations, and one code path is tested
	// everywhere. Keys-only reads are cheap, and this runs at most about
	// once a second per activity.
	count := func(kind string) (int64, error) {
		keys, err := s.db.Client.GetAll(ctx, s.db.Query(kind).FilterField("activityId", "=", activity).KeysOnly(), nil)
		if err != nil {
			return 0, store.Convert(err)
		}
		return int64(len(keys)), nil
	}
	likes, err := count(KindLike)
	if err != nil {
		return Stats{}, fmt.Errorf("activities.Recount(%s): %w", activity, err)
	}
	comments, err := count(KindComment)
	if err != nil {
		return Stats{}, fmt.Errorf("activities.Recount(%s): %w", activity, err)
	}
	st := Stats{Likes: likes, Comments: comments, Counted: s.now().UTC()}
	err = s.db.RunInTransaction(ctx, func(tx *datastore.Transaction) error {
		var a Activity
		if err := tx.Get(key, &a); errors.Is(err, datastore.ErrNoSuchEntity) {
			return nil // deleted: its reactions go with it
		} else if err != nil {
			return err
		}
		_, err := tx.Put(StatsKey(s.db, activity), &st)
		return err
	})
	return st, err
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
