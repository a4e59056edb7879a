// Package paging holds what a request for a page says, which the faces
// build from their parameters and the services read: how many, from
// where, and when the request began. It reads nothing and decides
// nothing, so that a face asks for a page without importing the store.
package paging

import (
	"context"
	"time"
)

// Request asks for one page of a query's results.
type Request struct {
	Count  int    // 1..100
	Offset int    // OpenSocial startIndex
	Cursor string // from a previous page's Next; empty for the first page
}

type begunKey struct{}

// WithBegun returns ctx for a request begun at t: its page lookups show
// what changed before t, and share one ask for the marks of changes
// (a lookup with no such context, what changed before it began).
func WithBegun(ctx context.Context, t time.Time) context.Context {
	return context.WithValue(ctx, begunKey{}, t)
}

// Begun returns when the request of ctx began, or else at: the earlier
// of the two.
func Begun(ctx context.Context, at time.Time) time.Time {
	if t, ok := ctx.Value(begunKey{}).(time.Time); ok && t.Before(at) {
		return t
	}
	return at
}
