package meter_test

import (
	"context"
	"os"
	"testing"

	"cloud.google.com/go/datastore"
	"github.com/google/go-cmp/cmp"

	"socialstream/internal/meter"
	"socialstream/internal/store"
	"socialstream/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

type post struct {
	UserID string   `datastore:"userId"`
	Seq    int64    `datastore:"seq"`
	Tags   []string `datastore:"tags"`
	Body   string   `datastore:"body,noindex"`
}

const indexes = `
indexes:
- kind: Post
  properties:
  - name: userId
  - name: seq
    direction: desc
- kind: Post
  properties:
  - name: tags
  - name: seq
    direction: desc
- kind: Other
  properties:
  - name: userId
  - name: seq
`

// The meter counts each call's bill by the published rules, as the
// emulator answers it.
func TestMeterCountsWhatIsBilled(t *testing.T) {
	m, err := meter.New([]byte(indexes))
	if err != nil {
		t.Fatal(err)
	}
	db := testenv.DBWith(t, m.Option())
	ctx := context.Background()
	a, b, gone := db.NameKey("Post", "a", nil), db.NameKey("Post", "b", nil), db.NameKey("Post", "gone", nil)
	m.Take()

	// Two entities: each with userId, seq and three tags indexed (5
	// values: 10 built-in entries), 1 entry in (userId, seq) and 3 in
	// (tags, seq); the body is not indexed.
	p := &post{UserID: "u", Seq: 7, Tags: []string{"x", "y", "z"}, Body: "not indexed"}
	if err := db.PutMulti(ctx, []*datastore.Key{a, b}, []*post{p, p}); err != nil {
		t.Fatal(err)
	}
	got := m.Take()
	if got.Writes != 2 || got.IndexEntries != 2*(10+1+3) || got.Bytes <= 0 || got.Calls["Commit"] != 1 {
		t.Errorf("a put of two: %v", got)
	}

	// A lookup of three, one missing; a query of two entities; a
	// keys-only query; one that finds nothing.
	l := db.Lookup()
	for _, k := range []*datastore.Key{a, b, gone} {
		l.Add(k, &post{})
	}
	if err := l.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := db.GetAll(ctx, db.Query("Post").FilterField("userId", "=", "u"), &[]post{}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.GetAll(ctx, db.Query("Post").FilterField("tags", "=", "x").KeysOnly(), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.GetAll(ctx, db.Query("Post").FilterField("userId", "=", "nobody"), &[]post{}); err != nil {
		t.Fatal(err)
	}
	got = m.Take()
	want := meter.Bill{Calls: map[string]int{"Lookup": 1, "RunQuery": 3}, Found: 2, Missing: 1, Queries: 3,
		EntityResults: 2, KeyResults: 2, Empty: 2}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reads mismatch (-want +got):\n%s", diff)
	}
	// 3 keys, 2 entities from a query, a keys-only query, an empty one.
	if got.Reads() != 3+2+1+1 {
		t.Errorf("reads: %d, want 7", got.Reads())
	}

	// An increment and an append in one commit, and a delete: two writes
	// with their transforms; the appended tag adds its 2 built-in entries
	// and 1 in (tags, seq).
	err = db.Update(ctx, func(tx *store.Tx) error {
		if err := tx.Increment(a, map[string]int64{"seq": 1}); err != nil {
			return err
		}
		if err := tx.Transform(b, datastore.AppendMissingElements("tags", "w")); err != nil {
			return err
		}
		return tx.Delete(gone)
	})
	if err != nil {
		t.Fatal(err)
	}
	got = m.Take()
	if got.Writes != 2 || got.Transforms != 2 || got.Deletes != 1 || got.IndexEntries != 3 || got.Calls["BeginTransaction"] != 1 {
		t.Errorf("transforms and a delete: %v %v", got, got.Calls)
	}
}

// An ancestor index holds an entity once for each of its ancestors,
// itself included; index.yaml that is not YAML is refused.
func TestMeterStoredEntries(t *testing.T) {
	if _, err := meter.New([]byte("indexes: [")); err == nil {
		t.Error("bad YAML: no error")
	}
	m, err := meter.New([]byte("indexes:\n- kind: Child\n  ancestor: yes\n  properties:\n  - name: n\n"))
	if err != nil {
		t.Fatal(err)
	}
	db := testenv.DBWith(t, m.Option())
	ctx := context.Background()
	child := db.NameKey("Child", "c", db.NameKey("Parent", "p", nil))
	type c struct {
		N int64 `datastore:"n"`
	}
	m.Take()
	if err := db.Put(ctx, child, &c{N: 1}); err != nil {
		t.Fatal(err)
	}
	if got := m.Take(); got.IndexEntries != 2+2 {
		t.Errorf("a child in an ancestor index: %d entries, want 2 built-in and 2 for its two ancestors", got.IndexEntries)
	}
}
