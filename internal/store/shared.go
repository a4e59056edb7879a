package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"cloud.google.com/go/datastore"
	"github.com/redis/go-redis/v9"
)

// Shared is the cache tier every instance shares (a Redis server:
// Memorystore on App Engine), under each instance's own cache: what a
// page reads from the Datastore is kept there too, for the TTL, so that
// a page on another instance finds it without a read. An instance's own
// cache keeps what it found there with the time it was first read from
// the Datastore, so the marks of changes drop it as they would have.
//
// A change leaves it as the marks leave the instances: every write of a
// kept kind, once its call returns (committed, failed or neither known),
// leaves a tombstone of each key it wrote, with the time, for longer
// than anything may be kept; an entity found there is taken only if it
// was read from the Datastore SyncMargin or more after its key's
// tombstone, so a read begun before the commit, kept after the
// tombstone, is never taken. Nothing is taken past the TTL. Should a
// tombstone not be written (the instance stopped between its commit
// and the tombstone, or the tier did not answer), what another instance
// kept before the write may show until the TTL is over: the bound at
// worst, as for a mark that is not written again.
//
// The tier is a cache: when it does not answer, a page reads the
// Datastore, and what it would have kept is not kept.
type Shared struct {
	rdb *redis.Client
	log *slog.Logger
	// timeout bounds each call to the tier.
	timeout time.Duration
	// hits and misses count the entities looked for, tombed the
	// tombstones written, failed the calls that did not answer.
	hits, misses, tombed, failed atomic.Int64
}

// sharedTimeout is how long a page waits for the tier before it reads
// the Datastore instead.
const sharedTimeout = 250 * time.Millisecond

// tombLife is how much longer than the TTL a tombstone lives: past the
// life of anything kept before it (a fill comes after its read).
const tombLife = time.Minute

// ParseSharedURL checks the address of a tier: redis://[:password@]host:port[/db],
// or rediss:// over TLS.
func ParseSharedURL(url string) error {
	_, err := redis.ParseURL(url)
	return err
}

// NewShared returns the tier at url (ParseSharedURL's). One that does not
// answer yet is logged, not refused: every instance that writes must
// leave its tombstones there as soon as it answers, and pages read the
// Datastore meanwhile.
func NewShared(ctx context.Context, url string, log *slog.Logger) (*Shared, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("store: the shared cache's address: %w", err)
	}
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = time.Second, sharedTimeout, sharedTimeout
	opt.MaxRetries = 0 // a cache: a page reads the Datastore rather than wait
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Shared{rdb: redis.NewClient(opt), log: log, timeout: sharedTimeout}
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		log.Error("the shared cache does not answer; pages read the Datastore until it does", "addr", opt.Addr, "err", err)
	}
	return s, nil
}

// Close closes the tier's connections.
func (s *Shared) Close() error { return s.rdb.Close() }

// SharedStats are what a tier was asked and answered.
type SharedStats struct{ Hits, Misses, Tombs, Failed int64 }

// Stats returns what s was asked and answered.
func (s *Shared) Stats() SharedStats {
	return SharedStats{s.hits.Load(), s.misses.Load(), s.tombed.Load(), s.failed.Load()}
}

// The tier's keys: an entity's, and its tombstone's.
func sharedKey(name string) string { return "e\x00" + name }
func tombKey(name string) string   { return "t\x00" + name }

// sharedEntry is what the tier keeps of an entity: its properties, and
// when they were read from the Datastore (Unix nanoseconds, on the
// reading instance's clock), kept in encodeEntry's form.
type sharedEntry struct {
	At    int64
	Props datastore.PropertyList
}

// quiet is the client library's logger: what it would print (a dial
// that failed, a pool's retry) the calls' errors say, and Shared logs
// them.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func init() { redis.SetLogger(quiet{}) }

// get returns what the tier keeps of the entities names (cacheKey's),
// each with the time it was read, where it may be taken: read SyncMargin
// or more after its key's tombstone, less than ttl before now. A tier
// that does not answer finds nothing.
func (s *Shared) get(ctx context.Context, names []string, ttl time.Duration, now time.Time) []*sharedEntry {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	keys := make([]string, 0, 2*len(names))
	for _, n := range names {
		keys = append(keys, sharedKey(n), tombKey(n))
	}
	vals, err := s.rdb.MGet(ctx, keys...).Result()
	out := make([]*sharedEntry, len(names))
	if err != nil {
		s.fail("read", err)
		return out
	}
	for i := range names {
		e := s.entry(vals[2*i])
		if e == nil {
			s.misses.Add(1)
			continue
		}
		read := time.Unix(0, e.At)
		if tomb, ok := vals[2*i+1].(string); ok {
			var t int64
			if _, err := fmt.Sscan(tomb, &t); err != nil || read.Before(time.Unix(0, t).Add(SyncMargin)) {
				s.misses.Add(1)
				continue
			}
		}
		if now.Sub(read) >= ttl {
			s.misses.Add(1)
			continue
		}
		s.hits.Add(1)
		out[i] = e
	}
	return out
}

// entry decodes what the tier answered for an entity (nil: none).
func (s *Shared) entry(v any) *sharedEntry {
	str, ok := v.(string)
	if !ok {
		return nil
	}
	at, props, err := decodeEntry([]byte(str))
	if err != nil {
		s.log.Warn("the shared cache holds what this version cannot read; reading the Datastore", "err", err)
		return nil
	}
	return &sharedEntry{At: at, Props: props}
}

// put keeps entities read from the Datastore at, by name, until ttl
// after at.
func (s *Shared) put(ctx context.Context, names []string, props []datastore.PropertyList, at time.Time, ttl time.Duration) {
	life := ttl - time.Since(at)
	if life <= 0 || len(names) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
	defer cancel()
	pipe := s.rdb.Pipeline()
	for i, n := range names {
		b, err := encodeEntry(nil, at.UnixNano(), props[i])
		if err != nil {
			s.log.Warn("an entity the shared cache cannot keep", "key", n, "err", err)
			continue
		}
		pipe.Set(ctx, sharedKey(n), b, life)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		s.fail("write", err)
	}
}

// tomb leaves the tombstones of names, changed by a write whose call
// returned at now, for longer than anything kept may live.
func (s *Shared) tomb(names []string, now time.Time, ttl time.Duration) {
	if len(names) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*s.timeout)
	defer cancel()
	pipe := s.rdb.Pipeline()
	for _, n := range names {
		pipe.Set(ctx, tombKey(n), fmt.Sprint(now.UnixNano()), ttl+tombLife)
		pipe.Unlink(ctx, sharedKey(n))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		s.fail("tombstone", err)
		s.log.Error("a change's tombstones were not written: other instances may show what it changed until the page cache's TTL", "keys", len(names), "err", err)
		return
	}
	s.tombed.Add(int64(len(names)))
}

// fail counts a call the tier did not answer.
func (s *Shared) fail(what string, err error) {
	s.failed.Add(1)
	if !errors.Is(err, context.Canceled) {
		s.log.Warn("the shared cache did not answer; reading the Datastore", "call", what, "err", err)
	}
}
