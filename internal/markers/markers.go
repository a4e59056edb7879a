// Package markers owns each person's read positions, after Mastodon's
// markers: for each feed, the newest activity (or notification) they have
// seen, which any of their devices reads to say what is new and moves
// forward. Marker/{feed} entities under a key of the person
// (Markers/{userId}, of no entity), so one ancestor query finds them all
// (to export or erase an account).
//
// A marker only moves forward: it is written by a server-side Maximum,
// which reads nothing, so two devices moving it at once both land and the
// newer position wins.
package markers

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"

	"cloud.google.com/go/datastore"

	"socialstream/internal/derrors"
	"socialstream/internal/ids"
	"socialstream/internal/store"
)

// Kinds: KindMarker entities, under a KindOwner key that no entity has.
const (
	KindMarker = "Marker"
	KindOwner  = "Markers"
)

// MaxFeeds is how many markers one call reads or moves.
const MaxFeeds = 20

// feedName is a feed's name: home, mentions, all, notifications, or
// group:{groupId}.
var feedName = regexp.MustCompile(`^(home|mentions|all|notifications|group:[0-9]{1,19})$`)

var errFeeds = derrors.New(derrors.InvalidArgument,
	fmt.Sprintf("name 1 to %d feeds: home, mentions, all, notifications or group:{groupId}", MaxFeeds))

type marker struct {
	Seq int64 `datastore:"seq,noindex"`
}

// Marker is a read position: the id of the newest item seen.
type Marker struct {
	LastReadID string `json:"lastReadId"`
}

func ownerKey(db *store.DB, user string) *datastore.Key { return db.NameKey(KindOwner, user, nil) }

// Key returns the key of user's marker of feed.
func Key(db *store.DB, user, feed string) *datastore.Key {
	return db.NameKey(KindMarker, feed, ownerKey(db, user))
}

// Service reads and moves markers.
type Service struct {
	db      *store.DB
	notices Notices
}

// Notices is told that a person's notifications marker moved (package
// notifications, whose Service implements it): what it has passed is
// read, so that the unread count, which counts what is not read, is
// Mastodon's count of what is newer than the marker.
type Notices interface {
	ReadThrough(ctx context.Context, user string, seq int64) error
}

// NotificationsFeed is the feed of a person's notifications.
const NotificationsFeed = "notifications"

// New returns a Service.
func New(db *store.DB, notices Notices) (*Service, error) {
	if db == nil || notices == nil {
		return nil, errors.New("markers.New: nil dependency")
	}
	return &Service{db: db, notices: notices}, nil
}

func checkFeeds(feeds []string) error {
	if len(feeds) == 0 || len(feeds) > MaxFeeds {
		return errFeeds
	}
	for _, f := range feeds {
		if !feedName.MatchString(f) {
			return errFeeds
		}
	}
	return nil
}

// Ref is a marker as a lookup read it.
type Ref struct {
	ref store.Ref
	m   marker
}

// Read adds user's marker of feed to a lookup.
func Read(l *store.Lookup, user, feed string) *Ref {
	r := &Ref{}
	r.ref = l.Add(Key(l.DB(), user, feed), &r.m)
	return r
}

// Seq is the place the marker names, once the lookup ran: 0 for a
// feed never marked.
func (r *Ref) Seq() int64 {
	if r == nil || !r.ref.Found() {
		return 0
	}
	return r.m.Seq
}

// Get returns user's markers of feeds, in one lookup; a feed never marked
// is left out.
func (s *Service) Get(ctx context.Context, user string, feeds []string) (map[string]Marker, error) {
	if err := checkFeeds(feeds); err != nil {
		return nil, err
	}
	l := s.db.Lookup()
	vals := make([]marker, len(feeds))
	refs := make([]store.Ref, len(feeds))
	for i, f := range feeds {
		refs[i] = l.Add(Key(s.db, user, f), &vals[i])
	}
	if err := l.Run(ctx); err != nil {
		return nil, fmt.Errorf("markers.Get(%s): %w", user, err)
	}
	out := map[string]Marker{}
	for i, f := range feeds {
		if refs[i].Found() {
			out[f] = Marker{LastReadID: ids.Format(vals[i].Seq)}
		}
	}
	return out, nil
}

// Move moves user's markers forward to the ids given, in one commit that
// reads nothing, and returns them as they are now (a position older than
// the marker's leaves it where it is).
func (s *Service) Move(ctx context.Context, user string, to map[string]Marker) (map[string]Marker, error) {
	feeds := make([]string, 0, len(to))
	for f := range to {
		feeds = append(feeds, f)
	}
	slices.Sort(feeds)
	if err := checkFeeds(feeds); err != nil {
		return nil, err
	}
	seqs := make([]int64, len(feeds))
	for i, f := range feeds {
		seq, ok := ids.Parse(to[f].LastReadID)
		if !ok {
			return nil, derrors.New(derrors.InvalidArgument, "lastReadId of "+f+" must be an id")
		}
		seqs[i] = seq
	}
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		for i, f := range feeds {
			if err := tx.TransformAny(Key(s.db, user, f), datastore.Maximum("seq", seqs[i])); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("markers.Move(%s): %w", user, err)
	}
	got, err := s.Get(ctx, user, feeds)
	if err != nil {
		return nil, err
	}
	// After the move's commit, what it passed is marked read. A job
	// that makes a notification later reads the marker in its commit and
	// makes one below it read; a request's notification is placed as it
	// commits. A failure here leaves the marker moved; the move asked
	// again marks them.
	if m, ok := got[NotificationsFeed]; ok {
		seq, _ := ids.Parse(m.LastReadID)
		if err := s.notices.ReadThrough(ctx, user, seq); err != nil {
			return nil, fmt.Errorf("markers.Move(%s): %w", user, err)
		}
	}
	return got, nil
}

// All returns every marker of user's (for an export).
func All(ctx context.Context, db *store.DB, user string) (map[string]Marker, error) {
	q := db.Query(KindMarker).Ancestor(ownerKey(db, user))
	out := map[string]Marker{}
	err := store.Each[marker](ctx, db, q, 500, func(k *datastore.Key, m *marker) error {
		out[k.Name] = Marker{LastReadID: ids.Format(m.Seq)}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("markers.All(%s): %w", user, err)
	}
	return out, nil
}

// Erase deletes up to n markers of a deleted user, and returns how many.
func Erase(ctx context.Context, db *store.DB, user string, n int) (int, error) {
	k, err := db.Drain(ctx, db.Query(KindMarker).Ancestor(ownerKey(db, user)).KeysOnly(), n, 500,
		func(keys []*datastore.Key) error { return db.DeleteMulti(ctx, keys) })
	if err != nil {
		return k, fmt.Errorf("markers.Erase(%s): %w", user, err)
	}
	return k, nil
}
