// Package likes owns likes of activities: Like/{activityId}_{userId}, one
// root entity per user and activity, so likes of a popular activity never
// contend with each other. The liker's state (package viewer) lists it in
// the same transaction, so a feed page knows the viewer's likes in one
// read. A like is one operation with its side effects:
// the activity's likesCount (through activities.Reaction) and the author's
// notification change in the same transaction as the like, and the like
// answers the activity with its new counts.
package likes

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/accounts"
	"socialstream/internal/activities"
	"socialstream/internal/notifications"
	"socialstream/internal/order"
	"socialstream/internal/outbox"
	"socialstream/internal/policy"
	"socialstream/internal/queue"
	"socialstream/internal/store"
	"socialstream/internal/trends"
	"socialstream/internal/viewer"
)

// KindLike is the kind of the entities this package owns.
const KindLike = "Like"

// Like is one user's like of an activity. Its places (Save) order it
// among the activity's likes and among its liker's, by when it was made:
// each a range of its own of one built-in index, so that no index range
// takes every like's write (a time indexed on its own would).
type Like struct {
	ActivityID string    `datastore:"activityId"`
	UserID     string    `datastore:"userId"` // indexed: erasing an account deletes its likes
	Created    time.Time `datastore:"created,noindex"`
	// Withheld: the liker's account is suspended, and the activity's
	// likesCount does not count it (package moderation's job keeps it in
	// step with the suspension).
	Withheld bool `datastore:"withheld,noindex,omitempty"`
}

// The prefixes of a like's places: among its activity's likes, and among
// its liker's.
const (
	prefixOfActivity = "a:"
	prefixOfLiker    = "u:"
)

// Save saves a like with its places, which its activity, its liker and
// its time say.
func (l *Like) Save() ([]datastore.Property, error) {
	at := max(l.Created.UnixNano(), 0)
	return order.Save(l, datastore.Property{Name: "places", Value: []any{
		order.Value(prefixOfActivity+l.ActivityID, at), order.Value(prefixOfLiker+l.UserID, at)}})
}

// Load loads a like, leaving out its places.
func (l *Like) Load(ps []datastore.Property) error { return order.Load(l, ps, "places") }

// newest returns a query of the likes of the feed of prefix, newest
// first.
func newest(db *store.DB, prefix string) *datastore.Query {
	return order.Range(db.Query(KindLike), "places", prefix, 0, order.Place{})
}

// LikeKey returns the key of user's like of an activity.
func LikeKey(db *store.DB, activity, user string) *datastore.Key {
	return db.NameKey(KindLike, activity+"_"+user, nil)
}

// Service manages likes.
type Service struct {
	db    *store.DB
	act   *activities.Service
	notes *notifications.Service
	now   func() time.Time
	pub   *outbox.Jobs
}

// told is the job that tells the server of a post of another's (at
// note, elsewhere) of user's like (or its undoing); none for a post here.
func (s *Service) told(user, activity, author, note string, elsewhere, undo bool) []queue.Pending {
	if elsewhere && s.pub != nil {
		return []queue.Pending{s.pub.Liking(user, activity, author, note, undo)}
	}
	return nil
}

// New returns a Service.
//
// pub, when the deployment federates, makes the job that tells another
// server of a like of a post of theirs, or of its undoing, to enqueue
// ahead of the commit; it finds out itself whether the like (or its
// absence) shows (package outbox; nil: none).
func New(db *store.DB, act *activities.Service, notes *notifications.Service, pub *outbox.Jobs) (*Service, error) {
	if db == nil || act == nil || notes == nil {
		return nil, errors.New("likes.New: nil dependency")
	}
	return &Service{db: db, act: act, notes: notes, pub: pub, now: time.Now}, nil
}

// Like records user's like of an activity, counts it and notifies the
// activity's author, all in one transaction, and returns the activity as
// user sees it then, with its counts. Liking again changes nothing.
func (s *Service) Like(ctx context.Context, user, activity string) (activities.View, error) {
	a, err := s.act.Exists(ctx, activity)
	if err != nil {
		return activities.View{}, err
	}
	note, elsewhere := a.Elsewhere()
	event := notifications.Event{Type: notifications.Like, ActorID: user, Recipients: []string{a.UserID},
		ActivityID: activity, ID: fmt.Sprintf("like-%s-%s", activity, user)}
	var r *activities.Reaction
	var use *trends.Use
	var own *viewer.Ref
	day, fresh := trends.DayOf(s.now()), false
	var jobs queue.Ahead
	err = jobs.Commit(ctx, append([]queue.Pending{s.notes.Expecting(event)}, s.told(user, activity, a.UserID, note, elsewhere, false)...), func() error {
		return s.db.Update(ctx, func(tx *store.Tx) error {
			l := tx.Lookup()
			r = activities.ReadReaction(l, activity, a)
			liked := l.Add(LikeKey(s.db, activity, user), &Like{})
			me := accounts.Read(l, user)
			own = viewer.Read(l, user)
			seen := activities.ReadSeenBy(l, own, user, a) // an activity's author never changes
			note := s.notes.PrepareChecked(l, event, me)
			if sub, counts := activities.ReactionTrend(a, policy.Account{Exists: true}); counts {
				use = trends.ReadUse(l, sub, user, day) // if its liker's account counts too
			}
			if err := l.Run(ctx); err != nil {
				return err
			}
			switch err := r.Check(); {
			case err != nil:
				return err
			case me.MayAct() != nil:
				return me.MayAct() // a token another instance still trusts
			}
			if err := seen.Err(); err != nil {
				return err // hidden from user: not there, liked before or not
			}
			if liked.Found() {
				return nil
			}
			if err := tx.Put(LikeKey(s.db, activity, user), &Like{ActivityID: activity, UserID: user, Created: s.now().UTC()}); err != nil {
				return err
			}
			own.Edit().SetLike(activity, true)
			if err := own.Save(tx); err != nil {
				return err
			}
			if err := r.Count(tx, 1, 0); err != nil {
				return err
			}
			var err error
			if _, counts := activities.ReactionTrend(a, me.Account()); counts && use != nil {
				if fresh, err = use.Mark(tx, trends.Like, true); err != nil {
					return err
				}
			}
			_, err = note.Write(tx)
			return err
		})
	})
	if err != nil {
		return activities.View{}, fmt.Errorf("likes.Like(%s, %s): %w", user, activity, r.Err(err))
	}
	if fresh && trends.Sampled(a.LikesCount+a.RepostsCount+1) {
		sub, _ := activities.ReactionTrend(a, policy.Account{})
		// Best effort, as trends.Bump says: the like has committed, and
		// the next one's bump counts this one too.
		_ = trends.Bump(ctx, s.db, sub, day)
	}
	return s.answer(ctx, user, r, own)
}

// answer returns the activity a committed like or unlike counted in, as
// user sees it, in one reading: their like and repost of it from their
// state when own, as the transaction read it, holds the activity.
func (s *Service) answer(ctx context.Context, user string, r *activities.Reaction, own *viewer.Ref) (activities.View, error) {
	view := s.act.ReactionView
	if own.KnowsActivity(r.ID()) {
		view = s.act.ReactionViewByState
	}
	v, err := view(ctx, user, r)
	if err != nil {
		return activities.View{}, fmt.Errorf("likes: view of %s: %w", r.ID(), err)
	}
	return v, nil
}

// Unlike removes user's like of an activity, if any, counts it, and returns
// the activity as user sees it then. One the policy hides from user is, to
// them, not there (its answer would show it), but for one a block alone
// hides that they liked: the like is theirs to take back, and it happened.
func (s *Service) Unlike(ctx context.Context, user, activity string) (activities.View, error) {
	a, err := s.act.Exists(ctx, activity)
	if err != nil {
		return activities.View{}, err
	}
	note, elsewhere := a.Elsewhere()
	var r *activities.Reaction
	var own *viewer.Ref
	var jobs queue.Ahead
	err = jobs.Commit(ctx, s.told(user, activity, a.UserID, note, elsewhere, true), func() error {
		return s.db.Update(ctx, func(tx *store.Tx) error {
			l := tx.Lookup()
			r = activities.ReadReaction(l, activity, a)
			var was Like
			liked := l.Add(LikeKey(s.db, activity, user), &was)
			var use *trends.Use
			l.Then(func() {
				if liked.Found() {
					sub, _ := activities.ReactionTrend(a, policy.Account{})
					use = trends.ReadUse(l, sub, user, trends.DayOf(was.Created))
				}
			})
			own = viewer.Read(l, user)
			seen := activities.ReadSeenBy(l, own, user, a)
			if err := l.Run(ctx); err != nil {
				return err
			}
			if err := r.Check(); err != nil {
				return err
			}
			if err := seen.Err(); err != nil && !(liked.Found() && seen.Unblocked() == nil) {
				return err
			}
			if !liked.Found() {
				return nil
			}
			if err := tx.Delete(LikeKey(s.db, activity, user)); err != nil {
				return err
			}
			if use != nil {
				if _, err := use.Mark(tx, trends.Like, false); err != nil {
					return err
				}
			}
			if own.Found() {
				own.Edit().SetLike(activity, false)
				if err := own.Save(tx); err != nil {
					return err
				}
			}
			if was.Withheld {
				return nil // not counted
			}
			return r.Count(tx, -1, 0)
		})
	})
	if err != nil {
		return activities.View{}, fmt.Errorf("likes.Unlike(%s, %s): %w", user, activity, r.Err(err))
	}
	return s.answer(ctx, user, r, own)
}

// Erase deletes up to n likes of a deleted user, each with its count, and
// returns how many it deleted.
func Erase(ctx context.Context, db *store.DB, user string, n int) (int, error) {
	q := db.Query(KindLike).FilterField("userId", "=", user).KeysOnly()
	done, err := db.Drain(ctx, q, n, 25, func(keys []*datastore.Key) error {
		return db.Update(ctx, func(tx *store.Tx) error {
			l := tx.Lookup()
			rs := make([]*activities.Reaction, len(keys))
			found := make([]store.Ref, len(keys))
			ls := make([]Like, len(keys))
			for i, k := range keys {
				activity, _, _ := strings.Cut(k.Name, "_")
				rs[i], found[i] = activities.ReadReaction(l, activity, nil), l.Add(k, &ls[i])
			}
			if err := l.Run(ctx); err != nil {
				return err
			}
			for i, r := range rs {
				if found[i].Found() && !ls[i].Withheld && r.Check() == nil { // one like per activity: one count each
					if err := r.Count(tx, -1, 0); err != nil {
						return err
					}
				}
			}
			return tx.DeleteMulti(keys)
		})
	})
	if err != nil {
		return done, fmt.Errorf("likes.Erase(%s): %w", user, err)
	}
	return done, nil
}

// Each calls f with each activity user likes and when, newest like
// first, a page at a time (for an export).
func Each(ctx context.Context, db *store.DB, user string, f func(activity string, created time.Time) error) error {
	q := newest(db, prefixOfLiker+user)
	return store.Each[Like](ctx, db, q, 500, func(_ *datastore.Key, l *Like) error { return f(l.ActivityID, l.Created) })
}

// Liked returns a page of the activities user likes (Mastodon's
// favourites), newest like first, as they see them now, and the cursor of
// the next page: one keys-only query of the range of user's likes'
// places, whose keys name the activities, and the page's lookups, as a
// page of bookmarks. A like of what is gone or hidden now is left out.
func (s *Service) Liked(ctx context.Context, user string, p store.PageRequest) ([]activities.View, string, error) {
	q := newest(s.db, prefixOfLiker+user).KeysOnly()
	keys, _, next, err := store.Page[Like](ctx, s.db, q, "liked:"+user, p)
	if err != nil {
		return nil, "", fmt.Errorf("likes.Liked(%s): %w", user, err)
	}
	list := make([]string, len(keys))
	for i, k := range keys {
		list[i], _, _ = strings.Cut(k.Name, "_") // activity_user
	}
	vs, err := s.act.Shown(ctx, user, list)
	if err != nil {
		return nil, "", err
	}
	for i := range vs {
		vs[i].LikedByViewer = true
	}
	return vs, next, nil
}

// Likers lists who likes an activity viewer may see, newest like first,
// as ids.
func (s *Service) Likers(ctx context.Context, viewer, activity string, p store.PageRequest) ([]string, string, error) {
	if _, err := s.act.Visible(ctx, viewer, activity); err != nil {
		return nil, "", err
	}
	q := newest(s.db, prefixOfActivity+activity)
	_, vals, next, err := store.Page[Like](ctx, s.db, q, "likes:"+activity, p)
	if err != nil {
		return nil, "", err
	}
	out := make([]string, len(vals))
	for i, l := range vals {
		out[i] = l.UserID
	}
	return out, next, nil
}

// Liked adds viewer's like of an activity to a lookup (a feed's, for
// likedByViewer).
func Liked(l *store.Lookup, activity, viewer string) store.Ref {
	return l.Add(LikeKey(l.DB(), activity, viewer), &Like{})
}

// Held adds user's like of an activity to a lookup, and returns what
// the lookup found: whether there is one, and whether it is withheld
// from the count (a checker's view of what is stored).
func Held(l *store.Lookup, activity, user string) func() (found, withheld bool) {
	var like Like
	r := l.Add(LikeKey(l.DB(), activity, user), &like)
	return func() (bool, bool) { return r.Found(), like.Withheld }
}

// Records are the likes kept in DB, as the package below this one reads
// them (activities.Likes) and has them forgotten (activities.Forgetter).
type Records struct{ DB *store.DB }

// Liked adds viewer's like of an activity to a lookup (Liked).
func (Records) Liked(l *store.Lookup, activity, viewer string) store.Ref {
	return Liked(l, activity, viewer)
}

// ForgetActivity deletes the likes of an activity that is gone (Forget).
func (r Records) ForgetActivity(ctx context.Context, activity string) (int, error) {
	return Forget(ctx, r.DB, activity)
}

// Forget deletes every like of an activity that is gone, for its cleanup
// job, and returns how many it deleted.
func Forget(ctx context.Context, db *store.DB, activity string) (int, error) {
	n, err := db.DeleteAll(ctx, db.Query(KindLike).FilterField("activityId", "=", activity).KeysOnly(), 500)
	if err != nil {
		return n, fmt.Errorf("likes.Forget(%s): %w", activity, err)
	}
	return n, nil
}

// Withhold brings the counts of up to n of user's likes, from cursor, in
// step with whether their account is suspended (suspended, read in each
// batch's transaction: a like is withheld from its activity's likesCount,
// or counted again). It returns the cursor after them ("" when done).
func Withhold(ctx context.Context, db *store.DB, user, cursor string, n int, suspended func(*store.Tx) (bool, error)) (string, error) {
	q := db.Query(KindLike).FilterField("userId", "=", user).KeysOnly()
	next, err := db.UpdatePage(ctx, q, cursor, n, withholdBatch, func(tx *store.Tx, batch []*datastore.Key) error {
		want, err := suspended(tx)
		if err != nil {
			return err
		}
		l := tx.Lookup()
		ls := make([]Like, len(batch))
		found := make([]store.Ref, len(batch))
		rs := make([]*activities.Reaction, len(batch))
		for i, k := range batch {
			activity, _, _ := strings.Cut(k.Name, "_")
			rs[i], found[i] = activities.ReadReaction(l, activity, nil), l.Add(k, &ls[i])
		}
		if err := l.Run(ctx); err != nil {
			return err
		}
		var put []*datastore.Key
		var vals []*Like
		for i, k := range batch {
			if !found[i].Found() || ls[i].Withheld == want || rs[i].Check() != nil {
				continue
			}
			ls[i].Withheld = want
			put, vals = append(put, k), append(vals, &ls[i])
			if err := rs[i].Count(tx, map[bool]int64{true: -1, false: 1}[want], 0); err != nil {
				return err
			}
		}
		if len(put) == 0 {
			return nil
		}
		return tx.PutMulti(put, vals)
	})
	if err != nil {
		return "", fmt.Errorf("likes.Withhold(%s): %w", user, err)
	}
	return next, nil
}

// withholdBatch is how many likes or comments one transaction of a
// withholding changes.
const withholdBatch = 25

// Reindex writes up to n likes again from cursor (empty: the first), so
// that each has the places this version orders likes by: for likes
// stored by a version before them, which the lists of likes leave out
// until then (store.Rewrite).
func Reindex(ctx context.Context, db *store.DB, cursor string, n int) (int, string, error) {
	done, next, err := store.Rewrite[Like](ctx, db, KindLike, cursor, n)
	if err != nil {
		return done, "", fmt.Errorf("likes.Reindex: %w", err)
	}
	return done, next, nil
}
