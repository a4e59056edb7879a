package store

import (
	"context"
	"crypto/rand"
	"fmt"
	"hash/fnv"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"cloud.google.com/go/datastore"
	"golang.org/x/sync/errgroup"
)

// KindChange is the kind of the marks every write of a kind the cache
// keeps, or of one its kept answers are made of, leaves beside it, in
// the same commit: one a commit, naming every key it wrote of the kinds
// kept and every answer it changes, with the time the Datastore took the
// commit. A page on any instance asks for the marks since its instance
// last asked, and its cache drops what they name before it answers from
// it: a change shows on the first page begun after its commit (and the
// cache's Share), on every instance.
const KindChange = "PageChange"

// change is a mark. Its place, At, is its shard's name and its time
// (changeAt), so that the marks are Shards ranges of one built-in index,
// none growing faster than its share of the writes, and an ask reads each
// shard's range after a time. The time is the writing instance's, taken
// before its commit: the commit may show as long after it as the commit
// took (a write whose call took remarkAfter or longer marks again once it
// returns), and instances' clocks may differ by less than SyncMargin
// less remarkAfter.
//
// Names are the keys it marks (Key.String), of its own namespace, and
// the kept answers the commit changes (family/subject, answer.go). A
// commit's marks are one entity (a write, and one read for each ask that
// finds it), as many as markBytes of names take.
type change struct {
	At    string   `datastore:"at"`
	Names []string `datastore:"names,noindex"`
	// Expires lets a TTL policy delete the mark once no cache can hold
	// what it names (docs/deploy.md).
	Expires time.Time `datastore:"expires,noindex"`
}

// changeAt is the place of a mark of name made at t among shards: its
// shard's two digits, a slash and t in microseconds, 16 digits, so that
// the places of a shard sort by time and no shard's range reaches into
// another's ('/' sorts before every digit).
func changeAt(name string, shards int, t time.Time) string {
	return fmt.Sprintf("%02d/%016d", changeShard(name, shards), t.UnixMicro())
}

// changeShard is the shard of the mark of name among shards.
func changeShard(name string, shards int) int {
	h := fnv.New32a()
	h.Write([]byte(name))
	return int(h.Sum32() % uint32(max(shards, 1)))
}

// changeTime is the time of a mark's place, and whether it is one.
func changeTime(at string) (time.Time, bool) {
	_, us, ok := strings.Cut(at, "/")
	n, err := strconv.ParseInt(us, 10, 64)
	if !ok || err != nil {
		return time.Time{}, false
	}
	return time.UnixMicro(n), true
}

const (
	// changeLife is how long a mark is kept: longer than any TTL a cache
	// may have (MaxCacheTTL), so a mark outlives what it names in every
	// cache.
	changeLife = time.Hour
	// remarkAfter is how long a write's call may take before its marks
	// are written again, once it returns (CacheConfig.RemarkAfter's
	// default).
	remarkAfter = time.Second

	// maxMutations is the most mutations one commit takes.
	maxMutations = 500
	// markBytes is the most bytes of names one mark holds: well within
	// an entity's 1 MiB, whatever the keys.
	markBytes = 256 << 10
)

// SyncMargin is how far before its last ask an instance asks again, and
// how long after a change's mark an entity must have been read to be
// kept: more than remarkAfter (how late a commit may show after its
// mark's time) and a clock's distance from the Datastore's.
const SyncMargin = 2 * time.Second

// syncLimit is the most marks one ask reads: past it, the instance
// forgets all it keeps rather than read more.
var syncLimit = 1000

// MaxCacheTTL is the longest a cache may keep an entity: less than a mark
// is kept.
const MaxCacheTTL = 30 * time.Minute

// marks returns the mutations that mark keys changed: of those of kinds
// the DB's cache keeps, each named once, and the answers their writes
// change (as touched says: answerNames), in as few marks as hold them
// (one a namespace, for all but the largest writes). None without a cache, or
// with one that keeps nothing of its own (CacheConfig.SharedOnly).
func (db *DB) marks(keys []*datastore.Key, touched map[string][]string) []*datastore.Mutation {
	c := db.cache
	if c == nil || c.sharedOnly {
		return nil
	}
	type named struct{ ns, name string }
	var all []named
	for _, k := range keys {
		if c.kinds[k.Kind] {
			all = append(all, named{k.Namespace, k.String()})
		}
	}
	for _, a := range c.answerNames(keys, touched) {
		ns, name, _ := strings.Cut(a, "\x00")
		all = append(all, named{ns, name})
	}
	now := c.now()
	var marks []*change
	var markKeys []*datastore.Key
	open := map[string]int{} // the mark being filled, by namespace: its index
	size := map[string]int{}
	seen := map[named]bool{}
	for _, n := range all {
		if seen[n] {
			continue
		}
		seen[n] = true
		i, ok := open[n.ns]
		if !ok || size[n.ns]+len(n.name) > markBytes {
			id := rand.Text()
			i = len(marks)
			marks = append(marks, &change{At: changeAt(id, c.shards, now), Expires: now.Add(changeLife)})
			markKeys = append(markKeys, &datastore.Key{Kind: KindChange, Name: id, Namespace: n.ns})
			open[n.ns], size[n.ns] = i, 0
		}
		marks[i].Names = append(marks[i].Names, n.name)
		size[n.ns] += len(n.name)
	}
	if len(marks) == 0 {
		return nil
	}
	return upserts(markKeys, marks)
}

// mutate commits muts outside a transaction, keys' marks with them: in
// the same commit when they fit in one, else right after it.
func (db *DB) mutate(ctx context.Context, keys []*datastore.Key, muts []*datastore.Mutation, marks []*datastore.Mutation) error {
	start := db.cache.now()
	defer func() { db.remark(ctx, keys, nil, start) }()
	if len(muts)+len(marks) <= maxMutations {
		_, err := db.client.Mutate(ctx, append(muts, marks...)...)
		return mutateErr(err)
	}
	for _, part := range [][]*datastore.Mutation{muts, marks} {
		if err := db.mutateAll(ctx, part); err != nil {
			return err
		}
	}
	return nil
}

// mutateAll commits muts, maxMutations a commit.
func (db *DB) mutateAll(ctx context.Context, muts []*datastore.Mutation) error {
	for from := 0; from < len(muts); from += maxMutations {
		if _, err := db.client.Mutate(ctx, muts[from:min(len(muts), from+maxMutations)]...); err != nil {
			return mutateErr(err)
		}
	}
	return nil
}

// remark writes keys' marks again if the write begun at start, which
// wrote them, took remarkAfter or longer: its marks' time may be that
// much older than its commit, and an ask in between would have missed
// them. The write's outcome stands whatever this does: should it fail,
// another instance may show the change only once its TTL is over.
func (db *DB) remark(ctx context.Context, keys []*datastore.Key, touched map[string][]string, start time.Time) {
	if db.cache.now().Sub(start) < db.cache.remarkAfter {
		return
	}
	if marks := db.marks(keys, touched); marks != nil {
		db.cache.remarks.Add(1)
		_ = db.mutateAll(context.WithoutCancel(ctx), marks)
	}
}

// mutateErr is the error of a Mutate: the first of a MultiError's.
func mutateErr(err error) error {
	if me, ok := err.(datastore.MultiError); ok {
		for _, e := range me {
			if e != nil {
				return Convert(e)
			}
		}
		return nil
	}
	return Convert(err)
}

// upserts returns an upsert of each of keys with its element of src, a
// slice as long as keys (of structs, pointers to them or PropertyLists).
func upserts(keys []*datastore.Key, src any) []*datastore.Mutation {
	v := reflect.ValueOf(src)
	muts := make([]*datastore.Mutation, len(keys))
	for i, k := range keys {
		e := v.Index(i)
		if e.Kind() == reflect.Interface {
			e = e.Elem()
		}
		if e.Kind() != reflect.Pointer {
			if e.CanAddr() {
				e = e.Addr()
			} else {
				p := reflect.New(e.Type())
				p.Elem().Set(e)
				e = p
			}
		}
		muts[i] = datastore.NewUpsert(k, e.Interface())
	}
	return muts
}

// syncer is what an instance knows of one namespace's marks.
type syncer struct {
	mu sync.Mutex
	// last is when the last ask that succeeded began, on this instance's
	// clock; since is what the next asks from.
	last, since time.Time
	// running is closed when the ask under way ends.
	running chan struct{}
	// applied holds the time of each mark the asks have applied since
	// since, by name: the next ask, which reads the margin again, skips
	// them. Only the ask under way touches it.
	applied map[string]time.Time
}

// syncer returns the syncer of ns.
func (c *Cache) syncer(ns string) *syncer {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.syncs[ns]
	if s == nil {
		s = &syncer{}
		c.syncs[ns] = s
	}
	return s
}

// sync drops from the cache what was changed in db's namespace before
// begun, a page's start, less the cache's Share: it asks the Datastore
// for the marks since the instance last asked, unless an ask begun at
// that time or later has ended already. Pages at once share one ask; a
// page waits for one begun late enough.
func (c *Cache) sync(ctx context.Context, db *DB, begun time.Time) error {
	s := c.syncer(db.namespace)
	begun = begun.Add(-c.share)
	for {
		s.mu.Lock()
		if !s.last.Before(begun) {
			s.mu.Unlock()
			return nil
		}
		if ch := s.running; ch != nil {
			s.mu.Unlock()
			select {
			case <-ch: // then look again: it may have begun after begun
			case <-ctx.Done():
				return Convert(ctx.Err())
			}
			continue
		}
		start := c.now()
		since := s.since
		if floor := start.Add(-c.ttl - SyncMargin); since.Before(floor) {
			since = floor // what changed before is past every TTL
		}
		ch := make(chan struct{})
		s.running = ch
		s.mu.Unlock()

		err := c.ask(ctx, db, s, since)

		s.mu.Lock()
		s.running = nil
		if err == nil {
			s.last, s.since = start, start.Add(-SyncMargin)
		}
		s.mu.Unlock()
		close(ch)
		return err
	}
}

// ask reads the marks in db's namespace made after since, a query of
// each shard's range at once (billed a read a mark), and drops what they
// name unless it was read SyncMargin or more after the change; past
// syncLimit of them in a shard, everything.
func (c *Cache) ask(ctx context.Context, db *DB, s *syncer, since time.Time) error {
	c.asks.Add(1)
	shards := make([][]*datastore.Key, c.shards)
	found := make([][]change, c.shards)
	g, gctx := errgroup.WithContext(ctx)
	for i := range c.shards {
		g.Go(func() error {
			from := fmt.Sprintf("%02d/%016d", i, since.UnixMicro())
			q := db.Query(KindChange).FilterField("at", ">", from).FilterField("at", "<", fmt.Sprintf("%02d/~", i)).
				Limit(syncLimit)
			keys, err := db.client.GetAll(gctx, q, &found[i])
			shards[i] = keys
			return Convert(err)
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for i := range shards {
		if len(shards[i]) >= syncLimit {
			c.purge()
			return nil
		}
	}
	c.apply(db, s, since, shards, found)
	return nil
}

// apply drops what the marks an ask found name (keys of shards, with
// their marks in found), but those applied already: what was read after
// their drop was read after their change had shown. It forgets the marks
// it applied before since, which no ask reads again.
func (c *Cache) apply(db *DB, s *syncer, since time.Time, shards [][]*datastore.Key, found [][]change) {
	if s.applied == nil {
		s.applied = map[string]time.Time{}
	}
	for id, at := range s.applied {
		if !at.After(since) {
			delete(s.applied, id)
		}
	}
	var names, answered []string
	var fresh, answeredAt []time.Time
	for i := range shards {
		for j, k := range shards[i] {
			m := found[i][j]
			at, ok := changeTime(m.At)
			if was, applied := s.applied[k.Name]; !ok || applied && was.Equal(at) {
				continue
			}
			s.applied[k.Name] = at
			if len(m.Names) == 0 {
				// A mark of an older version's, named by the one key
				// it marks: this version's instances hear of it too.
				m.Names = []string{k.Name}
			}
			for _, name := range m.Names {
				if isAnswer(name) {
					answered, answeredAt = append(answered, db.namespace+"\x00"+name), append(answeredAt, at)
					continue
				}
				names, fresh = append(names, db.namespace+"\x00"+name), append(fresh, at)
			}
		}
	}
	c.dropChanged(names, fresh)
	c.dropAnswers(answered, answeredAt)
}
