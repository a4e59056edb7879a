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
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/accounts"
	"socialstream/internal/blocks"
	"socialstream/internal/filters"
	"socialstream/internal/ids"
	"socialstream/internal/markers"
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
	// Status tells a person who follows the actor with notify of the
	// actor's post (ActivityID).
	Status = "status"
	// Poll tells the voters of a poll, and its author (the actor), that
	// it ended (ActivityID: its post).
	Poll = "poll"
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
	// Withheld: the policy keeps it from its reader, for who did it or
	// what it is about (decided as it is made, and again by Reweigh when
	// those change: withhold.go). Indexed, and stored false too: the
	// unread count counts those not withheld.
	Withheld bool `datastore:"withheld"`
	// Dismissed: its reader dismissed it (dismiss.go). It is kept, read
	// and in no list (it has no place), so that a job's late retry does
	// not make it again, until the pruning after DismissedKept.
	Dismissed bool `datastore:"dismissed,noindex,omitempty"`
	// DismissedAt is when, on a tombstone alone (indexed: the pruning
	// finds those past DismissedKept).
	DismissedAt time.Time `datastore:"dismissedAt,omitempty"`
}

const orderProp = "order"

// Load loads a notification, of this version or an earlier one.
func (n *Notification) Load(ps []datastore.Property) error { return order.Load(n, ps, orderProp) }

// Save saves a notification with its place; a dismissed one has none.
func (n *Notification) Save() ([]datastore.Property, error) {
	if n.Dismissed {
		return datastore.SaveStruct(n)
	}
	return order.Save(n, datastore.Property{Name: orderProp, Value: order.Value(n.UserID, n.Seq)})
}

// newest returns the query of user's notifications newer than since,
// newest first, from a page's place: a range of their places.
func (s *Service) newest(user string, since int64, from order.Place) []*datastore.Query {
	return []*datastore.Query{order.Range(s.db.Query(Kind), orderProp, user, since, from)}
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
	// Posts adds to a lookup the activities ids; the function it returns
	// answers, once the lookup has run, what the policy knows of each
	// found.
	Posts(l *store.Lookup, ids []string) func() map[string]policy.Post
}

// Graph is what notifications read of the follow graph (package graph,
// whose Records implement it).
type Graph interface {
	// Follows adds to a lookup whether follower follows followee: for a
	// limited actor, whose doings notify their followers alone, and a
	// post the policy shows its author's followers alone.
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
	// PruneWindow is how often, at most, one recipient's notifications
	// are pruned to MaxKept; 0 means 10 seconds.
	PruneWindow time.Duration
	// Push, when set, follows notifications on to their readers'
	// devices.
	Push Pusher
}

// Pusher follows notifications on to their readers' devices (package
// push's Ringer).
type Pusher interface {
	// Ring enqueues the deliveries of the notification of event, of type
	// typ, by actor, to the devices of each recipient that want it: ahead
	// of the commit that makes it (ahead), or once it is made.
	Ring(ctx context.Context, event, typ, actor string, recipients []string, ahead bool) error
}

// Service makes and lists notifications.
type Service struct {
	db    *store.DB
	ids   *ids.Generator
	acc   *accounts.Service
	queue queue.Queue
	cfg   Config
	push  Pusher
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
	if cfg.PruneWindow <= 0 {
		cfg.PruneWindow = pruneWindow
	}
	return &Service{db: db, ids: gen, acc: acc, queue: q, cfg: cfg, push: cfg.Push, now: time.Now}, nil
}

var eventID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,400}$`)

// ErrNotYet says a job came before the activity its event is about.
var ErrNotYet = queue.NotYet("the activity of this event")

// prune is the type of the jobs that prune recipients to MaxKept.
const prune = "prune"

// pruneWindow is how often, at most, one recipient's notifications are
// pruned by default (Config.PruneWindow): every pruning job of a window
// has one name.
const pruneWindow = 10 * time.Second

// recipients returns who an event notifies: nobody of their own doing
// (but the author of a poll that ended: its end is no one's doing), no
// one twice.
func (e Event) recipients() []string {
	var out []string
	for _, r := range e.Recipients {
		if (r != e.ActorID || e.Type == Poll) && r != "" && !slices.Contains(out, r) {
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
	window := now.Truncate(s.cfg.PruneWindow).Add(s.cfg.PruneWindow)
	for _, r := range e.recipients() {
		// Named by the window's end to the millisecond: a window may be
		// shorter than a second (Config.PruneWindow).
		p := Event{Type: prune, Recipients: []string{r}, ID: fmt.Sprintf("prune-%s-%d", r, window.UnixMilli())}
		if err := Job.Enqueue(ctx, s.queue, p, window.Sub(now)); err != nil {
			return fmt.Errorf("notifications.Expect(%s): %w", e.ID, err)
		}
	}
	if s.push != nil && e.Type != prune && e.Type != sweep {
		if err := s.push.Ring(ctx, e.ID, e.Type, e.ActorID, e.recipients(), true); err != nil {
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
	// states, read only for an actor of another server, are the
	// recipients' own: whether they block the actor's domain.
	states []*viewer.Ref
	// marks, read by a job only, are the recipients' notifications
	// markers: a notification at or below one is made read.
	marks   []*markers.Ref
	at      time.Time // when the mutes are judged
	checked bool      // by the operation's transaction (PrepareChecked)
	// present, once written, are the recipients whose notification is
	// there: made by the write, or found.
	present []string
	// weighed, when a job reads the post its notifications are about
	// (weighPost), decides whether each is withheld as it is made.
	weighed *weighing
}

// weighPost adds to the lookup of a job's transaction the post p's event
// is about, its author, and the follows the policy needs: each
// notification is made withheld if the policy keeps it from its reader
// (a post taken down, or hidden from them, since it was made). Read in
// the transaction, so a change of the post commits before it (and its
// job then finds the notification) or after (and this one retries).
func (s *Service) weighPost(l *store.Lookup, p *Pending) {
	var actors map[string]*accounts.Record
	if p.actor != nil {
		actors = map[string]*accounts.Record{p.e.ActorID: p.actor}
	}
	p.weighed = s.weigh(l, func() []*Notification {
		out := make([]*Notification, len(p.users))
		for i, u := range p.users {
			out[i] = p.e.notification(u)
		}
		return out
	}, actors)
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

// readStates adds to the lookup, once the actor is read and only if they
// are of another server, each recipient's state: a person who blocks
// the actor's domain is not told.
func (s *Service) readStates(l *store.Lookup, p *Pending) {
	l.Then(func() {
		if p.actor == nil || !p.actor.Remote() {
			return
		}
		p.states = make([]*viewer.Ref, len(p.users))
		for i, u := range p.users {
			p.states[i] = viewer.Read(l, u)
		}
	})
}

// domainBlocked reports whether recipient i blocks the actor's domain.
func (p *Pending) domainBlocked(i int) bool {
	if i >= len(p.states) {
		return false
	}
	actor, ok := p.actor.Person()
	return ok && p.states[i].BlocksDomainOf(actor.PreferredUsername)
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
		s.readStates(l, p)
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
	s.readStates(l, p)
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
	p.present = p.present[:0]
	for i, u := range p.users {
		if p.refs[i].Found() {
			p.present = append(p.present, u)
		}
		if p.actor != nil {
			ties := policy.Ties{Follows: p.follows[i].Found(), Muted: p.muted[i].ActiveAt(p.at)}
			notifies := policy.Notifies
			if p.e.Type == Poll {
				notifies = policy.NotifiesOfEnd
			}
			if !notifies(u, p.actor.Standing().Account(p.e.ActorID, p.actor.Exists()), ties) || p.domainBlocked(i) {
				continue
			}
		}
		if !p.refs[i].Found() && !p.muted[i].ActiveAt(p.at) && (p.checked || p.people[i].Exists() && !p.between[i].Any()) {
			n := p.e.notification(u)
			n.Read = p.marks != nil && p.marks[i].Seq() >= n.Seq
			n.Withheld = p.weighed != nil && p.weighed.withheld(n)
			keys = append(keys, Key(tx.DB(), u, p.e.ID))
			vals = append(vals, n)
			p.present = append(p.present, u)
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
	if e.Type == sweep {
		for _, r := range recipients {
			if err := s.sweepDismissed(ctx, r); err != nil {
				return 0, err
			}
		}
		return 0, nil
	}
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
	made, present, err := s.tell(ctx, e, recipients, activity)
	if err != nil {
		return made, err
	}
	if s.push != nil && len(present) > 0 {
		if err := s.push.Ring(ctx, e.ID, e.Type, e.ActorID, present, false); err != nil {
			return made, fmt.Errorf("notifications.Run(%s): %w", e.ID, err)
		}
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
// many it made, and the recipients whose notification is there.
func (s *Service) tell(ctx context.Context, e Event, recipients []string, activity *datastore.Key) (int, []string, error) {
	made := 0
	var present []string
	for start := 0; start < len(recipients); start += 250 {
		part := e
		part.Recipients = recipients[start:min(start+250, len(recipients))]
		var n int
		var p *Pending
		err := s.db.Update(ctx, func(tx *store.Tx) error {
			l := tx.Lookup()
			p = s.Prepare(l, part)
			if activity != nil {
				s.weighPost(l, p)
			}
			// A job runs late: a notification placed below its reader's
			// marker, which moved past its place meanwhile, is made read.
			p.marks = make([]*markers.Ref, len(p.users))
			for i, u := range p.users {
				p.marks[i] = markers.Read(l, u, markers.NotificationsFeed)
			}
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
			return made, nil, nil // the activity was deleted meanwhile
		}
		if err != nil {
			return made, nil, fmt.Errorf("notifications.Run(%s): %w", e.ID, err)
		}
		made += n
		present = append(present, p.present...)
	}
	return made, present, nil
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
	for _, q := range s.newest(user, 0, order.Place{}) {
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
