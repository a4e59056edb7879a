// Package viewer owns what a person's own actions make every page show
// them, kept in one entity per person, ViewerState/{userId}, so that a
// feed or notifications page reads it once rather than once per author or
// activity: whom they block, who blocks them, whom they mute and until
// when, and which recent activities they like, repost and bookmark.
//
// The entities of record stay where they are (Block, Mute, Like, Repost,
// each owned by its package): every write of one changes the state in the
// same transaction, so the two never disagree. A state is bounded:
//
//   - its lists of people hold at most MaxPeople ids each; one that would
//     grow past it sets Overflow and the lists are dropped, and from then
//     on a page reads the blocks and mutes between its viewer and each
//     author by key, as it would without a state;
//   - it holds the likes, reposts and bookmarks of the activities whose
//     seq is at least Since, at most MaxRecent of each; one that would
//     grow past it drops its oldest and raises Since. A page reads by key
//     the like, repost and bookmark of an activity older than Since.
//
// Registration writes a person's state, empty; the erasure deletes it.
package viewer

import (
	"context"
	"slices"
	"strings"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/ids"
	"socialstream/internal/policy"
	"socialstream/internal/store"
)

// Kind is the kind of the entities this package owns.
const Kind = "ViewerState"

// Bounds of a state; past them a page reads what it needs by key.
const (
	MaxPeople  = 1000 // ids in each of Blocks, BlockedBy and Muted
	MaxRecent  = 1000 // activities in each of Liked, Reposted and Bookmarked
	MaxDomains = 500  // domains in Domains
)

// State is one person's own state, as stored. Every property is noindex:
// it is read by key alone.
type State struct {
	// Overflow says a list of people grew past MaxPeople and was dropped.
	Overflow   bool     `datastore:"overflow,noindex"`
	Blocks     []string `datastore:"blocks,noindex"`     // whom they block
	BlockedBy  []string `datastore:"blockedBy,noindex"`  // who blocks them
	Muted      []string `datastore:"muted,noindex"`      // whom they mute
	MutedUntil []int64  `datastore:"mutedUntil,noindex"` // each mute's end, Unix ms; 0: none
	// Since is the least seq of the activities whose likes and reposts
	// by the person Liked and Reposted hold, every one of them.
	Since      int64    `datastore:"since,noindex"`
	Liked      []string `datastore:"liked,noindex"`
	Reposted   []string `datastore:"reposted,noindex"`
	Bookmarked []string `datastore:"bookmarked,noindex"`
	// BookmarksKept says Bookmarked holds every bookmark since Since:
	// true for a state made since it does (New); a state from before
	// does not answer bookmarks, which a page reads by key.
	BookmarksKept bool `datastore:"bookmarksKept,noindex"`
	// Exclusive holds "list/member" for each member of the person's
	// exclusive lists (package graph): their posts leave the home feed.
	// At most MaxPeople.
	Exclusive []string `datastore:"exclusive,noindex"`
	// Filters are the person's keyword filters, each one JSON string
	// (package filters owns them).
	Filters []string `datastore:"filters,noindex"`
	// Domains are the domains of other servers the person blocks for
	// themselves (package graph), in the order blocked: at most
	// MaxDomains. They are kept here alone.
	Domains []string `datastore:"domains,noindex"`
}

// PageKinds are the kinds of this package's that pages read through the
// instance's cache (store.Cache): a reader's state. A change to it
// leaves every instance's cache before the next page (store.KindChange).
func PageKinds() []string { return []string{Kind} }

// Key returns the key of user's state.
func Key(db *store.DB, user string) *datastore.Key {
	return db.NameKey(Kind, user, nil)
}

// OwnerOf returns whose state the key named name (as Key.String names
// it) is, and whether it is a state's: for what is kept of a person's
// own beside their state (store.CacheConfig.Derived).
func OwnerOf(name string) (string, bool) {
	user, ok := strings.CutPrefix(name, "/"+Kind+",")
	if !ok || user == "" || strings.Contains(user, "/") {
		return "", false
	}
	return user, true
}

// New returns the state of an account made now: every block, mute, like
// and repost of theirs in it (there are none).
func New() *State { return &State{BookmarksKept: true} }

// Start writes the state of an account made in tx.
func Start(tx *store.Tx, user string) error { return tx.Put(Key(tx.DB(), user), New()) }

// Forget deletes a deleted account's state in tx.
func Forget(tx *store.Tx, user string) error { return tx.Delete(Key(tx.DB(), user)) }

// Unlist takes a deleted person out of the states of others, in tx: out
// of whom each blocks, who blocks each and whom each mutes. A state not
// there has nothing to take out.
func Unlist(ctx context.Context, tx *store.Tx, others []string, person string) error {
	l := tx.Lookup()
	var refs []*Ref
	for _, o := range slices.Compact(slices.Sorted(slices.Values(others))) {
		refs = append(refs, Read(l, o))
	}
	if err := l.Run(ctx); err != nil {
		return err
	}
	for _, r := range refs {
		if !r.Found() {
			continue
		}
		st := r.Edit()
		st.SetBlock(person, false)
		st.SetBlockedBy(person, false)
		st.SetMute(person, time.Time{}, false)
		if err := r.Save(tx); err != nil {
			return err
		}
	}
	return nil
}

// Ref is a person's state as a lookup read it; in a transaction, the
// state to change and save.
type Ref struct {
	ref   store.Ref
	user  string
	s     State
	dirty bool
}

// Read adds user's state to a lookup. A nil Ref (no viewer) knows nothing.
func Read(l *store.Lookup, user string) *Ref {
	r := &Ref{user: user}
	r.ref = l.Add(Key(l.DB(), user), &r.s)
	return r
}

// KnowsPeople reports whether the state answers Hides, so no block or
// mute need be read by key.
func (r *Ref) KnowsPeople() bool {
	return r != nil && r.ref.Found() && !r.s.Overflow
}

// Blocked reports whether the owner blocks person or person blocks the
// owner. Only for a state that KnowsPeople.
func (r *Ref) Blocked(person string) bool {
	return slices.Contains(r.s.Blocks, person) || slices.Contains(r.s.BlockedBy, person)
}

// Mutes reports whether the owner mutes person at now. Only for a state
// that KnowsPeople.
func (r *Ref) Mutes(person string, now time.Time) bool {
	return r.s.muteHolds(slices.Index(r.s.Muted, person), now)
}

// muteHolds reports whether the i-th mute (-1: none) holds at now: it has
// no end, or ends after now.
func (s *State) muteHolds(i int, now time.Time) bool {
	return i >= 0 && i < len(s.MutedUntil) && (s.MutedUntil[i] == 0 || now.UnixMilli() < s.MutedUntil[i])
}

// Hides reports whether person's notifications are kept from the owner
// at now: a block either way, or a mute that holds. Only for a state that
// KnowsPeople.
func (r *Ref) Hides(person string, now time.Time) bool {
	return r.Blocked(person) || r.Mutes(person, now)
}

// Hidden returns the people whose notifications are kept from the
// owner at now (Hides), sorted, each once. Only for a state that
// KnowsPeople.
func (r *Ref) Hidden(now time.Time) []string {
	s := &r.s
	out := slices.Concat(s.Blocks, s.BlockedBy)
	for i, p := range s.Muted {
		if s.muteHolds(i, now) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// MutesEnd returns when the first of the owner's mutes that hold at now
// ends (zero: none ends): what Hidden says changes then. Only for a
// state that KnowsPeople.
func (r *Ref) MutesEnd(now time.Time) time.Time {
	var end int64
	for i := range r.s.Muted {
		if !r.s.muteHolds(i, now) {
			continue
		}
		if u := r.s.MutedUntil[i]; u != 0 && (end == 0 || u < end) {
			end = u
		}
	}
	if end == 0 {
		return time.Time{}
	}
	return time.UnixMilli(end)
}

// KnowsActivity reports whether the state answers Likes and Reposts for
// the activity id.
func (r *Ref) KnowsActivity(id string) bool {
	seq, ok := ids.Parse(id)
	return r != nil && r.ref.Found() && ok && seq >= r.s.Since
}

// Likes reports whether the owner likes the activity id; only for one the
// state KnowsActivity.
func (r *Ref) Likes(id string) bool { return slices.Contains(r.s.Liked, id) }

// Reposts reports whether the owner reposts the activity id; only for one
// the state KnowsActivity.
func (r *Ref) Reposts(id string) bool { return slices.Contains(r.s.Reposted, id) }

// KnowsBookmark reports whether the state answers Bookmarks for the
// activity id.
func (r *Ref) KnowsBookmark(id string) bool { return r.KnowsActivity(id) && r.s.BookmarksKept }

// Bookmarks reports whether the owner bookmarks the activity id; only for
// one the state KnowsBookmark.
func (r *Ref) Bookmarks(id string) bool { return slices.Contains(r.s.Bookmarked, id) }

// Filters returns the person's keyword filters as stored (package
// filters reads them); none for a nil Ref.
func (r *Ref) Filters() []string {
	if r == nil || !r.ref.Found() {
		return nil
	}
	return r.s.Filters
}

// Found reports whether the state is there.
func (r *Ref) Found() bool { return r != nil && r.ref.Found() }

// Edit returns the state to change, in the transaction that read it: one
// not there (an account being erased) is made empty. Save writes it.
func (r *Ref) Edit() *State {
	if !r.ref.Found() && !r.dirty {
		r.s = State{}
	}
	r.dirty = true
	return &r.s
}

// Save writes the state with tx's commit, if Edit was called.
func (r *Ref) Save(tx *store.Tx) error {
	if r == nil || !r.dirty {
		return nil
	}
	return tx.Put(Key(tx.DB(), r.user), &r.s)
}

// SetLike records a like of the activity id (on false: its end).
func (s *State) SetLike(id string, on bool) { s.recent(&s.Liked, id, on) }

// SetRepost records a repost of the activity id (on false: its end).
func (s *State) SetRepost(id string, on bool) { s.recent(&s.Reposted, id, on) }

// SetBookmark records a bookmark of the activity id (on false: its end).
func (s *State) SetBookmark(id string, on bool) { s.recent(&s.Bookmarked, id, on) }

// recent adds id to *list, or takes it out; an id older than Since is not
// listed. A list grown past MaxRecent drops its oldest, raising Since past
// them, and the other lists drop what is then older than Since.
func (s *State) recent(list *[]string, id string, on bool) {
	l := slices.DeleteFunc(slices.Clone(*list), func(x string) bool { return x == id })
	seq, ok := ids.Parse(id)
	if on && ok && seq >= s.Since {
		l = append(l, id)
	}
	*list = l
	if len(l) <= MaxRecent {
		return
	}
	seqs := make([]int64, len(l))
	for i, x := range l {
		seqs[i], _ = ids.Parse(x)
	}
	slices.Sort(seqs)
	s.Since = seqs[len(seqs)-MaxRecent] // the oldest kept
	older := func(x string) bool { n, _ := ids.Parse(x); return n < s.Since }
	*list = slices.DeleteFunc(l, older)
	for _, other := range []*[]string{&s.Liked, &s.Reposted, &s.Bookmarked} {
		if other != list {
			*other = slices.DeleteFunc(slices.Clone(*other), older)
		}
	}
}

// SetExclusive records that member is on the owner's exclusive list (on)
// or no longer; it reports false, changing nothing, if that would hold
// more than MaxPeople.
func (s *State) SetExclusive(list, member string, on bool) bool {
	e := list + "/" + member
	had := slices.Contains(s.Exclusive, e)
	switch {
	case on && had, !on && !had:
		return true
	case on && len(s.Exclusive) >= MaxPeople:
		return false
	case on:
		s.Exclusive = append(s.Exclusive, e)
	default:
		s.Exclusive = slices.DeleteFunc(s.Exclusive, func(x string) bool { return x == e })
	}
	return true
}

// Excludes reports whether person is on an exclusive list of the owner's:
// their posts leave the owner's home.
func (r *Ref) Excludes(person string) bool {
	if r == nil || !r.ref.Found() {
		return false
	}
	return slices.ContainsFunc(r.s.Exclusive, func(e string) bool { return strings.HasSuffix(e, "/"+person) })
}

// SetDomain records that the owner blocks domain (on false: no longer);
// it reports false, changing nothing, if that would hold more than
// MaxDomains.
func (s *State) SetDomain(domain string, on bool) bool {
	had := slices.Contains(s.Domains, domain)
	switch {
	case on && had, !on && !had:
		return true
	case on && len(s.Domains) >= MaxDomains:
		return false
	case on:
		s.Domains = append(s.Domains, domain)
	default:
		s.Domains = slices.DeleteFunc(slices.Clone(s.Domains), func(x string) bool { return x == domain })
	}
	return true
}

// Domains returns the domains the owner blocks, in the order blocked.
func (r *Ref) Domains() []string {
	if r == nil {
		return nil
	}
	return slices.Clone(r.s.Domains) // none, for a state not found
}

// BlocksDomains reports whether the owner blocks any domain.
func (r *Ref) BlocksDomains() bool { return r != nil && len(r.s.Domains) > 0 }

// BlocksDomainOf reports whether the owner blocks the domain of the
// person named username (a person of another server's, name@domain),
// or a domain it is under (policy.DomainBlocked).
func (r *Ref) BlocksDomainOf(username string) bool {
	if r == nil { // none, for a state not found
		return false
	}
	return policy.DomainBlocked(r.s.Domains, policy.HostOf(username))
}

// SetBlock records that the owner blocks person (on false: no longer).
func (s *State) SetBlock(person string, on bool) { s.Blocks = s.people(s.Blocks, person, on) }

// SetBlockedBy records that person blocks the owner (on false: no longer).
func (s *State) SetBlockedBy(person string, on bool) {
	s.BlockedBy = s.people(s.BlockedBy, person, on)
}

// SetMute records that the owner mutes person until until (zero: no end),
// or, if on is false, no longer.
func (s *State) SetMute(person string, until time.Time, on bool) {
	if s.Overflow {
		return
	}
	if i := slices.Index(s.Muted, person); i >= 0 {
		s.Muted = slices.Delete(slices.Clone(s.Muted), i, i+1)
		if i < len(s.MutedUntil) {
			s.MutedUntil = slices.Delete(slices.Clone(s.MutedUntil), i, i+1)
		}
	}
	if !on {
		return
	}
	if len(s.Muted) >= MaxPeople {
		s.overflow()
		return
	}
	var ms int64
	if !until.IsZero() {
		ms = until.UnixMilli()
	}
	s.Muted, s.MutedUntil = append(s.Muted, person), append(s.MutedUntil, ms)
}

func (s *State) people(list []string, person string, on bool) []string {
	if s.Overflow {
		return nil
	}
	list = slices.DeleteFunc(slices.Clone(list), func(x string) bool { return x == person })
	if !on {
		return list
	}
	if len(list) >= MaxPeople {
		s.overflow()
		return nil
	}
	return append(list, person)
}

func (s *State) overflow() {
	s.Overflow = true
	s.Blocks, s.BlockedBy, s.Muted, s.MutedUntil = nil, nil, nil, nil
}
