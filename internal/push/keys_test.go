package push

import (
	"context"
	"os"
	"testing"
	"time"

	"socialstream/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// The keyring is made once, seals what only its key opens, and a
// rotation keeps the keys subscriptions still name.
func TestKeysAndRotation(t *testing.T) {
	ctx := context.Background()
	db := testenv.DB(t)
	a, b := NewKeys(db), NewKeys(db) // two instances
	first, err := a.Current(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if other, err := b.Current(ctx); err != nil || other.Public != first.Public {
		t.Fatalf("two instances: %q and %q, %v", first.Public, other.Public, err)
	}
	sealed, err := first.seal("the token")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := first.open(sealed); err != nil || got != "the token" {
		t.Errorf("open: %q, %v", got, err)
	}
	sealed[len(sealed)-1] ^= 1
	if _, err := first.open(sealed); err == nil {
		t.Error("an altered seal opened")
	}

	// A subscription names the first key: the rotation keeps it.
	if err := db.Put(ctx, Key(db, "tok1"), &subscription{UserID: "1", ServerKey: first.Public}); err != nil {
		t.Fatal(err)
	}
	rot, err := RotateKeys(ctx, db, time.Now())
	if err != nil || rot.Kept != 2 || rot.Dropped != 0 || rot.Public == first.Public {
		t.Fatalf("rotation: %+v, %v", rot, err)
	}
	fresh := NewKeys(db)
	if cur, err := fresh.Current(ctx); err != nil || cur.Public != rot.Public {
		t.Errorf("after the rotation the current key is %q, want %q (%v)", cur.Public, rot.Public, err)
	}
	if k, ok, err := fresh.Find(ctx, first.Public); err != nil || !ok || k.Public != first.Public {
		t.Errorf("the first key, still named: %v, %v", ok, err)
	}
	sealed[len(sealed)-1] ^= 1
	if got, err := mustFind(t, fresh, first.Public).open(sealed); err != nil || got != "the token" {
		t.Errorf("the first key still opens its seals: %q, %v", got, err)
	}
	// Once no subscription names it, the next rotation drops it.
	if err := db.Delete(ctx, Key(db, "tok1")); err != nil {
		t.Fatal(err)
	}
	rot2, err := RotateKeys(ctx, db, time.Now())
	if err != nil || rot2.Kept != 1 || rot2.Dropped != 2 {
		t.Fatalf("the second rotation: %+v, %v", rot2, err)
	}
	if _, ok, _ := NewKeys(db).Find(ctx, first.Public); ok {
		t.Error("a key no subscription names was kept")
	}
}

func mustFind(t *testing.T, k *Keys, public string) VAPIDKey {
	t.Helper()
	key, ok, err := k.Find(context.Background(), public)
	if err != nil || !ok {
		t.Fatalf("find %q: %v, %v", public, ok, err)
	}
	return key
}
