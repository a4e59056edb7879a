// Package trends owns what is trending, after Mastodon's trends: the
// hashtags most people used lately, the posts most people reacted to
// (liked or reposted), and the links most people shared, each counted
// once a person a day, of public posts that are not sensitive, by people
// neither limited nor suspended (the policy's Trending).
//
// Nothing is written by everyone. A person's use of a subject on a day
// is an entity of its own, TrendUse/{subject's day} under a key of the
// person (TrendPeople/{userId}, of no entity), that holds the marks of
// what made it (the post's id, or "like"): the posts' job and the like's
// transaction write it, each only their person's, so the people who use
// a hashtag at once never wait on each other. How many people used a
// subject on a day is a count of one value of one index (the use's s),
// which Datastore counts without reading the uses, one read per 1,000.
//
// Which subjects to count is the candidates': an entity per subject and
// day (TrendCandidate), written when its first use is and again each
// time its count doubles (Bump): a few times a day, however many use it.
// Once an hour, Refresh counts the leading candidates of today and
// yesterday exactly, ranks them by people today plus yesterday's people
// as much as the day has yet to run, and writes one entity a kind, the
// snapshot (TrendSnapshot), which a trends page reads alone. A subject
// trends when a moderator has approved it (TrendReview), unless the
// operator turned review off; a rejected one never does.
//
// Uses and candidates expire eight days on (the Datastore's TTL policy on
// expires deletes them): the history shown is a week's.
package trends

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/derrors"
	"socialstream/internal/store"
)

// Kinds of Datastore entities.
const (
	KindUse       = "TrendUse"
	KindPeople    = "TrendPeople"
	KindCandidate = "TrendCandidate"
	KindReview    = "TrendReview"
	KindSnapshot  = "TrendSnapshot"
)

// Kind is what trends: hashtags, posts or links.
type Kind string

const (
	Tags     Kind = "tags"
	Statuses Kind = "statuses"
	Links    Kind = "links"
)

// Kinds are the kinds of trends, in the order a refresh counts them.
var Kinds = []Kind{Tags, Statuses, Links}

// ParseKind reads a kind's name.
func ParseKind(s string) (Kind, error) {
	if k := Kind(s); slices.Contains(Kinds, k) {
		return k, nil
	}
	return "", derrors.New(derrors.InvalidArgument, "no such kind of trend: tags, statuses or links")
}

// Subject is something that may trend: a hashtag's name, a post's id or
// a link's address.
type Subject struct {
	Kind Kind
	Name string
}

// Like is the mark of a like (a post's own mark is its id).
const Like = "like"

// Days of history kept and shown, today's among them.
const HistoryDays = 7

// keep is how long a use or candidate lasts: the history's days, and one.
const keep = (HistoryDays + 1) * 24 * time.Hour

// Day is a UTC day, counted from 1970-01-01.
type Day int64

// DayOf is the day of t.
func DayOf(t time.Time) Day { return Day(t.Unix() / 86400) }

// Start is the day's first instant.
func (d Day) Start() time.Time { return time.Unix(int64(d)*86400, 0).UTC() }

func (d Day) String() string { return strconv.FormatInt(int64(d), 10) }

func digest(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// ID is what the moderation API calls a subject: a hashtag's name and a
// post's id as they are, a link's a digest of its address.
func (s Subject) ID() string {
	if s.Kind == Links {
		return digest(string(Links), s.Name)
	}
	return s.Name
}

// on is the indexed value of the uses of s on day d: what a count of its
// people matches.
func (s Subject) on(d Day) string { return digest(string(s.Kind), s.Name, d.String()) }

// dayOf is the indexed value of the candidates of kind k on day d.
func dayOf(k Kind, d Day) string { return string(k) + ":" + d.String() }

// use is a person's use of a subject on a day.
type use struct {
	// On is Subject.on: indexed, counted.
	On string `datastore:"on"`
	// Marks are what made it: post ids, or Like. Indexed: a post's job
	// and its delete's cleanup find the uses that hold it.
	Marks   []string  `datastore:"marks"`
	Expires time.Time `datastore:"expires,noindex"`
}

// candidate is a subject that may trend on a day, with a count of its
// people as of its last write.
type candidate struct {
	Day     string    `datastore:"day"`
	N       int64     `datastore:"people"`
	Name    string    `datastore:"name,noindex"`
	Expires time.Time `datastore:"expires,noindex"`
}

func peopleKey(db *store.DB, person string) *datastore.Key {
	return db.NameKey(KindPeople, person, nil)
}

func useKey(db *store.DB, s Subject, person string, d Day) *datastore.Key {
	return db.NameKey(KindUse, s.on(d), peopleKey(db, person))
}

func candidateKey(db *store.DB, s Subject, d Day) *datastore.Key {
	return db.NameKey(KindCandidate, s.on(d), nil)
}

// Use is a person's use of a subject on a day, read in a transaction to
// be marked.
type Use struct {
	key     *datastore.Key
	subject Subject
	day     Day
	u       use
	ref     store.Ref
}

// ReadUse adds to l (in a transaction) person's use of s on day d.
func ReadUse(l *store.Lookup, s Subject, person string, d Day) *Use {
	u := &Use{key: useKey(l.DB(), s, person, d), subject: s, day: d}
	u.ref = l.Add(u.key, &u.u)
	return u
}

// Mark sets (on) or clears mark on the use read, in tx, writing it only
// if that changes it (and deleting it once no mark is left). It reports
// whether the use is new: its subject's candidate should be bumped once
// the transaction commits.
func (u *Use) Mark(tx *store.Tx, mark string, on bool) (bool, error) {
	had := slices.Contains(u.u.Marks, mark)
	switch {
	case had == on:
		return false, nil
	case on:
		fresh := len(u.u.Marks) == 0
		u.u.On, u.u.Expires = u.subject.on(u.day), u.day.Start().Add(keep)
		u.u.Marks = append(u.u.Marks, mark)
		return fresh, tx.Put(u.key, &u.u)
	}
	u.u.Marks = slices.DeleteFunc(u.u.Marks, func(m string) bool { return m == mark })
	if len(u.u.Marks) == 0 {
		return false, tx.Delete(u.key)
	}
	return false, tx.Put(u.key, &u.u)
}

// Marked returns the keys of the uses that hold post's mark.
func Marked(ctx context.Context, db *store.DB, post string) ([]*datastore.Key, error) {
	keys, err := db.GetAll(ctx, db.Query(KindUse).FilterField("marks", "=", post).KeysOnly(), nil)
	if err != nil {
		return nil, fmt.Errorf("trends: the uses of %s: %w", post, err)
	}
	return keys, nil
}

// PostUses are the uses a post marks, read in a transaction: those that
// hold its mark now (found by Marked, before it) and those it should.
type PostUses struct {
	post   string
	want   []*Use
	held   []*datastore.Key
	heldOf []*use
}

// ReadPost adds to l (in a transaction) the uses of post by person on
// day d: held, those Marked found, and those of want.
func ReadPost(l *store.Lookup, post string, held []*datastore.Key, want []Subject, person string, d Day) *PostUses {
	p := &PostUses{post: post}
	for _, s := range want {
		p.want = append(p.want, ReadUse(l, s, person, d))
	}
	for _, k := range held {
		if slices.ContainsFunc(p.want, func(u *Use) bool { return u.key.Equal(k) }) {
			continue
		}
		u := &use{}
		l.Add(k, u)
		p.held, p.heldOf = append(p.held, k), append(p.heldOf, u)
	}
	return p
}

// Write marks, in tx, the uses the post should hold (all of them, unless
// gone: the post is no more, or counts for none), and clears its mark
// from the others. It returns the subjects whose use is new.
func (p *PostUses) Write(tx *store.Tx, gone bool) ([]Subject, error) {
	var fresh []Subject
	for _, u := range p.want {
		isNew, err := u.Mark(tx, p.post, !gone)
		if err != nil {
			return nil, err
		}
		if isNew {
			fresh = append(fresh, u.subject)
		}
	}
	for i, k := range p.held {
		u := p.heldOf[i]
		if !slices.Contains(u.Marks, p.post) {
			continue
		}
		u.Marks = slices.DeleteFunc(u.Marks, func(m string) bool { return m == p.post })
		var err error
		if len(u.Marks) == 0 {
			err = tx.Delete(k)
		} else {
			err = tx.Put(k, u)
		}
		if err != nil {
			return nil, err
		}
	}
	return fresh, nil
}

// People counts the people who used s on day d.
func People(ctx context.Context, db *store.DB, s Subject, d Day) (int64, error) {
	n, err := db.Count(ctx, db.Query(KindUse).FilterField("on", "=", s.on(d)))
	if err != nil {
		return 0, fmt.Errorf("trends: the people of %s %q on day %s: %w", s.Kind, s.Name, d, err)
	}
	return n, nil
}

// Bump keeps the candidate of s on day d in step with its people, after
// a new use of it committed: it counts them, and writes the candidate if
// it is missing, if they doubled, or while they are few. A bump lost (a
// failure after the use's commit) leaves the candidate short until the
// next use's, and the hour's refresh counts exactly what it ranks.
//
// The candidate is the service's own record, written for no one: a
// request's guard (its caller still signed in, store.Guard) does not
// hold its write, which costs no read of the caller's token and account.
func Bump(ctx context.Context, db *store.DB, s Subject, d Day) error {
	ctx = store.Unguarded(ctx)
	n, err := People(ctx, db, s, d)
	if err != nil {
		return err
	}
	k := candidateKey(db, s, d)
	var c candidate
	found, err := db.Get(ctx, k, &c)
	if err != nil {
		return fmt.Errorf("trends: the candidate %s %q: %w", s.Kind, s.Name, err)
	}
	if found && n < 2*c.N && (n <= c.N || n > exactBelow) {
		return nil
	}
	c = candidate{Day: dayOf(s.Kind, d), N: n, Name: s.Name, Expires: d.Start().Add(keep)}
	if err := db.Put(ctx, k, &c); err != nil {
		return fmt.Errorf("trends: the candidate %s %q: %w", s.Kind, s.Name, err)
	}
	return nil
}

// Sampled reports whether the n-th reaction to a post (a like or repost,
// as the post's own counts say, of all days) is worth a Bump: the first,
// then one at each doubling, so that a post liked by thousands bumps its
// candidate a few times, not a thousand, and a post of a few likes half
// the time. A post a day's reactions pass over is still ranked by the
// candidate of the day before, and counted exactly by the refresh.
func Sampled(n int64) bool { return n > 0 && n&(n-1) == 0 }

// exactBelow is how many people a candidate's count follows one by one,
// before it follows their doubling alone.
const exactBelow = 16

// Erase deletes up to n of a deleted person's uses, and returns how many.
func Erase(ctx context.Context, db *store.DB, person string, n int) (int, error) {
	k, err := db.Drain(ctx, db.Query(KindUse).Ancestor(peopleKey(db, person)).KeysOnly(), n, 500,
		func(keys []*datastore.Key) error { return db.DeleteMulti(ctx, keys) })
	if err != nil {
		return k, fmt.Errorf("trends.Erase(%s): %w", person, err)
	}
	return k, nil
}

// ForgetActivity takes a deleted post's mark from the uses that hold it
// (the post's own: its hashtags, link and repost), deleting those left
// with none. A like's mark is its like's to take.
func ForgetActivity(ctx context.Context, db *store.DB, post string) (int, error) {
	keys, err := Marked(ctx, db, post)
	if err != nil || len(keys) == 0 {
		return 0, err
	}
	err = db.Update(ctx, func(tx *store.Tx) error {
		l := tx.Lookup()
		p := ReadPost(l, post, keys, nil, "", 0)
		if err := l.Run(ctx); err != nil {
			return err
		}
		_, err := p.Write(tx, true)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("trends.ForgetActivity(%s): %w", post, err)
	}
	return len(keys), nil
}

// Records forgets the trends' uses of deleted posts (activities'
// Forgetter).
type Records struct{ DB *store.DB }

// ForgetActivity runs ForgetActivity.
func (r Records) ForgetActivity(ctx context.Context, post string) (int, error) {
	return ForgetActivity(ctx, r.DB, post)
}

// encode and decode keep a snapshot's items as JSON, in one unindexed
// property.
func encode(items []Item) ([]byte, error) { return json.Marshal(items) }

func decode(b []byte) ([]Item, error) {
	var items []Item
	if len(b) == 0 {
		return nil, nil
	}
	return items, json.Unmarshal(b, &items)
}
