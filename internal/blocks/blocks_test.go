package blocks_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"socialstream/internal/blocks"
	"socialstream/internal/store"
	"socialstream/internal/testenv"
	"socialstream/internal/viewer"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// A block is seen from either side in one lookup, listed newest first,
// and an erasure takes every block made by or of the erased person, with
// its line in the other's state.
func TestBlocks(t *testing.T) {
	ctx := context.Background()
	db := testenv.DB(t)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	set := func(blocker, blocked string, at time.Time) {
		t.Helper()
		err := db.Update(ctx, func(tx *store.Tx) error {
			l := tx.Lookup()
			st := viewer.Read(l, blocker)
			if err := l.Run(ctx); err != nil {
				return err
			}
			st.Edit().SetBlock(blocked, true)
			if err := st.Save(tx); err != nil {
				return err
			}
			return blocks.Set(tx, blocker, blocked, at)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	set("ann", "bob", base)
	set("ann", "cat", base.Add(time.Minute))
	set("dan", "ann", base.Add(2*time.Minute))

	l := db.Lookup()
	annBob, bobAnn, bobCat := blocks.ReadBetween(l, "ann", "bob"), blocks.ReadBetween(l, "bob", "ann"), blocks.ReadBetween(l, "bob", "cat")
	if err := l.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if !annBob.Any() || !annBob.First() || !bobAnn.Any() || bobAnn.First() || bobCat.Any() {
		t.Errorf("between: ann-bob %v/%v, bob-ann %v/%v, bob-cat %v", annBob.Any(), annBob.First(), bobAnn.Any(), bobAnn.First(), bobCat.Any())
	}
	if got, _, err := blocks.List(ctx, db, "ann", store.PageRequest{Count: 10}); err != nil || !slices.Equal(got, []string{"cat", "bob"}) {
		t.Errorf("ann blocks %v (%v), want cat then bob", got, err)
	}
	// Erasing ann takes her two blocks and dan's of her, and her line in
	// dan's state.
	if n, err := blocks.Erase(ctx, db, "ann", 100); err != nil || n != 3 {
		t.Fatalf("erased %d blocks, %v; want 3", n, err)
	}
	for _, who := range []string{"ann", "dan"} {
		if got, _, err := blocks.List(ctx, db, who, store.PageRequest{Count: 10}); err != nil || len(got) != 0 {
			t.Errorf("%s blocks %v after the erasure (%v)", who, got, err)
		}
	}
	l = db.Lookup()
	dan := viewer.Read(l, "dan")
	if err := l.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if !dan.KnowsPeople() || dan.Blocked("ann") {
		t.Errorf("dan's state still lists ann (knows %v)", dan.KnowsPeople())
	}
}
