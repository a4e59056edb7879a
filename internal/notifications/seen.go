package notifications

import (
	"context"
	"fmt"
	"slices"
	"time"

	"socialstream/internal/accounts"
	"socialstream/internal/blocks"
	"socialstream/internal/mutes"
	"socialstream/internal/policy"
	"socialstream/internal/store"
	"socialstream/internal/viewer"
)

// Which of a reader's notifications they may see is decided once, by the
// policy (policy.SeeNotification), over what one lookup reads: who did
// it, the post it is about, that post's author, and the reader's ties to
// both (blocks either way, domain blocks, mutes, and the follow the
// policy needs for a post its author's followers alone may see). The
// list, a notification by id, the grouped list and a push all ask it;
// the unread counts weigh who did it alone (the index counts them).

// noticeFacts are what deciding a reader's notifications read.
type noticeFacts struct {
	user string
	now  time.Time
	own  *viewer.Ref
	// people are the actors and the posts' authors, but the reader.
	people  map[string]*accounts.Record
	between map[string]*blocks.Between
	muted   map[string]*mutes.Ref
	// posts answers what the policy knows of the posts found, by id;
	// nil when the posts are not weighed (none asked, or no Activities
	// that read them).
	posts   func() map[string]policy.Post
	found   map[string]policy.Post
	follows map[string]store.Ref
}

// readFacts reads in one lookup (through the instance's cache, if
// cached: for a page of the list) what deciding which of ns user may see
// needs: their state, the actors, and, if posts, the posts the
// notifications are about with their authors, each read once.
func (s *Service) readFacts(ctx context.Context, user string, ns []Notification, cached, posts bool) (*noticeFacts, error) {
	l := s.db.Lookup()
	if cached {
		l = s.db.PageLookup()
	}
	f := &noticeFacts{user: user, now: s.now(), own: viewer.Read(l, user), people: map[string]*accounts.Record{},
		between: map[string]*blocks.Between{}, muted: map[string]*mutes.Ref{}, follows: map[string]store.Ref{}}
	var ids []string
	for _, n := range ns {
		f.person(l, n.ActorID)
		if n.ActivityID != "" && !slices.Contains(ids, n.ActivityID) {
			ids = append(ids, n.ActivityID)
		}
	}
	if posts && len(ids) > 0 && s.cfg.Activities != nil {
		f.posts = s.cfg.Activities.Posts(l, ids)
	}
	l.Then(func() {
		if f.posts != nil {
			f.found = f.posts()
			for _, p := range f.found {
				f.person(l, p.Author)
			}
		}
		l.Then(func() { s.readTies(l, f) })
	})
	if err := l.Run(ctx); err != nil {
		return nil, fmt.Errorf("notifications: what %s's notifications need: %w", user, err)
	}
	return f, nil
}

// person adds to l the card of id, once, unless it is the reader's own
// or no one's.
func (f *noticeFacts) person(l *store.Lookup, id string) {
	if id != "" && id != f.user && f.people[id] == nil {
		f.people[id] = accounts.Read(l, id)
	}
}

// readTies adds to l, once the people are read, what the reader's state
// does not answer of their ties to each (blocks and mutes, by key), and
// the reader's follow of each post's author whom the policy needs it of.
func (s *Service) readTies(l *store.Lookup, f *noticeFacts) {
	if !f.own.KnowsPeople() {
		for id := range f.people {
			f.between[id], f.muted[id] = blocks.ReadBetween(l, f.user, id), mutes.Read(l, f.user, id)
		}
	}
	if s.cfg.Graph == nil {
		return
	}
	for _, p := range f.found {
		author := f.account(p.Author)
		if f.follows[p.Author] == (store.Ref{}) && policy.NeedsFollow(f.user, p, author, true) {
			f.follows[p.Author] = s.cfg.Graph.Follows(l, f.user, p.Author)
		}
	}
}

// account is what the policy knows of person id (the reader's own is
// their guard's to check: there).
func (f *noticeFacts) account(id string) policy.Account {
	if id == f.user {
		return policy.Account{ID: id, Exists: true}
	}
	r := f.people[id]
	return r.Standing().Account(id, r.Exists())
}

// ties are the reader's ties to person id: a block either way, or of
// their domain; a mute that holds; the follow read.
func (f *noticeFacts) ties(id string) policy.Ties {
	if id == "" || id == f.user {
		return policy.Ties{}
	}
	t := policy.Ties{Follows: f.follows[id].Found()}
	if f.own.KnowsPeople() {
		t.Blocked, t.Muted = f.own.Blocked(id), f.own.Mutes(id, f.now)
	} else if b := f.between[id]; b != nil {
		t.Blocked, t.Muted = b.Any(), f.muted[id].ActiveAt(f.now)
	}
	if p, ok := f.people[id].Person(); ok && f.own.BlocksDomainOf(p.PreferredUsername) {
		t.Blocked = true
	}
	return t
}

// sees decides whether the reader may see n now (policy.SeeNotification):
// its actor shown to them, and the post it is about, if the posts were
// read, there and seen by them.
func (f *noticeFacts) sees(n *Notification) bool {
	var actor policy.Account
	if n.ActorID != "" {
		actor = f.account(n.ActorID)
	}
	if n.ActivityID == "" || f.posts == nil {
		return policy.SeeNotification(f.user, actor, f.ties(n.ActorID), nil, policy.Account{}, policy.Ties{})
	}
	p, ok := f.found[n.ActivityID]
	if !ok {
		return false // what it is about is gone
	}
	return policy.SeeNotification(f.user, actor, f.ties(n.ActorID), &p, f.account(p.Author), f.ties(p.Author))
}

// actors are the actors of ns that exist, as the views show them.
func (f *noticeFacts) actors(ns []Notification) map[string]accounts.Person {
	out := map[string]accounts.Person{}
	for _, n := range ns {
		if r := f.people[n.ActorID]; r != nil {
			if p, ok := r.Person(); ok {
				out[n.ActorID] = p
			}
		}
	}
	return out
}
