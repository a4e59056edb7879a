// Package ratelimit meters requests: token buckets per account and per
// client address in each instance's memory (golang.org/x/time/rate, in a
// bounded LRU), and buckets kept in Datastore for what must be limited
// across every instance of the service (login attempts per username,
// registrations per address), so that a fleet of instances cannot be used
// to multiply attempts.
//
// A Rule is a quota of units per window: the bucket holds Quota units and
// refills at Quota/Window. Requests cost one unit or more (see the API's
// costs). A Decision says what a request may do and renders itself as the
// IETF RateLimit-Policy and RateLimit headers, and Retry-After when the
// request is refused.
//
// Entities: RateLimit/{name}:{key}, the state of one shared bucket as the
// generic cell rate algorithm keeps it (one time), written in a
// transaction, and deleted by a TTL policy once the bucket is full again.
package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"cloud.google.com/go/datastore"
	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/time/rate"

	"socialstream/internal/derrors"
	"socialstream/internal/store"
)

// KindRateLimit is the kind of the shared buckets' state.
const KindRateLimit = "RateLimit"

// Rule is a quota of units per window.
type Rule struct {
	Quota  int
	Window time.Duration
}

// ParseRule reads "300/5m": a quota, a slash, a Go duration.
func ParseRule(s string) (Rule, error) {
	q, w, ok := strings.Cut(s, "/")
	n, err := strconv.Atoi(strings.TrimSpace(q))
	if !ok || err != nil || n < 1 {
		return Rule{}, fmt.Errorf("rate limit %q is not QUOTA/WINDOW (300/5m, say)", s)
	}
	d, err := time.ParseDuration(strings.TrimSpace(w))
	if err != nil || d < time.Second {
		return Rule{}, fmt.Errorf("rate limit %q: the window must be a duration of a second or more", s)
	}
	return Rule{Quota: n, Window: d}, nil
}

func (r Rule) String() string { return fmt.Sprintf("%d/%s", r.Quota, r.Window) }

// interval is the time one unit takes to come back.
func (r Rule) interval() time.Duration { return r.Window / time.Duration(r.Quota) }

// Config is the limits of a service; docs/deploy.md states the defaults.
type Config struct {
	Off      bool // no limits at all (load tests, local stacks)
	Account  Rule // units per authenticated account, per instance
	Address  Rule // units per client address for unauthenticated requests, per instance
	Login    Rule // failed logins per username, across instances
	Register Rule // registrations per client address, across instances
	Upload   Rule // picture uploads per account, across instances
}

// Defaults are Mastodon's published limits for the API (300 requests per 5
// minutes per account and per address), and tighter ones for passwords.
func Defaults() Config {
	return Config{
		Account:  Rule{300, 5 * time.Minute},
		Address:  Rule{300, 5 * time.Minute},
		Login:    Rule{10, 15 * time.Minute},
		Register: Rule{10, time.Hour},
		Upload:   Rule{30, time.Hour},
	}
}

// Validate checks that every rule is set.
func (c Config) Validate() error {
	if c.Off {
		return nil
	}
	for _, r := range []Rule{c.Account, c.Address, c.Login, c.Register, c.Upload} {
		if r.Quota < 1 || r.Window < time.Second {
			return fmt.Errorf("rate limit %s: need a quota of 1 or more per a second or more", r)
		}
	}
	return nil
}

// Decision is what a bucket said of one request.
type Decision struct {
	Policy     string // the bucket's name, as the headers show it
	Rule       Rule
	Allowed    bool
	Remaining  int           // units left after this request
	Reset      time.Duration // until the bucket is full again
	RetryAfter time.Duration // when refused: until the request would fit
}

// SetHeaders writes the decision as the IETF RateLimit-Policy and
// RateLimit headers (draft-ietf-httpapi-ratelimit-headers), and
// Retry-After when the request was refused.
func (d Decision) SetHeaders(h http.Header) {
	h.Set("RateLimit-Policy", fmt.Sprintf("%q;q=%d;w=%d", d.Policy, d.Rule.Quota, seconds(d.Rule.Window)))
	h.Set("RateLimit", fmt.Sprintf("%q;r=%d;t=%d", d.Policy, d.Remaining, seconds(d.Reset)))
	// Mastodon's, which its apps read: the quota, what is left, and when
	// the bucket is full again.
	h.Set("X-RateLimit-Limit", strconv.Itoa(d.Rule.Quota))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(max(0, d.Remaining)))
	h.Set("X-RateLimit-Reset", time.Now().Add(d.Reset).UTC().Format("2006-01-02T15:04:05.000Z"))
	if !d.Allowed {
		h.Set("Retry-After", strconv.Itoa(max(1, seconds(d.RetryAfter))))
	}
}

// Err is the error of a refused request: 429 with a message that says
// when to come back.
func (d Decision) Err() error {
	if d.Allowed {
		return nil
	}
	return derrors.New(derrors.RateLimited, fmt.Sprintf("rate limited (%s %s); retry in %d s", d.Policy, d.Rule, max(1, seconds(d.RetryAfter))))
}

func seconds(d time.Duration) int { return int(math.Ceil(d.Seconds())) }

// Local is a set of token buckets of one rule, one per key, in this
// instance's memory. The least recently used buckets are dropped past
// size; a dropped bucket comes back full, so size must exceed the number
// of keys active within one window.
type Local struct {
	name  string
	rule  Rule
	now   func() time.Time
	mu    sync.Mutex
	cache *lru.Cache[string, *rate.Limiter]
}

// NewLocal returns a Local of rule named name, holding up to size buckets.
func NewLocal(name string, rule Rule, size int) *Local {
	c, err := lru.New[string, *rate.Limiter](size)
	if err != nil {
		panic(err) // size < 1: a programming error
	}
	return &Local{name: name, rule: rule, now: time.Now, cache: c}
}

func (l *Local) bucket(key string) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.cache.Get(key)
	if !ok {
		b = rate.NewLimiter(rate.Every(l.rule.interval()), l.rule.Quota)
		l.cache.Add(key, b)
	}
	return b
}

// Take spends cost units of key's bucket if it holds them.
func (l *Local) Take(key string, cost int) Decision {
	b, now := l.bucket(key), l.now()
	d := Decision{Policy: l.name, Rule: l.rule}
	r := b.ReserveN(now, cost)
	switch {
	case !r.OK(): // more than the bucket ever holds
		d.RetryAfter = l.rule.Window
	case r.DelayFrom(now) > 0:
		d.RetryAfter = r.DelayFrom(now)
		r.CancelAt(now)
	default:
		d.Allowed = true
	}
	return l.fill(d, b.TokensAt(now))
}

func (l *Local) fill(d Decision, tokens float64) Decision {
	d.Remaining = max(0, int(tokens))
	d.Reset = time.Duration((float64(l.rule.Quota) - tokens) * float64(l.rule.interval()))
	return d
}

// Shared is a set of buckets of one rule kept in Datastore, so every
// instance spends from the same one. Its state is the generic cell rate
// algorithm's: the theoretical arrival time (TAT) of the next unit; a
// bucket is full when TAT is past, empty when TAT is a window ahead.
type Shared struct {
	db   *store.DB
	name string
	rule Rule
	now  func() time.Time
	// queue makes this instance's takes of one key wait for each other
	// here (keys share one of its locks by hash), so that only the
	// instances contend for the bucket's entity, not every request: a
	// crowd at once is decided, not aborted.
	queue [64]sync.Mutex
}

// lock holds this instance's lock of key until the function it returns
// is called.
func (s *Shared) lock(key string) func() {
	h := fnv.New32a()
	h.Write([]byte(key))
	mu := &s.queue[h.Sum32()%uint32(len(s.queue))]
	mu.Lock()
	return mu.Unlock
}

type sharedState struct {
	TAT time.Time `datastore:"tat,noindex"`
	// Expires is when the bucket is full again (TAT): from then on the
	// entity says what no entity says, and the Datastore's TTL policy on
	// expires (docs/deploy.md) deletes it.
	Expires time.Time `datastore:"expires,noindex"`
}

// NewShared returns a Shared of rule named name over db.
func NewShared(db *store.DB, name string, rule Rule) *Shared {
	return &Shared{db: db, name: name, rule: rule, now: time.Now}
}

func (s *Shared) key(k string) *datastore.Key {
	return s.db.NameKey(KindRateLimit, s.name+":"+k, nil)
}

// Take spends cost units of key's bucket, in a transaction, if it holds
// them.
func (s *Shared) Take(ctx context.Context, key string, cost int) (Decision, error) {
	defer s.lock(key)()
	var d Decision
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		var st sharedState
		if _, err := tx.Get(s.key(key), &st); err != nil {
			return err
		}
		now := s.now()
		d = s.decide(st.TAT, cost, now)
		if !d.Allowed {
			return nil
		}
		st.TAT = now.Add(d.Reset)
		st.Expires = st.TAT
		return tx.Put(s.key(key), &st)
	})
	if errors.Is(err, derrors.Unavailable) {
		return s.busy(), nil // lost to the others on the bucket until it gave up
	}
	if err != nil {
		return Decision{}, fmt.Errorf("ratelimit.Take(%s): %w", s.name, err)
	}
	return d, nil
}

// Refund gives back cost units that Take spent on key's bucket: for a
// unit reserved before the work it meters, which turned out not to spend
// it (a login whose password was right). The bucket never holds more than
// its quota.
func (s *Shared) Refund(ctx context.Context, key string, cost int) error {
	defer s.lock(key)()
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		var st sharedState
		if ok, err := tx.Get(s.key(key), &st); err != nil || !ok {
			return err
		}
		now := s.now()
		if !st.TAT.After(now) {
			return nil // full already
		}
		st.TAT = st.TAT.Add(-time.Duration(cost) * s.rule.interval())
		st.Expires = st.TAT
		return tx.Put(s.key(key), &st)
	})
	if err != nil {
		return fmt.Errorf("ratelimit.Refund(%s): %w", s.name, err)
	}
	return nil
}

// busy is the decision on a take that could not be made (its transaction
// lost to the others on the same bucket, or the Datastore failed): a
// refusal, to be tried again in a second. A take that fails must never let
// the request through, or a crowd would pass by making takes fail.
func (s *Shared) busy() Decision {
	return Decision{Policy: s.name, Rule: s.rule, RetryAfter: time.Second}
}

// decide applies the algorithm: with TAT at tat, may cost units go at now?
func (s *Shared) decide(tat time.Time, cost int, now time.Time) Decision {
	d := Decision{Policy: s.name, Rule: s.rule}
	if tat.Before(now) {
		tat = now
	}
	after := tat.Sub(now) + time.Duration(cost)*s.rule.interval()
	if after <= s.rule.Window {
		d.Allowed, d.Reset = true, after
	} else {
		d.Reset, d.RetryAfter = tat.Sub(now), after-s.rule.Window
	}
	d.Remaining = int((s.rule.Window - d.Reset) / s.rule.interval())
	return d
}

// Limits are a service's buckets, built from a Config.
type Limits struct {
	Account, Address *Local
	Login, Register  *Shared
	Upload           *Shared
}

// localSize bounds each instance's buckets (about 200 bytes each).
const localSize = 100_000

// New returns the buckets of c over db, or nil when c is off.
func New(db *store.DB, c Config) (*Limits, error) {
	if c.Off {
		return nil, nil
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if db == nil {
		return nil, errors.New("ratelimit.New: nil store")
	}
	return &Limits{
		Account:  NewLocal("account", c.Account, localSize),
		Address:  NewLocal("address", c.Address, localSize),
		Login:    NewShared(db, "login", c.Login),
		Register: NewShared(db, "register", c.Register),
		Upload:   NewShared(db, "upload", c.Upload),
	}, nil
}
