// Package push owns Web Push: the subscriptions of people's devices, one
// per token (PushSubscription/{token id}), and their deliveries. Every
// notification made for a person with subscriptions becomes, ahead of
// its commit, one Cloud Tasks job per subscription that wants its type
// (Ring); the job decides as the notification list does what the reader
// may see, and sends the message encrypted (RFC 8291, aes128gcm), signed
// with the deployment's VAPID key (RFC 8292) and with RFC 8030's headers,
// through the one guarded client (package egress). What it says is the
// face's to render (Config.Render): the Mastodon face's payload, which
// apps decrypt and open as they do Mastodon's.
//
// Entities:
//   - PushSubscription/{token id}: a device's subscription, made with a
//     token (the token's id, its hash, names it): endpoint, keys, the
//     types it wants, its policy, the VAPID key it was made with, the
//     token sealed under that key (the payload carries it).
//   - PushKey/vapid: the deployment's VAPID keyring (keys.go).
package push

import (
	"context"
	"crypto/ecdh"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/accounts"
	"socialstream/internal/derrors"
	"socialstream/internal/ids"
	"socialstream/internal/policy"
	"socialstream/internal/queue"
	"socialstream/internal/store"
)

// KindSubscription is the kind of the subscriptions.
const KindSubscription = "PushSubscription"

// Policies: whose notifications a subscription is sent, by how the
// reader and the notification's actor are tied.
// The policy (package policy) owns them, and decides by them.
const (
	All      = policy.PushAll
	Followed = policy.PushFollowed // those the reader follows
	Follower = policy.PushFollower // those who follow the reader
	None     = policy.PushNone
)

// Limits.
const (
	// MaxEndpoint bounds an endpoint's length.
	MaxEndpoint = 2048
	// MaxPerUser bounds one person's subscriptions (one per token), so a
	// notification rings a bounded number of devices.
	MaxPerUser = 20
	// MaxAlerts bounds the types one subscription names.
	MaxAlerts = 32
)

// Errors.
var (
	ErrNoSubscription = derrors.New(derrors.NotFound, "no push subscription for this token")
	ErrTooMany        = derrors.New(derrors.InvalidArgument, fmt.Sprintf("at most %d push subscriptions a person: delete one first", MaxPerUser))
)

// subscription is the stored subscription.
type subscription struct {
	UserID   string   `datastore:"userId"` // indexed: a reader's subscriptions
	ID       int64    `datastore:"id,noindex"`
	Endpoint string   `datastore:"endpoint,noindex"`
	P256dh   []byte   `datastore:"p256dh,noindex"`
	Auth     []byte   `datastore:"auth,noindex"`
	Alerts   []string `datastore:"alerts,noindex"`
	Policy   string   `datastore:"policy,noindex"`
	// ServerKey is the public half of the VAPID key it was made with:
	// indexed, so a rotation finds whether any subscription still names
	// a key.
	ServerKey string `datastore:"serverKey"`
	// Token is the bearer token it was made with, sealed under ServerKey
	// (Key.seal): Mastodon's payload carries it, and the service keeps
	// no token it could use.
	Token []byte `datastore:"token,noindex"`
	// Origin is the service's URL as the app reached it, that links in
	// the payload start with.
	Origin  string    `datastore:"origin,noindex"`
	Created time.Time `datastore:"created,noindex"`
}

// Subscription is a subscription as the API shows it.
type Subscription struct {
	ID       int64
	Endpoint string
	// Alerts are the notification types it wants (package notifications'
	// names; a name the service never makes is kept, and never rings).
	Alerts    []string
	Policy    string
	ServerKey string
}

func (s *subscription) view() Subscription {
	return Subscription{ID: s.ID, Endpoint: s.Endpoint, Alerts: s.Alerts, Policy: s.Policy, ServerKey: s.ServerKey}
}

// Key returns the key of the subscription made with the token of id
// (accounts.TokenID).
func Key(db *store.DB, tokenID string) *datastore.Key {
	return db.NameKey(KindSubscription, tokenID, nil)
}

// Config tunes a Service.
type Config struct {
	// AllowLoopback lets endpoints be http to a loopback address
	// (WEB_PUSH_ALLOW_LOOPBACK): tests and the local stack alone.
	AllowLoopback bool
	// Render says what a notification's message says; nil: no
	// notification is pushed.
	Render Render
	// Notices, Activities and Graph are what a delivery reads to decide.
	Notices    Notices
	Activities Activities
	Graph      Graph
	// GiveUpAfter is how long a delivery waits for its notification to
	// be committed (0: queue.GiveUpAfter).
	GiveUpAfter time.Duration
}

// Service keeps subscriptions and delivers to them.
type Service struct {
	db   *store.DB
	ids  *ids.Generator
	acc  *accounts.Service
	q    queue.Queue
	keys *Keys
	cfg  Config
	send sender
	now  func() time.Time
}

// New returns a Service.
func New(db *store.DB, gen *ids.Generator, acc *accounts.Service, q queue.Queue, keys *Keys, cfg Config) (*Service, error) {
	if db == nil || gen == nil || acc == nil || q == nil || keys == nil {
		return nil, errors.New("push.New: nil dependency")
	}
	if cfg.GiveUpAfter == 0 {
		cfg.GiveUpAfter = queue.GiveUpAfter
	}
	return &Service{db: db, ids: gen, acc: acc, q: q, keys: keys, cfg: cfg, send: newSender(cfg.AllowLoopback), now: time.Now}, nil
}

// Keys returns the deployment's VAPID keys.
func (s *Service) Keys() *Keys { return s.keys }

// Settings are what a device subscribes with.
type Settings struct {
	Endpoint string
	// P256dh and Auth are the device's keys, base64url (padded or not).
	P256dh, Auth string
	Alerts       []string
	Policy       string // "": All
	// Origin is the service's URL as the app reached it.
	Origin string
}

// Data are the settings a subscription may change after it is made: nil
// leaves one as it is.
type Data struct {
	Alerts *[]string
	Policy *string
}

// decodeKey reads a base64 key in any of the four spellings devices send.
func decodeKey(s string) ([]byte, bool) {
	s = strings.TrimRight(s, "=")
	for _, enc := range []*base64.Encoding{base64.RawURLEncoding, base64.RawStdEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, true
		}
	}
	return nil, false
}

func bad(msg string) error { return derrors.New(derrors.InvalidArgument, msg) }

// checkEndpoint refuses what no delivery would go to: anything but an
// https URL of a host, or with loopback allowed an http URL of a
// loopback host. The delivery checks the address it dials besides.
func (s *Service) checkEndpoint(endpoint string) error {
	if endpoint == "" {
		return bad("subscription[endpoint] is required")
	}
	if len(endpoint) > MaxEndpoint {
		return bad(fmt.Sprintf("subscription[endpoint] is longer than %d", MaxEndpoint))
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" || u.User != nil || u.Fragment != "" || u.Opaque != "" {
		return bad("subscription[endpoint] is not a URL of a push service")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && s.cfg.AllowLoopback && loopbackHost(u.Hostname()):
	default:
		return bad("subscription[endpoint] must be an https URL")
	}
	return nil
}

func loopbackHost(h string) bool {
	return h == "localhost" || strings.HasPrefix(h, "127.") || h == "::1"
}

func checkAlerts(alerts []string) error {
	if len(alerts) > MaxAlerts {
		return bad(fmt.Sprintf("at most %d alerts", MaxAlerts))
	}
	for _, a := range alerts {
		if a == "" || len(a) > 40 {
			return bad("an alert is not a notification type")
		}
	}
	return nil
}

func checkPolicy(p string) error {
	switch p {
	case All, Followed, Follower, None:
		return nil
	}
	return bad("data[policy] must be all, followed, follower or none")
}

// Subscribe makes the subscription of user's token (token, its bearer
// string) from a device's settings, in place of any it had.
func (s *Service) Subscribe(ctx context.Context, user, token string, set Settings) (Subscription, error) {
	if set.Policy == "" {
		set.Policy = All
	}
	if err := errors.Join(s.checkEndpoint(set.Endpoint), checkAlerts(set.Alerts), checkPolicy(set.Policy)); err != nil {
		return Subscription{}, err
	}
	p256dh, ok := decodeKey(set.P256dh)
	if _, err := ecdh.P256().NewPublicKey(p256dh); !ok || err != nil {
		return Subscription{}, bad("subscription[keys][p256dh] is not a P-256 public key (65 bytes, uncompressed, base64url)")
	}
	auth, ok := decodeKey(set.Auth)
	if !ok || len(auth) != 16 {
		return Subscription{}, bad("subscription[keys][auth] is not a 16-byte secret, base64url")
	}
	key, err := s.keys.Current(ctx)
	if err != nil {
		return Subscription{}, err
	}
	sealed, err := key.seal(token)
	if err != nil {
		return Subscription{}, err
	}
	tokenID := accounts.TokenID(token)
	if err := s.makeRoom(ctx, user, tokenID, set.Endpoint); err != nil {
		return Subscription{}, err
	}
	sub := &subscription{UserID: user, ID: s.ids.Next(), Endpoint: set.Endpoint, P256dh: p256dh, Auth: auth,
		Alerts: slices.Compact(slices.Sorted(slices.Values(set.Alerts))), Policy: set.Policy, ServerKey: key.Public,
		Token: sealed, Origin: set.Origin, Created: s.now().UTC()}
	if err := s.db.Put(ctx, Key(s.db, tokenID), sub); err != nil {
		return Subscription{}, fmt.Errorf("push.Subscribe: %w", err)
	}
	return sub.view(), nil
}

// makeRoom makes sure user may have one more subscription than those
// they have besides tokenID's: another token's of the same endpoint
// goes (one device, subscribed again under a new token, is pushed once),
// as do those of tokens that no longer work; if MaxPerUser still work,
// the new one is refused.
func (s *Service) makeRoom(ctx context.Context, user, tokenID, endpoint string) error {
	var subs []subscription
	keys, err := s.db.GetAll(ctx, s.db.Query(KindSubscription).FilterField("userId", "=", user).Limit(MaxPerUser+1), &subs)
	if err != nil {
		return fmt.Errorf("push.Subscribe: %w", err)
	}
	var dead, others []*datastore.Key
	for i, k := range keys {
		switch {
		case k.Name == tokenID:
		case subs[i].Endpoint == endpoint:
			dead = append(dead, k)
		default:
			others = append(others, k)
		}
	}
	if len(others) >= MaxPerUser {
		l := s.db.Lookup()
		tokens := make([]*accounts.TokenRef, len(others))
		for i, k := range others {
			tokens[i] = s.acc.ReadToken(l, k.Name)
		}
		if err := l.Run(ctx); err != nil {
			return fmt.Errorf("push.Subscribe: %w", err)
		}
		working := 0
		for i, k := range others {
			if tokens[i].Works(user) {
				working++
			} else {
				dead = append(dead, k)
			}
		}
		if working >= MaxPerUser {
			return ErrTooMany
		}
	}
	if err := s.db.DeleteMulti(ctx, dead); err != nil {
		return fmt.Errorf("push.Subscribe: %w", err)
	}
	return nil
}

// Get returns the subscription of user's token of id.
func (s *Service) Get(ctx context.Context, user, tokenID string) (Subscription, error) {
	var sub subscription
	ok, err := s.db.Get(ctx, Key(s.db, tokenID), &sub)
	if err != nil {
		return Subscription{}, fmt.Errorf("push.Get: %w", err)
	}
	if !ok || sub.UserID != user {
		return Subscription{}, ErrNoSubscription
	}
	return sub.view(), nil
}

// Update changes what the subscription of user's token of id wants.
func (s *Service) Update(ctx context.Context, user, tokenID string, d Data) (Subscription, error) {
	if d.Alerts != nil {
		if err := checkAlerts(*d.Alerts); err != nil {
			return Subscription{}, err
		}
	}
	if d.Policy != nil {
		if err := checkPolicy(*d.Policy); err != nil {
			return Subscription{}, err
		}
	}
	var sub subscription
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		ok, err := tx.Get(Key(s.db, tokenID), &sub)
		if err != nil {
			return err
		}
		if !ok || sub.UserID != user {
			return ErrNoSubscription
		}
		if d.Alerts != nil {
			sub.Alerts = slices.Compact(slices.Sorted(slices.Values(*d.Alerts)))
		}
		if d.Policy != nil {
			sub.Policy = *d.Policy
		}
		return tx.Put(Key(s.db, tokenID), &sub)
	})
	if err != nil {
		return Subscription{}, fmt.Errorf("push.Update: %w", err)
	}
	return sub.view(), nil
}

// Unsubscribe deletes the subscription of user's token of id, if any.
func (s *Service) Unsubscribe(ctx context.Context, user, tokenID string) error {
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		var sub subscription
		ok, err := tx.Get(Key(s.db, tokenID), &sub)
		if err != nil || !ok || sub.UserID != user {
			return err
		}
		return tx.Delete(Key(s.db, tokenID))
	})
	if err != nil {
		return fmt.Errorf("push.Unsubscribe: %w", err)
	}
	return nil
}

// Erase deletes up to n subscriptions of a deleted person, and returns
// how many it deleted.
func (s *Service) Erase(ctx context.Context, user string, n int) (int, error) {
	k, err := s.db.Drain(ctx, s.db.Query(KindSubscription).FilterField("userId", "=", user).KeysOnly(), n, 500,
		func(keys []*datastore.Key) error { return s.db.DeleteMulti(ctx, keys) })
	if err != nil {
		return k, fmt.Errorf("push.Erase(%s): %w", user, err)
	}
	return k, nil
}
