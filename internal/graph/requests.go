package graph

// Locked accounts, after Mastodon's: a person who locks their account
// decides each follow of them. A follow of a locked person is a request
// (FollowRequest/{requester}_{target}) with a follow_request notification;
// the person approves it (the follow begins then, with its rebuild job and
// no follow notification: they know) or rejects it, and the requester may
// withdraw it (an unfollow). Unlocking enqueues a job that approves what is
// pending. Nothing reaches a requester before the approval: no Follow
// exists, so no copy, rebuild, backfill or visibility check counts them.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/accounts"
	"socialstream/internal/blocks"
	"socialstream/internal/derrors"
	"socialstream/internal/mutes"
	"socialstream/internal/notifications"
	"socialstream/internal/queue"
	"socialstream/internal/store"
	"socialstream/internal/viewer"
)

// KindFollowRequest is the kind of a pending follow request.
const KindFollowRequest = "FollowRequest"

// Request is a pending follow of a locked person. Requester and Target
// are indexed with Created, for the lists of each (newest first); the
// erasure of either deletes it.
type Request struct {
	Requester string    `datastore:"requester"`
	Target    string    `datastore:"target"`
	Created   time.Time `datastore:"created"`
	// CopyLimit is the follow's copyLimit, checked when it was asked: the
	// approval copies so many activities.
	CopyLimit int `datastore:"copyLimit,noindex"`
}

// Outcome is what a follow did.
type Outcome int

const (
	Followed  Outcome = iota // the follow began (or was there)
	Requested                // the person is locked: the follow waits for their approval
)

// ErrNoRequest answers a decision on a request that is not pending.
var ErrNoRequest = derrors.New(derrors.NotFound, "no pending follow request from this person")

// errLockChanged says the followee locked or unlocked between a follow's
// read and its transaction: the follow starts over.
var errLockChanged = errors.New("graph: the followee's lock changed")

// RequestKey returns the key of requester's request to follow target.
func RequestKey(db *store.DB, requester, target string) *datastore.Key {
	return db.NameKey(KindFollowRequest, requester+"_"+target, nil)
}

// requestEvent is the follow_request notification of a request: one per
// pair, deleted when the request is decided or withdrawn.
func requestEvent(requester, target string) notifications.Event {
	return notifications.Event{Type: notifications.FollowRequest, ActorID: requester, Recipients: []string{target},
		ID: fmt.Sprintf("followreq-%s-%s", requester, target)}
}

// endRequest deletes, in tx, a request and its notification.
func endRequest(tx *store.Tx, requester, target string) error {
	db := tx.DB()
	if err := tx.Delete(RequestKey(db, requester, target)); err != nil {
		return err
	}
	return notifications.Forget(tx, target, requestEvent(requester, target).ID)
}

// request records follower's request to follow followee, a locked person,
// with its notification, in one transaction; asking again changes
// nothing. A followee unlocked meanwhile is errLockChanged.
func (s *Service) request(ctx context.Context, follower, followee string, limit int, remote bool) (accounts.Person, Outcome, error) {
	event := requestEvent(follower, followee)
	out := Requested
	expected := []queue.Pending{s.notes.Expecting(event)}
	if remote && s.remote != nil {
		expected = append(expected, s.remote.Asking(follower, followee))
	}
	var jobs queue.Ahead
	err := jobs.Commit(ctx, expected, func() error {
		return s.db.Update(ctx, func(tx *store.Tx) error {
			out = Requested
			l := tx.Lookup()
			exists := l.Add(FollowKey(s.db, follower, followee), &Follow{})
			asked := l.Add(RequestKey(s.db, follower, followee), &Request{})
			from, to := accounts.Read(l, follower), accounts.Read(l, followee)
			blocked := blocks.ReadBetween(l, follower, followee)
			note := s.notes.PrepareChecked(l, event, from)
			if err := l.Run(ctx); err != nil {
				return err
			}
			switch {
			case !from.Exists():
				return accounts.ErrBadToken
			case !to.SeenBy(follower):
				return accounts.ErrNoSuchPerson
			case exists.Found():
				out = Followed
				return nil
			case blocked.Any():
				return blocks.ErrBlocked
			case !to.Standing().Locked:
				return errLockChanged
			case asked.Found():
				return nil
			}
			r := &Request{Requester: follower, Target: followee, Created: s.now().UTC().Truncate(time.Microsecond), CopyLimit: limit}
			if err := tx.Put(RequestKey(s.db, follower, followee), r); err != nil {
				return err
			}
			_, err := note.Write(tx)
			return err
		})
	})
	if err != nil {
		return accounts.Person{}, out, err
	}
	p, err := s.load(ctx, followee)
	return p, out, err
}

// Approve approves requester's pending request to follow target: the
// follow begins, with the copies a follow makes. Approving a follower
// again changes nothing (so that a retry after a commit succeeds); a
// request not pending from someone who does not follow is ErrNoRequest.
func (s *Service) Approve(ctx context.Context, target, requester string) (accounts.Person, error) {
	var r Request
	l := s.db.Lookup()
	asked, follows := l.Add(RequestKey(s.db, requester, target), &r), Follows(l, requester, target)
	if err := l.Run(ctx); err != nil {
		return accounts.Person{}, fmt.Errorf("graph.Approve(%s, %s): %w", target, requester, err)
	}
	if !asked.Found() && !follows.Found() {
		return accounts.Person{}, ErrNoRequest
	} else if !asked.Found() {
		return s.load(ctx, requester) // a follower already
	}
	if _, _, err := s.follow(ctx, requester, target, r.CopyLimit, true); err != nil {
		return accounts.Person{}, err
	}
	return s.load(ctx, requester)
}

// Reject rejects requester's pending request to follow target, if there
// is one.
func (s *Service) Reject(ctx context.Context, target, requester string) error {
	var expected []queue.Pending
	if s.remote != nil {
		expected = append(expected, s.remote.Answering(requester, target, false))
	}
	var jobs queue.Ahead
	if err := jobs.Commit(ctx, expected, func() error { return s.withdraw(ctx, requester, target, false) }); err != nil {
		return fmt.Errorf("graph.Reject(%s, %s): %w", target, requester, err)
	}
	return nil
}

// withdraw ends requester's pending request to follow target, if any.
// For an unfollow, which read no follow before it, a follow found in the
// transaction is errApprovedMeanwhile: the request was approved in
// between, and the follow it began is the unfollow's to end.
func (s *Service) withdraw(ctx context.Context, requester, target string, unfollow bool) error {
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		l := tx.Lookup()
		asked := l.Add(RequestKey(s.db, requester, target), &Request{})
		var follows store.Ref
		if unfollow {
			follows = l.Add(FollowKey(s.db, requester, target), &Follow{})
		}
		if err := l.Run(ctx); err != nil {
			return err
		}
		switch {
		case unfollow && follows.Found():
			return errApprovedMeanwhile
		case !asked.Found():
			return nil
		}
		return endRequest(tx, requester, target)
	})
	if errors.Is(err, errApprovedMeanwhile) {
		return err
	}
	if err != nil {
		return fmt.Errorf("graph.withdraw(%s, %s): %w", requester, target, err)
	}
	return nil
}

// Asked reports whether requester's request to follow target is pending,
// and since when.
func (s *Service) Asked(ctx context.Context, requester, target string) (time.Time, bool, error) {
	var r Request
	ok, err := s.db.Get(ctx, RequestKey(s.db, requester, target), &r)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("graph.Asked: %w", err)
	}
	return r.Created, ok, nil
}

// Pending is a pending request as its lists show it: the other person,
// and since when.
type Pending struct {
	Person string
	Since  time.Time
}

func (r *Request) pending(sent bool) Pending {
	if sent {
		return Pending{Person: r.Target, Since: r.Created}
	}
	return Pending{Person: r.Requester, Since: r.Created}
}

// Requests lists the pending requests to follow user (or, with sent, those
// user made), newest first.
func (s *Service) Requests(ctx context.Context, user string, sent bool, p store.PageRequest) ([]Pending, string, error) {
	field, tag := "target", "requests:"
	if sent {
		field, tag = "requester", "requested:"
	}
	q := s.db.Query(KindFollowRequest).FilterField(field, "=", user).Order("-created")
	_, rs, next, err := store.Page[Request](ctx, s.db, q, tag+user, p)
	if err != nil {
		return nil, "", fmt.Errorf("graph.Requests(%s): %w", user, err)
	}
	out := make([]Pending, len(rs))
	for i := range rs {
		out[i] = rs[i].pending(sent)
	}
	return out, next, nil
}

// Unlocking returns what makes the job that approves, once an unlock
// at at (µs) shows, what the person had pending (UnlockTask): enqueued
// ahead of the unlock's commit by the change of profile that unlocks
// (media.Config.Unlocking).
func Unlocking(q queue.Queue) func(user string, at int64) queue.Pending {
	return func(user string, at int64) queue.Pending {
		return UnlockJob.Pending(q, UnlockTask{User: user, At: at}, 0)
	}
}

// UnlockJob approves, a step at a time, an unlocked person's pending
// requests.
var UnlockJob = queue.Job[UnlockTask]{Name: "unlock", Queue: queue.Rebuild,
	TaskName: func(t UnlockTask) string { return fmt.Sprintf("unlock-%s-%d-%d", t.User, t.At, t.Step) }}

// UnlockTask is one step of the approval of what an unlocked person had
// pending.
type UnlockTask struct {
	User string `json:"user"`
	At   int64  `json:"at"` // the unlock, µs: names the chain
	Step int    `json:"step,omitempty"`
}

// unlockWait is how long an unlock's job waits for the unlock to commit.
const unlockWait = time.Minute

var errUnlockNotYet = queue.NotYet("the unlock of this job")

// unlockBatch is how many requests one step approves.
const unlockBatch = 20

func (s *Service) enqueueUnlock(ctx context.Context, t UnlockTask) error {
	return UnlockJob.Enqueue(ctx, s.queue, t, 0)
}

// Unlocked runs one step of an unlock: unless the person locked again
// since, it approves up to unlockBatch pending requests, and enqueues the
// next step if there may be more. It returns how many it approved.
func (s *Service) Unlocked(ctx context.Context, t UnlockTask) (int, error) {
	p, err := s.load(ctx, t.User)
	if errors.Is(err, accounts.ErrNoSuchPerson) {
		return 0, nil // erased: the erasure deletes the requests
	} else if err != nil {
		return 0, err
	}
	switch st := p.Standing(); {
	case st.Unlocked < t.At && s.now().Sub(time.UnixMicro(t.At)) < unlockWait:
		return 0, errUnlockNotYet // enqueued before the unlock's commit
	case st.Unlocked < t.At:
		return 0, nil // the unlock never committed, or nothing was locked
	case st.Locked:
		return 0, nil // locked again: what is pending waits for them
	}
	q := s.db.Query(KindFollowRequest).FilterField("target", "=", t.User).Order("-created").KeysOnly()
	keys, _, err := s.db.KeysFrom(ctx, q, "", unlockBatch)
	if err != nil {
		return 0, fmt.Errorf("graph.Unlocked(%s): %w", t.User, err)
	}
	n := 0
	for _, k := range keys {
		requester, _, _ := strings.Cut(k.Name, "_")
		_, err := s.Approve(ctx, t.User, requester)
		switch {
		case err == nil:
			n++
		case errors.Is(err, ErrNoRequest):
		case errors.Is(err, accounts.ErrBadToken), errors.Is(err, blocks.ErrBlocked):
			// The requester is gone, or a block came between: the request
			// ends without a follow.
			if err := s.withdraw(ctx, requester, t.User, false); err != nil {
				return n, err
			}
		default:
			return n, fmt.Errorf("graph.Unlocked(%s): %w", t.User, err)
		}
	}
	if len(keys) == unlockBatch {
		t.Step++
		return n, s.enqueueUnlock(ctx, t)
	}
	return n, nil
}

// eraseRequests returns the keys of up to n follow requests user made or
// received.
func eraseRequests(ctx context.Context, db *store.DB, user string, n int) ([]*datastore.Key, error) {
	var out []*datastore.Key
	for _, field := range []string{"requester", "target"} {
		if len(out) >= n {
			break
		}
		keys, _, err := db.KeysFrom(ctx, db.Query(KindFollowRequest).FilterField(field, "=", user).KeysOnly(), "", n-len(out))
		if err != nil {
			return nil, err
		}
		out = append(out, keys...)
	}
	return out, nil
}

// EachRequest calls f with each pending request to follow user (or, with
// sent, each user made), newest first, a page at a time (for an export).
func EachRequest(ctx context.Context, db *store.DB, user string, sent bool, f func(Pending) error) error {
	field := "target"
	if sent {
		field = "requester"
	}
	q := db.Query(KindFollowRequest).FilterField(field, "=", user).Order("-created")
	return store.Each[Request](ctx, db, q, 500, func(_ *datastore.Key, r *Request) error { return f(r.pending(sent)) })
}

// Relation is how user stands with another, both ways: follows, blocks
// and requests to follow.
type Relation struct {
	Following, FollowedBy, Blocking, BlockedBy, Requested, RequestedBy bool
	// Of the follow, if Following: each post tells the user (Notifying);
	// reposts reach their home (ShowingReposts).
	Notifying, ShowingReposts bool
	// Muting: the user mutes them now.
	Muting bool
	// DomainBlocking: they are of another server, of a domain the user
	// blocks (policy.DomainBlocked).
	DomainBlocking bool
}

// Relations reads how user stands with each of others (their cards), in
// one lookup: follows, requests, blocks and mutes both ways, and, when
// one of them is of another server, the domains user blocks.
func (s *Service) Relations(ctx context.Context, user string, others []accounts.Person) ([]Relation, error) {
	type refs struct {
		follows, followed, asked, askedBy store.Ref
		blocks                            *blocks.Between
		muted                             *mutes.Ref
		follow                            Follow
	}
	l := s.db.Lookup()
	rs := make([]refs, len(others))
	for i, p := range others {
		o := p.ID
		rs[i] = refs{followed: Follows(l, o, user),
			asked: l.Add(RequestKey(s.db, user, o), &Request{}), askedBy: l.Add(RequestKey(s.db, o, user), &Request{}),
			blocks: blocks.ReadBetween(l, user, o), muted: mutes.Read(l, user, o)}
		rs[i].follows = l.Add(FollowKey(s.db, user, o), &rs[i].follow)
	}
	var own *viewer.Ref
	if slices.ContainsFunc(others, accounts.Person.Remote) {
		own = viewer.Read(l, user)
	}
	if err := l.Run(ctx); err != nil {
		return nil, fmt.Errorf("graph.Relations(%s): %w", user, err)
	}
	now := s.now()
	out := make([]Relation, len(others))
	for i, r := range rs {
		out[i] = Relation{Following: r.follows.Found(), FollowedBy: r.followed.Found(), Requested: r.asked.Found(), RequestedBy: r.askedBy.Found(),
			Blocking: r.blocks.First(), BlockedBy: r.blocks.Second(),
			Notifying: r.follows.Found() && r.follow.Notify, ShowingReposts: r.follows.Found() && !r.follow.NoReposts,
			Muting: r.muted.ActiveAt(now), DomainBlocking: own.BlocksDomainOf(others[i].PreferredUsername)}
	}
	return out, nil
}
