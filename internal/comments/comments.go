// Package comments owns comments on activities: Comment/{commentId}, root
// entities with the activity's id, listed oldest first. A comment is one
// operation with its side effects: the activity's commentsCount (through
// activities.Reaction) and the author's notification change in the same
// transaction. Deleting the activity deletes its comments (Forget, run by
// its cleanup job).
package comments

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/accounts"
	"socialstream/internal/activities"
	"socialstream/internal/blocks"
	"socialstream/internal/derrors"
	"socialstream/internal/ids"
	"socialstream/internal/notifications"
	"socialstream/internal/queue"
	"socialstream/internal/store"
	"socialstream/internal/text"
)

// KindComment is the kind of the entities this package owns.
const KindComment = "Comment"

// MaxText is the longest comment, in characters.
const MaxText = 2000

var (
	ErrNoSuchComment = derrors.New(derrors.NotFound, "no such comment")
	ErrNotAllowed    = derrors.New(derrors.PermissionDenied, "only the commenter or the activity's author may delete a comment")
)

// Comment is the stored comment.
type Comment struct {
	ActivityID string    `datastore:"activityId"`
	Seq        int64     `datastore:"seq"`
	UserID     string    `datastore:"userId"` // indexed: an account's export and erasure
	Text       string    `datastore:"text,noindex"`
	Published  time.Time `datastore:"published,noindex"`
	// Withheld: the author's account is suspended, and the activity's
	// commentsCount does not count it (package moderation's job keeps it
	// in step with the suspension).
	Withheld bool `datastore:"withheld,noindex,omitempty"`
}

// View is a comment as the API shows it.
type View struct {
	ID         string           `json:"id"`
	ActivityID string           `json:"activityId"`
	UserID     string           `json:"userId"`
	Text       string           `json:"text"`
	Published  string           `json:"published"`
	Author     *accounts.Person `json:"author,omitempty"`
}

// Service manages comments.
type Service struct {
	db    *store.DB
	ids   *ids.Generator
	acc   *accounts.Service
	act   *activities.Service
	notes *notifications.Service
	now   func() time.Time
}

// New returns a Service.
func New(db *store.DB, gen *ids.Generator, acc *accounts.Service, act *activities.Service, notes *notifications.Service) (*Service, error) {
	if db == nil || gen == nil || acc == nil || act == nil || notes == nil {
		return nil, errors.New("comments.New: nil dependency")
	}
	return &Service{db: db, ids: gen, acc: acc, act: act, notes: notes, now: time.Now}, nil
}

// Key returns a comment's key.
func Key(db *store.DB, id string) *datastore.Key {
	return db.NameKey(KindComment, id, nil)
}

// commentFacts are what a comment's transaction read: the answers of
// the activity's check, of its actor's standing and of the policy on
// whether they may see it, and the comment already at its id, if any.
type commentFacts struct {
	user                  string
	seq                   int64
	activity, actor, seen error
	taken                 bool
	prior                 *Comment
}

// decideComment decides a comment: refused for its activity gone, its
// actor's standing (a token another instance still trusts) or an
// activity hidden from them; nothing to write for this very comment
// made before (a retry after a commit that did apply); a collision of
// ids, retried.
func decideComment(f commentFacts) (write bool, err error) {
	switch {
	case f.activity != nil:
		return false, f.activity
	case f.actor != nil:
		return false, f.actor
	case f.taken && f.prior.UserID == f.user && f.prior.Seq == f.seq:
		return false, nil
	case f.taken:
		return false, derrors.New(derrors.Unavailable, "comment id collision; retry")
	case f.seen != nil:
		return false, f.seen // hidden from its author: not there
	}
	return true, nil
}

// Create adds user's comment to an activity, counts it and notifies the
// activity's author, in one transaction, and returns it.
func (s *Service) Create(ctx context.Context, user, activity, body string) (View, error) {
	body, err := text.Clean("text", body, text.Rules{Max: MaxText, Required: true, Multiline: true})
	if err != nil {
		return View{}, err
	}
	a, err := s.act.Exists(ctx, activity)
	if err != nil {
		return View{}, err
	}
	seq := s.ids.Next()
	id := ids.Format(seq)
	c := &Comment{ActivityID: activity, Seq: seq, UserID: user, Text: body, Published: s.now().UTC()}
	event := notifications.Event{Type: notifications.Comment, ActorID: user, Recipients: []string{a.UserID},
		ActivityID: activity, ID: "comment-" + id}
	var r *activities.Reaction
	var jobs queue.Ahead
	err = jobs.Commit(ctx, []queue.Pending{s.notes.Expecting(event)}, func() error {
		return s.db.Update(ctx, func(tx *store.Tx) error {
			var prior Comment
			l := tx.Lookup()
			r = activities.ReadReaction(l, activity, a)
			taken := l.Add(Key(s.db, id), &prior)
			me := accounts.Read(l, user)
			seen := activities.ReadSeen(l, user, a) // an activity's author never changes
			note := s.notes.PrepareChecked(l, event, me)
			if err := l.Run(ctx); err != nil {
				return err
			}
			write, err := decideComment(commentFacts{user: user, seq: seq, activity: r.Check(), actor: me.MayAct(), seen: seen.Err(),
				taken: taken.Found(), prior: &prior})
			if err != nil || !write {
				return err
			}
			if err := tx.Put(Key(s.db, id), c); err != nil {
				return err
			}
			if err := r.Count(tx, 0, 1); err != nil {
				return err
			}
			_, err = note.Write(tx)
			return err
		})
	})
	if err != nil {
		return View{}, fmt.Errorf("comments.Create(%s): %w", activity, r.Err(err))
	}
	// The commenter as shown, counts included: the transaction reads only
	// that the person is there.
	people := map[string]accounts.Person{}
	if p, ok, err := accounts.Load(ctx, s.db, user); err == nil && ok {
		people[user] = p
	}
	return toView(activity, id, c, people), nil
}

func toView(activity, id string, c *Comment, people map[string]accounts.Person) View {
	v := View{ID: id, ActivityID: activity, UserID: c.UserID, Text: c.Text, Published: c.Published.UTC().Format(time.RFC3339)}
	if p, ok := people[c.UserID]; ok {
		v.Author = &p
	}
	return v
}

// List returns an activity's comments, oldest first, as viewer sees them:
// without those of people viewer blocks or is blocked by (so a page may
// hold fewer than asked for).
func (s *Service) List(ctx context.Context, viewer, activity string, p store.PageRequest) ([]View, string, error) {
	if _, err := s.act.Visible(ctx, viewer, activity); err != nil {
		return nil, "", err
	}
	q := s.db.Query(KindComment).FilterField("activityId", "=", activity).Order("seq")
	keys, vals, next, err := store.Page[Comment](ctx, s.db, q, "comments:"+activity, p)
	if err != nil {
		return nil, "", err
	}
	l := s.db.Lookup()
	recs := map[string]*accounts.Record{}
	between := map[string]*blocks.Between{}
	for _, c := range vals {
		if recs[c.UserID] == nil {
			recs[c.UserID] = accounts.Read(l, c.UserID)
			if c.UserID != viewer {
				between[c.UserID] = blocks.ReadBetween(l, viewer, c.UserID)
			}
		}
	}
	if err := l.Run(ctx); err != nil {
		return nil, "", fmt.Errorf("comments.List(%s): %w", activity, err)
	}
	people := map[string]accounts.Person{}
	for id, r := range recs {
		if p, ok := r.Person(); ok {
			people[id] = p
		}
	}
	out := make([]View, 0, len(vals))
	for i := range vals {
		if b := between[vals[i].UserID]; b != nil && b.Any() || recs[vals[i].UserID].Standing().IsSuspended() {
			continue // a suspended person's comments are not there
		}
		out = append(out, toView(activity, keys[i].Name, &vals[i], people))
	}
	return out, next, nil
}

// Each calls f with each comment user made, oldest first, a page at a
// time (for an export).
func Each(ctx context.Context, db *store.DB, user string, f func(View) error) error {
	q := db.Query(KindComment).FilterField("userId", "=", user).Order("seq")
	return store.Each[Comment](ctx, db, q, 500, func(k *datastore.Key, c *Comment) error {
		return f(toView(c.ActivityID, k.Name, c, nil))
	})
}

// Erase deletes up to n comments of a deleted user, each with its count,
// and returns how many it deleted.
func Erase(ctx context.Context, db *store.DB, user string, n int) (int, error) {
	q := db.Query(KindComment).FilterField("userId", "=", user).KeysOnly()
	done, err := db.Drain(ctx, q, n, 25, func(keys []*datastore.Key) error {
		return db.Update(ctx, func(tx *store.Tx) error {
			l := tx.Lookup()
			cs := make([]Comment, len(keys))
			found := make([]store.Ref, len(keys))
			for i, k := range keys {
				found[i] = l.Add(k, &cs[i])
			}
			if err := l.Run(ctx); err != nil {
				return err
			}
			// One count per activity, however many comments on it go.
			per := map[string]int64{}
			for i := range cs {
				if found[i].Found() && !cs[i].Withheld {
					per[cs[i].ActivityID]++
				}
			}
			for a := range per {
				per[a] = -per[a]
			}
			if err := countComments(ctx, tx, per); err != nil {
				return err
			}
			return tx.DeleteMulti(keys)
		})
	})
	if err != nil {
		return done, fmt.Errorf("comments.Erase(%s): %w", user, err)
	}
	return done, nil
}

// Delete deletes a comment on behalf of user: its author or the
// activity's author.
func (s *Service) Delete(ctx context.Context, user, activity, id string) error {
	if _, ok := ids.Parse(activity); !ok {
		return activities.ErrNoSuchActivity
	}
	if _, ok := ids.Parse(id); !ok {
		return ErrNoSuchComment
	}
	// The activity is read before the transaction, as a comment's
	// creation reads it: its count changes blind, and the commit fails
	// should it be gone by then.
	a, err := s.act.Exists(ctx, activity)
	if err != nil {
		return err
	}
	var r *activities.Reaction
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		var c Comment
		key := Key(s.db, id)
		l := tx.Lookup()
		r = activities.ReadReaction(l, activity, a)
		exists := l.Add(key, &c)
		if err := l.Run(ctx); err != nil {
			return err
		}
		switch err := r.Check(); {
		case err != nil:
			return err
		case !exists.Found() || c.ActivityID != activity:
			return ErrNoSuchComment
		case c.UserID != user && r.Author() != user:
			return ErrNotAllowed
		}
		if err := tx.Delete(key); err != nil || c.Withheld {
			return err // a withheld comment is not counted
		}
		return r.Count(tx, 0, -1)
	})
	if err != nil {
		return fmt.Errorf("comments.Delete(%s, %s): %w", activity, id, r.Err(err))
	}
	return nil
}

// Records are the comments kept in DB, as the package below this one has
// them forgotten (activities.Forgetter).
type Records struct{ DB *store.DB }

// ForgetActivity deletes the comments on an activity that is gone
// (Forget).
func (r Records) ForgetActivity(ctx context.Context, activity string) (int, error) {
	return Forget(ctx, r.DB, activity)
}

// Forget deletes every comment on an activity that is gone, for its
// cleanup job, and returns how many it deleted.
func Forget(ctx context.Context, db *store.DB, activity string) (int, error) {
	n, err := db.DeleteAll(ctx, db.Query(KindComment).FilterField("activityId", "=", activity).KeysOnly(), 500)
	if err != nil {
		return n, fmt.Errorf("comments.Forget(%s): %w", activity, err)
	}
	return n, nil
}

// Withhold brings the counts of up to n of user's comments, from cursor,
// in step with whether their account is suspended (suspended, read in each
// batch's transaction: a comment is withheld from its activity's
// commentsCount, or counted again). It returns the cursor after them (""
// when done).
func Withhold(ctx context.Context, db *store.DB, user, cursor string, n int, suspended func(*store.Tx) (bool, error)) (string, error) {
	q := db.Query(KindComment).FilterField("userId", "=", user).KeysOnly()
	next, err := db.UpdatePage(ctx, q, cursor, n, 25, func(tx *store.Tx, part []*datastore.Key) error {
		want, err := suspended(tx)
		if err != nil {
			return err
		}
		l := tx.Lookup()
		cs := make([]Comment, len(part))
		found := make([]store.Ref, len(part))
		for i, k := range part {
			found[i] = l.Add(k, &cs[i])
		}
		if err := l.Run(ctx); err != nil {
			return err
		}
		per := map[string]int64{} // one count per activity
		var put []*datastore.Key
		var vals []*Comment
		for i, k := range part {
			if found[i].Found() && cs[i].Withheld != want {
				cs[i].Withheld = want
				put, vals = append(put, k), append(vals, &cs[i])
				per[cs[i].ActivityID] += map[bool]int64{true: -1, false: 1}[want]
			}
		}
		if len(put) == 0 {
			return nil
		}
		if err := countComments(ctx, tx, per); err != nil {
			return err
		}
		return tx.PutMulti(put, vals)
	})
	if err != nil {
		return "", fmt.Errorf("comments.Withhold(%s): %w", user, err)
	}
	return next, nil
}

// countComments adds per[activity] to each activity's commentsCount in
// tx, one count per activity; an activity gone is left alone.
func countComments(ctx context.Context, tx *store.Tx, per map[string]int64) error {
	l := tx.Lookup()
	rs := map[string]*activities.Reaction{}
	for a := range per {
		rs[a] = activities.ReadReaction(l, a, nil)
	}
	if err := l.Run(ctx); err != nil {
		return err
	}
	for a, r := range rs {
		if r.Check() == nil {
			if err := r.Count(tx, 0, per[a]); err != nil {
				return err
			}
		}
	}
	return nil
}
