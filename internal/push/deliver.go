package push

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/SherClockHolmes/webpush-go"

	"socialstream/internal/accounts"
	"socialstream/internal/activities"
	"socialstream/internal/derrors"
	"socialstream/internal/egress"
	"socialstream/internal/ids"
	"socialstream/internal/notifications"
	"socialstream/internal/policy"
	"socialstream/internal/queue"
	"socialstream/internal/store"
)

// TTL is how long a push service keeps a message for a device that is
// away (RFC 8030 section 5.2), counted from the notification: a delivery
// later than that sends nothing.
const TTL = 48 * time.Hour

// Notices is what a delivery reads of notifications (package
// notifications' Service).
type Notices interface {
	Told(ctx context.Context, user, event string) (notifications.View, notifications.Presence, error)
	Hides(ctx context.Context, user, actor string) (bool, error)
}

// Activities is what a delivery reads of the activity a notification is
// about (package activities' Service): as its reader may see it.
type Activities interface {
	Shown(ctx context.Context, viewer string, ids []string) ([]activities.View, error)
}

// Graph is what a delivery reads of the follow graph, for its policy
// (package graph's Records).
type Graph interface {
	Follows(l *store.Lookup, follower, followee string) store.Ref
}

// Notice is a notification to push, as its reader may see it.
type Notice struct {
	Notification notifications.View
	// Activity is what it is about, if anything.
	Activity *activities.View
	// Origin is the service's URL as the reader's app reached it.
	Origin string
	// Token is the bearer token the subscription was made with.
	Token string
}

// Render makes a notice's message, the plaintext a device decrypts; false
// when the face has no name for its type (it is not pushed).
type Render func(Notice) ([]byte, bool)

// DeliverJob is a delivery of one notification to one subscription (and
// each of its waits, named apart).
var DeliverJob = queue.Job[Delivery]{Name: "push", Queue: queue.Push,
	TaskName: func(d Delivery) string {
		name := "push-" + d.Sub[:min(32, len(d.Sub))] + "-" + d.Event
		if d.Ring != "" {
			name += "-" + d.Ring
		}
		if d.Wait > 0 {
			name += "-w" + strconv.Itoa(d.Wait)
		}
		return name
	}}

// Delivery is the body of a delivery job.
type Delivery struct {
	Sub   string `json:"sub"` // the subscription: its token's id
	User  string `json:"user"`
	Event string `json:"event"`
	Type  string `json:"type"`
	Actor string `json:"actor,omitempty"`
	// At is when it was enqueued (Unix seconds): how long it waits for
	// its notification is counted from then.
	At int64 `json:"at"`
	// Ring names the ring ahead of a commit that enqueued it: an event
	// that comes again (a follow request asked again after a refusal, a
	// repost made again) is another notification, rung anew, and must not
	// meet the name of a delivery that found none and ended.
	Ring string `json:"ring,omitempty"`
	// Wait counts the times it found its notification not made yet: each
	// is a task of its own (waitFor), so that waiting for a late commit
	// spends none of the attempts the queue allows for a push service
	// that fails.
	Wait int `json:"wait,omitempty"`
}

// waitFor is how long a delivery waits for its notification after its
// wait-th look: doubling from a second, 30 seconds at most.
func waitFor(wait int) time.Duration { return min(time.Second<<min(wait, 5), 30*time.Second) }

// Ring enqueues the deliveries of the notification of event, of type
// typ, to every subscription of each recipient that wants the type (its
// alerts name it, its policy is not none): ahead of the commit that makes
// it (the delivery then first runs queue.AheadDelay later), or at once. It reads the recipients'
// subscriptions 30 recipients a query: one read for those with none.
func (s *Service) Ring(ctx context.Context, event, typ, actor string, recipients []string, ahead bool) error {
	return Ringer{db: s.db, ids: s.ids, q: s.q, now: s.now}.Ring(ctx, event, typ, actor, recipients, ahead)
}

// Ringer enqueues the deliveries of notifications (Ring): what package
// notifications holds of push, built before either service, which each
// read the other's entities.
type Ringer struct {
	db  *store.DB
	ids *ids.Generator
	q   queue.Queue
	now func() time.Time
}

// NewRinger returns the Ringer of the subscriptions in db.
func NewRinger(db *store.DB, gen *ids.Generator, q queue.Queue) Ringer {
	return Ringer{db: db, ids: gen, q: q, now: time.Now}
}

// Ring is notifications.Pusher: see Service.Ring.
func (s Ringer) Ring(ctx context.Context, event, typ, actor string, recipients []string, ahead bool) error {
	ring := ""
	if ahead {
		ring = s.ids.NextString()
	}
	at := s.now().Unix()
	for start := 0; start < len(recipients); start += MaxRingQuery {
		part := recipients[start:min(start+MaxRingQuery, len(recipients))]
		in := make([]any, len(part))
		for i, r := range part {
			in[i] = r
		}
		var subs []subscription
		keys, err := s.db.GetAll(ctx, s.db.Query(KindSubscription).FilterField("userId", "in", in).Limit(len(part)*MaxPerUser), &subs)
		if err != nil {
			return fmt.Errorf("push.Ring(%s): %w", event, err)
		}
		for i, sub := range subs {
			if !policy.MayPush(sub.Policy, sub.Alerts, typ) {
				continue
			}
			d := Delivery{Sub: keys[i].Name, User: sub.UserID, Event: event, Type: typ, Actor: actor, At: at, Ring: ring}
			if err := DeliverJob.Enqueue(ctx, s.q, d, 0); err != nil {
				return fmt.Errorf("push.Ring(%s): %w", event, err)
			}
		}
	}
	return nil
}

// MaxRingQuery is how many recipients' subscriptions Ring reads in one
// query (an IN filter: Datastore takes 30 values at most).
const MaxRingQuery = 30

// Outcomes of a delivery, for its log line.
const (
	Sent       = "sent"
	Gone       = "gone"        // the subscription is not there, or not for it
	Dropped    = "dropped"     // the subscription was deleted: its token, key or endpoint is no more
	NotWanted  = "not wanted"  // its alerts or policy leave it out
	NotShown   = "not shown"   // its reader may not see it now (dismissed, or of someone hidden from them)
	NotMade    = "not made"    // it never came: given up, or of someone hidden from its reader
	PostHidden = "post hidden" // the post it is about is hidden from its reader now, or gone
	Late       = "late"        // past TTL
	Unnamed    = "unnamed"     // the face has no name for its type
	Refused    = "refused"     // the push service refused it for good (a 4xx but 404, 410, 429)
	Abandoned  = "abandoned"   // the push service kept failing past the retry limit: the subscription went
	Waiting    = "waiting"     // its notification is not committed yet: a later task looks again
	NoReceiver = "no receiver" // its reader's account is gone or suspended
)

// ErrRetry is a push service's answer worth trying again (429, 5xx) or
// one that never came: the queue retries it.
var ErrRetry = derrors.New(derrors.Unavailable, "the push service did not take the message")

// Deliver runs a delivery job: it reads the subscription, its token and
// its reader, and the notification as its reader's list would show it,
// and sends it if all of them still want it sent. It returns what came of
// it.
func (s *Service) Deliver(ctx context.Context, d Delivery) (string, error) {
	l := s.db.Lookup()
	var sub subscription
	found := l.Add(Key(s.db, d.Sub), &sub)
	token := s.acc.ReadToken(l, d.Sub)
	reader := accounts.Read(l, d.User)
	var ties pushTies
	l.Then(func() { ties = s.readTies(l, &sub, d) })
	if err := l.Run(ctx); err != nil {
		return "", fmt.Errorf("push.Deliver: %w", err)
	}
	switch {
	case !found.Found() || sub.UserID != d.User:
		return Gone, nil
	case !token.Works(d.User):
		return Dropped, s.drop(ctx, d.Sub) // revoked, expired or erased: stop at once
	case !reader.Exists() || reader.Standing().IsSuspended():
		return NoReceiver, nil
	case !policy.Pushes(sub.Policy, sub.Alerts, d.Type, ties.of(d)):
		return NotWanted, nil
	}
	key, ok, err := s.keys.Find(ctx, sub.ServerKey)
	if err != nil {
		return "", err
	}
	if !ok {
		return Dropped, s.drop(ctx, d.Sub) // made with a key rotated out
	}
	n, outcome, err := s.notice(ctx, d, &sub)
	if err == nil && outcome == Waiting {
		next := d
		next.Wait++
		err = DeliverJob.Enqueue(ctx, s.q, next, waitFor(d.Wait))
	}
	if err != nil || outcome != "" {
		return outcome, err
	}
	return s.sendNotice(ctx, d, &sub, key, n)
}

// sendNotice renders n for the subscription sub, with the token it was
// made with, and sends it for what is left of its time to live.
func (s *Service) sendNotice(ctx context.Context, d Delivery, sub *subscription, key VAPIDKey, n Notice) (string, error) {
	var err error
	if n.Token, err = key.open(sub.Token); err != nil {
		return Dropped, s.drop(ctx, d.Sub) // a seal no key opens: never deliverable
	}
	var payload []byte
	ok := false
	if s.cfg.Render != nil {
		payload, ok = s.cfg.Render(n)
	}
	if !ok {
		return Unnamed, nil
	}
	published, _ := time.Parse(time.RFC3339, n.Notification.Published)
	ttl := TTL - s.now().Sub(published)
	return s.post(ctx, d, sub, key, payload, ttl, n.Notification.Seq)
}

// notice reads the notification of d as its reader may see it, and
// decides by the subscription's policy: an outcome when it is not sent.
func (s *Service) notice(ctx context.Context, d Delivery, sub *subscription) (Notice, string, error) {
	if s.cfg.Notices == nil {
		return Notice{}, NotShown, nil
	}
	v, p, err := s.cfg.Notices.Told(ctx, d.User, d.Event)
	switch {
	case err != nil:
		return Notice{}, "", err
	case p == notifications.Absent && s.now().Sub(time.Unix(d.At, 0)) < s.cfg.GiveUpAfter:
		// Not made yet, or never to be: one of someone the reader does
		// not hear from (an operation refused for a block, a mention by
		// someone muted) is not waited for.
		if hidden, err := s.cfg.Notices.Hides(ctx, d.User, d.Actor); err != nil || hidden {
			return Notice{}, NotMade, err
		}
		return Notice{}, Waiting, nil
	case p == notifications.Absent:
		return Notice{}, NotMade, nil
	case p != notifications.Shown:
		return Notice{}, NotShown, nil
	}
	if published, err := time.Parse(time.RFC3339, v.Published); err != nil || s.now().Sub(published) >= TTL {
		return Notice{}, Late, nil
	}
	n := Notice{Notification: v, Origin: sub.Origin}
	if v.ActivityID != "" {
		if s.cfg.Activities == nil {
			return Notice{}, NotShown, nil
		}
		views, err := s.cfg.Activities.Shown(ctx, d.User, []string{v.ActivityID})
		if err != nil {
			return Notice{}, "", err
		}
		if len(views) == 0 {
			return Notice{}, PostHidden, nil // what it is about is hidden from its reader now
		}
		n.Activity = &views[0]
	}
	return n, "", nil
}

// pushTies are the follows between a delivery's reader and its actor,
// read for a subscription whose policy weighs them.
type pushTies struct{ follows, followedBy store.Ref }

// readTies adds to l the follows between d's reader and its actor, if
// the subscription sub (read by then) weighs them.
func (s *Service) readTies(l *store.Lookup, sub *subscription, d Delivery) pushTies {
	var t pushTies
	if d.Actor == "" || s.cfg.Graph == nil || !policy.NeedsTies(sub.Policy) {
		return t
	}
	t.follows, t.followedBy = s.cfg.Graph.Follows(l, d.User, d.Actor), s.cfg.Graph.Follows(l, d.Actor, d.User)
	return t
}

// of is the ties as the policy knows them.
func (t pushTies) of(d Delivery) policy.PushTies {
	return policy.PushTies{Actor: d.Actor != "", Follows: t.follows.Found(), FollowedBy: t.followedBy.Found()}
}

// post sends the payload to the subscription's endpoint, and takes its
// answer: 2xx sent; 404 and 410 the subscription is gone (RFC 8030
// section 7.3) and is deleted; 429 and 5xx retried, until the last
// attempt, which deletes it; any other refusal is final.
func (s *Service) post(ctx context.Context, d Delivery, sub *subscription, key VAPIDKey, payload []byte, ttl time.Duration, seq int64) (string, error) {
	status, err := s.send(ctx, message{sub: sub, key: key, payload: payload, ttl: ttl, topic: strconv.FormatInt(seq, 36)})
	switch {
	case errors.Is(err, egress.ErrRefused):
		return Dropped, s.drop(ctx, d.Sub) // an endpoint no delivery may reach
	case err == nil && status >= 200 && status < 300:
		return Sent, nil
	case err == nil && (status == http.StatusNotFound || status == http.StatusGone):
		return Dropped, s.drop(ctx, d.Sub)
	case err == nil && status != http.StatusTooManyRequests && status < 500:
		return Refused + " " + strconv.Itoa(status), nil
	}
	if queue.LastAttemptOf(ctx) {
		return Abandoned, s.drop(ctx, d.Sub)
	}
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrRetry, err)
	}
	return "", fmt.Errorf("%w: status %d", ErrRetry, status)
}

// drop deletes a subscription no delivery may go to any more.
func (s *Service) drop(ctx context.Context, id string) error {
	if err := s.db.Delete(store.Unguarded(ctx), Key(s.db, id)); err != nil {
		return fmt.Errorf("push: dropping a subscription: %w", err)
	}
	return nil
}

func encodeKey(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// message is one push message to send.
type message struct {
	sub     *subscription
	key     VAPIDKey
	payload []byte
	ttl     time.Duration
	topic   string
}

// sender sends a message, and returns the push service's status.
type sender func(ctx context.Context, m message) (int, error)

// newSender returns the sender through the one guarded client: the
// message encrypted (RFC 8291, aes128gcm) and signed (RFC 8292) by
// webpush-go, with RFC 8030's TTL, Urgency and Topic.
func newSender(allowLoopback bool) sender {
	client := egress.New(egress.Config{AllowLoopback: allowLoopback})
	return func(ctx context.Context, m message) (int, error) {
		subscriber := m.sub.Origin
		if u := subscriber; len(u) < 8 || u[:8] != "https://" {
			subscriber = "mailto:push@invalid" // the VAPID sub claim must be https or mailto
		}
		resp, err := webpush.SendNotificationWithContext(ctx, m.payload, &webpush.Subscription{
			Endpoint: m.sub.Endpoint,
			Keys:     webpush.Keys{P256dh: encodeKey(m.sub.P256dh), Auth: encodeKey(m.sub.Auth)},
		}, &webpush.Options{
			HTTPClient:      client,
			Subscriber:      subscriber,
			Topic:           m.topic,
			TTL:             int(max(0, m.ttl/time.Second)),
			Urgency:         webpush.UrgencyNormal,
			VAPIDPublicKey:  m.key.Public,
			VAPIDPrivateKey: m.key.Private(),
		})
		if err != nil {
			return 0, err
		}
		egress.Drain(resp)
		return resp.StatusCode, nil
	}
}
