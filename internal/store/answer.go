package store

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/paging"
)

// A kept answer is what a query answered for a page (the keys of a
// reader's home range, say), kept by the instance under the name of its
// family and subject ("home/" and the reader) beside the entities it
// keeps, and dropped as they are: a write of an entity of a kind the
// family is made of (CacheConfig.Answers) drops the answers of the
// subjects it says it changes (Tx.Touches), and every answer of the
// family when it says none, on the writing instance at once and on the
// others by its marks of changes. So a page asked again and again, when
// nothing it shows changed, makes no query.

const (
	// allSubjects is the subject of a drop of every answer of a family.
	allSubjects = "*"
	// maxTouched is the most subjects a commit names a family's answers
	// by: past it, it drops them all, so that its marks stay small.
	maxTouched = 1000
	// answerShare is the part of the cache's entries answers may take,
	// and minAnswers the fewest it keeps: a cache of few entities (one
	// kept small so that pages come from the tier) keeps answers still.
	answerShare = 4
	minAnswers  = 1000
)

// answer is what a kept answer holds: its spec (the query's bounds), and
// the answer, which no taker changes.
type answer struct {
	spec  string
	value any
}

// isAnswer reports whether a name a mark carries is an answer's
// (family/subject), not a key's (Key.String, which begins with '/').
func isAnswer(name string) bool { return name != "" && name[0] != '/' }

// answerName is the name of the answers of subject in family.
func answerName(family, subject string) string { return family + "/" + subject }

// Touches says that what tx writes at key changes the answers of
// subjects alone, of the family of key's kind (CacheConfig.Answers):
// without it, a write of key drops every answer of the family. A write
// must name every subject whose answer it may change: for a new entity,
// every subject it is an answer of; for one it adds subjects to, those.
func (tx *Tx) Touches(key *datastore.Key, subjects ...string) {
	if tx.touched == nil || tx.db.cache == nil {
		return
	}
	ck := cacheKey(key)
	tx.touched[ck] = append(tx.touched[ck], subjects...)
}

// answerNames returns the names, as cacheKey names them (namespace,
// NUL, name), of the answers that writes of keys change, as touched says
// (by cacheKey; nil: nothing said): the family's subjects named by a
// touched key, and the family's every answer for one not, or for more
// than maxTouched subjects.
func (c *Cache) answerNames(keys []*datastore.Key, touched map[string][]string) []string {
	if c == nil || len(c.families) == 0 {
		return nil
	}
	subjects := map[string]map[string]bool{} // by namespace NUL family
	all := map[string]bool{}
	for _, k := range keys {
		family, ok := c.families[k.Kind]
		if !ok {
			continue
		}
		at := k.Namespace + "\x00" + family
		said, ok := touched[cacheKey(k)]
		if !ok {
			all[at] = true
			continue
		}
		if subjects[at] == nil {
			subjects[at] = map[string]bool{}
		}
		for _, s := range said {
			subjects[at][s] = true
		}
		if len(subjects[at]) > maxTouched {
			all[at] = true
		}
	}
	var names []string
	for at := range all {
		names = append(names, answerName(at, allSubjects))
	}
	for at, ss := range subjects {
		if all[at] {
			continue
		}
		for s := range ss {
			names = append(names, answerName(at, s))
		}
	}
	slices.Sort(names)
	return names
}

// dropAnswers forgets the answers names name (namespace, NUL, name), each
// changed at its element of marks (nil: all of them, changed now, by this
// instance's write): all but those read SyncMargin or more after their
// change. A name of allSubjects drops its family's every answer so.
// Reads under way keep none of them.
func (c *Cache) dropAnswers(names []string, marks []time.Time) {
	if len(names) == 0 {
		return
	}
	var named []string
	var at []time.Time
	for i, n := range names {
		family, ok := strings.CutSuffix(n, "/"+allSubjects)
		if !ok {
			named = append(named, n)
			if marks != nil {
				at = append(at, marks[i])
			}
			continue
		}
		c.dropFamily(family, marks, i)
	}
	if marks == nil {
		c.dropIf(c.answers, named, nil)
		return
	}
	c.dropIf(c.answers, named, func(i int, read time.Time) bool { return read.Before(at[i].Add(SyncMargin)) })
}

// dropFamily forgets every answer of family (namespace, NUL, family)
// read before marks[i] and SyncMargin (every one, for nil marks).
func (c *Cache) dropFamily(family string, marks []time.Time, i int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
	c.familyDropped[family] = c.epoch
	prefix := family + "/"
	for _, k := range c.answers.Keys() {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		if v, ok := c.answers.Peek(k); ok && (marks == nil || v.at.Before(marks[i].Add(SyncMargin))) {
			c.answers.Remove(k)
		}
	}
}

// Kept returns the answer kept under family and subject for spec, or, if
// the instance keeps none it may take, what fill answers, which it then
// keeps: the answer of a query that reads entities of the kinds the
// family is made of (CacheConfig.Answers), whose spec says all that
// bounds it besides its subject. A subject's answer is kept for one spec
// at a time, the latest asked. The answer is shared with whoever takes
// it after: no one may change it. Like a page's lookup, it shows what
// changed before the request began (and the cache's Share) on any
// instance.
func (db *DB) Kept(ctx context.Context, family, subject, spec string, fill func(context.Context) (any, error)) (any, error) {
	c := db.cache
	if c == nil || c.sharedOnly || !c.answersOf(family) {
		return fill(ctx)
	}
	key := db.namespace + "\x00" + answerName(family, subject)
	begun := paging.Begun(ctx, c.now())
	if v, ok := c.answers.Peek(key); ok && c.live(v) && v.val.Interface().(*answer).spec == spec {
		if err := c.sync(ctx, db, begun); err != nil {
			return nil, err
		}
		if v, ok := c.answers.Get(key); ok && c.live(v) {
			if a := v.val.Interface().(*answer); a.spec == spec {
				c.answered.Add(1)
				return a.value, nil
			}
		}
	}
	epoch, at := c.begin(), begun.Add(-c.share)
	c.reread.Add(1)
	got, err := fill(ctx)
	if err != nil {
		return nil, err
	}
	c.putAnswer(key, family, &answer{spec: spec, value: got}, epoch, at)
	return got, nil
}

// answersOf reports whether any kind's writes drop family's answers.
func (c *Cache) answersOf(family string) bool {
	for _, f := range c.families {
		if f == family {
			return true
		}
	}
	return false
}

// putAnswer keeps a at key (namespace, NUL, name), of family, as answered
// by a read begun at epoch of what showed at at, unless a change of what
// it is made of was dropped since the read began.
func (c *Cache) putAnswer(key, family string, a *answer, epoch uint64, at time.Time) {
	ns, _, _ := strings.Cut(key, "\x00")
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, ok := c.dropped[key]; ok && d.epoch >= epoch || c.purged >= epoch || c.familyDropped[ns+"\x00"+family] >= epoch {
		return
	}
	c.answers.Add(key, cached{val: reflect.ValueOf(a), at: at})
	c.keptAnswers.Add(1)
}

// Answers is how many answers the cache keeps (some may be past the TTL).
func (c *Cache) Answers() int {
	if c == nil {
		return 0
	}
	return c.answers.Len()
}

// AnswerStats is how many answers were taken as kept, how many read
// (none kept, or one kept that a change dropped), and how many of those
// read were kept, since the cache began.
func (c *Cache) AnswerStats() (taken, read, kept int64) {
	if c == nil {
		return 0, 0, 0
	}
	return c.answered.Load(), c.reread.Load(), c.keptAnswers.Load()
}
