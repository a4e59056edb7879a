package store_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"socialstream/internal/store"
	"socialstream/internal/testenv"
)

// members keeps, beside the pairs, the answers of the family "members":
// the names of the pairs of a group (B), by group.
func members(cfg store.CacheConfig) store.CacheConfig {
	cfg.Answers = map[string]string{"Pair": "members"}
	return cfg
}

// lister lists a group's pairs through db's kept answers, and counts how
// many times the list was read (not kept).
type lister struct {
	fills atomic.Int64
	// during, if set, runs while the list is read, as a write that
	// commits during a page's query would.
	during func()
}

func (l *lister) list(t *testing.T, db *store.DB, group, spec string) []string {
	t.Helper()
	v, err := db.Kept(context.Background(), "members", group, spec, func(ctx context.Context) (any, error) {
		l.fills.Add(1)
		keys, err := db.GetAll(ctx, db.Query("Pair").FilterField("b", "=", group).KeysOnly(), nil)
		if l.during != nil {
			l.during()
		}
		names := make([]string, len(keys))
		for i, k := range keys {
			names[i] = k.Name
		}
		slices.Sort(names)
		return names, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return v.([]string)
}

// touching writes a pair of group in a transaction that says it changes
// the answers of subjects alone.
func touching(db *store.DB, name, group string, subjects ...string) func() error {
	return func() error {
		return db.Update(context.Background(), func(tx *store.Tx) error {
			k := db.NameKey("Pair", name, nil)
			tx.Touches(k, subjects...)
			return tx.Put(k, &pair{B: group})
		})
	}
}

// An answer is kept until a write of what it is made of that says it
// changes its subject, or says nothing: this instance's drops it at once,
// another's on the next ask for changes; a write that names other
// subjects leaves it, and so does a write of another kind.
func TestAKeptAnswerFollowsItsSubjectsWrites(t *testing.T) {
	ctx := context.Background()
	base := testenv.DB(t)
	db, other := instances(base, members(keptPairs))
	var l lister
	many := make([]string, store.MaxTouched+1)
	for i := range many {
		many[i] = fmt.Sprint("s", i)
	}
	steps := []struct {
		name      string
		write     func() error
		want      []string
		readAgain bool
	}{
		{"first", nil, []string{}, true},
		{"asked again", nil, []string{}, false},
		{"another instance's write that names the group", touching(other, "g1", "g", "g"), []string{"g1"}, true},
		{"kept again", nil, []string{"g1"}, false},
		{"a write that names another group", touching(other, "h1", "h", "h"), []string{"g1"}, false},
		{"a write of another kind", func() error { return other.Put(ctx, db.NameKey("Other", "o", nil), &pair{B: "g"}) }, []string{"g1"}, false},
		{"a write that names nobody", func() error { return other.Put(ctx, db.NameKey("Pair", "h2", nil), &pair{B: "h"}) }, []string{"g1"}, true},
		{"a write that names too many", touching(other, "h3", "h", many...), []string{"g1"}, true},
		{"a delete that names the group", func() error {
			return other.Update(ctx, func(tx *store.Tx) error {
				k := db.NameKey("Pair", "g1", nil)
				tx.Touches(k, "g")
				return tx.Delete(k)
			})
		}, []string{}, true},
		{"this instance's write", func() error {
			err := touching(db, "g2", "g", "g")()
			// What is read within the margin of a change is dropped by
			// its mark, as an entity would be: read past it.
			time.Sleep(store.SyncMargin)
			return err
		}, []string{"g2"}, true},
		{"kept after this instance's write", nil, []string{"g2"}, false},
	}
	for _, s := range steps {
		if s.write != nil {
			if err := s.write(); err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
		}
		before := l.fills.Load()
		if got := l.list(t, db, "g", "all"); !slices.Equal(got, s.want) || (l.fills.Load() > before) != s.readAgain {
			t.Errorf("%s: %v, read again %v; want %v, %v", s.name, got, l.fills.Load() > before, s.want, s.readAgain)
		}
	}

	// One spec at a time: another reads again, and so does the first.
	before := l.fills.Load()
	l.list(t, db, "g", "other")
	l.list(t, db, "g", "all")
	l.list(t, db, "g", "all")
	if n := l.fills.Load() - before; n != 2 {
		t.Errorf("two specs, the first asked twice: read %d times, want 2", n)
	}
}

// A read under way when a write drops its subject's answer keeps nothing:
// it may have read before the commit. (With a Share of a minute, the
// next page takes the ask before it, which knew nothing of the write.)
func TestAnAnswerReadDuringItsChangeIsNotKept(t *testing.T) {
	base := testenv.DB(t)
	cfg := members(keptPairs)
	cfg.Share = time.Minute
	db := base.WithCache(store.NewCache(cfg))
	var warm lister
	warm.list(t, db, "warm", "all")
	warm.list(t, db, "warm", "all") // its ask: the cases' pages take it
	for _, c := range []struct {
		name, group string
		write       func() error
	}{
		{"a write that names the group", "w", touching(db, "w1", "w", "w")},
		{"a write that names nobody", "v", func() error { return db.Put(context.Background(), db.NameKey("Pair", "v1", nil), &pair{B: "v"}) }},
	} {
		l := lister{during: func() {
			if err := c.write(); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		}}
		l.list(t, db, c.group, "all")
		l.during = nil
		if got := l.list(t, db, c.group, "all"); l.fills.Load() != 2 {
			t.Errorf("%s during the read: read %d times (last %v), want 2", c.name, l.fills.Load(), got)
		}
	}
}

// With no cache of its own (the shared tier alone) an instance keeps no
// answer: no write marks what would drop it.
func TestAnswersAreKeptWhereWritesMark(t *testing.T) {
	base := testenv.DB(t)
	shared, err := store.NewShared(context.Background(), testenv.Redis(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shared.Close() })
	for _, alone := range []bool{false, true} {
		cfg := members(keptPairs)
		cfg.Shared, cfg.SharedOnly = shared, alone
		db := base.WithCache(store.NewCache(cfg))
		var l lister
		l.list(t, db, "n", "all")
		l.list(t, db, "n", "all")
		if want := map[bool]int64{false: 1, true: 2}[alone]; l.fills.Load() != want || (db.Cache().Answers() == 0) != alone {
			t.Errorf("the tier alone %v, asked twice: read %d times, %d kept; want %d", alone, l.fills.Load(), db.Cache().Answers(), want)
		}
	}
}
