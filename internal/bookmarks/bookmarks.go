// Package bookmarks owns bookmarks: the activities a person keeps in a
// private list, newest bookmark first, after Mastodon's. A bookmark's
// add and remove also mark the bookmarker's state (package viewer), so
// that every page says which of its activities they keep with no read.
//
// A bookmark is one root entity, Bookmark/{userId}:{activityId}, written
// once: its place in the owner's list (package order: b:{userId}/{seq},
// seq minted when it is made) is the list's one range, and its activityId
// lets the cleanup of a deleted activity find its bookmarks. The list is
// read keys-only: the keys name the activities, which the page reads in
// the one batch lookup every page makes (package activities), so a page of
// bookmarks reads no bookmark entity. What has become hidden from the
// owner since is left out, as everywhere (the policy decides, as the
// activities are read).
package bookmarks

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/activities"
	"socialstream/internal/ids"
	"socialstream/internal/order"
	"socialstream/internal/store"
	"socialstream/internal/viewer"
)

// KindBookmark is the kind of the entities this package owns.
const KindBookmark = "Bookmark"

// Bookmark is one person's bookmark of an activity.
type Bookmark struct {
	// Seq, minted when it was made, places it in the list (in no index
	// of its own: the place holds it).
	Seq        int64  `datastore:"seq,noindex"`
	UserID     string `datastore:"userId,noindex"`
	ActivityID string `datastore:"activityId"` // indexed: a deleted activity's cleanup deletes its bookmarks
}

const placeProp = "place"

func listFeed(user string) string { return "b:" + user }

// Load loads a bookmark, leaving its place.
func (b *Bookmark) Load(ps []datastore.Property) error { return order.Load(b, ps, placeProp) }

// Save saves a bookmark with its place in its owner's list.
func (b *Bookmark) Save() ([]datastore.Property, error) {
	return order.Save(b, datastore.Property{Name: placeProp, Value: order.Value(listFeed(b.UserID), b.Seq)})
}

// Key returns the key of user's bookmark of an activity.
func Key(db *store.DB, user, activity string) *datastore.Key {
	return db.NameKey(KindBookmark, user+":"+activity, nil)
}

// Kept adds user's bookmark of an activity to a lookup: found if they
// keep it.
func Kept(l *store.Lookup, user, activity string) store.Ref {
	return l.Add(Key(l.DB(), user, activity), &Bookmark{})
}

// activityOf returns the activity a bookmark's key names.
func activityOf(k *datastore.Key) string {
	_, activity, _ := strings.Cut(k.Name, ":")
	return activity
}

// Service keeps bookmarks.
type Service struct {
	db  *store.DB
	ids *ids.Generator
	act *activities.Service
	now func() time.Time
}

// New returns a Service.
func New(db *store.DB, gen *ids.Generator, act *activities.Service) (*Service, error) {
	if db == nil || gen == nil || act == nil {
		return nil, errors.New("bookmarks.New: nil dependency")
	}
	return &Service{db: db, ids: gen, act: act, now: time.Now}, nil
}

// Add bookmarks an activity user may see, and returns it as they see it.
// Bookmarking again changes nothing (the bookmark keeps its place): one
// read of the bookmark and, the first time, one write.
func (s *Service) Add(ctx context.Context, user, activity string) (activities.View, error) {
	if _, err := s.act.Visible(ctx, user, activity); err != nil {
		return activities.View{}, err
	}
	seq := s.ids.Next()
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		l := tx.Lookup()
		kept, own := Kept(l, user, activity), viewer.Read(l, user)
		if err := l.Run(ctx); err != nil || kept.Found() {
			return err
		}
		if err := mark(tx, own, activity, true); err != nil {
			return err
		}
		return tx.Put(Key(s.db, user, activity), &Bookmark{Seq: seq, UserID: user, ActivityID: activity})
	})
	if err != nil {
		return activities.View{}, fmt.Errorf("bookmarks.Add(%s, %s): %w", user, activity, err)
	}
	return s.answer(ctx, user, activity, true)
}

// Remove takes an activity off user's bookmarks (nothing if it was not
// there), and returns it as they see it: a 404 if it is hidden from them
// now, though the bookmark, theirs, is gone.
func (s *Service) Remove(ctx context.Context, user, activity string) (activities.View, error) {
	if _, ok := ids.Parse(activity); !ok {
		return activities.View{}, activities.ErrNoSuchActivity
	}
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		l := tx.Lookup()
		kept, own := Kept(l, user, activity), viewer.Read(l, user)
		if err := l.Run(ctx); err != nil || !kept.Found() {
			return err
		}
		if err := mark(tx, own, activity, false); err != nil {
			return err
		}
		return tx.Delete(Key(s.db, user, activity))
	})
	if err != nil {
		return activities.View{}, fmt.Errorf("bookmarks.Remove(%s, %s): %w", user, activity, err)
	}
	return s.answer(ctx, user, activity, false)
}

// mark records, in tx, on the bookmarker's state (own) that they keep
// the activity (on) or no longer, so that every page shows it with no
// read more (package viewer).
func mark(tx *store.Tx, own *viewer.Ref, activity string, on bool) error {
	own.Edit().SetBookmark(activity, on)
	return own.Save(tx)
}

// answer is the activity as user sees it, bookmarked or not.
func (s *Service) answer(ctx context.Context, user, activity string, on bool) (activities.View, error) {
	vs, err := s.act.Shown(ctx, user, []string{activity})
	if err != nil {
		return activities.View{}, err
	}
	if len(vs) == 0 {
		return activities.View{}, activities.ErrNoSuchActivity
	}
	vs[0].Bookmarked = on
	return vs[0], nil
}

// List returns a page of user's bookmarks, newest first, as they see the
// activities now, and the cursor of the next page: one keys-only query
// (its keys name the activities) and the page's lookups. A page may hold
// fewer than asked for: a bookmark of what is gone or hidden is left out.
func (s *Service) List(ctx context.Context, user string, p store.PageRequest) ([]activities.View, string, error) {
	q := order.Range(s.db.Query(KindBookmark), placeProp, listFeed(user), 0, order.Place{}).KeysOnly()
	keys, _, next, err := store.Page[Bookmark](ctx, s.db, q, "bookmarks:"+user, p)
	if err != nil {
		return nil, "", fmt.Errorf("bookmarks.List(%s): %w", user, err)
	}
	list := make([]string, len(keys))
	for i, k := range keys {
		list[i] = activityOf(k)
	}
	vs, err := s.act.Shown(ctx, user, list)
	if err != nil {
		return nil, "", err
	}
	for i := range vs {
		vs[i].Bookmarked = true
	}
	return vs, next, nil
}

// Each calls f with each activity user bookmarks and when, newest first,
// a page at a time (for an export).
func Each(ctx context.Context, db *store.DB, user string, f func(activity string, created time.Time) error) error {
	q := order.Range(db.Query(KindBookmark), placeProp, listFeed(user), 0, order.Place{})
	return store.Each[Bookmark](ctx, db, q, 500, func(_ *datastore.Key, b *Bookmark) error {
		return f(b.ActivityID, ids.Time(b.Seq))
	})
}

// Erase deletes up to n of a deleted user's bookmarks, and returns how
// many it deleted.
func Erase(ctx context.Context, db *store.DB, user string, n int) (int, error) {
	q := order.Range(db.Query(KindBookmark), placeProp, listFeed(user), 0, order.Place{}).KeysOnly()
	done, err := db.Drain(ctx, q, n, 500, func(keys []*datastore.Key) error { return db.DeleteMulti(ctx, keys) })
	if err != nil {
		return done, fmt.Errorf("bookmarks.Erase(%s): %w", user, err)
	}
	return done, nil
}

// Records deletes the bookmarks of activities that are gone
// (activities.Forgetter).
type Records struct{ DB *store.DB }

// Kept adds viewer's bookmark of an activity to a page's lookup, for an
// activity the viewer's state does not answer (activities.Bookmarks).
func (Records) Kept(l *store.Lookup, viewer, activity string) store.Ref {
	return Kept(l, viewer, activity)
}

// ForgetActivity deletes every bookmark of an activity that is gone, for
// its cleanup job, and returns how many it deleted.
func (r Records) ForgetActivity(ctx context.Context, activity string) (int, error) {
	n, err := r.DB.DeleteAll(ctx, r.DB.Query(KindBookmark).FilterField("activityId", "=", activity).KeysOnly(), 500)
	if err != nil {
		return n, fmt.Errorf("bookmarks.Forget(%s): %w", activity, err)
	}
	return n, nil
}
