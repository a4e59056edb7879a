// Package mutes owns who mutes whom: Mute/{muter}_{muted}, one root entity
// per pair, indexed by muter (the muter's list) and by muted (to erase an
// account).
//
// A mute, after Mastodon's, quiets someone without telling them and
// without ending anything between the two: the muted person's activities
// leave the muter's feeds (all but the muted person's own), and they no
// longer notify the muter. It may last for a while only. Like a block, a
// mute is read by key in the lookups that honour it, never queried there:
// a feed reads one per author in the batch lookup it does anyway, a
// notification one per recipient in its transaction.
package mutes

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/accounts"
	"socialstream/internal/derrors"
	"socialstream/internal/store"
	"socialstream/internal/viewer"
)

// KindMute is the kind of the entities this package owns.
const KindMute = "Mute"

// MaxDuration is the longest mute that ends by itself; longer is a 400
// (no duration mutes for good).
const MaxDuration = 10 * 365 * 24 * time.Hour

var (
	// ErrSelfMute refuses a mute of oneself.
	ErrSelfMute = derrors.New(derrors.InvalidArgument, "you cannot mute yourself")
	// ErrDuration refuses a duration out of bounds.
	ErrDuration = derrors.New(derrors.InvalidArgument, fmt.Sprintf("duration is a whole number of seconds from 1 to %d, or 0 or none for a mute without end", int64(MaxDuration/time.Second)))
)

// mute is one person's mute of another, as stored.
type mute struct {
	Muter   string    `datastore:"muter"`
	Muted   string    `datastore:"muted"`
	Created time.Time `datastore:"created"`
	// Until is when it ends by itself; zero: never.
	Until time.Time `datastore:"until,noindex"`
}

// Mute is a mute as this package answers it.
type Mute struct {
	Muted          string
	Created, Until time.Time // Until zero: never ends
}

func (m *mute) view() Mute { return Mute{Muted: m.Muted, Created: m.Created, Until: m.Until} }

// ActiveAt reports whether the mute holds at t.
func (m Mute) ActiveAt(t time.Time) bool { return m.Until.IsZero() || t.Before(m.Until) }

// Key returns the key of muter's mute of muted.
func Key(db *store.DB, muter, muted string) *datastore.Key {
	return db.NameKey(KindMute, muter+"_"+muted, nil)
}

// Ref is a mute as a lookup read it.
type Ref struct {
	ref store.Ref
	m   mute
}

// Read adds muter's mute of muted to a lookup.
func Read(l *store.Lookup, muter, muted string) *Ref {
	r := &Ref{}
	r.ref = l.Add(Key(l.DB(), muter, muted), &r.m)
	return r
}

// ActiveAt reports whether the mute read is there and holds at t.
func (r *Ref) ActiveAt(t time.Time) bool { return r != nil && r.ref.Found() && r.m.view().ActiveAt(t) }

// Service makes, ends and lists mutes.
type Service struct {
	db       *store.DB
	accounts *accounts.Service
	now      func() time.Time
}

// New returns a Service.
func New(db *store.DB, acc *accounts.Service) (*Service, error) {
	if db == nil || acc == nil {
		return nil, errors.New("mutes.New: nil dependency")
	}
	return &Service{db: db, accounts: acc, now: time.Now}, nil
}

// Mute makes muter mute muted from now, for d (0: without end),
// replacing any mute of the pair, and returns the person muted and the
// mute.
func (s *Service) Mute(ctx context.Context, muter, muted string, d time.Duration) (accounts.Person, Mute, error) {
	if muter == muted {
		return accounts.Person{}, Mute{}, ErrSelfMute
	}
	if d < 0 || d > MaxDuration {
		return accounts.Person{}, Mute{}, ErrDuration
	}
	p, err := s.accounts.Get(ctx, muted)
	if err != nil {
		return accounts.Person{}, Mute{}, err
	}
	if !p.SeenBy(muter) {
		return accounts.Person{}, Mute{}, accounts.ErrNoSuchPerson // suspended: not there
	}
	now := s.now().UTC()
	m := mute{Muter: muter, Muted: muted, Created: now}
	if d > 0 {
		m.Until = now.Add(d)
	}
	// The mute and the muter's state (package viewer), in one commit.
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		l := tx.Lookup()
		me, own := accounts.Read(l, muter), viewer.Read(l, muter)
		if err := l.Run(ctx); err != nil {
			return err
		}
		if err := me.MayAct(); err != nil {
			return err // deleted, or suspended
		}
		own.Edit().SetMute(muted, m.Until, true)
		if err := own.Save(tx); err != nil {
			return err
		}
		return tx.Put(Key(s.db, muter, muted), &m)
	})
	if err != nil {
		return accounts.Person{}, Mute{}, fmt.Errorf("mutes.Mute(%s, %s): %w", muter, muted, err)
	}
	return p, m.view(), nil
}

// Unmute ends muter's mute of muted, if any.
func (s *Service) Unmute(ctx context.Context, muter, muted string) error {
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		l := tx.Lookup()
		own := viewer.Read(l, muter)
		if err := l.Run(ctx); err != nil {
			return err
		}
		if own.Found() {
			own.Edit().SetMute(muted, time.Time{}, false)
			if err := own.Save(tx); err != nil {
				return err
			}
		}
		return tx.Delete(Key(s.db, muter, muted))
	})
	if err != nil {
		return fmt.Errorf("mutes.Unmute(%s, %s): %w", muter, muted, err)
	}
	return nil
}

// Get returns muter's mute of muted, if it holds now.
func (s *Service) Get(ctx context.Context, muter, muted string) (Mute, bool, error) {
	var m mute
	ok, err := s.db.Get(ctx, Key(s.db, muter, muted), &m)
	if err != nil {
		return Mute{}, false, fmt.Errorf("mutes.Get(%s, %s): %w", muter, muted, err)
	}
	return m.view(), ok && m.view().ActiveAt(s.now()), nil
}

// List returns the mutes muter made that hold now, newest first (a page
// may hold fewer than asked for: ended ones are left out).
func (s *Service) List(ctx context.Context, muter string, p store.PageRequest) ([]Mute, string, error) {
	q := s.db.Query(KindMute).FilterField("muter", "=", muter).Order("-created")
	_, vals, next, err := store.Page[mute](ctx, s.db, q, "muted:"+muter, p)
	if err != nil {
		return nil, "", fmt.Errorf("mutes.List(%s): %w", muter, err)
	}
	now := s.now()
	out := make([]Mute, 0, len(vals))
	for _, m := range vals {
		if v := m.view(); v.ActiveAt(now) {
			out = append(out, v)
		}
	}
	return out, next, nil
}

// Each calls f with each mute muter made, newest first, a page at a time
// (for an export).
func Each(ctx context.Context, db *store.DB, muter string, f func(m Mute) error) error {
	q := db.Query(KindMute).FilterField("muter", "=", muter).Order("-created")
	return store.Each[mute](ctx, db, q, 500, func(_ *datastore.Key, m *mute) error { return f(m.view()) })
}

// Erase deletes up to n mutes made by or of a deleted user, and returns
// how many it deleted. A mute of the user goes with its line in the
// muter's state (package viewer), in one commit; the user's own state
// went with their account.
func Erase(ctx context.Context, db *store.DB, user string, n int) (int, error) {
	deleted, err := db.DeleteWhereWith(ctx, KindMute, []string{"muter", "muted"}, user, n, 25,
		func(tx *store.Tx, keys []*datastore.Key) error {
			var muters []string
			for _, k := range keys {
				if muter, _, _ := strings.Cut(k.Name, "_"); muter != user {
					muters = append(muters, muter)
				}
			}
			return viewer.Unlist(ctx, tx, muters, user)
		})
	if err != nil {
		return deleted, fmt.Errorf("mutes.Erase(%s): %w", user, err)
	}
	return deleted, nil
}

// Muting reads which of others muter mutes now, in one lookup.
func (s *Service) Muting(ctx context.Context, muter string, others []string) ([]bool, error) {
	l := s.db.Lookup()
	refs := make([]*Ref, len(others))
	for i, o := range others {
		refs[i] = Read(l, muter, o)
	}
	if err := l.Run(ctx); err != nil {
		return nil, fmt.Errorf("mutes.Muting(%s): %w", muter, err)
	}
	now := s.now()
	out := make([]bool, len(others))
	for i, r := range refs {
		out[i] = r.ActiveAt(now)
	}
	return out, nil
}
