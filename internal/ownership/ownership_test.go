package ownership_test

import (
	"path/filepath"
	"slices"
	"testing"

	"socialstream/internal/ownership"
	"socialstream/internal/testenv"
)

// No package names another's kinds, keys or entity structs.
func TestNoPackageNamesAnotherOwnersEntities(t *testing.T) {
	root, err := testenv.RepoFile("")
	if err != nil {
		t.Fatal(err)
	}
	owners, err := ownership.Owners(root)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := ownership.Check(root, "socialstream", owners)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		t.Errorf("%s: only its owner may name it", v)
	}
}

// The check finds what it is for, and nothing else: a kind, a key and an
// entity struct named outside their owner, not a view, a function or a
// local variable of the same name; test fixtures may name them, and only
// tests may import fixtures.
func TestCheckFindsAViolation(t *testing.T) {
	vs, err := ownership.Check(filepath.Join("testdata", "src"), "example", []string{"internal/owner"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range vs {
		got = append(got, v.String())
	}
	want := []string{
		"internal/leaky/leaky.go:5: ownertest.(test fixtures, imported outside tests)",
		"internal/other/other.go:11: owner.ThingKey",
		"internal/other/other.go:12: owner.Thing",
		"internal/other/other.go:13: owner.KindThing",
		"internal/other/other.go:18: other.\"Thing\" (a kind written as a string)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations = %q\nwant %q", got, want)
	}
}

// Every indexed property of every entity is there for a query that
// filters or orders by it; the rest are noindex.
func TestEveryIndexedPropertyIsQueried(t *testing.T) {
	root, err := testenv.RepoFile("")
	if err != nil {
		t.Fatal(err)
	}
	owners, err := ownership.Owners(root)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := ownership.Unqueried(root, owners)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		t.Errorf("%s is indexed, and no query filters or orders by it: make it noindex", p)
	}
}

// The check finds an indexed property no query uses, and counts the
// names a query takes from a literal, a range over literals, or its
// caller.
func TestUnqueriedFindsAnIndexedPropertyNoQueryUses(t *testing.T) {
	ps, err := ownership.Unqueried(filepath.Join("testdata", "src"), []string{"internal/owner"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range ps {
		got = append(got, p.String())
	}
	if want := []string{"owner.Thing.seen"}; !slices.Equal(got, want) {
		t.Errorf("unqueried = %q, want %q", got, want)
	}
}
