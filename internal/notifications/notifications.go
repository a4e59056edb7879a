// Package notifications owns notifications: what happened to a user
// (mentions, follows, comments, likes, joins of their groups), as
// Notification/{userId}_{event} entities. Keyed by recipient and event, so
// nothing is made twice, and liking again after an unlike notifies no one
// twice. A user keeps the newest MaxKept.
//
// The operation that causes an event makes its notifications, in one of two
// ways, so that a notification exists if and only if its change committed:
//   - an event with one recipient (a follow, like, comment, join) is
//     written in the operation's own transaction (Prepare, then Write);
//   - a post's mentions, up to activities.MaxMentions, go to a job on the
//     notifications queue (Notify), enqueued before the post commits; the
//     job waits for the activity and gives up on one that never appears.
//
// Pruning to MaxKept is a job too: Expect enqueues it, before the
// operation's commit, one per recipient and ten seconds at most.
package notifications

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/accounts"
	"socialstream/internal/blocks"
	"socialstream/internal/derrors"
	"socialstream/internal/filters"
	"socialstream/internal/ids"
	"socialstream/internal/mutes"
	"socialstream/internal/order"
	"socialstream/internal/policy"
	"socialstream/internal/queue"
	"socialstream/internal/store"
	"socialstream/internal/viewer"
)

// Kind of the entities this package owns.
const Kind = "Notification"

// Types of notification.
const (
	Mention   = "mention"
	Follow    = "follow"
	Comment   = "comment"
	Like      = "like"
	GroupJoin = "group_join"
	// GroupInvite tells a user that a group's owner (the actor) invites
	// them to the group.
	GroupInvite = "group_invite"
	// Repost tells an author that the actor reposted their activity.
	Repost = "repost"
	// Reply tells an author that the actor answered their activity with
	// one of their own (ActivityID: the reply).
	Reply = "reply"
	// FollowRequest tells a person with a locked account that the actor
	// asks to follow them; it goes when the request is decided.
	FollowRequest = "follow_request"
	// Moderation tells a person what moderation did to their account or
	// activities (ActionID names it); it has no actor.
	Moderation = "moderation"
)

// MaxKept is how many notifications a user keeps.
const MaxKept = 200

// MaxReadIDs bounds the ids of one mark-read call.
const MaxReadIDs = 200

// Job makes the notifications of an event, named by the event.
var Job = queue.Job[Event]{Name: "notify", Queue: queue.Notifications,
	TaskName: func(e Event) string { return "n-" + e.ID }}

// Event is something that notifies people: the body of a job.
type Event struct {
	Type       string   `json:"type"`
	ActorID    string   `json:"actorId"`
	Recipients []string `json:"recipients"`
	ActivityID string   `json:"activityId,omitempty"`
	GroupID    string   `json:"groupId,omitempty"`
	// ActionID, on a Moderation notice, is the moderation action it
	// tells of.
	ActionID string `json:"actionId,omitempty"`
	// ID names the event uniquely, e.g. "comment-123"; letters, digits,
	// - and _ only.
	ID string `json:"id"`
	// Seq orders the event among a user's notifications: minted when it
	// is enqueued, so jobs that run in another order keep the order of
	// the events. Zero (an event from an older version) is minted when
	// the job runs.
	Seq int64 `json:"seq,omitempty"`
	// Edit, for the mentions an edit of the activity makes, is that
	// edit's number: the job waits for the activity to have been edited
	// so many times before it reads whom it mentions.
	Edit int `json:"edit,omitempty"`
}

// Notification is the stored notification.
//
// It is stored with its place in its recipient's list (package order):
// order, {userId}/{seq}, whose built-in index lists a user's
// notifications newest first; seq is in no index.
type Notification struct {
	UserID     string    `datastore:"userId"`
	Seq        int64     `datastore:"seq,noindex"`
	Read       bool      `datastore:"read"`
	Type       string    `datastore:"type,noindex"`
	ActorID    string    `datastore:"actorId"`              // indexed: erasing an account deletes what it caused
	ActivityID string    `datastore:"activityId,omitempty"` // indexed: deleting an activity deletes its notifications; none, in no index
	GroupID    string    `datastore:"groupId,noindex"`
	ActionID   string    `datastore:"actionId,noindex,omitempty"`
	Published  time.Time `datastore:"published,noindex"`
	// Withheld: its actor is suspended (set and cleared by the
	// suspension's withholding job, Withhold). Indexed, and stored only
	// when true: an unread count takes away the count of those withheld.
	Withheld bool `datastore:"withheld,omitempty"`
}

const orderProp = "order"

// Load loads a notification, of this version or an earlier one.
func (n *Notification) Load(ps []datastore.Property) error { return order.Load(n, ps, orderProp) }

// Save saves a notification with its place.
func (n *Notification) Save() ([]datastore.Property, error) {
	return order.Save(n, datastore.Property{Name: orderProp, Value: order.Value(n.UserID, n.Seq)})
}

// newest returns the query of user's notifications, newest first, from
// a page's place: a range of their places.
func (s *Service) newest(user string, from order.Place) []*datastore.Query {
	return []*datastore.Query{order.Range(s.db.Query(Kind), orderProp, user, 0, from)}
}

func placeOf(_ *datastore.Key, n *Notification) order.Place { return order.Place{Seq: n.Seq} }

// View is a notification as the API shows it.
type View struct {
	ID         string           `json:"id"`
	Type       string           `json:"type"`
	Actor      *accounts.Person `json:"actor,omitempty"`
	ActivityID string           `json:"activityId,omitempty"`
	GroupID    string           `json:"groupId,omitempty"`
	ActionID   string           `json:"actionId,omitempty"`
	Published  string           `json:"published"`
	Read       bool             `json:"read"`
	// Filtered names the reader's keyword filters that warn of the
	// activity it is about.
	Filtered []filters.Match `json:"filtered,omitempty"`
	// Seq is its place, newest first: Mastodon's face names it so.
	Seq int64 `json:"-"`
}

// Below returns the cursor of the page of user's notifications older
// than the one at seq (Mastodon's max_id).
func Below(user string, seq int64) string {
	return order.EncodeCursor("notifications:"+user, order.Place{Seq: seq})
}

// Activities is what notifications read of activities (package
// activities, whose Records implement it).
type Activities interface {
	// Mentioned reads an activity for a job that writes notifications
	// about it, outside any transaction: its key, whether it exists, whom
	// it mentions and how many times it was edited. None is made about an
	// activity not committed yet (or not yet edited as the event says),
	// and a mention only to someone the activity mentions. The job's
	// commit checks that the activity is still there (store.Tx.Check),
	// without a lock on it: none is made about one deleted, whose cleanup
	// may be over.
	Mentioned(ctx context.Context, id string) (key *datastore.Key, ok bool, mentions []string, edits int, err error)
	// Texts reads the title and body of activities, in one batch lookup:
	// for the reader's keyword filters of the notifications context,
	// read only when one is active.
	Texts(ctx context.Context, reader string, ids []string) (map[string][]string, error)
}

// Graph is what notifications read of the follow graph (package graph,
// whose Records implement it).
type Graph interface {
	// Follows adds to a lookup whether follower follows followee: for a
	// limited actor, whose doings notify their followers alone.
	Follows(l *store.Lookup, follower, followee string) store.Ref
}

// Config tunes a Service.
type Config struct {
	// Activities, when set, are read for the jobs and filters that need
	// them.
	Activities Activities
	// Graph, when set, says who follows a limited actor.
	Graph Graph
	// GiveUpAfter is how long a job waits for the activity it is about
	// to appear; 0 means 2 minutes.
	GiveUpAfter time.Duration
}

// Service makes and lists notifications.
type Service struct {
	db    *store.DB
	ids   *ids.Generator
	acc   *accounts.Service
	queue queue.Queue
	cfg   Config
	now   func() time.Time
}

// New returns a Service.
func New(db *store.DB, gen *ids.Generator, acc *accounts.Service, q queue.Queue, cfg Config) (*Service, error) {
	if db == nil || gen == nil || acc == nil || q == nil {
		return nil, errors.New("notifications.New: nil dependency")
	}
	if cfg.GiveUpAfter == 0 {
		cfg.GiveUpAfter = queue.GiveUpAfter
	}
	return &Service{db: db, ids: gen, acc: acc, queue: q, cfg: cfg, now: time.Now}, nil
}

var eventID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,400}$`)

// ErrNotYet says a job came before the activity its event is about.
var ErrNotYet = queue.NotYet("the activity of this event")

// prune is the type of the jobs that prune recipients to MaxKept.
const prune = "prune"

// pruneWindow is how often, at most, one recipient's notifications are
// pruned: every pruning job of a window has one name.
const pruneWindow = 10 * time.Second

// recipients returns who an event notifies: nobody of their own doing, no
// one twice.
func (e Event) recipients() []string {
	var out []string
	for _, r := range e.Recipients {
		if r != e.ActorID && r != "" && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// Expect is called by an operation that will notify of e, before its
// commit: it checks the event and enqueues the pruning of its recipients'
// oldest notifications, so no recipient keeps more than MaxKept for long.
// Expecting is Expect, as a job to enqueue ahead of a commit
// (queue.Ahead).
func (s *Service) Expecting(e Event) queue.Pending {
	return queue.PendingFunc("expect/"+e.ID, func(ctx context.Context) error { return s.Expect(ctx, e) })
}

func (s *Service) Expect(ctx context.Context, e Event) error {
	if !eventID.MatchString(e.ID) || e.Type == "" {
		return fmt.Errorf("notifications.Expect: bad event %q", e.ID)
	}
	now := s.now()
	window := now.Truncate(pruneWindow).Add(pruneWindow)
	for _, r := range e.recipients() {
		p := Event{Type: prune, Recipients: []string{r}, ID: fmt.Sprintf("prune-%s-%d", r, window.Unix())}
		if err := Job.Enqueue(ctx, s.queue, p, window.Sub(now)); err != nil {
			return fmt.Errorf("notifications.Expect(%s): %w", e.ID, err)
		}
	}
	return nil
}

// Pending is an event's notifications as an operation's transaction read
// them: Write makes those that do not exist yet.
type Pending struct {
	e       Event
	users   []string
	refs    []store.Ref
	people  []*accounts.Record
	between []*blocks.Between
	muted   []*mutes.Ref
	// actor is the one who did what e tells of, and follows whether each
	// recipient follows them (read only for a limited actor).
	actor   *accounts.Record
	follows []store.Ref
	at      time.Time // when the mutes are judged
	checked bool      // by the operation's transaction (PrepareChecked)
}

// readFollows adds to the lookup, once the actor is read and only if they
// are limited, whether each recipient follows them: a limited person's
// doings notify their followers alone.
func (s *Service) readFollows(l *store.Lookup, p *Pending) {
	p.follows = make([]store.Ref, len(p.users))
	l.Then(func() {
		if !p.actor.Standing().Limited || s.cfg.Graph == nil {
			return
		}
		for i, u := range p.users {
			p.follows[i] = s.cfg.Graph.Follows(l, u, p.e.ActorID)
		}
	})
}

// Prepare adds the notifications of e to the lookup of the transaction
// that makes the change e tells of, with each recipient, the blocks
// between them and the actor, and their mute of the actor. Nobody is
// notified of their own doing, and nobody deleted, blocked by the actor,
// blocking them or muting them; nothing of an actor suspended or gone,
// and of a limited actor nothing to whoever does not follow them (see
// policy.Notifies).
func (s *Service) Prepare(l *store.Lookup, e Event) *Pending {
	if e.Seq <= 0 {
		e.Seq = s.ids.Next()
	}
	p := &Pending{e: e, users: e.recipients(), at: s.now()}
	if e.ActorID != "" {
		p.actor = accounts.Read(l, e.ActorID)
		s.readFollows(l, p)
	}
	for _, u := range p.users {
		p.refs = append(p.refs, l.Add(Key(l.DB(), u, e.ID), &Notification{}))
		p.people = append(p.people, accounts.Read(l, u))
		p.between = append(p.between, blocks.ReadBetween(l, u, e.ActorID))
		p.muted = append(p.muted, mutes.Read(l, u, e.ActorID))
	}
	return p
}

// PrepareChecked is Prepare for an operation whose transaction checks
// itself that the actor and the one recipient do not block each other, and
// that the recipient is there or what the event is about would go with
// them: a like or comment, which checks its activity (should its author be
// erased, the activity goes, and its cleanup deletes the notifications
// about it), or a follow (whose transaction reads the followee).
// It adds only the notification and the recipient's mute of the actor
// (rarely written), not the recipient, whom the operation reads itself or
// does not need; actor is the operation's own read of the actor, whose
// standing decides as in Prepare.
func (s *Service) PrepareChecked(l *store.Lookup, e Event, actor *accounts.Record) *Pending {
	if e.Seq <= 0 {
		e.Seq = s.ids.Next()
	}
	p := &Pending{e: e, users: e.recipients(), at: s.now(), checked: true, actor: actor}
	s.readFollows(l, p)
	for _, u := range p.users {
		p.refs = append(p.refs, l.Add(Key(l.DB(), u, e.ID), &Notification{}))
		p.muted = append(p.muted, mutes.Read(l, u, e.ActorID))
	}
	return p
}

// Write makes, in tx, the notifications that the lookup did not find, and
// returns how many.
func (p *Pending) Write(tx *store.Tx) (int, error) {
	var keys []*datastore.Key
	var vals []*Notification
	for i, u := range p.users {
		if p.actor != nil {
			ties := policy.Ties{Follows: p.follows[i].Found(), Muted: p.muted[i].ActiveAt(p.at)}
			if !policy.Notifies(u, p.actor.Standing().Account(p.e.ActorID, p.actor.Exists()), ties) {
				continue
			}
		}
		if !p.refs[i].Found() && !p.muted[i].ActiveAt(p.at) && (p.checked || p.people[i].Exists() && !p.between[i].Any()) {
			keys = append(keys, Key(tx.DB(), u, p.e.ID))
			vals = append(vals, p.e.notification(u))
		}
	}
	return len(keys), tx.PutMulti(keys, vals)
}

func (e Event) notification(user string) *Notification {
	return &Notification{UserID: user, Seq: e.Seq, Type: e.Type, ActorID: e.ActorID,
		ActivityID: e.ActivityID, GroupID: e.GroupID, ActionID: e.ActionID, Published: ids.Time(e.Seq).UTC()}
}

// Notifying is Notify, as a job to enqueue ahead of a commit
// (queue.Ahead).
func (s *Service) Notifying(e Event) queue.Pending {
	return queue.PendingFunc("notify/"+e.ID, func(ctx context.Context) error { return s.Notify(ctx, e) })
}

// Notify enqueues the job that makes an event's notifications (a post's
// mentions), before the commit of the change it tells of.
func (s *Service) Notify(ctx context.Context, e Event) error {
	if len(e.recipients()) == 0 {
		return nil
	}
	if !eventID.MatchString(e.ID) {
		return fmt.Errorf("notifications.Notify: bad event id %q", e.ID)
	}
	if e.Seq == 0 {
		e.Seq = s.ids.Next()
	}
	return Job.Enqueue(ctx, s.queue, e, 0)
}

// Tell makes, in tx, the notification of e for its one recipient, as it
// is: for a notice the service itself gives (Moderation), which no block
// or mute keeps away. Expect must have been called before.
func (s *Service) Tell(tx *store.Tx, e Event) error {
	if len(e.Recipients) != 1 || !eventID.MatchString(e.ID) {
		return fmt.Errorf("notifications.Tell: bad event %q", e.ID)
	}
	if e.Seq <= 0 {
		e.Seq = s.ids.Next()
	}
	return tx.Put(Key(tx.DB(), e.Recipients[0], e.ID), e.notification(e.Recipients[0]))
}

// Forget deletes, in tx, user's notification of the event id, if any: for
// an event that no longer holds (a follow request decided).
func Forget(tx *store.Tx, user, id string) error {
	return tx.Delete(Key(tx.DB(), user, id))
}

// Key returns the key of a recipient's notification of an event.
func Key(db *store.DB, user, event string) *datastore.Key {
	return db.NameKey(Kind, user+"_"+event, nil)
}

// Run runs a job: it makes the notifications of an event that do not
// exist yet, or prunes recipients, and returns how many it made.
func (s *Service) Run(ctx context.Context, e Event) (int, error) {
	if !eventID.MatchString(e.ID) || e.Type == "" {
		return 0, nil // malformed: nothing to do, ever
	}
	recipients := e.recipients()
	if e.Type == prune {
		for _, r := range recipients {
			if err := s.prune(ctx, r); err != nil {
				return 0, err
			}
		}
		return 0, nil
	}
	if e.Seq <= 0 {
		return 0, nil // malformed: Notify gives every event its Seq
	}
	var activity *datastore.Key
	if e.ActivityID != "" && s.cfg.Activities != nil {
		key, ok, mentioned, edits, err := s.cfg.Activities.Mentioned(ctx, e.ActivityID)
		if err != nil {
			return 0, fmt.Errorf("notifications.Run(%s): %w", e.ID, err)
		}
		switch decideTold(key != nil, ok, edits, e.Edit, s.now().Sub(ids.Time(e.Seq)) < s.cfg.GiveUpAfter) {
		case toldLater:
			return 0, ErrNotYet
		case toldNoOne:
			return 0, nil // never committed, or deleted: nothing to tell
		}
		if e.Type == Mention {
			recipients = slices.DeleteFunc(recipients, func(r string) bool { return !slices.Contains(mentioned, r) })
		}
		activity = key
	}
	made, err := s.tell(ctx, e, recipients, activity)
	if err != nil {
		return made, err
	}
	for _, r := range recipients {
		if err := s.prune(ctx, r); err != nil {
			return made, err
		}
	}
	return made, nil
}

type told int

const (
	toldNow   told = iota // the activity is there, as the event knows it
	toldLater             // not yet committed, or edited: wait
	toldNoOne             // never committed, or deleted
)

// decideTold decides whether an event about an activity is told now:
// minted says its id was minted (a key), found that it is there, edits
// how many times it was edited, against the edit the event is of;
// waiting that the event is within GiveUpAfter.
func decideTold(minted, found bool, edits, edit int, waiting bool) told {
	switch {
	case (!found && minted || found && edits < edit) && waiting:
		return toldLater
	case !found:
		return toldNoOne
	}
	return toldNow
}

// tell writes the notifications of e for recipients, 250 a transaction,
// each checking that activity (if any) is still there; it returns how
// many it made.
func (s *Service) tell(ctx context.Context, e Event, recipients []string, activity *datastore.Key) (int, error) {
	made := 0
	for start := 0; start < len(recipients); start += 250 {
		part := e
		part.Recipients = recipients[start:min(start+250, len(recipients))]
		var n int
		err := s.db.Update(ctx, func(tx *store.Tx) error {
			l := tx.Lookup()
			p := s.Prepare(l, part)
			if err := l.Run(ctx); err != nil {
				return err
			}
			var err error
			if n, err = p.Write(tx); err != nil || n == 0 || activity == nil {
				return err
			}
			return tx.Check(activity)
		})
		if errors.Is(err, store.ErrGone) {
			return made, nil // the activity was deleted meanwhile
		}
		if err != nil {
			return made, fmt.Errorf("notifications.Run(%s): %w", e.ID, err)
		}
		made += n
	}
	return made, nil
}

// ForgetActivity deletes every notification that points at an activity,
// once it is deleted, and returns how many it deleted.
func (s *Service) ForgetActivity(ctx context.Context, activity string) (int, error) {
	n, err := s.db.DeleteAll(ctx, s.db.Query(Kind).FilterField("activityId", "=", activity).KeysOnly(), 500)
	if err != nil {
		return n, fmt.Errorf("notifications.ForgetActivity(%s): %w", activity, err)
	}
	return n, nil
}

func (s *Service) prune(ctx context.Context, user string) error {
	var keys []*datastore.Key
	for _, q := range s.newest(user, order.Place{}) {
		ks, err := s.db.GetAll(ctx, q.Offset(MaxKept).KeysOnly(), nil)
		if err != nil {
			return fmt.Errorf("notifications.prune(%s): %w", user, err)
		}
		keys = append(keys, ks...)
	}
	for len(keys) > 0 {
		n := min(len(keys), 500)
		if err := s.db.DeleteMulti(ctx, keys[:n]); err != nil {
			return fmt.Errorf("notifications.prune(%s): %w", user, err)
		}
		keys = keys[n:]
	}
	return nil
}

// List returns a page of user's notifications, newest first, and how many
// are unread.
func (s *Service) List(ctx context.Context, user string, p store.PageRequest) ([]View, int64, string, error) {
	tag := "notifications:" + user // as Below writes it
	from, err := order.DecodeCursor(tag, p.Cursor)
	if err != nil {
		return nil, 0, "", err
	}
	keys, vals, last, more, err := order.Page[Notification](ctx, s.db, s.newest(user, from), false, placeOf, p.Count, p.Offset)
	if err != nil {
		return nil, 0, "", fmt.Errorf("notifications.List(%s): %w", user, err)
	}
	next := ""
	if more {
		next = order.EncodeCursor(tag, last)
	}
	// The actors of the page, with user's own state.
	people, hidden, own, err := s.actors(ctx, user, vals)
	if err != nil {
		return nil, 0, "", err
	}
	unread, _, err := s.unread(ctx, user, own, false)
	if err != nil {
		return nil, 0, "", err
	}
	hide, warn, err := s.filter(ctx, user, own, vals)
	if err != nil {
		return nil, 0, "", err
	}
	out := make([]View, 0, len(vals))
	for i, n := range vals {
		if hidden[n.ActorID] || hide[n.ActivityID] {
			continue // from before a block, or filtered out
		}
		v := View{ID: keys[i].Name, Seq: n.Seq, Type: n.Type, ActivityID: n.ActivityID, GroupID: n.GroupID, ActionID: n.ActionID,
			Published: n.Published.UTC().Format(time.RFC3339), Read: n.Read}
		if a, ok := people[n.ActorID]; ok {
			v.Actor = &a
		}
		v.Filtered = warn[n.ActivityID]
		out = append(out, v)
	}
	return out, unread, next, nil
}

// Unread returns how many of user's notifications are unread, and in how
// many groups (as Grouped groups them), reading the unread ones alone.
func (s *Service) Unread(ctx context.Context, user string) (int64, int, error) {
	l := s.db.Lookup()
	own := viewer.Read(l, user)
	if err := l.Run(ctx); err != nil {
		return 0, 0, fmt.Errorf("notifications.Unread(%s): %w", user, err)
	}
	return s.unread(ctx, user, own, true)
}

// unread counts user's unread notifications, and if groups, the groups
// they fall in. When user's state (own) says no one is hidden from them,
// a count of the index answers (one read per 1,000); else the unread ones
// are read, with their actors' blocks and mutes should the state not know
// them.
func (s *Service) unread(ctx context.Context, user string, own *viewer.Ref, groups bool) (int64, int, error) {
	q := s.db.Query(Kind).FilterField("userId", "=", user).FilterField("read", "=", false)
	now := s.now()
	if !groups && own.KnowsPeople() && own.HidesNone(now) {
		// Two counts of the indexes: the unread, less those of suspended
		// actors (Withheld).
		n, err := s.db.Count(ctx, q)
		if err != nil {
			return 0, 0, fmt.Errorf("notifications.unread(%s): %w", user, err)
		}
		if n == 0 {
			return 0, 0, nil
		}
		w, err := s.db.Count(ctx, q.FilterField("withheld", "=", true))
		if err != nil {
			return 0, 0, fmt.Errorf("notifications.unread(%s): %w", user, err)
		}
		return max(0, n-w), 0, nil
	}
	var ns []Notification
	keys, err := s.db.GetAll(ctx, q, &ns)
	if err != nil {
		return 0, 0, fmt.Errorf("notifications.unread(%s): %w", user, err)
	}
	// A lookup of nothing when the state knows (it makes no call).
	l := s.db.Lookup()
	hide := s.readHidden(l, user, ns, own)
	if err := l.Run(ctx); err != nil {
		return 0, 0, fmt.Errorf("notifications.unread(%s): %w", user, err)
	}
	hidden := hide()
	count, seen := int64(0), map[string]bool{}
	for i, n := range ns {
		if !hidden[n.ActorID] && !n.Withheld {
			count++
			seen[groupKey(keys[i].Name, &n)] = true
		}
	}
	return count, len(seen), nil
}

// MaxGroupActors is how many of a group's actors, the latest first, a
// grouped list shows.
const MaxGroupActors = 3

// Group is notifications of one kind about one thing, after Mastodon's
// grouped notifications: the likes of one activity, its reposts, the
// follows; any other notification is a group of its own.
type Group struct {
	Key        string `json:"groupKey"`
	Type       string `json:"type"`
	ActivityID string `json:"activityId,omitempty"`
	GroupID    string `json:"groupId,omitempty"`
	// Count is how many notifications it holds, of the ones kept.
	Count int `json:"count"`
	// Actors are the latest few, newest first.
	Actors    []accounts.Person `json:"actors"`
	Published string            `json:"published"` // of the newest
	Read      bool              `json:"read"`      // every one of them
	// IDs are its notifications', newest first: mark-read takes them.
	IDs []string `json:"ids"`
	// Newest and Oldest are the places of its newest and oldest
	// notifications: Mastodon's face names them so.
	Newest, Oldest int64 `json:"-"`
}

// groupKey is what groups n (whose key's name is id) with others.
func groupKey(id string, n *Notification) string {
	switch n.Type {
	case Like, Repost:
		return n.Type + ":" + n.ActivityID
	case Follow:
		return Follow
	}
	return "ungrouped:" + id
}

// Grouped returns user's kept notifications as groups, newest group first
// (by its newest notification), from offset, count at most, with how many
// groups there are and how many hold an unread one. Every notification
// kept is read at once (at most MaxKept, and those a pruning job has yet
// to drop): groups span the whole list, so no page can split one.
func (s *Service) Grouped(ctx context.Context, user string, offset, count int) ([]Group, int, int, error) {
	keys, ns, _, _, err := order.Page[Notification](ctx, s.db, s.newest(user, order.Place{}), false, placeOf, 2*MaxKept, 0)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("notifications.Grouped(%s): %w", user, err)
	}
	people, hidden, own, err := s.actors(ctx, user, ns)
	if err != nil {
		return nil, 0, 0, err
	}
	hide, _, err := s.filter(ctx, user, own, ns)
	if err != nil {
		return nil, 0, 0, err
	}
	var groups []*Group
	byKey := map[string]*Group{}
	unread := 0
	for i, n := range ns {
		if hidden[n.ActorID] || hide[n.ActivityID] {
			continue // from before a block or mute, or filtered out
		}
		k := groupKey(keys[i].Name, &n)
		g := byKey[k]
		if g == nil {
			g = &Group{Key: k, Type: n.Type, ActivityID: n.ActivityID, GroupID: n.GroupID,
				Published: n.Published.UTC().Format(time.RFC3339), Read: true, Actors: []accounts.Person{}, Newest: n.Seq}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.Count++
		g.IDs = append(g.IDs, keys[i].Name)
		g.Oldest = n.Seq
		if p, ok := people[n.ActorID]; ok && len(g.Actors) < MaxGroupActors &&
			!slices.ContainsFunc(g.Actors, func(a accounts.Person) bool { return a.ID == p.ID }) {
			g.Actors = append(g.Actors, p)
		}
		if !n.Read {
			if g.Read {
				unread++
			}
			g.Read = false
		}
	}
	out := []Group{}
	for _, g := range groups[min(offset, len(groups)):min(offset+count, len(groups))] {
		out = append(out, *g)
	}
	return out, len(groups), unread, nil
}

// actors reads the actors of user's notifications ns in one lookup, with
// user's own state (package viewer), which says whom user blocks, is
// blocked by or mutes (or, should it not know, the blocks and mutes
// between user and each actor, by key): it returns the actors that exist,
// and those whose notifications from before are not shown.
func (s *Service) actors(ctx context.Context, user string, ns []Notification) (map[string]accounts.Person, map[string]bool, *viewer.Ref, error) {
	l := s.db.Lookup()
	own := viewer.Read(l, user)
	recs := map[string]*accounts.Record{}
	for _, n := range ns {
		if recs[n.ActorID] == nil && n.ActorID != "" {
			recs[n.ActorID] = accounts.Read(l, n.ActorID)
		}
	}
	hide := s.readHidden(l, user, ns, own)
	if err := l.Run(ctx); err != nil {
		return nil, nil, nil, fmt.Errorf("notifications: actors of %s: %w", user, err)
	}
	people := map[string]accounts.Person{}
	hidden := hide()
	for id, r := range recs {
		if p, ok := r.Person(); ok {
			people[id] = p
		}
		if !policy.SeeNotification(user, r.Account(), policy.Ties{}, nil, policy.Account{}, policy.Ties{}) {
			hidden[id] = true // what a suspended or gone person did is not there
		}
	}
	return people, hidden, own, nil
}

// filter applies the reader's keyword filters of the notifications
// context (from their state own) to the activities ns are about (those
// of others: one's own are never filtered): the
// activities a filter hides, and the filters that warn of each. Their
// texts are read, in one batch lookup, only when such a filter is active.
func (s *Service) filter(ctx context.Context, user string, own *viewer.Ref, ns []Notification) (hide map[string]bool, warn map[string][]filters.Match, err error) {
	set := filters.Active(own.Filters(), filters.Notifications, s.now())
	if set == nil || s.cfg.Activities == nil {
		return nil, nil, nil
	}
	var idList []string
	for _, n := range ns {
		if n.ActivityID != "" && !slices.Contains(idList, n.ActivityID) {
			idList = append(idList, n.ActivityID)
		}
	}
	if len(idList) == 0 {
		return nil, nil, nil
	}
	texts, err := s.cfg.Activities.Texts(ctx, user, idList)
	if err != nil {
		return nil, nil, fmt.Errorf("notifications: filtered activities: %w", err)
	}
	hide, warn = map[string]bool{}, map[string][]filters.Match{}
	for id, t := range texts {
		h, w := set.Apply(t...)
		hide[id], warn[id] = h, w
	}
	return hide, warn, nil
}

// readHidden adds to a lookup what tells whose notifications of ns are
// kept from user: nothing more if user's state own knows (read in the same
// lookup, or before), else the blocks and mutes between user and each
// actor. The function it returns answers once the lookup has run.
func (s *Service) readHidden(l *store.Lookup, user string, ns []Notification, own *viewer.Ref) func() map[string]bool {
	between := map[string]*blocks.Between{}
	muted := map[string]*mutes.Ref{}
	add := func() {
		if own.KnowsPeople() {
			return
		}
		for _, n := range ns {
			if between[n.ActorID] == nil && n.ActorID != "" {
				between[n.ActorID], muted[n.ActorID] = blocks.ReadBetween(l, user, n.ActorID), mutes.Read(l, user, n.ActorID)
			}
		}
	}
	if own != nil {
		l.Then(add) // once the state says whether it knows
	} else {
		add()
	}
	return func() map[string]bool {
		hidden := map[string]bool{}
		now := s.now()
		for _, n := range ns {
			if own.KnowsPeople() {
				hidden[n.ActorID] = own.Hides(n.ActorID, now)
			} else if b := between[n.ActorID]; b != nil {
				hidden[n.ActorID] = b.Any() || muted[n.ActorID].ActiveAt(now)
			}
		}
		return hidden
	}
}

// Erase deletes up to n notifications of a deleted user: those they
// received and those they caused. It returns how many it deleted.
func (s *Service) Erase(ctx context.Context, user string, n int) (int, error) {
	deleted := 0
	for _, field := range []string{"userId", "actorId"} {
		k, err := s.db.Drain(ctx, s.db.Query(Kind).FilterField(field, "=", user).KeysOnly(), n-deleted, 500,
			func(keys []*datastore.Key) error { return s.db.DeleteMulti(ctx, keys) })
		if deleted += k; err != nil {
			return deleted, fmt.Errorf("notifications.Erase(%s): %w", user, err)
		}
		if deleted >= n {
			break
		}
	}
	return deleted, nil
}

// MarkRead marks user's notifications read: those with the given ids, or
// all of them. Ids of other users' notifications are ignored.
func (s *Service) MarkRead(ctx context.Context, user string, idList []string, all bool) error {
	var keys []*datastore.Key
	switch {
	case all && len(idList) > 0:
		return derrors.New(derrors.InvalidArgument, `give "ids" or "all", not both`)
	case all:
		var err error
		keys, err = s.db.GetAll(ctx, s.db.Query(Kind).FilterField("userId", "=", user).FilterField("read", "=", false).KeysOnly(), nil)
		if err != nil {
			return fmt.Errorf("notifications.MarkRead: %w", err)
		}
	case len(idList) == 0:
		return derrors.New(derrors.InvalidArgument, `give "ids" (a non-empty list) or "all": true`)
	case len(idList) > MaxReadIDs:
		return derrors.New(derrors.InvalidArgument, fmt.Sprintf("at most %d ids at once", MaxReadIDs))
	default:
		for _, id := range idList {
			if !strings.HasPrefix(id, user+"_") || len(id) > 500 {
				continue // not the caller's
			}
			keys = append(keys, s.db.NameKey(Kind, id, nil))
		}
	}
	if len(keys) == 0 {
		return s.db.CheckGuard(ctx) // nothing to mark: refused all the same
	}
	for start := 0; start < len(keys); start += 250 {
		part := keys[start:min(start+250, len(keys))]
		err := s.db.Update(ctx, func(tx *store.Tx) error {
			l := tx.Lookup()
			dst := make([]Notification, len(part))
			refs := make([]store.Ref, len(part))
			for i, k := range part {
				refs[i] = l.Add(k, &dst[i])
			}
			if err := l.Run(ctx); err != nil {
				return err
			}
			var putKeys []*datastore.Key
			var putVals []*Notification
			for i := range dst {
				if refs[i].Found() && !dst[i].Read && dst[i].UserID == user {
					dst[i].Read = true
					putKeys, putVals = append(putKeys, part[i]), append(putVals, &dst[i])
				}
			}
			return tx.PutMulti(putKeys, putVals)
		})
		if err != nil {
			return fmt.Errorf("notifications.MarkRead: %w", err)
		}
	}
	return nil
}
