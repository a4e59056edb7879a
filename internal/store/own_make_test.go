package store_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sync/errgroup"
	"google.golang.org/api/option"
	"google.golang.org/grpc"

	"socialstream/internal/store"
	"socialstream/internal/testenv"
)

type makerKey struct{}

type madeOnce struct {
	Value string `datastore:"value,noindex"`
}

// openTransactions counts in open, by the maker a call's context names
// (makerKey), the transactions begun and not yet ended.
func openTransactions(open []atomic.Int32) option.ClientOption {
	return option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(func(ctx context.Context, m string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		err := invoker(ctx, m, req, reply, cc, opts...)
		i, ok := ctx.Value(makerKey{}).(int)
		switch {
		case !ok:
		case strings.HasSuffix(m, "/BeginTransaction") && err == nil:
			open[i].Add(1)
		case (strings.HasSuffix(m, "/Commit") || strings.HasSuffix(m, "/Rollback")) && open[i].Load() > 0:
			open[i].Add(-1)
		}
		return err
	}))
}

// MakeOnce makes what it writes before its transaction, never in it (a
// key pair's generation held the transaction's locks, and those making
// it at once waited on each other and made theirs again each try); of
// several making it at once, all end holding the one that was stored.
func TestMakeOnceMakesOutsideItsTransaction(t *testing.T) {
	var open [4]atomic.Int32
	db := testenv.DBWith(t, openTransactions(open[:]))
	ctx := context.Background()
	key := db.NameKey("MadeOnce", "the", nil)
	var mu sync.Mutex
	made, inTx := 0, 0
	var got [4]madeOnce
	var g errgroup.Group
	for i := range got {
		g.Go(func() error {
			ctx := context.WithValue(ctx, makerKey{}, i)
			return store.MakeOnce(ctx, db, key, &got[i], func(m *madeOnce) bool { return m.Value == "" }, func(m *madeOnce) error {
				mu.Lock()
				defer mu.Unlock()
				made++
				if open[i].Load() > 0 {
					inTx++
				}
				m.Value = string(rune('a' + i))
				return nil
			})
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	var stored madeOnce
	if ok, err := db.Get(ctx, key, &stored); err != nil || !ok || stored.Value == "" {
		t.Fatalf("stored: %+v %v %v", stored, ok, err)
	}
	for i, g := range got {
		if g != stored {
			t.Errorf("maker %d holds %+v, the store %+v", i, g, stored)
		}
	}
	if made == 0 || inTx != 0 {
		t.Errorf("made %d times, %d of them with a transaction open; want none in one", made, inTx)
	}
	// Once stored, it is read, not made.
	before := made
	var again madeOnce
	if err := store.MakeOnce(ctx, db, key, &again, func(m *madeOnce) bool { return m.Value == "" }, func(m *madeOnce) error {
		made++
		return nil
	}); err != nil || again != stored || made != before {
		t.Errorf("a later call: %+v %v, made %d more", again, err, made-before)
	}
}
