// Package order names the places of entities in the feeds that list them
// newest first, so that no index a post writes has a constant prefix
// before a time-ordered value.
//
// A time-ordered property indexed on its own (seq) puts every new entity
// at the end of one index range, which Firestore caps near 500 writes a
// second; so does a composite index whose leading properties have few
// values (visibleTo = "public", then seq). In Datastore mode a property
// excluded from the indexes is excluded from the composite ones too, so
// seq cannot be kept in a composite and out of its own index. Instead an
// entity carries, in one indexed list property, a value per feed it is
// in: the feed's prefix, a slash and its seq in 11 digits of base 62
// ("u:42/01TUWMV4gzN"). The built-in index of that property
// orders the values, so a feed is one range of it, read newest first, and
// new values land at the ends of as many ranges as there are feeds. A
// feed that every post writes to (@all) is split in shards, each its own
// prefix, read together.
//
// Paging is by place, not by Datastore's cursors: a page's cursor names
// the last place it showed, and the next page's query starts below it.
// That lets a page merge several queries (the shards of a feed).
package order

import (
	"context"
	"encoding/base64"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"cloud.google.com/go/datastore"

	"socialstream/internal/derrors"
	"socialstream/internal/ids"
	"socialstream/internal/store"
)

// sep ends a prefix. Prefixes are made of ids, app ids, tags and names of
// audiences, none of which holds it; end, the byte after it, bounds a
// prefix's range.
const (
	sep = "/"
	end = "0"
)

// A seq is written in width digits of base 62, in an alphabet whose
// bytes ascend, so that values of one prefix sort as their seqs do: 11
// bytes where decimal takes 19, in every value of every index entry.
const (
	alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	width    = 11 // 62^11 > 2^63
)

// Value returns the value that places seq (not negative) in the feed of
// prefix.
func Value(prefix string, seq int64) string {
	var b [width]byte
	n := uint64(seq)
	for i := width - 1; i >= 0; i-- {
		b[i] = alphabet[n%62]
		n /= 62
	}
	return prefix + sep + string(b[:])
}

// Parse returns the prefix and seq of a value.
func Parse(v string) (prefix string, seq int64, ok bool) {
	i := strings.LastIndex(v, sep)
	if i < 0 || len(v) != i+1+width {
		return "", 0, false
	}
	var n uint64
	for _, c := range []byte(v[i+1:]) {
		d := strings.IndexByte(alphabet, c)
		if d < 0 || n > (math.MaxInt64-uint64(d))/62 {
			return "", 0, false
		}
		n = n*62 + uint64(d)
	}
	return v[:i], int64(n), true
}

// Place is a place in a feed, newest first: a seq. The zero Place is
// before the start of every feed.
type Place struct {
	Seq int64
}

// Before reports whether p comes before q in a feed: p is newer.
func (p Place) Before(q Place) bool { return p.Seq > q.Seq }

// Range returns q narrowed to the values of prop in the feed of prefix
// newer than after (a seq; 0: no bound) and older than from (zero: no
// bound), newest first.
func Range(q *datastore.Query, prop, prefix string, after int64, from Place) *datastore.Query {
	q = q.FilterField(prop, ">=", Value(prefix, after+1))
	if from.Seq > 0 {
		q = q.FilterField(prop, "<", Value(prefix, from.Seq))
	} else {
		q = q.FilterField(prop, "<", prefix+end)
	}
	return q.Order("-" + prop)
}

// RangeUp returns q narrowed to the values of prop in the feed of prefix
// newer than after, oldest first: the page just above a place.
func RangeUp(q *datastore.Query, prop, prefix string, after int64) *datastore.Query {
	return q.FilterField(prop, ">=", Value(prefix, after+1)).FilterField(prop, "<", prefix+end).Order(prop)
}

// Up turns a place function for queries read newest first into one for
// queries read oldest first (RangeUp), for Page's merge.
func Up[T any](place func(*datastore.Key, *T) Place) func(*datastore.Key, *T) Place {
	return func(k *datastore.Key, v *T) Place { return Place{Seq: -place(k, v).Seq} }
}

// Shard returns the shard of seq among n.
func Shard(seq int64, n int) int { return int(ids.Spread(seq) % uint64(n)) }

// ErrBadCursor is returned for a cursor that is malformed or belongs to
// another feed.
var ErrBadCursor = derrors.New(derrors.InvalidArgument, "invalid cursor")

// EncodeCursor returns the cursor of the page that follows place p of the
// feed named by tag.
func EncodeCursor(tag string, p Place) string {
	return base64.RawURLEncoding.EncodeToString([]byte(tag + "\x00" + strconv.FormatInt(p.Seq, 10)))
}

// DecodeCursor undoes EncodeCursor, checking the tag. The empty cursor is
// the zero Place.
func DecodeCursor(tag, s string) (Place, error) {
	if s == "" {
		return Place{}, nil
	}
	if len(s) > 2048 {
		return Place{}, ErrBadCursor
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Place{}, ErrBadCursor
	}
	gotTag, n, ok := strings.Cut(string(raw), "\x00")
	if !ok || gotTag != tag {
		return Place{}, ErrBadCursor
	}
	seq, err := strconv.ParseInt(n, 10, 64)
	if err != nil || seq <= 0 || strconv.FormatInt(seq, 10) != n {
		return Place{}, ErrBadCursor
	}
	return Place{Seq: seq}, nil
}

// Page returns one page of a feed read by one or more queries, each
// bounded by the page's cursor and ordered newest first (by Range): up to count results from offset, and
// the place of the last one, from which the next page goes on, when there
// are more. place says where a result is; keysOnly says the queries are
// keys-only (vals are then zero values). One query runs with the offset
// and limit as they are; several each ask for offset+count+1, and their
// results are merged, an entity found by two shown once; they run at
// once.
func Page[T any](ctx context.Context, db *store.DB, qs []*datastore.Query, keysOnly bool, place func(*datastore.Key, *T) Place, count, offset int) (keys []*datastore.Key, vals []T, last Place, more bool, err error) {
	if len(qs) == 1 {
		q := qs[0].Limit(count + 1)
		if offset > 0 {
			q = q.Offset(offset)
		}
		keys, vals, err = getAll[T](ctx, db, q, keysOnly)
		if err != nil {
			return nil, nil, Place{}, false, err
		}
	} else {
		type result struct {
			key   *datastore.Key
			val   T
			place Place
		}
		// The queries run at once: a page waits for the slowest, not for
		// their sum.
		type answer struct {
			keys []*datastore.Key
			vals []T
			err  error
		}
		answers := make([]answer, len(qs))
		var wg sync.WaitGroup
		for i, q := range qs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a := &answers[i]
				a.keys, a.vals, a.err = getAll[T](ctx, db, q.Limit(offset+count+1), keysOnly)
			}()
		}
		wg.Wait()
		var all []result
		seen := map[string]bool{}
		for _, a := range answers {
			if a.err != nil {
				return nil, nil, Place{}, false, a.err
			}
			for i, k := range a.keys {
				if id := k.String(); !seen[id] {
					seen[id] = true
					all = append(all, result{k, a.vals[i], place(k, &a.vals[i])})
				}
			}
		}
		slices.SortStableFunc(all, func(a, b result) int {
			switch {
			case a.place.Before(b.place):
				return -1
			case b.place.Before(a.place):
				return 1
			}
			return 0
		})
		all = all[min(offset, len(all)):]
		for _, r := range all[:min(count+1, len(all))] {
			keys, vals = append(keys, r.key), append(vals, r.val)
		}
	}
	if len(keys) > count {
		keys, vals, more = keys[:count], vals[:count], true
	}
	if n := len(keys); n > 0 {
		last = place(keys[n-1], &vals[n-1])
	}
	return keys, vals, last, more, nil
}

// getAll runs q: into values of T, or, keys-only, beside zero ones.
func getAll[T any](ctx context.Context, db *store.DB, q *datastore.Query, keysOnly bool) ([]*datastore.Key, []T, error) {
	var vals []T
	if keysOnly {
		keys, err := db.GetAll(ctx, q, nil)
		return keys, make([]T, len(keys)), err
	}
	keys, err := db.GetAll(ctx, q, &vals)
	return keys, vals, err
}

// Load loads ps into dst, a pointer to a struct, leaving out the
// properties named skip (places, which the struct does not hold).
func Load(dst any, ps []datastore.Property, skip ...string) error {
	keep := ps[:0:0]
	for _, p := range ps {
		if !slices.Contains(skip, p.Name) {
			keep = append(keep, p)
		}
	}
	return datastore.LoadStruct(dst, keep)
}

// Save saves src, a pointer to a struct, with the properties of places.
func Save(src any, places ...datastore.Property) ([]datastore.Property, error) {
	ps, err := datastore.SaveStruct(src)
	if err != nil {
		return nil, err
	}
	return append(ps, places...), nil
}
