package trends

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"cloud.google.com/go/datastore"
	"golang.org/x/sync/errgroup"

	"socialstream/internal/derrors"
	"socialstream/internal/store"
)

// Ranked is how many subjects of a kind a refresh ranks: the candidates it
// reads of each of today and yesterday, and the items its snapshot keeps
// (shown and waiting for review together).
const Ranked = 40

// MinPeople is how many people (today's and yesterday's) a subject needs
// to trend at all.
const MinPeople = 2

// counting is how many counts a refresh runs at once.
const counting = 8

// Reviews of a subject.
const (
	Approved = "approved"
	Rejected = "rejected"
)

// Item is a subject as the last refresh ranked it.
type Item struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Score ranks it: Today, and Yesterday as much as today has yet to run.
	Score     float64 `json:"score"`
	Today     int64   `json:"today"`
	Yesterday int64   `json:"yesterday"`
	// History is its last HistoryDays days, today first.
	History []Count `json:"history"`
	// Review is Approved, Rejected or "" (not reviewed).
	Review string `json:"review,omitempty"`
}

// Count is a subject's day: its people, and its uses (its posts, for a
// hashtag; its people, for the others).
type Count struct {
	Day    Day   `json:"day"`
	Uses   int64 `json:"uses"`
	People int64 `json:"people"`
}

type snapshot struct {
	Items []byte    `datastore:"items,noindex"`
	At    time.Time `datastore:"at,noindex"`
}

type review struct {
	Kind  string    `datastore:"kind,noindex"`
	Name  string    `datastore:"name,noindex"`
	State string    `datastore:"state,noindex"`
	By    string    `datastore:"by,noindex"`
	At    time.Time `datastore:"at,noindex"`
}

func snapshotKey(db *store.DB, k Kind) *datastore.Key {
	return db.NameKey(KindSnapshot, string(k), nil)
}

func reviewKey(db *store.DB, s Subject) *datastore.Key {
	return db.NameKey(KindReview, digest(string(s.Kind), s.Name), nil)
}

// ErrNoSuchTrend answers a review of a link no refresh ranked.
var ErrNoSuchTrend = derrors.New(derrors.NotFound, "no such trend")

// Config is the trends' configuration.
type Config struct {
	// ReviewOff is TRENDS_REVIEW=off: what people use trends without a
	// moderator's approval. By default nothing trends until approved, as
	// Mastodon has it.
	ReviewOff bool
}

// Service reads and refreshes the trends.
type Service struct {
	db  *store.DB
	cfg Config
	now func() time.Time
}

// New returns the trends' service.
func New(db *store.DB, cfg Config) (*Service, error) {
	if db == nil {
		return nil, errors.New("trends.New: no store")
	}
	return &Service{db: db, cfg: cfg, now: time.Now}, nil
}

// Counter counts a subject's uses on a day, where they are not its people
// (a hashtag's posts).
type Counter func(ctx context.Context, s Subject, d Day) (int64, error)

// Filter keeps, of names of subjects of a kind, those that may trend now
// (a post still there, public, of someone neither limited nor suspended).
type Filter func(ctx context.Context, names []string) (map[string]bool, error)

// Refresh ranks the subjects of kind k, and writes its snapshot: the
// leading candidates of today and yesterday, those keep keeps (nil: all),
// counted exactly, at least MinPeople, the Ranked best, each with its
// history (its uses counted by uses; nil: its people) and its review.
func (s *Service) Refresh(ctx context.Context, k Kind, uses Counter, keep Filter) error {
	now := s.now()
	today := DayOf(now)
	names, err := s.candidates(ctx, k, today)
	if err == nil && keep != nil {
		var ok map[string]bool
		ok, err = keep(ctx, names)
		names = slices.DeleteFunc(names, func(n string) bool { return !ok[n] })
	}
	if err != nil {
		return fmt.Errorf("trends: refresh of %s: %w", k, err)
	}
	items := make([]Item, len(names))
	if err := each(ctx, len(names), func(ctx context.Context, i int) error {
		sub := Subject{k, names[i]}
		it := Item{ID: sub.ID(), Name: sub.Name}
		var err error
		if it.Today, err = People(ctx, s.db, sub, today); err != nil {
			return err
		}
		it.Yesterday, err = People(ctx, s.db, sub, today-1)
		items[i] = it
		return err
	}); err != nil {
		return fmt.Errorf("trends: refresh of %s: %w", k, err)
	}
	items = rank(items, now.Sub(today.Start()))
	if err := s.describe(ctx, k, today, items, uses); err != nil {
		return fmt.Errorf("trends: refresh of %s: %w", k, err)
	}
	b, err := encode(items)
	if err != nil {
		return err
	}
	if err := s.db.Put(ctx, snapshotKey(s.db, k), &snapshot{Items: b, At: now.UTC()}); err != nil {
		return fmt.Errorf("trends: refresh of %s: %w", k, err)
	}
	return nil
}

// candidates are the names of the Ranked leading candidates of kind k of
// today and of yesterday.
func (s *Service) candidates(ctx context.Context, k Kind, today Day) ([]string, error) {
	var names []string
	for _, d := range []Day{today, today - 1} {
		var cs []candidate
		q := s.db.Query(KindCandidate).FilterField("day", "=", dayOf(k, d)).Order("-people").Limit(Ranked)
		if _, err := s.db.GetAll(ctx, q, &cs); err != nil {
			return nil, err
		}
		for _, c := range cs {
			names = append(names, c.Name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// rank scores items, elapsed into today, and keeps the Ranked best of
// those with MinPeople, best first.
func rank(items []Item, elapsed time.Duration) []Item {
	rest := 1 - min(max(elapsed.Hours()/24, 0), 1)
	items = slices.DeleteFunc(items, func(it Item) bool { return it.Today+it.Yesterday < MinPeople })
	for i := range items {
		items[i].Score = float64(items[i].Today) + float64(items[i].Yesterday)*rest
	}
	slices.SortFunc(items, func(a, b Item) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return items[:min(len(items), Ranked)]
}

// describe gives each item of kind k its history and its review.
func (s *Service) describe(ctx context.Context, k Kind, today Day, items []Item, uses Counter) error {
	err := each(ctx, len(items), func(ctx context.Context, i int) error {
		h, err := s.history(ctx, Subject{k, items[i].Name}, today, uses, items[i].Today, items[i].Yesterday)
		items[i].History = h
		return err
	})
	if err != nil {
		return err
	}
	l := s.db.Lookup()
	reviews := make([]review, len(items))
	for i := range items {
		l.Add(reviewKey(s.db, Subject{k, items[i].Name}), &reviews[i])
	}
	if err := l.Run(ctx); err != nil {
		return err
	}
	for i := range items {
		items[i].Review = reviews[i].State
	}
	return nil
}

// History is the last HistoryDays days of s, today first: its people, and
// its uses counted by uses (nil: its people).
func (s *Service) History(ctx context.Context, sub Subject, uses Counter) ([]Count, error) {
	h, err := s.history(ctx, sub, DayOf(s.now()), uses, -1, -1)
	if err != nil {
		return nil, fmt.Errorf("trends: the history of %s %q: %w", sub.Kind, sub.Name, err)
	}
	return h, nil
}

// history counts the days of sub, today's and yesterday's people given
// (-1: to count).
func (s *Service) history(ctx context.Context, sub Subject, today Day, uses Counter, people, yesterday int64) ([]Count, error) {
	h := make([]Count, HistoryDays)
	err := each(ctx, HistoryDays, func(ctx context.Context, i int) error {
		d := today - Day(i)
		h[i].Day = d
		var err error
		switch {
		case i == 0 && people >= 0:
			h[i].People = people
		case i == 1 && yesterday >= 0:
			h[i].People = yesterday
		default:
			if h[i].People, err = People(ctx, s.db, sub, d); err != nil {
				return err
			}
		}
		h[i].Uses = h[i].People
		if uses != nil && h[i].People > 0 {
			h[i].Uses, err = uses(ctx, sub, d)
		}
		return err
	})
	return h, err
}

// each runs f for 0..n-1, counting at once at most at a time.
func each(ctx context.Context, n int, f func(context.Context, int) error) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(counting)
	for i := range n {
		g.Go(func() error { return f(ctx, i) })
	}
	return g.Wait()
}

// Trending returns the items of kind k the last refresh ranked, best
// first: those shown (approved, or not rejected when review is off), and
// those waiting for a moderator's review.
func (s *Service) Trending(ctx context.Context, k Kind) (shown, waiting []Item, err error) {
	var snap snapshot
	if _, err := s.db.Get(ctx, snapshotKey(s.db, k), &snap); err != nil {
		return nil, nil, fmt.Errorf("trends: %s: %w", k, err)
	}
	items, err := decode(snap.Items)
	if err != nil {
		return nil, nil, fmt.Errorf("trends: %s: %w", k, err)
	}
	for _, it := range items {
		switch {
		case it.Review == Approved || s.cfg.ReviewOff && it.Review == "":
			shown = append(shown, it)
		case it.Review == "":
			waiting = append(waiting, it)
		}
	}
	return shown, waiting, nil
}

// Review records a moderator's review of the subject of kind k whose ID is
// id (approve, or reject), and applies it to the snapshot at once. A
// hashtag or post need not have trended yet; a link must be one a refresh
// ranked (its ID does not say its address). It returns the item as
// reviewed.
func (s *Service) Review(ctx context.Context, k Kind, id, by string, approve bool) (Item, error) {
	state := Rejected
	if approve {
		state = Approved
	}
	var out Item
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		var snap snapshot
		if _, err := tx.Get(snapshotKey(s.db, k), &snap); err != nil {
			return err
		}
		items, err := decode(snap.Items)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(items, func(it Item) bool { return it.ID == id })
		switch {
		case i >= 0:
			items[i].Review = state
			out = items[i]
		case k == Links:
			return ErrNoSuchTrend
		default:
			out = Item{ID: id, Name: id, Review: state}
		}
		sub := Subject{k, out.Name}
		if err := tx.Put(reviewKey(s.db, sub), &review{Kind: string(k), Name: sub.Name, State: state, By: by, At: s.now().UTC()}); err != nil {
			return err
		}
		if i < 0 {
			return nil
		}
		if snap.Items, err = encode(items); err != nil {
			return err
		}
		return tx.Put(snapshotKey(s.db, k), &snap)
	})
	if err != nil {
		return Item{}, fmt.Errorf("trends: review of %s %s: %w", k, id, err)
	}
	return out, nil
}
