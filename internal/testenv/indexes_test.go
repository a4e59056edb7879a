package testenv

import (
	"context"
	"os"
	"strings"
	"testing"

	"cloud.google.com/go/datastore"

	"socialstream/internal/dsemu"
	"socialstream/internal/store"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// The index check finds a query index.yaml does not cover, and passes
// one it does: the suite's proof of index coverage can fail.
func TestIndexCheckNamesAnUncoveredQuery(t *testing.T) {
	t.Parallel() // an emulator and a recorder of its own
	ctx := context.Background()
	// A Firestore emulator (which runs any query) and a recorder of its
	// own, so that these queries stay out of the suite's own check.
	emu, err := dsemu.Start(ctx, dsemu.Options{Engine: dsemu.Firestore})
	if err != nil {
		t.Fatal(err)
	}
	defer emu.Stop()
	r, err := startRecorder(emu.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	c, err := store.Open(ctx, Project, r.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ns := Namespace(t)
	var none []struct{}
	for _, q := range []*datastore.Query{
		datastore.NewQuery("Uncovered").Namespace(ns).FilterField("a", "=", "x").Order("-b").KeysOnly(),
		datastore.NewQuery("Uncovered").Namespace(ns).FilterField("a", "=", "y").Order("-b").KeysOnly(), // same shape
		datastore.NewQuery("Covered").Namespace(ns).FilterField("a", "=", "x").KeysOnly(),               // built-in index
	} {
		if _, err := c.GetAll(ctx, q, none); err != nil {
			t.Fatal(err)
		}
	}
	if got := r.Shapes(); len(got) != 2 {
		t.Fatalf("recorded shapes %q, want 2", got)
	}
	index, err := RepoFile("index.yaml")
	if err != nil {
		t.Fatal(err)
	}
	missing, err := r.checkIndexes(ctx, index, legacyHost, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) != 1 || !strings.HasPrefix(missing[0], "Uncovered a EQUAL order b DESCENDING") {
		t.Errorf("missing = %q, want the Uncovered query alone", missing)
	}
}
