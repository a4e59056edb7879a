package store_test

import (
	"context"
	"errors"
	"testing"

	"cloud.google.com/go/datastore"

	"socialstream/internal/store"
	"socialstream/internal/testenv"
)

type pair struct {
	A int64  `datastore:"a"`
	B string `datastore:"b"`
}

// Increments, checks and upserts of transforms change only what they name;
// a check or a transform of an entity that is not there fails the whole
// commit with ErrGone.
func TestTransformsChangeOnlyWhatTheyName(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	k, missing, made := db.NameKey("Pair", "k", nil), db.NameKey("Pair", "missing", nil), db.NameKey("Pair", "made", nil)
	if err := db.Put(ctx, k, &pair{A: 1, B: "kept"}); err != nil {
		t.Fatal(err)
	}
	err := db.Update(ctx, func(tx *store.Tx) error {
		if err := tx.Check(k); err != nil {
			return err
		}
		if err := tx.Increment(k, map[string]int64{"a": 2}); err != nil {
			return err
		}
		return tx.IncrementAny(made, map[string]int64{"a": 3, "c": 0})
	})
	if err != nil {
		t.Fatal(err)
	}
	var got, gotMade pair
	if _, err := db.Get(ctx, k, &got); err != nil || got != (pair{A: 3, B: "kept"}) {
		t.Errorf("after check and increment: %+v, %v; want {3 kept}", got, err)
	}
	if _, err := db.Get(ctx, made, &gotMade); err != nil || gotMade != (pair{A: 3}) {
		t.Errorf("made by IncrementAny: %+v, %v; want {3 }", gotMade, err)
	}

	err = db.Update(ctx, func(tx *store.Tx) error {
		if err := tx.Increment(k, map[string]int64{"a": 10}); err != nil {
			return err
		}
		return tx.Check(missing)
	})
	if !errors.Is(err, store.ErrGone) {
		t.Errorf("check of a missing entity: %v, want ErrGone", err)
	}
	if _, err := db.Get(ctx, k, &got); err != nil || got.A != 3 {
		t.Errorf("a commit that failed its check changed %+v (%v)", got, err)
	}
	if ok, err := db.Get(ctx, missing, &datastore.PropertyList{}); err != nil || ok {
		t.Errorf("the check made the missing entity: %v, %v", ok, err)
	}
}

// Every Then is called, in order, though the one before it added nothing
// to read; one that adds a read has it loaded before the next is called.
func TestEveryThenRuns(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	k := db.NameKey("Pair", "then", nil)
	if err := db.Put(ctx, k, &pair{A: 7}); err != nil {
		t.Fatal(err)
	}
	var steps []string
	var p pair
	l := db.Lookup()
	l.Then(func() {
		steps = append(steps, "nothing read")
		l.Then(func() {
			steps = append(steps, "after nothing")
			r := l.Add(k, &p)
			l.Then(func() {
				if r.Found() {
					steps = append(steps, "read")
				}
			})
		})
	})
	if err := l.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if want := []string{"nothing read", "after nothing", "read"}; len(steps) != 3 || steps[2] != want[2] || steps[1] != want[1] || p.A != 7 {
		t.Errorf("steps %v, read %d; want %v and 7", steps, p.A, want)
	}
}
