// Package conversations owns each person's direct conversations, after
// Mastodon's: a conversation is the direct posts (for the mentioned
// alone) among one set of people, its author and those it mentions, and
// each of them who is a person here has an entry of it, with its newest
// post, the posts it holds and whether they have read it.
//
// Entries are Conversation/{id} under a key of their person
// (Conversations/{userId}, of no entity), so one ancestor query finds a
// person's (to erase them); id names the set of people, the same for
// each of them. An entry's place, c:{userId}/{seq} of its newest post
// (package order), orders a person's list newest first, one range of
// one index; a removed entry has none until a newer post.
//
// A post's job (package activities) adds it to the entries of its people
// in one transaction that reads the post too, so a post deleted first
// is added nowhere, and one added is found by the delete's cleanup
// (Forget), which takes it out again: a post's entries are exact however
// late, twice or out of order the jobs run.
package conversations

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"cloud.google.com/go/datastore"

	"socialstream/internal/derrors"
	"socialstream/internal/ids"
	"socialstream/internal/order"
	"socialstream/internal/paging"
	"socialstream/internal/store"
)

// Kinds: KindConversation entities, under a KindOwner key no entity has.
const (
	KindConversation = "Conversation"
	KindOwner        = "Conversations"
)

// MaxKept is how many posts an entry keeps, newest first: a delete of
// the newest shows the one before, down to this many; an entry whose
// posts are all deleted is gone.
const MaxKept = 20

var ErrNoSuchConversation = derrors.New(derrors.NotFound, "no such conversation")

const placeProp = "place"

// entry is a person's entry of a conversation.
type entry struct {
	// Others are the other people of the conversation.
	Others []string `datastore:"others,noindex"`
	// Kept are its posts' ids, newest first, at most MaxKept (indexed: a
	// delete's cleanup finds the entries that hold its post).
	Kept   []string `datastore:"kept"`
	Unread bool     `datastore:"unread,noindex"`
	// Removed is the seq of the newest post when its person removed it
	// (0: shown): it is shown again once a newer post comes.
	Removed int64 `datastore:"removed,noindex,omitempty"`
	// place is a shown entry's place in its person's list, set before
	// each save (placeOf).
	place string
}

func (e *entry) newest() int64 {
	if len(e.Kept) == 0 {
		return 0
	}
	seq, _ := ids.Parse(e.Kept[0])
	return seq
}

func (e *entry) shown() bool { return len(e.Kept) > 0 && e.newest() > e.Removed }

// Load loads an entry, leaving its place out.
func (e *entry) Load(ps []datastore.Property) error { return order.Load(e, ps, placeProp) }

// Save saves an entry with its place, if shown.
func (e *entry) Save() ([]datastore.Property, error) {
	var places []datastore.Property
	if e.shown() {
		places = append(places, datastore.Property{Name: placeProp, Value: e.place})
	}
	return order.Save(e, places...)
}

// placeOf is the entry's place in user's list.
func (e *entry) placeOf(user string) string { return order.Value(listPrefix(user), e.newest()) }

func listPrefix(user string) string { return "c:" + user }

func ownerKey(db *store.DB, user string) *datastore.Key { return db.NameKey(KindOwner, user, nil) }

func key(db *store.DB, user, id string) *datastore.Key {
	return db.NameKey(KindConversation, id, ownerKey(db, user))
}

// idPattern is what ID makes.
var idPattern = regexp.MustCompile(`^[0-9a-f]{20}$`)

// ID names the conversation of a set of people.
func ID(people []string) string {
	set := slices.Clone(people)
	slices.Sort(set)
	sum := sha256.Sum256([]byte(strings.Join(slices.Compact(set), ",")))
	return hex.EncodeToString(sum[:10])
}

// Post is a direct post, as a conversation takes it.
type Post struct {
	ID     string
	Author string
	// People are its author and those it mentions.
	People []string
}

// Reading is a post's entries, read in a transaction with the post.
type Reading struct {
	post    Post
	id      string
	local   []string
	entries []*entry
	refs    []store.Ref
}

// Read adds to l (in a transaction) the entries of post of those of its
// people who are here (local).
func Read(l *store.Lookup, post Post, local []string) *Reading {
	r := &Reading{post: post, id: ID(post.People), local: local}
	for _, u := range local {
		e := &entry{}
		r.entries = append(r.entries, e)
		r.refs = append(r.refs, l.Add(key(l.DB(), u, r.id), e))
	}
	return r
}

// Add writes, in tx, the post into the entries read: each keeps it in
// order; as the newest, it makes the entry unread for all but its
// author, and shows an entry removed before it. A post kept already
// changes nothing. It returns how many entries it wrote.
func (r *Reading) Add(tx *store.Tx) (int, error) {
	seq, ok := ids.Parse(r.post.ID)
	if !ok {
		return 0, fmt.Errorf("conversations: a post id %q", r.post.ID)
	}
	n := 0
	for i, u := range r.local {
		e := r.entries[i]
		if !r.refs[i].Found() {
			*e = entry{}
			for _, p := range r.post.People {
				if p != u && !slices.Contains(e.Others, p) {
					e.Others = append(e.Others, p)
				}
			}
		}
		if slices.Contains(e.Kept, r.post.ID) || seq <= e.Removed {
			continue
		}
		newest := seq > e.newest()
		e.Kept = append(e.Kept, r.post.ID)
		slices.SortFunc(e.Kept, func(a, b string) int { return ids.Compare(b, a) })
		e.Kept = e.Kept[:min(len(e.Kept), MaxKept)]
		if !slices.Contains(e.Kept, r.post.ID) {
			continue // older than all it keeps
		}
		if newest {
			e.Unread = u != r.post.Author
		}
		e.place = e.placeOf(u)
		if err := tx.Put(key(tx.DB(), u, r.id), e); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// Service lists and changes people's conversations.
type Service struct {
	db *store.DB
}

// New returns a Service.
func New(db *store.DB) (*Service, error) {
	if db == nil {
		return nil, errors.New("conversations.New: nil dependency")
	}
	return &Service{db: db}, nil
}

// Conversation is a person's entry of a conversation.
type Conversation struct {
	ID string
	// Others are the other people; Last is the newest post's id; the
	// page's reader has not read it if Unread.
	Others []string
	Last   string
	Unread bool
}

// List returns a page of user's conversations, newest post first, and
// the cursor of the next (the id of the last one's newest post, Mastodon's
// max_id). before, if set, is such an id: the page starts below it.
func (s *Service) List(ctx context.Context, user string, before string, p paging.Request) ([]Conversation, string, error) {
	from := order.Place{}
	if before != "" {
		seq, ok := ids.Parse(before)
		if !ok {
			return nil, "", derrors.New(derrors.InvalidArgument, "max_id must be a status id")
		}
		from.Seq = seq
	}
	q := order.Range(s.db.Query(KindConversation), placeProp, listPrefix(user), 0, from)
	keys, vals, _, more, err := order.Page[entry](ctx, s.db, []*datastore.Query{q}, false, func(_ *datastore.Key, e *entry) order.Place {
		return order.Place{Seq: e.newest()}
	}, p.Count, p.Offset)
	if err != nil {
		return nil, "", fmt.Errorf("conversations.List(%s): %w", user, err)
	}
	out := make([]Conversation, 0, len(keys))
	for i, k := range keys {
		e := vals[i]
		out = append(out, Conversation{ID: k.Name, Others: e.Others, Last: e.Kept[0], Unread: e.Unread})
	}
	next := ""
	if more && len(out) > 0 {
		next = out[len(out)-1].Last
	}
	return out, next, nil
}

// MarkRead marks user's conversation id read.
func (s *Service) MarkRead(ctx context.Context, user, id string) (Conversation, error) {
	return s.change(ctx, user, id, func(e *entry) { e.Unread = false })
}

// Remove hides user's conversation id from their list until a newer
// post comes.
func (s *Service) Remove(ctx context.Context, user, id string) error {
	_, err := s.change(ctx, user, id, func(e *entry) { e.Removed, e.Unread = e.newest(), false })
	return err
}

// change changes user's shown conversation id in a transaction.
func (s *Service) change(ctx context.Context, user, id string, f func(*entry)) (Conversation, error) {
	var out Conversation
	if !idPattern.MatchString(id) {
		return out, ErrNoSuchConversation
	}
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		var e entry
		k := key(s.db, user, id)
		if found, err := tx.Get(k, &e); err != nil {
			return err
		} else if !found || !e.shown() {
			return ErrNoSuchConversation
		}
		f(&e)
		e.place = e.placeOf(user)
		out = Conversation{ID: id, Others: e.Others, Last: e.Kept[0], Unread: e.Unread}
		return tx.Put(k, &e)
	})
	if err != nil && !errors.Is(err, ErrNoSuchConversation) {
		err = fmt.Errorf("conversations: %s's %s: %w", user, id, err)
	}
	return out, err
}

// ForgetActivity takes a deleted post out of every entry that keeps it
// (an entry that keeps no other is deleted), and returns how many it
// changed. It runs once the post is gone: no job adds it after (their
// transactions read it).
func (s *Service) ForgetActivity(ctx context.Context, activity string) (int, error) {
	keys, err := s.db.GetAll(ctx, s.db.Query(KindConversation).FilterField("kept", "=", activity).KeysOnly(), nil)
	if err != nil {
		return 0, fmt.Errorf("conversations.ForgetActivity(%s): %w", activity, err)
	}
	n := 0
	for _, k := range keys {
		err := s.db.Update(ctx, func(tx *store.Tx) error {
			var e entry
			if found, err := tx.Get(k, &e); err != nil || !found {
				return err
			}
			e.Kept = slices.DeleteFunc(e.Kept, func(id string) bool { return id == activity })
			if len(e.Kept) == 0 {
				return tx.Delete(k)
			}
			e.place = e.placeOf(k.Parent.Name)
			return tx.Put(k, &e)
		})
		if err != nil {
			return n, fmt.Errorf("conversations.ForgetActivity(%s): %w", activity, err)
		}
		n++
	}
	return n, nil
}

// Erase deletes up to n of a deleted user's entries, and returns how
// many.
func Erase(ctx context.Context, db *store.DB, user string, n int) (int, error) {
	k, err := db.Drain(ctx, db.Query(KindConversation).Ancestor(ownerKey(db, user)).KeysOnly(), n, 500,
		func(keys []*datastore.Key) error { return db.DeleteMulti(ctx, keys) })
	if err != nil {
		return k, fmt.Errorf("conversations.Erase(%s): %w", user, err)
	}
	return k, nil
}
