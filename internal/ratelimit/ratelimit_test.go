package ratelimit

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"socialstream/internal/derrors"
	"socialstream/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

type clock struct{ t time.Time }

func (c *clock) now() time.Time        { return c.t }
func (c *clock) add(d time.Duration)   { c.t = c.t.Add(d) }
func newClock() *clock                 { return &clock{time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }
func rule(q int, w time.Duration) Rule { return Rule{Quota: q, Window: w} }
func local(r Rule, c *clock) *Local    { l := NewLocal("t", r, 10); l.now = c.now; return l }
func shared(t *testing.T, r Rule, c *clock) *Shared {
	s := NewShared(testenv.DB(t), "t", r)
	s.now = c.now
	return s
}

func TestParseRule(t *testing.T) {
	for in, want := range map[string]Rule{"300/5m": rule(300, 5*time.Minute), " 10 / 1h ": rule(10, time.Hour)} {
		if got, err := ParseRule(in); err != nil || got != want {
			t.Errorf("ParseRule(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "300", "0/5m", "-1/5m", "x/5m", "10/5", "10/10ms", "10/"} {
		if _, err := ParseRule(in); err == nil {
			t.Errorf("ParseRule(%q) accepted", in)
		}
	}
}

// A bucket, local or shared, holds Quota units, spends them, refuses when
// empty with the time until the request fits, and refills at Quota/Window.
func TestBuckets(t *testing.T) {
	ctx := context.Background()
	r := rule(10, 100*time.Second) // one unit per 10 s
	c := newClock()
	l := local(r, c)
	s := shared(t, r, c)
	take := map[string]func(key string, cost int) Decision{
		"local": l.Take,
		"shared": func(key string, cost int) Decision {
			d, err := s.Take(ctx, key, cost)
			if err != nil {
				t.Fatal(err)
			}
			return d
		},
	}
	for name, take := range take {
		t.Run(name, func(t *testing.T) {
			d := take("a", 4)
			if !d.Allowed || d.Remaining != 6 || d.Reset != 40*time.Second {
				t.Fatalf("first take: %+v", d)
			}
			if d := take("a", 6); !d.Allowed || d.Remaining != 0 {
				t.Fatalf("emptying take: %+v", d)
			}
			d = take("a", 2)
			if d.Allowed || d.RetryAfter != 20*time.Second || d.Remaining != 0 {
				t.Fatalf("take from an empty bucket: %+v", d)
			}
			if !errors.Is(d.Err(), derrors.RateLimited) {
				t.Errorf("refusal error %v", d.Err())
			}
			if d := take("b", 1); !d.Allowed || d.Remaining != 9 {
				t.Errorf("another key shares the bucket: %+v", d)
			}
			if d := take("a", 11); d.Allowed {
				t.Errorf("more than the quota at once allowed: %+v", d)
			}
			c.add(20 * time.Second)
			if d := take("a", 2); !d.Allowed || d.Remaining != 0 {
				t.Errorf("after the refill: %+v", d)
			}
			c.add(time.Hour)
			if d := take("a", 10); !d.Allowed {
				t.Errorf("a full bucket after a long pause refused the quota: %+v", d)
			}
		})
	}
}

// A unit reserved and given back is there again; the bucket never holds
// more than its quota.
func TestRefund(t *testing.T) {
	c := newClock()
	s := shared(t, rule(2, time.Minute), c)
	ctx := context.Background()
	for i := range 2 {
		if d, err := s.Take(ctx, "k", 1); err != nil || !d.Allowed {
			t.Fatalf("take %d: %+v %v", i, d, err)
		}
	}
	if d, err := s.Take(ctx, "k", 1); err != nil || d.Allowed || d.RetryAfter != 30*time.Second {
		t.Fatalf("take of an empty bucket: %+v %v", d, err)
	}
	if err := s.Refund(ctx, "k", 1); err != nil {
		t.Fatal(err)
	}
	if d, err := s.Take(ctx, "k", 1); err != nil || !d.Allowed || d.Remaining != 0 {
		t.Fatalf("take after a refund: %+v %v", d, err)
	}
	c.add(time.Hour)
	for range 3 {
		if err := s.Refund(ctx, "k", 1); err != nil {
			t.Fatal(err)
		}
	}
	if d, err := s.Take(ctx, "k", 1); err != nil || !d.Allowed || d.Remaining != 1 {
		t.Errorf("take of a full bucket refunded more: %+v %v, want 1 left of 2", d, err)
	}
}

// Takes at once on one bucket cannot both win: thirty of a quota of ten
// let ten through, and a take that fails is no pass.
func TestTakesAtOnceAreExact(t *testing.T) {
	c := newClock()
	r := rule(10, time.Hour)
	db := testenv.DB(t)
	one, two := NewShared(db, "report", r), NewShared(db, "report", r)
	one.now, two.now = c.now, c.now
	var allowed atomic.Int32
	var wg sync.WaitGroup
	for i := range 30 {
		s := []*Shared{one, two}[i%2]
		wg.Go(func() {
			if d, err := s.Take(context.Background(), "alice", 1); err == nil && d.Allowed {
				allowed.Add(1)
			}
		})
	}
	wg.Wait()
	if n := allowed.Load(); n > 10 || n < 1 {
		t.Errorf("%d of 30 takes at once allowed, want at most the quota of 10 (and some)", n)
	}
}

// Two instances share one Datastore bucket: what one spends, the other
// cannot.
func TestSharedAcrossInstances(t *testing.T) {
	c := newClock()
	r := rule(3, time.Hour)
	db := testenv.DB(t)
	one, two := NewShared(db, "login", r), NewShared(db, "login", r)
	one.now, two.now = c.now, c.now
	ctx := context.Background()
	allowed := 0
	for i := 0; i < 6; i++ {
		s := one
		if i%2 == 1 {
			s = two
		}
		d, err := s.Take(ctx, "alice", 1)
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed {
			allowed++
		}
	}
	if allowed != 3 {
		t.Errorf("two instances allowed %d of 6 attempts, want the quota of 3", allowed)
	}
}

func TestHeaders(t *testing.T) {
	h := http.Header{}
	Decision{Policy: "account", Rule: rule(300, 5*time.Minute), Allowed: true, Remaining: 299, Reset: 1500 * time.Millisecond}.SetHeaders(h)
	if got := h.Get("RateLimit-Policy"); got != `"account";q=300;w=300` {
		t.Errorf("RateLimit-Policy %q", got)
	}
	if got := h.Get("RateLimit"); got != `"account";r=299;t=2` {
		t.Errorf("RateLimit %q", got)
	}
	if h.Get("Retry-After") != "" {
		t.Errorf("Retry-After on an allowed request")
	}
	Decision{Policy: "account", Rule: rule(300, 5*time.Minute), RetryAfter: 200 * time.Millisecond}.SetHeaders(h)
	if got := h.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After %q, want 1 (never 0)", got)
	}
}

// BenchmarkLocalTake is the cost a metered request adds: one bucket of
// many keys, taken from in parallel.
func BenchmarkLocalTake(b *testing.B) {
	l := NewLocal("account", Rule{Quota: 1 << 30, Window: time.Second}, localSize)
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = strconv.Itoa(i)
	}
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			l.Take(keys[i%len(keys)], 1)
			i++
		}
	})
}
