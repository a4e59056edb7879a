package dsfaults_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"cloud.google.com/go/datastore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"socialstream/internal/derrors"
	"socialstream/internal/dsfaults"
	"socialstream/internal/store"
	"socialstream/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

type thing struct{ N int }

// open returns a DB, and its client, behind in.
func open(t *testing.T, in *dsfaults.Injector) (*store.DB, *datastore.Client) {
	t.Helper()
	c, err := store.Open(context.Background(), testenv.Project, testenv.EmulatorHost(t), in.Option())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	db, err := store.New(c, testenv.Namespace(t))
	if err != nil {
		t.Fatal(err)
	}
	return db, c
}

// A fault before the call writes nothing; one after a commit answers an
// error for a write that happened; off, nothing fails.
func TestFaults(t *testing.T) {
	ctx := context.Background()
	transient := func(err error) bool {
		c := status.Code(errors.Unwrap(err))
		if c == codes.OK {
			c = status.Code(err)
		}
		return errors.Is(err, derrors.Unavailable) || c == codes.Unavailable || c == codes.Aborted || c == codes.DeadlineExceeded
	}

	before := dsfaults.New(dsfaults.Config{Seed: 1, Before: 1})
	db, _ := open(t, before)
	key := db.NameKey("Thing", "a", nil)
	if err := db.Put(ctx, key, &thing{1}); err == nil || !transient(err) {
		t.Fatalf("Put with every call failing before: %v", err)
	}
	before.SetEnabled(false)
	if ok, err := db.Get(ctx, key, &thing{}); err != nil || ok {
		t.Errorf("after a fault before the call: found %v, %v; want nothing written", ok, err)
	}

	after := dsfaults.New(dsfaults.Config{Seed: 1, AfterCommit: 1})
	db, _ = open(t, after)
	key = db.NameKey("Thing", "b", nil)
	if err := db.Put(ctx, key, &thing{2}); err == nil || !transient(err) {
		t.Fatalf("Put with every commit failing after: %v", err)
	}
	var got thing
	if ok, err := db.Get(ctx, key, &got); err != nil || !ok || got.N != 2 {
		t.Errorf("after a fault after the commit: found %v %+v, %v; want the write there", ok, got, err)
	}
	var n int64
	for _, c := range after.Counts() {
		n += c
	}
	if n != 1 {
		t.Errorf("counted %d faults, want 1: %v", n, after.Counts())
	}
}

// A transaction that fails and whose rollback is lost on the way is rolled
// back again: the Datastore would otherwise keep its locks for a minute,
// and a writer of what it read would wait and fail meanwhile.
func TestALostRollbackIsSentAgain(t *testing.T) {
	ctx := context.Background()
	in := dsfaults.New(dsfaults.Config{Seed: 1})
	db, c := open(t, in)
	key := db.NameKey("Thing", "read", nil)
	if err := db.Put(ctx, key, &thing{1}); err != nil {
		t.Fatal(err)
	}
	refused := errors.New("refused")
	in.FailNextRollback(codes.Unavailable)
	err := db.Update(ctx, func(tx *store.Tx) error {
		if _, err := tx.Get(key, &thing{}); err != nil {
			return err
		}
		return refused
	})
	if !errors.Is(err, refused) {
		t.Fatalf("Update: %v, want its own error", err)
	}
	if n := in.Counts()["Rollback Unavailable before the call"]; n != 1 {
		t.Fatalf("rollbacks failed: %d, want 1: %v", n, in.Counts())
	}
	// One try, no retry: the write must find no lock held on what the
	// failed transaction read.
	_, err = c.RunInTransaction(ctx, func(tx *datastore.Transaction) error {
		_, err := tx.Put(key, &thing{2})
		return err
	}, datastore.MaxAttempts(1))
	if err != nil {
		t.Errorf("a write of what the failed transaction read: %v, want it to commit at once", err)
	}
}
