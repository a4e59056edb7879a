// Package scheduled keeps the posts people write now to be published
// later (Mastodon's scheduled statuses): each is kept with what its
// author sent, its pictures held for it, until a Cloud Tasks job posts it
// at its time as their post of that moment (activities.Post: their
// standing then decides), exactly once however often the job runs.
//
// A person's scheduled posts are listed and counted from one entity of
// theirs, the book (its ids and times), read and written in the
// transaction of every change, so the limits hold exactly under requests
// at once and no query is needed.
package scheduled

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/activities"
	"socialstream/internal/derrors"
	"socialstream/internal/ids"
	"socialstream/internal/media"
	"socialstream/internal/polls"
	"socialstream/internal/queue"
	"socialstream/internal/store"
)

// Kinds this package owns.
const (
	KindScheduledPost = "ScheduledPost"
	KindScheduleBook  = "ScheduleBook"
)

// Mastodon's limits.
const (
	// MinAhead is how far ahead a post is scheduled at least.
	MinAhead = 5 * time.Minute
	// MaxTotal is how many posts a person has scheduled at most, MaxDaily
	// how many of them fall on one day (UTC).
	MaxTotal = 300
	MaxDaily = 25
)

// Post is a stored scheduled post, named by its id.
type Post struct {
	UserID  string    `datastore:"userId,noindex"`
	At      time.Time `datastore:"at,noindex"`
	Created time.Time `datastore:"created,noindex"`
	// Params is what its author sent (params, as JSON).
	Params []byte `datastore:"params,noindex"`
	// Publishing is set by the job that publishes it, before it posts: it
	// is no longer listed, changed or cancelled.
	Publishing bool `datastore:"publishing,noindex"`
}

// book is a person's scheduled posts: their ids and times, in the
// order made.
type book struct {
	IDs []string `datastore:"ids,noindex"`
	Ats []int64  `datastore:"ats,noindex"` // µs
}

// params is what a scheduled post keeps of activities.PostInput.
type params struct {
	AppID       string      `json:"appId,omitempty"`
	Title       string      `json:"title,omitempty"`
	Body        string      `json:"body,omitempty"`
	Joined      bool        `json:"joined,omitempty"`
	Visibility  string      `json:"visibility,omitempty"`
	SpoilerText string      `json:"spoilerText,omitempty"`
	Sensitive   bool        `json:"sensitive,omitempty"`
	Language    string      `json:"language,omitempty"`
	InReplyTo   string      `json:"inReplyTo,omitempty"`
	Media       []string    `json:"media,omitempty"`
	Poll        *pollParams `json:"poll,omitempty"`
}

type pollParams struct {
	Options    []string `json:"options"`
	ExpiresIn  int64    `json:"expiresIn"` // seconds
	Multiple   bool     `json:"multiple,omitempty"`
	HideTotals bool     `json:"hideTotals,omitempty"`
}

func paramsOf(in activities.PostInput) params {
	p := params{AppID: in.AppID, Title: in.Title, Body: in.Body, Joined: in.Joined, Visibility: in.Visibility,
		SpoilerText: in.SpoilerText, Sensitive: in.Sensitive, Language: in.Language, InReplyTo: in.InReplyTo, Media: in.Media}
	if in.Poll != nil {
		p.Poll = &pollParams{Options: in.Poll.Options, ExpiresIn: int64(in.Poll.ExpiresIn / time.Second),
			Multiple: in.Poll.Multiple, HideTotals: in.Poll.HideTotals}
	}
	return p
}

func (p params) input() activities.PostInput {
	in := activities.PostInput{AppID: p.AppID, Title: p.Title, Body: p.Body, Joined: p.Joined, Visibility: p.Visibility,
		SpoilerText: p.SpoilerText, Sensitive: p.Sensitive, Language: p.Language, InReplyTo: p.InReplyTo, Media: p.Media}
	if p.Poll != nil {
		in.Poll = &polls.Input{Options: p.Poll.Options, ExpiresIn: time.Duration(p.Poll.ExpiresIn) * time.Second,
			Multiple: p.Poll.Multiple, HideTotals: p.Poll.HideTotals}
	}
	return in
}

// Scheduled is a scheduled post as its author sees it: when it is
// published and what it will post (Input, pictures by id).
type Scheduled struct {
	ID      string
	At      time.Time
	Created time.Time
	Input   activities.PostInput
}

func (p *Post) view(id string) (Scheduled, error) {
	var pp params
	if err := json.Unmarshal(p.Params, &pp); err != nil {
		return Scheduled{}, fmt.Errorf("scheduled post %s: %w", id, err)
	}
	return Scheduled{ID: id, At: p.At, Created: p.Created, Input: pp.input()}, nil
}

// Poster posts: activities.Service.
type Poster interface {
	Post(ctx context.Context, author string, in activities.PostInput) (activities.View, bool, error)
}

// Config holds what New may be given.
type Config struct {
	// Now is the clock (time.Now if nil).
	Now func() time.Time
}

// Service keeps scheduled posts and publishes them.
type Service struct {
	db    *store.DB
	ids   *ids.Generator
	q     queue.Queue
	posts Poster
	now   func() time.Time
}

// New returns the service over db, enqueuing on q, posting through posts.
func New(db *store.DB, gen *ids.Generator, q queue.Queue, posts Poster, cfg Config) (*Service, error) {
	if db == nil || gen == nil || q == nil || posts == nil {
		return nil, errors.New("scheduled.New: nil dependency")
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &Service{db: db, ids: gen, q: q, posts: posts, now: now}, nil
}

// ErrNoSuchPost is a scheduled post that is not there for the caller:
// never made, someone else's, published (or being published) or
// cancelled.
var ErrNoSuchPost = derrors.New(derrors.NotFound, "no such scheduled post")

func postKey(db *store.DB, id string) *datastore.Key { return db.NameKey(KindScheduledPost, id, nil) }
func bookKey(db *store.DB, user string) *datastore.Key {
	return db.NameKey(KindScheduleBook, user, nil)
}

// checkAt checks a time a post is scheduled for, as of now.
func checkAt(at, now time.Time) error {
	if at.Before(now.Add(MinAhead)) {
		return derrors.New(derrors.InvalidArgument, fmt.Sprintf("scheduled_at must be at least %d minutes ahead", int(MinAhead/time.Minute)))
	}
	return nil
}

// decideLimits refuses a post scheduled at at when b (not counting the
// post named except, being moved) already holds MaxTotal posts, or
// MaxDaily on that day (UTC).
func decideLimits(b *book, at time.Time, except string) error {
	total, daily := 0, 0
	day := at.UTC().Truncate(24 * time.Hour)
	for i, id := range b.IDs {
		if id == except {
			continue
		}
		total++
		if time.UnixMicro(b.Ats[i]).UTC().Truncate(24 * time.Hour).Equal(day) {
			daily++
		}
	}
	switch {
	case total >= MaxTotal:
		return derrors.New(derrors.InvalidArgument, fmt.Sprintf("at most %d posts are scheduled at once", MaxTotal))
	case daily >= MaxDaily:
		return derrors.New(derrors.InvalidArgument, fmt.Sprintf("at most %d posts are scheduled for one day", MaxDaily))
	}
	return nil
}

// set puts id at at in b, where it is or at the end.
func (b *book) set(id string, at time.Time) {
	if i := slices.Index(b.IDs, id); i >= 0 {
		b.Ats[i] = at.UnixMicro()
		return
	}
	b.IDs, b.Ats = append(b.IDs, id), append(b.Ats, at.UnixMicro())
}

// remove takes id out of b.
func (b *book) remove(id string) {
	if i := slices.Index(b.IDs, id); i >= 0 {
		b.IDs, b.Ats = slices.Delete(b.IDs, i, i+1), slices.Delete(b.Ats, i, i+1)
	}
}

// Schedule keeps in, by user, to be published at at, and returns it. in
// is checked as a post now would be (activities.PostInput.Check); its
// pictures, user's and loose, are held for it. Its poll's time is
// counted from its publication.
func (s *Service) Schedule(ctx context.Context, user string, at time.Time, in activities.PostInput) (Scheduled, error) {
	now := s.now()
	if err := checkAt(at, now); err != nil {
		return Scheduled{}, err
	}
	in.ExternalID, in.HeldBy = "", "" // a scheduled post is named by its own id
	if err := in.Check(now); err != nil {
		return Scheduled{}, err
	}
	data, err := json.Marshal(paramsOf(in))
	if err != nil {
		return Scheduled{}, err
	}
	id := ids.Format(s.ids.Next())
	p := &Post{UserID: user, At: at.UTC().Truncate(time.Microsecond), Created: now.UTC(), Params: data}
	job := publishing(s.q, id, user, p.At, now)
	err = new(queue.Ahead).Commit(ctx, []queue.Pending{job}, func() error {
		return s.db.Update(ctx, func(tx *store.Tx) error {
			l := tx.Lookup()
			var b book
			l.Add(bookKey(s.db, user), &b)
			pictures := media.ReadLoose(l, in.Media, "")
			if err := l.Run(ctx); err != nil {
				return err
			}
			if err := decideLimits(&b, p.At, ""); err != nil {
				return err
			}
			keys, puts, _, err := pictures(user)
			if err != nil {
				return err
			}
			media.SetHeld(puts, id)
			b.set(id, p.At)
			return tx.PutMulti(append(keys, postKey(s.db, id), bookKey(s.db, user)), append(puts, p, &b))
		})
	})
	if err != nil {
		return Scheduled{}, fmt.Errorf("scheduled.Schedule(%s): %w", user, err)
	}
	return p.view(id)
}

// own reads user's scheduled post id in tx, with their book.
func (s *Service) own(ctx context.Context, tx *store.Tx, user, id string) (*Post, *book, error) {
	if _, ok := ids.Parse(id); !ok {
		return nil, nil, ErrNoSuchPost
	}
	var p Post
	var b book
	l := tx.Lookup()
	ref := l.Add(postKey(s.db, id), &p)
	l.Add(bookKey(s.db, user), &b)
	if err := l.Run(ctx); err != nil {
		return nil, nil, err
	}
	if !ref.Found() || p.UserID != user || p.Publishing {
		return nil, nil, ErrNoSuchPost
	}
	return &p, &b, nil
}

// gone reports whether the scheduled post id is not there at all, in tx.
func (s *Service) gone(ctx context.Context, tx *store.Tx, id string) (bool, error) {
	l := tx.Lookup()
	ref := l.Add(postKey(s.db, id), &Post{})
	if err := l.Run(ctx); err != nil {
		return false, err
	}
	return !ref.Found(), nil
}

// Get returns user's scheduled post id.
func (s *Service) Get(ctx context.Context, user, id string) (Scheduled, error) {
	if _, ok := ids.Parse(id); !ok {
		return Scheduled{}, ErrNoSuchPost
	}
	var p Post
	ok, err := s.db.Get(ctx, postKey(s.db, id), &p)
	if err != nil {
		return Scheduled{}, err
	}
	if !ok || p.UserID != user || p.Publishing {
		return Scheduled{}, ErrNoSuchPost
	}
	return p.view(id)
}

// Window is a page of a person's scheduled posts, newest made first:
// those made before Below and after Above (ids; either may be empty),
// Limit of them, the nearest Above first when Nearest (then still
// answered newest first).
type Window struct {
	Below, Above string
	Nearest      bool
	Limit        int
}

// List returns a page of user's scheduled posts: their book's read and
// one read each.
func (s *Service) List(ctx context.Context, user string, w Window) ([]Scheduled, error) {
	var b book
	if _, err := s.db.Get(ctx, bookKey(s.db, user), &b); err != nil {
		return nil, fmt.Errorf("scheduled.List(%s): %w", user, err)
	}
	page := window(b.IDs, w)
	l := s.db.Lookup()
	posts := make([]Post, len(page))
	refs := make([]store.Ref, len(page))
	for i, id := range page {
		refs[i] = l.Add(postKey(s.db, id), &posts[i])
	}
	if err := l.Run(ctx); err != nil {
		return nil, fmt.Errorf("scheduled.List(%s): %w", user, err)
	}
	out := make([]Scheduled, 0, len(page))
	for i, id := range page {
		if !refs[i].Found() || posts[i].Publishing || posts[i].UserID != user {
			continue
		}
		v, err := posts[i].view(id)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// window picks w's page of the ids (of a book, oldest made first),
// newest first.
func window(list []string, w Window) []string {
	below, above := seqOf(w.Below, 1<<63-1), seqOf(w.Above, -1)
	var in []string
	for _, id := range list {
		if n := seqOf(id, 0); n < below && n > above {
			in = append(in, id)
		}
	}
	slices.SortFunc(in, func(a, b string) int { return cmp.Compare(seqOf(b, 0), seqOf(a, 0)) })
	if len(in) > w.Limit {
		if w.Nearest {
			in = in[len(in)-w.Limit:]
		} else {
			in = in[:w.Limit]
		}
	}
	return in
}

// seqOf is the number id stands for, or or when it is empty or none.
func seqOf(id string, or int64) int64 {
	if n, ok := ids.Parse(id); ok {
		return n
	}
	return or
}

// Reschedule moves user's scheduled post id to at.
func (s *Service) Reschedule(ctx context.Context, user, id string, at time.Time) (Scheduled, error) {
	now := s.now()
	if err := checkAt(at, now); err != nil {
		return Scheduled{}, err
	}
	at = at.UTC().Truncate(time.Microsecond)
	var out *Post
	job := publishing(s.q, id, user, at, now)
	err := new(queue.Ahead).Commit(ctx, []queue.Pending{job}, func() error {
		return s.db.Update(ctx, func(tx *store.Tx) error {
			p, b, err := s.own(ctx, tx, user, id)
			if err != nil {
				return err
			}
			if err := decideLimits(b, at, id); err != nil {
				return err
			}
			p.At = at
			b.set(id, at)
			out = p
			return tx.PutMulti([]*datastore.Key{postKey(s.db, id), bookKey(s.db, user)}, []any{p, b})
		})
	})
	if err != nil {
		return Scheduled{}, fmt.Errorf("scheduled.Reschedule(%s): %w", id, err)
	}
	return out.view(id)
}

// Cancel deletes user's scheduled post id; the pictures it held are loose
// again (collected a day later unless a post carries them). An attempt
// that finds the post not there at all after one before it reached its
// commit (a commit may apply and answer Aborted, and the transaction runs
// again) answers success: the post is gone by this cancel's hand (or, in
// the moment between the two attempts, its publication both began and
// ended: no attempt of a cancel waits on it).
func (s *Service) Cancel(ctx context.Context, user, id string) error {
	committing := false
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		if committing {
			if gone, err := s.gone(ctx, tx, id); err != nil || gone {
				return err
			}
		}
		p, b, err := s.own(ctx, tx, user, id)
		if err != nil {
			return err
		}
		if err := s.drop(ctx, tx, user, id, p, b); err != nil {
			return err
		}
		committing = true
		return nil
	})
	if err != nil {
		return fmt.Errorf("scheduled.Cancel(%s): %w", id, err)
	}
	return nil
}

// drop deletes the scheduled post p in tx, takes it out of user's book b
// (nil: out of it already) and lets its pictures go.
func (s *Service) drop(ctx context.Context, tx *store.Tx, user, id string, p *Post, b *book) error {
	var pp params
	if err := json.Unmarshal(p.Params, &pp); err != nil {
		return err
	}
	l := tx.Lookup()
	release := media.ReadHeld(l, pp.Media)
	if err := l.Run(ctx); err != nil {
		return err
	}
	keys, puts := release(id, s.now())
	if b != nil {
		b.remove(id)
		keys, puts = append(keys, bookKey(s.db, user)), append(puts, b)
	}
	if len(keys) > 0 {
		if err := tx.PutMulti(keys, puts); err != nil {
			return err
		}
	}
	return tx.Delete(postKey(s.db, id))
}
