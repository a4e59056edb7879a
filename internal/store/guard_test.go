package store_test

import (
	"context"
	"errors"
	"testing"

	"socialstream/internal/derrors"
	"socialstream/internal/store"
	"socialstream/internal/testenv"
)

var errRefused = derrors.New(derrors.PermissionDenied, "refused")

// guardOn returns a guard that refuses once the pair at its key says B is
// "no", and counts its checks.
func guardOn(db *store.DB, name string, checks *int) *store.Guard {
	return &store.Guard{
		Key: db.NameKey("Pair", name, nil),
		New: func() any { return &pair{} },
		Check: func(found bool, dst any) error {
			*checks++
			if !found || dst.(*pair).B == "no" {
				return errRefused
			}
			return nil
		},
	}
}

// Every transaction under a guard reads it with its first read, whether it
// reads by Get, by a lookup (sharing a key it reads itself), or not at
// all, and a refusal fails it with nothing written; a write request's
// first lookup outside a transaction checks it too, once.
func TestGuard(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	actor, other, out := db.NameKey("Pair", "actor", nil), db.NameKey("Pair", "other", nil), db.NameKey("Pair", "out", nil)
	if err := db.Put(ctx, actor, &pair{B: "yes"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Put(ctx, other, &pair{A: 1}); err != nil {
		t.Fatal(err)
	}
	checks := 0
	gctx := store.WithGuard(ctx, guardOn(db, "actor", &checks))
	writes := []struct {
		name string
		f    func(tx *store.Tx) error
	}{
		{"a Get", func(tx *store.Tx) error {
			var p pair
			if _, err := tx.Get(other, &p); err != nil {
				return err
			}
			return tx.Put(out, &pair{A: p.A})
		}},
		{"a lookup that reads the guard's key itself", func(tx *store.Tx) error {
			l := tx.Lookup()
			var me, p pair
			l.Add(actor, &me)
			l.Add(other, &p)
			if err := l.Run(ctx); err != nil {
				return err
			}
			return tx.Put(out, &pair{A: p.A, B: me.B})
		}},
		{"a blind write", func(tx *store.Tx) error { return tx.Put(out, &pair{A: 7}) }},
	}
	for _, w := range writes {
		checks = 0
		if err := db.Update(gctx, w.f); err != nil || checks != 1 {
			t.Errorf("%s, allowed: %v, %d checks", w.name, err, checks)
		}
	}
	if err := db.Put(ctx, actor, &pair{B: "no"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Delete(ctx, out); err != nil {
		t.Fatal(err)
	}
	for _, w := range writes {
		if err := db.Update(gctx, w.f); !errors.Is(err, errRefused) {
			t.Errorf("%s, refused: %v", w.name, err)
		}
	}
	// Writes outside a transaction become guarded transactions.
	if err := db.Put(gctx, out, &pair{A: 9}); !errors.Is(err, errRefused) {
		t.Errorf("a Put under a refusing guard: %v", err)
	}
	if ok, err := db.Get(ctx, out, &pair{}); err != nil || ok {
		t.Errorf("a refused write wrote: %v %v", ok, err)
	}
	// Reads outside a transaction are checked in a write request alone.
	if _, err := db.Get(gctx, other, &pair{}); err != nil {
		t.Errorf("a read request's read: %v", err)
	}
	wctx := store.WithWrites(gctx)
	if _, err := db.Get(wctx, other, &pair{}); !errors.Is(err, errRefused) {
		t.Errorf("a write request's first read: %v", err)
	}
	if err := db.CheckGuard(wctx); !errors.Is(err, errRefused) {
		t.Errorf("CheckGuard: %v", err)
	}
	// Unguarded is free of it; a guard that allows is checked once.
	if err := db.Put(store.Unguarded(gctx), out, &pair{A: 1}); err != nil {
		t.Errorf("an unguarded Put: %v", err)
	}
	if err := db.Put(ctx, actor, &pair{B: "yes"}); err != nil {
		t.Fatal(err)
	}
	checks = 0
	wctx = store.WithWrites(gctx)
	for range 3 {
		if _, err := db.Get(wctx, other, &pair{}); err != nil {
			t.Fatal(err)
		}
	}
	if checks != 1 {
		t.Errorf("%d checks of a write request's reads, want 1", checks)
	}
}
