package markers_test

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"

	"socialstream/internal/derrors"
	"socialstream/internal/ids"
	"socialstream/internal/markers"
	"socialstream/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// A marker moves only forward, whichever of two devices moves it last;
// feeds are checked; one person's markers are theirs alone, exported and
// erased together.
func TestMarkersMoveForward(t *testing.T) {
	ctx := context.Background()
	db := testenv.DB(t)
	s, err := markers.New(db, noNotices{})
	if err != nil {
		t.Fatal(err)
	}
	gen := ids.New()
	older, newer := ids.Format(gen.Next()), ids.Format(gen.Next())
	if got, err := s.Get(ctx, "ann", []string{"home"}); err != nil || len(got) != 0 {
		t.Fatalf("a marker never moved: %v, %v", got, err)
	}
	// Two devices at once, the newer position and the older.
	var wg sync.WaitGroup
	for _, id := range []string{newer, older} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.Move(ctx, "ann", map[string]markers.Marker{"home": {LastReadID: id}}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	got, err := s.Get(ctx, "ann", []string{"home", "notifications"})
	if err != nil || len(got) != 1 || got["home"].LastReadID != newer {
		t.Fatalf("after both moves: %v, %v; want home at %s alone", got, err, newer)
	}
	if got, err := s.Move(ctx, "ann", map[string]markers.Marker{"home": {LastReadID: older}, "group:42": {LastReadID: older}}); err != nil ||
		got["home"].LastReadID != newer || got["group:42"].LastReadID != older {
		t.Errorf("moving back: %v, %v; want home kept at %s", got, err, newer)
	}
	for _, bad := range []map[string]markers.Marker{
		{"elsewhere": {LastReadID: newer}},
		{"home": {LastReadID: "not an id"}},
		{},
	} {
		if _, err := s.Move(ctx, "ann", bad); !errors.Is(err, derrors.InvalidArgument) {
			t.Errorf("Move(%v): %v, want invalid", bad, err)
		}
	}
	if _, err := s.Move(ctx, "bob", map[string]markers.Marker{"mentions": {LastReadID: older}}); err != nil {
		t.Fatal(err)
	}
	all, err := markers.All(ctx, db, "ann")
	if err != nil || len(all) != 2 || all["home"].LastReadID != newer {
		t.Errorf("ann's export: %v, %v", all, err)
	}
	if n, err := markers.Erase(ctx, db, "ann", 100); err != nil || n != 2 {
		t.Errorf("erased %d, %v; want ann's 2", n, err)
	}
	if all, err := markers.All(ctx, db, "ann"); err != nil || len(all) != 0 {
		t.Errorf("ann's markers after the erasure: %v, %v", all, err)
	}
	if all, err := markers.All(ctx, db, "bob"); err != nil || len(all) != 1 {
		t.Errorf("bob's markers after ann's erasure: %v, %v", all, err)
	}
}

// noNotices is a reader's notifications that this test leaves alone: no
// notifications feed marker is moved here.
type noNotices struct{}

func (noNotices) ReadThrough(context.Context, string, int64) error {
	return errors.New("no notifications here")
}
