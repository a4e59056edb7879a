package accounts

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/store"
)

// KindCounts is the kind of a user's card: Counts/{userId}, a root
// entity beside the User, which holds what every page shows of a person
// (name, display name, when they joined) and their follower and following
// counts, so that a feed reads one entity per author. Its counts change
// only by server-side increments in the commit of the follow or unfollow
// they count (Record.Count), which read nothing: a celebrity's followers
// do not wait on each other's locks, and nothing that reads the User to
// see the person is there waits on them. Its names are written once, at
// registration (names do not change); the profile is copied on it with
// the User's (Profiled.Set), and the activities the person pins are kept
// on it (Pins), so that every page that shows the person shows both with
// no read more.

const KindCounts = "Counts"

// PageKinds are the kinds of this package's that pages read through the
// instance's cache (store.Cache): the cards.
func PageKinds() []string { return []string{KindCounts} }

// Counts is a user's card: their names and their counts.
type Counts struct {
	Followers int64 `datastore:"followers,noindex"`
	Following int64 `datastore:"following,noindex"`
	// Statuses counts the activities the person posted and has not
	// deleted (nor had taken down), but those for the mentioned alone,
	// and LastStatus is when the latest of them was posted (µs): both
	// change by server-side transforms in the commits of the posts and
	// deletes they count (CountPost), which read nothing.
	Statuses   int64 `datastore:"statuses,noindex"`
	LastStatus int64 `datastore:"lastStatus,noindex"`
	// What the User holds and pages show.
	Username    string    `datastore:"username,noindex"`
	DisplayName string    `datastore:"displayName,noindex"`
	Published   time.Time `datastore:"published,noindex"`
	// The User's Standing, copied by SetStanding: one entity value, in no
	// index.
	Standing `datastore:"standing,noindex"`
	// Pinned are the ids of the activities pinned to the top of the
	// person's page, the last pinned first (package activities).
	Pinned []string `datastore:"pinned,noindex,omitempty"`
	// Featured are the hashtags the person features (featured.go).
	Featured []string `datastore:"featured,noindex,omitempty"`
	// The User's Profile, copied with it, and when it last changed.
	Profile Profile `datastore:"profile,noindex"`
	Changed int64   `datastore:"changed,noindex,omitempty"`
}

// Card returns the card of user u over c: u's names and standing, and
// the counts c holds.
func Card(u *User, c Counts) *Counts {
	c.Username, c.DisplayName, c.Published = u.Username, u.DisplayName, u.Published
	c.Standing, c.Profile, c.Changed = u.Standing, u.Profile, u.Changed
	return &c
}

// CountsKey returns the key of a user's Counts.
func CountsKey(db *store.DB, user string) *datastore.Key {
	return db.NameKey(KindCounts, user, nil)
}

// CountPost counts, with tx's commit, n activities (-1: one gone) user
// posted, the latest at (µs; 0 leaves it): server-side transforms that
// read nothing, so that a person's posts do not wait on the locks of
// their followers' follows. The user's card must be there at the commit,
// or it fails with store.ErrGone.
func CountPost(tx *store.Tx, user string, n, at int64) error {
	ts := []datastore.PropertyTransform{datastore.Increment("statuses", n)}
	if at > 0 {
		ts = append(ts, datastore.Maximum("lastStatus", at))
	}
	return tx.Transform(CountsKey(tx.DB(), user), ts...)
}

// ReadCard adds user's card to a lookup, to see it is there (a count's
// change fails on a card that is not).
func ReadCard(l *store.Lookup, user string) store.Ref {
	return l.Add(CountsKey(l.DB(), user), &Counts{})
}

// Load reads a person outside any transaction, with every count.
func Load(ctx context.Context, db *store.DB, id string) (Person, bool, error) {
	l := db.Lookup()
	r := Read(l, id)
	if err := l.Run(ctx); err != nil {
		return Person{}, false, fmt.Errorf("accounts.Load(%s): %w", id, err)
	}
	p, ok := r.Person()
	return p, ok, nil
}

// Pins is a user's card as a transaction read it, to change the
// activities they pin.
type Pins struct {
	user string
	c    Counts
}

// ReadPins adds user's card to a lookup in a transaction; the Pins
// answer once it has run.
func ReadPins(l *store.Lookup, user string) *Pins {
	p := &Pins{user: user}
	l.Add(CountsKey(l.DB(), user), &p.c)
	return p
}

// List returns the ids of the activities the user pins, the last pinned
// first.
func (p *Pins) List() []string { return p.c.Pinned }

// Set writes, in tx, the ids of the activities the user pins.
func (p *Pins) Set(tx *store.Tx, pinned []string) error {
	c := p.c
	c.Pinned = pinned
	return tx.Put(CountsKey(tx.DB(), p.user), &c)
}

// lock locks or unlocks st at at (µs): an unlock of a locked account is
// noted, for the job that approves what was pending.
func lock(st *Standing, locked bool, at int64) {
	if !locked && st.Locked {
		st.Unlocked = at
	}
	st.Locked = locked
}

// SetStanding changes, in tx, user's standing by change, on the User and
// its card alike, and returns it as it was before. A user not there is
// ErrNoSuchPerson. change may refuse with an error, which SetStanding
// returns.
func SetStanding(ctx context.Context, tx *store.Tx, user string, change func(*Standing) error) (Standing, error) {
	return setStanding(ctx, tx, user, change, 0)
}

// setStanding is SetStanding; a change made marks the User changed at
// (µs; User.Changed), when at is not zero.
func setStanding(ctx context.Context, tx *store.Tx, user string, change func(*Standing) error, at int64) (Standing, error) {
	var (
		u User
		c Counts
		l = tx.Lookup()
	)
	found, _ := l.Add(UserKey(tx.DB(), user), &u), l.Add(CountsKey(tx.DB(), user), &c)
	if err := l.Run(ctx); err != nil {
		return Standing{}, err
	}
	if !found.Found() {
		return Standing{}, ErrNoSuchPerson
	}
	was := u.Standing
	if err := change(&u.Standing); err != nil {
		return was, err
	}
	if u.Standing == was {
		return was, nil
	}
	u.Changed = max(u.Changed, at)
	return was, tx.PutMulti([]*datastore.Key{UserKey(tx.DB(), user), CountsKey(tx.DB(), user)}, []any{&u, Card(&u, c)})
}

// SetRole gives user role ("" for none) in tx, and returns the role they
// had.
func SetRole(ctx context.Context, tx *store.Tx, user, role string) (string, error) {
	was, err := SetStanding(ctx, tx, user, func(st *Standing) error {
		st.Role = role
		return nil
	})
	return was.Role, err
}

// SetLimited limits user's account or lifts the limit at at, in tx, and
// reports whether that changed anything.
func SetLimited(ctx context.Context, tx *store.Tx, user string, on bool, at time.Time) (bool, error) {
	was, err := SetStanding(ctx, tx, user, func(st *Standing) error {
		if st.Limited != on {
			st.Limited, st.LimitChanged = on, at.UnixMicro()
		}
		return nil
	})
	return err == nil && was.Limited != on, err
}

// Suspend suspends user's account at at, for reason, in tx, and reports
// whether it was not suspended already.
func Suspend(ctx context.Context, tx *store.Tx, user string, at time.Time, reason string) (bool, error) {
	was, err := SetStanding(ctx, tx, user, func(st *Standing) error {
		if !st.IsSuspended() {
			st.Suspended, st.SuspendedFor = at, reason
		}
		return nil
	})
	return err == nil && !was.IsSuspended(), err
}

// Unsuspend lifts user's suspension at at in tx, if lift, asked with when
// it began, allows it (its error is returned, and nothing changes); it
// reports whether there was one.
func Unsuspend(ctx context.Context, tx *store.Tx, user string, at time.Time, lift func(since time.Time) error) (bool, error) {
	was, err := SetStanding(ctx, tx, user, func(st *Standing) error {
		if !st.IsSuspended() {
			return nil
		}
		if err := lift(st.Suspended); err != nil {
			return err
		}
		st.Suspended, st.SuspendedFor, st.Lifted = time.Time{}, "", at.UnixMicro()
		return nil
	})
	return err == nil && was.IsSuspended(), err
}
