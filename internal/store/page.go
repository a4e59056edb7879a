package store

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"cloud.google.com/go/datastore"
	"google.golang.org/api/iterator"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"socialstream/internal/derrors"
	"socialstream/internal/paging"
)

// PageRequest asks for one page of a query's results (package paging
// holds it, for the faces, which do not import the store).
type PageRequest = paging.Request

// ErrBadCursor is returned for a cursor that is malformed or belongs to
// another query.
var ErrBadCursor = derrors.New(derrors.InvalidArgument, "invalid cursor")

// EncodeCursor wraps a Datastore cursor with the tag of the query it belongs
// to, so that a cursor of one feed cannot be replayed against another.
func EncodeCursor(tag string, c datastore.Cursor) string {
	return base64.RawURLEncoding.EncodeToString([]byte(tag + "\x00" + c.String()))
}

// DecodeCursor undoes EncodeCursor, checking the tag.
func DecodeCursor(tag, s string) (datastore.Cursor, error) {
	if len(s) > 4096 {
		return datastore.Cursor{}, ErrBadCursor
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return datastore.Cursor{}, ErrBadCursor
	}
	gotTag, ds, ok := strings.Cut(string(raw), "\x00")
	if !ok || gotTag != tag || ds == "" {
		return datastore.Cursor{}, ErrBadCursor
	}
	c, err := datastore.DecodeCursor(ds)
	if err != nil {
		return datastore.Cursor{}, ErrBadCursor
	}
	return c, nil
}

// Page runs q for one page: up to p.Count results, and the cursor of the
// next page if there is one (it asks for one result more to know). For a
// keys-only query, vals holds zero values. tag names the query for its cursors.
func Page[T any](ctx context.Context, db *DB, q *datastore.Query, tag string, p PageRequest) (keys []*datastore.Key, vals []T, next string, err error) {
	q = q.Limit(p.Count + 1)
	if p.Offset > 0 {
		q = q.Offset(p.Offset)
	}
	if p.Cursor != "" {
		c, err := DecodeCursor(tag, p.Cursor)
		if err != nil {
			return nil, nil, "", err
		}
		q = q.Start(c)
	}
	it := db.client.Run(ctx, q)
	for {
		var v T
		k, err := it.Next(&v)
		if errors.Is(err, iterator.Done) {
			return keys, vals, "", nil
		}
		if err != nil {
			if p.Cursor != "" && status.Code(err) == codes.InvalidArgument {
				// The envelope was ours but what it wraps is not a cursor
				// Datastore made: only the client can have sent that.
				return nil, nil, "", ErrBadCursor
			}
			return nil, nil, "", fmt.Errorf("store.Page(%s): %w", tag, Convert(err))
		}
		if len(keys) == p.Count {
			// One more exists: the cursor after the last one returned is
			// where the next page starts.
			return keys, vals, next, nil
		}
		keys = append(keys, k)
		vals = append(vals, v)
		if len(keys) == p.Count {
			c, err := it.Cursor()
			if err != nil {
				return nil, nil, "", fmt.Errorf("store.Page(%s): cursor: %w", tag, err)
			}
			next = EncodeCursor(tag, c)
		}
	}
}

// Each runs q a page of batch results at a time, each page from the cursor
// the last one ended at, and calls f with every result in order, so that
// a long walk (an export) holds one page in memory. It stops at f's first
// error.
func Each[T any](ctx context.Context, db *DB, q *datastore.Query, batch int, f func(*datastore.Key, *T) error) error {
	var cursor datastore.Cursor
	for started := false; ; started = true {
		pq := q.Limit(batch)
		if started {
			pq = pq.Start(cursor)
		}
		it := db.client.Run(ctx, pq)
		n := 0
		for {
			var v T
			k, err := it.Next(&v)
			if errors.Is(err, iterator.Done) {
				break
			}
			if err != nil {
				return fmt.Errorf("store.Each: %w", Convert(err))
			}
			n++
			if err := f(k, &v); err != nil {
				return err
			}
		}
		if n < batch {
			return nil
		}
		c, err := it.Cursor()
		if err != nil {
			return fmt.Errorf("store.Each: cursor: %w", Convert(err))
		}
		cursor = c
	}
}

// PageFiltered is Page over only the results keep keeps (what the reader
// may see, say): full pages of p.Count kept results, after p.Offset kept
// ones, read in batches until the page is full and one more kept result
// says there is a next page, or the query is done, or scan results have
// been read. The next page starts right after the last result returned,
// so its cursor says nothing of the results left out; only when a page
// reads scan results and keeps none does it start after the last one read
// (a Datastore cursor, which the API seals). keep is called once a batch,
// and returns what it keeps of it.
func PageFiltered[T any](ctx context.Context, db *DB, q *datastore.Query, tag string, p PageRequest, scan int,
	keep func(keys []*datastore.Key, vals []T) ([]bool, error)) (keys []*datastore.Key, vals []T, next string, err error) {
	var start *datastore.Cursor
	if p.Cursor != "" {
		c, err := DecodeCursor(tag, p.Cursor)
		if err != nil {
			return nil, nil, "", err
		}
		start = &c
	}
	skip, scanned, batch := p.Offset, 0, max(p.Count+1, 20)
	for {
		bq := q.Limit(batch)
		if start != nil {
			bq = bq.Start(*start)
		}
		bk, bv, after, err := runBatch[T](ctx, db, bq, p.Cursor != "" && scanned == 0)
		if err != nil {
			return nil, nil, "", fmt.Errorf("store.PageFiltered(%s): %w", tag, err)
		}
		kept, err := keep(bk, bv)
		if err != nil {
			return nil, nil, "", err
		}
		for i := range bk {
			switch {
			case !kept[i]:
			case skip > 0:
				skip--
			case len(keys) == p.Count:
				return keys, vals, next, nil // one more: the next page is there
			default:
				keys, vals = append(keys, bk[i]), append(vals, bv[i])
				next = EncodeCursor(tag, after[i])
			}
		}
		scanned += len(bk)
		if len(bk) < batch {
			return keys, vals, "", nil
		}
		start = &after[len(after)-1]
		if scanned >= scan {
			if len(keys) == 0 {
				next = EncodeCursor(tag, *start)
			}
			return keys, vals, next, nil
		}
	}
}

// runBatch runs q and returns its results with the cursor after each.
// given says the query starts at a client's cursor.
func runBatch[T any](ctx context.Context, db *DB, q *datastore.Query, given bool) ([]*datastore.Key, []T, []datastore.Cursor, error) {
	var keys []*datastore.Key
	var vals []T
	var after []datastore.Cursor
	it := db.client.Run(ctx, q)
	for {
		var v T
		k, err := it.Next(&v)
		if errors.Is(err, iterator.Done) {
			return keys, vals, after, nil
		}
		if err != nil {
			if given && status.Code(err) == codes.InvalidArgument {
				return nil, nil, nil, ErrBadCursor
			}
			return nil, nil, nil, Convert(err)
		}
		c, err := it.Cursor()
		if err != nil {
			return nil, nil, nil, Convert(err)
		}
		keys, vals, after = append(keys, k), append(vals, v), append(after, c)
	}
}
