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
)

// PageRequest asks for one page of a query's results.
type PageRequest struct {
	Count  int    // 1..100
	Offset int    // OpenSocial startIndex
	Cursor string // from a previous page's Next; empty for the first page
}

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
