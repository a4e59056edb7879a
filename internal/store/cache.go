package store

import (
	"cmp"
	"maps"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"cloud.google.com/go/datastore"
	lru "github.com/hashicorp/golang-lru/v2"
)

// Cache keeps entities an instance read for its pages, so that a page
// of what was read lately bills no read for it. It holds entities of the
// kinds it is made for, each at most TTL after it was read; the entities
// this instance writes (by any DB, Tx or job of its) leave it at once,
// those another instance writes within TTL. Only a PageLookup reads
// through it: a transaction, a write's guarded read, and every job's
// reads go to the Datastore, so no decision that writes rests on what it
// holds.
type Cache struct {
	kinds map[string]bool
	ttl   time.Duration
	share time.Duration
	// shards is how many ranges the marks of changes are written in
	// (CacheConfig.Shards).
	shards int
	// shared is the tier the instances share (nil: none); sharedOnly
	// says this instance keeps nothing of its own (CacheConfig).
	shared     *Shared
	sharedOnly bool
	now        func() time.Time
	lru        *lru.Cache[string, cached]

	mu sync.Mutex
	// epoch counts the reads begun and the drops made; dropped holds the
	// epoch of each key's last drop, for TTL, so that a read begun before
	// a write committed does not keep what it read.
	epoch   uint64
	dropped map[string]dropped
	swept   time.Time
	// purged is the epoch of the last time everything was forgotten.
	purged uint64
	// syncs are what the instance knows of each namespace's marks of
	// changes (KindChange).
	syncs   map[string]*syncer
	asks    atomic.Int64 // how many times it asked for marks
	remarks atomic.Int64 // how many writes marked again
	// remarkAfter is CacheConfig.RemarkAfter.
	remarkAfter time.Duration
	// derive is CacheConfig.Derived.
	derive func(name string) string
	// families is CacheConfig.Answers: the family of answers a write of
	// each kind changes. answers keeps them (answer.go); familyDropped
	// holds the epoch of each namespace's family's last drop of all its
	// answers, as dropped does a name's.
	families      map[string]string
	answers       *lru.Cache[string, cached]
	familyDropped map[string]uint64
	// answered, reread and keptAnswers count the answers taken as kept,
	// read, and kept once read (AnswerStats).
	answered, reread, keptAnswers atomic.Int64
}

type cached struct {
	// val is what the properties read loaded into, of the type of the
	// lookup's destination that first read it: a page copies it, which
	// costs a fraction of loading the properties again. props are kept
	// only for a destination that is no struct; a destination of
	// another type than val's reads the entity again.
	val   reflect.Value
	props datastore.PropertyList
	at    time.Time
	// until is when a kept count stops being taken (zero: none but the
	// TTL): see KeptCount.
	until time.Time
}

type dropped struct {
	epoch uint64
	at    time.Time
}

// CacheConfig says what a Cache keeps.
type CacheConfig struct {
	Kinds   []string      // the kinds it keeps
	TTL     time.Duration // how long an entity read is kept
	Entries int           // how many entities at most, the least used leaving first
	// Share is how long before a request began an ask for the marks of
	// changes may have begun and still serve it (0: only one begun
	// after it): the requests of an instance within Share of each other
	// share one ask, and a change shows on the first page begun Share
	// after its commit.
	Share time.Duration
	// Shards is how many ranges of the index the marks of changes are
	// spread over (0: one), each taking its share of their writes; an ask
	// reads each. Every instance must write and read as many (a version
	// that writes more may show changes to one that reads fewer only
	// after the TTL).
	Shards int
	// Shared is the cache tier the instances share, under this one (nil:
	// none). SharedOnly keeps nothing on the instance: pages read the
	// tier, then the Datastore, and writes leave their tombstones in the
	// tier and no marks of changes, which only what instances keep
	// themselves needs. Every instance must say the same (one that keeps
	// its own would not hear of the changes of one that marks none).
	Shared     *Shared
	SharedOnly bool
	// RemarkAfter is how long a write's call may take before its marks
	// are written again once it returns (0: a second): past it, the mark's
	// time, taken during the commit, may come before the commit shows.
	// The bill sets it past any commit, to bill an operation's own writes
	// and not those a loaded machine's slow commit adds.
	RemarkAfter time.Duration
	// Derived names, for a key of a kind it keeps that a write changes
	// (as Key.String names it), the count kept beside the entities
	// (DB.KeptCount) that the write changes too ("": none): a count must
	// be made of entities of the kinds it keeps, whose writes are
	// marked. The count is dropped wherever the write drops the entity:
	// on the writing instance, by the marks of changes on the others,
	// and by the write's tombstones in the tier. Every instance must say
	// the same; a cache with none keeps no count.
	Derived func(name string) string
	// Answers names, for a kind, the family of kept answers (DB.Kept)
	// its writes change: a write of an entity of the kind drops, wherever
	// it drops an entity, the answers of the subjects it says it changes
	// (Tx.Touches), or every answer of the family if it says none. Every
	// instance must say the same; a cache that keeps nothing of its own
	// (SharedOnly) keeps no answer.
	Answers map[string]string
}

// NewCache returns a Cache.
func NewCache(cfg CacheConfig) *Cache {
	entries := max(cfg.Entries, 1)
	c, _ := lru.New[string, cached](entries) // only a size below 1 fails
	kinds := map[string]bool{}
	for _, k := range cfg.Kinds {
		kinds[k] = true
	}
	answers, _ := lru.New[string, cached](max(entries/answerShare, minAnswers))
	return &Cache{kinds: kinds, ttl: cfg.TTL, share: max(cfg.Share, 0), shards: max(cfg.Shards, 1), shared: cfg.Shared,
		sharedOnly: cfg.Shared != nil && cfg.SharedOnly, remarkAfter: cmp.Or(cfg.RemarkAfter, remarkAfter), now: time.Now, lru: c,
		dropped: map[string]dropped{}, syncs: map[string]*syncer{}, derive: cfg.Derived,
		families: maps.Clone(cfg.Answers), answers: answers, familyDropped: map[string]uint64{}}
}

// TTL is how long the cache keeps an entity: the bound on how late a
// change made by another instance shows on this one.
func (c *Cache) TTL() time.Duration { return c.ttl }

// Len is how many entities the cache holds (some may be past the TTL).
func (c *Cache) Len() int {
	if c == nil {
		return 0
	}
	return c.lru.Len()
}

// Purge forgets everything kept: for a measure that must start cold.
func (c *Cache) Purge() {
	if c != nil {
		c.purge()
	}
}

// purge forgets everything kept, and what reads under way would keep.
func (c *Cache) purge() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
	c.purged = c.epoch
	c.lru.Purge()
	c.answers.Purge()
}

func cacheKey(k *datastore.Key) string { return k.Namespace + "\x00" + k.String() }

// holds reports whether the cache keeps entities of key's kind.
func (c *Cache) holds(k *datastore.Key) bool { return c != nil && c.kinds[k.Kind] }

// begin marks the start of a read: what it finds is kept only if no
// write of its key was dropped since.
func (c *Cache) begin() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
	return c.epoch
}

// get loads into dst what is kept for k, if it is fresh, and reports
// whether it was.
func (c *Cache) get(k *datastore.Key, dst any) (bool, error) {
	key := cacheKey(k)
	v, ok := c.lru.Get(key)
	if !ok {
		return false, nil
	}
	if !c.live(v) {
		c.lru.Remove(key)
		return false, nil
	}
	switch d := reflect.ValueOf(dst); {
	case v.val.IsValid() && d.Type() == v.val.Type():
		d.Elem().Set(v.val.Elem())
		detach(d.Elem())
		return true, nil
	case v.val.IsValid():
		return false, nil
	}
	return true, load(dst, v.props)
}

// put keeps what a read begun at epoch found at k (its properties, and
// dst, what they loaded into), unless k was written since it began.
func (c *Cache) put(k *datastore.Key, props datastore.PropertyList, dst any, epoch uint64, at time.Time) {
	if c.sharedOnly {
		return
	}
	key := cacheKey(k)
	var val reflect.Value
	if d := reflect.ValueOf(dst); d.Kind() == reflect.Pointer && d.Elem().Kind() == reflect.Struct {
		val = reflect.New(d.Elem().Type())
		val.Elem().Set(d.Elem())
		detach(val.Elem())
		props = nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, ok := c.dropped[key]; ok && d.epoch >= epoch || c.purged >= epoch {
		return
	}
	c.lru.Add(key, cached{props: props, val: val, at: at})
}

// detach gives v, a settable value, copies of its own of every slice,
// map and pointer it reaches through exported fields, so that a copy of
// a kept value shares nothing with it that a page could change.
func detach(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				detach(f)
			}
		}
	case reflect.Slice:
		if v.IsNil() {
			return
		}
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		reflect.Copy(c, v)
		if deep(v.Type().Elem()) {
			for i := range c.Len() {
				detach(c.Index(i))
			}
		}
		v.Set(c)
	case reflect.Array:
		if deep(v.Type().Elem()) {
			for i := range v.Len() {
				detach(v.Index(i))
			}
		}
	case reflect.Map:
		if !v.IsNil() {
			n := reflect.MakeMapWithSize(v.Type(), v.Len())
			for it := v.MapRange(); it.Next(); {
				n.SetMapIndex(it.Key(), it.Value())
			}
			v.Set(n)
		}
	case reflect.Pointer:
		if !v.IsNil() {
			n := reflect.New(v.Type().Elem())
			n.Elem().Set(v.Elem())
			detach(n.Elem())
			v.Set(n)
		}
	}
}

// deep reports whether values of t may hold what detach copies (an
// interface's value it leaves as it is: entities hold none).
func deep(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Struct, reflect.Slice, reflect.Array, reflect.Map, reflect.Pointer:
		return true
	}
	return false
}

// drop forgets keys: they are being written, and the answers they
// change, as touched says (Tx.Touches; nil: none said).
func (c *Cache) drop(keys []*datastore.Key, touched map[string][]string) {
	if c == nil {
		return
	}
	c.dropAnswers(c.answerNames(keys, touched), nil)
	var names []string
	for _, k := range keys {
		if c.kinds[k.Kind] {
			names = append(names, cacheKey(k))
		}
	}
	counts, _ := c.derived(names, nil)
	names = append(names, counts...)
	c.dropIf(c.lru, names, nil)
	if c.shared != nil {
		c.shared.tomb(names, c.now(), c.ttl)
	}
}

// dropChanged forgets the entities of keys, as cacheKey names them,
// that may have been read before their change, marks[i]: all but those
// read SyncMargin or more after it. Reads under way keep none of them.
func (c *Cache) dropChanged(keys []string, marks []time.Time) {
	counts, at := c.derived(keys, marks)
	keys, marks = append(keys, counts...), append(marks, at...)
	c.dropIf(c.lru, keys, func(i int, read time.Time) bool { return read.Before(marks[i].Add(SyncMargin)) })
}

// dropIf forgets what kept holds at keys (the entities, as cacheKey
// names them, or the answers) that stale reports (nil: all of them) by
// the place of their key and when they were read; reads under way keep
// none of keys.
func (c *Cache) dropIf(kept *lru.Cache[string, cached], keys []string, stale func(i int, read time.Time) bool) {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, key := range keys {
		c.epoch++
		c.dropped[key] = dropped{epoch: c.epoch, at: now}
		if v, ok := kept.Peek(key); ok && (stale == nil || stale(i, v.at)) {
			kept.Remove(key)
		}
	}
	// A read outlives no TTL: older drops can stop no fill.
	if now.Sub(c.swept) > c.ttl {
		for k, d := range c.dropped {
			if now.Sub(d.at) > c.ttl {
				delete(c.dropped, k)
			}
		}
		c.swept = now
	}
}

// fresh reports whether the cache holds any of keys within the TTL.
func (c *Cache) fresh(keys []*datastore.Key) bool {
	now := c.now()
	for _, k := range keys {
		if !c.kinds[k.Kind] {
			continue
		}
		if v, ok := c.lru.Peek(cacheKey(k)); ok && now.Sub(v.at) < c.ttl {
			return true
		}
	}
	return false
}

// load loads kept properties into dst, as GetMulti would.
func load(dst any, props datastore.PropertyList) error {
	ps := make([]datastore.Property, len(props))
	copy(ps, props)
	if pls, ok := dst.(datastore.PropertyLoadSaver); ok {
		return pls.Load(ps)
	}
	return datastore.LoadStruct(dst, ps)
}
