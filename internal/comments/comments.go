// Package comments owns comments on activities: Comment/{commentId}, root
// entities with the activity's id, listed oldest first. The activity's
// commentsCount changes in the same transaction (see activities.Stats), and
// deleting the activity deletes its comments.
package comments

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"cloud.google.com/go/datastore"

	"socialstream/internal/accounts"
	"socialstream/internal/activities"
	"socialstream/internal/derrors"
	"socialstream/internal/ids"
	"socialstream/internal/store"
)

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
	UserID     string    `datastore:"userId,noindex"`
	Text       string    `datastore:"text,noindex"`
	Published  time.Time `datastore:"published,noindex"`
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
	db  *store.DB
	ids *ids.Generator
	acc *accounts.Service
	act *activities.Service
	now func() time.Time
}

// New returns a Service.
func New(db *store.DB, gen *ids.Generator, acc *accounts.Service, act *activities.Service) (*Service, error) {
	if db == nil || gen == nil || acc == nil || act == nil {
		return nil, errors.New("comments.New: nil dependency")
	}
	return &Service{db: db, ids: gen, acc: acc, act: act, now: time.Now}, nil
}

// Key returns a comment's key.
func Key(db *store.DB, id string) *datastore.Key {
	return db.NameKey(activities.KindComment, id, nil)
}

// Create adds user's comment to an activity and returns it with the
// activity's author.
func (s *Service) Create(ctx context.Context, user, activity, text string) (View, string, error) {
	text = strings.TrimSpace(text)
	switch {
	case text == "":
		return View{}, "", derrors.New(derrors.InvalidArgument, "text is required")
	case !utf8.ValidString(text) || utf8.RuneCountInString(text) > MaxText:
		return View{}, "", derrors.New(derrors.InvalidArgument, fmt.Sprintf("text must be at most %d characters", MaxText))
	case strings.ContainsFunc(text, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }):
		return View{}, "", derrors.New(derrors.InvalidArgument, "text must not contain control characters")
	}
	if _, err := s.act.Exists(ctx, activity); err != nil {
		return View{}, "", err
	}
	seq := s.ids.Next()
	id := fmt.Sprint(seq)
	c := &Comment{ActivityID: activity, Seq: seq, UserID: user, Text: text, Published: s.now().UTC()}
	var author string
	err := s.db.RunInTransaction(ctx, func(tx *datastore.Transaction) error {
		var prior Comment
		a, counts, missing, err := activities.ReadReaction(tx, s.db, activity, []*datastore.Key{Key(s.db, id)}, []any{&prior})
		if err != nil {
			return err
		}
		author = a.UserID
		if !missing[0] {
			if prior.UserID == user && prior.Seq == seq {
				return nil // this very comment: a retry after a commit that did apply
			}
			return derrors.New(derrors.Unavailable, "comment id collision; retry")
		}
		if _, err := tx.Put(Key(s.db, id), c); err != nil {
			return err
		}
		return counts.Add(tx, 0, 1)
	})
	if err != nil {
		return View{}, "", fmt.Errorf("comments.Create(%s): %w", activity, err)
	}
	people, err := s.acc.GetMulti(ctx, []string{user})
	if err != nil {
		return View{}, "", err
	}
	return toView(activity, id, c, people), author, nil
}

func toView(activity, id string, c *Comment, people map[string]accounts.Person) View {
	v := View{ID: id, ActivityID: activity, UserID: c.UserID, Text: c.Text, Published: c.Published.UTC().Format(time.RFC3339)}
	if p, ok := people[c.UserID]; ok {
		v.Author = &p
	}
	return v
}

// List returns an activity's comments, oldest first.
func (s *Service) List(ctx context.Context, activity string, p store.PageRequest) ([]View, string, error) {
	if _, err := s.act.Exists(ctx, activity); err != nil {
		return nil, "", err
	}
	q := s.db.Query(activities.KindComment).FilterField("activityId", "=", activity).Order("seq")
	keys, vals, next, err := store.Page[Comment](ctx, s.db, q, "comments:"+activity, p)
	if err != nil {
		return nil, "", err
	}
	var users []string
	for _, c := range vals {
		users = append(users, c.UserID)
	}
	people, err := s.acc.GetMulti(ctx, users)
	if err != nil {
		return nil, "", err
	}
	out := make([]View, len(vals))
	for i := range vals {
		out[i] = toView(activity, keys[i].Name, &vals[i], people)
	}
	return out, next, nil
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
	err := s.db.RunInTransaction(ctx, func(tx *datastore.Transaction) error {
		var c Comment
		key := Key(s.db, id)
		a, counts, missing, err := activities.ReadReaction(tx, s.db, activity, []*datastore.Key{key}, []any{&c})
		switch {
		case err != nil:
			return err
		case missing[0] || c.ActivityID != activity:
			return ErrNoSuchComment
		case c.UserID != user && a.UserID != user:
			return ErrNotAllowed
		}
		if err := tx.Delete(key); err != nil {
			return err
		}
		return counts.Add(tx, 0, -1)
	})
	if err != nil {
		return fmt.Errorf("comments.Delete(%s, %s): %w", activity, id, err)
	}
	return nil
}
