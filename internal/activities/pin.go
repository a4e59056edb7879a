package activities

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"cloud.google.com/go/datastore"

	"socialstream/internal/accounts"
	"socialstream/internal/derrors"
	"socialstream/internal/ids"
	"socialstream/internal/policy"
	"socialstream/internal/store"
)

// MaxPins is how many activities a person may pin to the top of their
// page, as Mastodon allows.
const MaxPins = 5

// ErrTooManyPins refuses a pin past MaxPins.
var ErrTooManyPins = derrors.New(derrors.Conflict, fmt.Sprintf("at most %d activities can be pinned: unpin one first", MaxPins))

// Pin pins user's activity id to the top of their page (on), or unpins
// it, and returns it as user sees it then. The pins are kept on the
// user's card (accounts.Pins), the last pinned first, so every page that
// shows the activity says it is pinned with no read more. Pinning again,
// or unpinning what is not pinned, changes nothing. Pins of activities
// gone since (deleted, or taken down) are dropped as the list is written.
//
// Pin reads the activity and the card in its transaction, and the
// activities pinned already outside it, decides (decidePin) and writes
// the card.
func (s *Service) Pin(ctx context.Context, user, id string, on bool) (View, error) {
	if _, ok := ids.Parse(id); !ok {
		return View{}, ErrNoSuchActivity
	}
	key := Key(s.db, id)
	var a Activity
	var gone bool // the activity is not there (unpinned all the same)
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		f := pinFacts{user: user, id: id, on: on}
		l := tx.Lookup()
		found := l.Add(key, &a)
		pins := accounts.ReadPins(l, user)
		if err := l.Run(ctx); err != nil {
			return err
		}
		f.found, f.activity, f.pinned = found.Found(), &a, pins.List()
		gone = !f.found || a.Removed != 0
		var err error
		if f.gone, err = s.pinsGone(ctx, id, pins.List()); err != nil {
			return err
		}
		list, changed, err := decidePin(f)
		if err != nil || !changed {
			return err
		}
		return pins.Set(tx, list)
	})
	if errors.Is(err, policy.ErrNotYours) {
		return View{}, s.notAuthor(ctx, user, id) // a 404 to whoever may not see it
	}
	if err != nil {
		return View{}, fmt.Errorf("activities.Pin(%s, %s): %w", user, id, err)
	}
	if gone {
		return View{}, ErrNoSuchActivity
	}
	return s.viewOne(ctx, user, key, &a)
}

// pinFacts is what a pin's transaction read.
type pinFacts struct {
	user, id string
	on       bool
	found    bool
	activity *Activity
	pinned   []string // as the card lists them
	gone     []string // of those, the activities deleted or taken down
}

// decidePin decides the list of pins a pin (or unpin) makes, and whether
// it changes the card.
func decidePin(f pinFacts) ([]string, bool, error) {
	if !f.found || f.activity.Removed != 0 {
		if f.on || !slices.Contains(f.pinned, f.id) {
			return nil, false, ErrNoSuchActivity
		}
		// Unpinning what is gone since takes it off the list.
	} else if f.on {
		if err := policy.MayPin(f.user, f.activity.post(), f.activity.RepostOf != ""); err != nil {
			return nil, false, err
		}
	} else if f.activity.UserID != f.user {
		return nil, false, policy.ErrNotYours // unpinning asks only whose it is
	}
	var kept []string
	for _, p := range f.pinned {
		if !slices.Contains(f.gone, p) {
			kept = append(kept, p)
		}
	}
	list := kept
	switch {
	case !f.on:
		list = slices.DeleteFunc(slices.Clone(kept), func(p string) bool { return p == f.id })
	case !slices.Contains(kept, f.id): // pinning again keeps its place
		if len(kept) >= MaxPins {
			return nil, false, ErrTooManyPins
		}
		list = append([]string{f.id}, kept...)
	}
	return list, !slices.Equal(list, f.pinned), nil
}

// pinnedFeed answers the feed Pinned: one page, with no since, cursor or
// startIndex.
func (s *Service) pinnedFeed(ctx context.Context, r FeedRequest) ([]View, string, error) {
	if r.Since != "" || r.Page.Cursor != "" || r.Page.Offset != 0 || r.AppID != "" && r.AppID != "@app" {
		return nil, "", derrors.New(derrors.InvalidArgument, "@pinned is one page of all apps: no since, cursor, startIndex or appId")
	}
	vs, err := s.pinned(ctx, r.Viewer, r.UserID)
	return vs, "", err
}

// pinned returns the activities user pins, the last pinned first, as
// viewer sees them (the feed Pinned): one read of the card, one lookup
// of the activities, and the page's lookup.
func (s *Service) pinned(ctx context.Context, viewer, user string) ([]View, error) {
	l := s.db.PageLookup()
	author := accounts.Read(l, user)
	if err := l.Run(ctx); err != nil {
		return nil, fmt.Errorf("activities.Pinned(%s): %w", user, err)
	}
	keys := make([]*datastore.Key, len(author.Pinned()))
	for i, id := range author.Pinned() {
		keys[i] = Key(s.db, id)
	}
	found, acts, err := s.loadPage(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("activities.Pinned(%s): %w", user, err)
	}
	if found, acts, err = s.seen(ctx, viewer, found, acts); err != nil {
		return nil, err
	}
	return s.viewsOf(ctx, viewer, found, acts, look{hide: true, known: map[string]*accounts.Record{user: author}, cached: true})
}

// pinsGone returns which of the activities pinned already (but id) are
// gone or taken down, read outside the pin's transaction: it would hold
// their locks, and their likes wait on them. One gone just after stays
// on the list until the next pin.
func (s *Service) pinsGone(ctx context.Context, id string, pinned []string) ([]string, error) {
	l := s.db.Lookup()
	acts, there := make([]Activity, len(pinned)), make([]store.Ref, len(pinned))
	for i, p := range pinned {
		if p != id {
			there[i] = l.Add(Key(s.db, p), &acts[i])
		}
	}
	if err := l.Run(ctx); err != nil {
		return nil, err
	}
	var gone []string
	for i, p := range pinned {
		if p != id && (!there[i].Found() || acts[i].Removed != 0) {
			gone = append(gone, p)
		}
	}
	return gone, nil
}
