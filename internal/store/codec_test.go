package store

import (
	"testing"
	"time"

	"cloud.google.com/go/datastore"
	"github.com/google/go-cmp/cmp"
)

// Every type a property may hold comes back as it went, names, indexing
// and times' zones with it; what is cut short or runs on is refused, and
// a type no property holds is not kept.
func TestCodecRoundTrip(t *testing.T) {
	parent := &datastore.Key{Kind: "User", Name: "42", Namespace: "ns"}
	key := &datastore.Key{Kind: "Activity", ID: 7, Namespace: "ns", Parent: parent}
	at := time.Date(2026, 12, 5, 1, 2, 3, 456789000, time.UTC)
	props := datastore.PropertyList{
		{Name: "nil"}, {Name: "s", Value: "héllo"}, {Name: "n", Value: int64(-12345678901)},
		{Name: "t", Value: true}, {Name: "f", Value: false}, {Name: "x", Value: 3.25, NoIndex: true},
		{Name: "utc", Value: at}, {Name: "local", Value: at.Local()}, {Name: "k", Value: key},
		{Name: "list", Value: []any{"a", int64(1), key, []byte{0, 1}}},
		{Name: "geo", Value: datastore.GeoPoint{Lat: 35.68, Lng: 139.69}},
		{Name: "e", Value: &datastore.Entity{Key: key, Properties: []datastore.Property{{Name: "inner", Value: "v", NoIndex: true}}}},
		{Name: "none", Value: (*datastore.Entity)(nil)}, {Name: "b", Value: []byte("bytes")},
		{Name: "nokey", Value: (*datastore.Key)(nil)},
		{Name: "zero", Value: time.Time{}}, {Name: "far", Value: time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)},
	}
	b, err := encodeEntry(nil, 99, props)
	if err != nil {
		t.Fatal(err)
	}
	gotAt, got, err := decodeEntry(b)
	if err != nil || gotAt != 99 {
		t.Fatalf("decode: %v, at %d", err, gotAt)
	}
	if z := got[15].Value.(time.Time); !z.IsZero() {
		t.Errorf("the zero time came back as %v", z)
	}
	if diff := cmp.Diff(props, got); diff != "" {
		t.Errorf("round trip (-sent +read):\n%s", diff)
	}
	if loc := got[7].Value.(time.Time).Location(); loc != time.Local {
		t.Errorf("a local time came back in %v", loc)
	}
	for n := range len(b) {
		if _, _, err := decodeEntry(b[:n]); err == nil {
			t.Fatalf("cut at %d of %d bytes: read", n, len(b))
		}
	}
	if _, _, err := decodeEntry(append(b, 0)); err == nil {
		t.Error("a byte past the end: read")
	}
	if _, err := encodeEntry(nil, 1, datastore.PropertyList{{Name: "odd", Value: struct{}{}}}); err == nil {
		t.Error("a value of no property's type was encoded")
	}
}

// Nothing read, however made, panics or allocates past what it holds.
func FuzzDecodeEntry(f *testing.F) {
	b, _ := encodeEntry(nil, 1, datastore.PropertyList{{Name: "a", Value: []any{"x", int64(2)}}})
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) { _, _, _ = decodeEntry(b) })
}
