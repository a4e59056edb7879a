package api

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"

	"github.com/gin-gonic/gin"
)

// An operation is the single implementation behind a REST route and a
// JSON-RPC method: it takes the caller's id and typed parameters and returns
// the response body (the same for REST and RPC) or an error.
type operation[P any] func(ctx context.Context, caller string, p P) (any, error)

// entry is the contract's single-object body.
type entry struct {
	Entry any `json:"entry"`
}

// rest adapts an operation to a REST route: build takes the parameters from
// the path, query and body; status is the success status.
func rest[P any](s *Server, status int, op operation[P], build func(*gin.Context) (P, error)) gin.HandlerFunc {
	op = withCursors(s, op)
	return func(c *gin.Context) {
		p, err := build(c)
		if err == nil {
			err = charge(c.Request.Context(), costOf(p))
		}
		if err != nil {
			s.fail(c, err)
			return
		}
		body, err := op(c.Request.Context(), caller(c), p)
		if err != nil {
			s.fail(c, err)
			return
		}
		if body == nil || status == http.StatusNoContent {
			c.Status(http.StatusNoContent)
			return
		}
		answer := status // per request: the route's own is shared
		if se, ok := body.(statusEntry); ok && se.status != 0 {
			answer = se.status
		}
		c.JSON(answer, body)
	}
}

// withCursors runs op with the cursor of its paging opened, and the cursor
// of its answer sealed (package cursor): clients see only sealed cursors,
// REST and JSON-RPC alike.
func withCursors[P any](s *Server, op operation[P]) operation[P] {
	return func(ctx context.Context, caller string, p P) (any, error) {
		if pg, ok := any(&p).(interface{ cursorOf() *string }); ok {
			inner, err := s.cursors.Open(ctx, *pg.cursorOf())
			if err != nil {
				return nil, err
			}
			*pg.cursorOf() = inner
		}
		body, err := op(ctx, caller, p)
		if err != nil || body == nil {
			return body, err
		}
		return s.sealAnswer(ctx, body)
	}
}

// cursorOf returns where the paging parameters keep their cursor.
func (p *pageParams) cursorOf() *string { return &p.Cursor }

// nextCursor returns where a collection keeps the cursor of its next page.
func (c *collection) nextCursor() *string { return &c.NextCursor }

// sealAnswer seals the cursor of an answer that is, or holds, a
// collection.
func (s *Server) sealAnswer(ctx context.Context, body any) (any, error) {
	v := reflect.New(reflect.TypeOf(body))
	v.Elem().Set(reflect.ValueOf(body))
	c, ok := v.Interface().(interface{ nextCursor() *string })
	if !ok || *c.nextCursor() == "" {
		return body, nil
	}
	sealed, err := s.cursors.Seal(ctx, *c.nextCursor())
	if err != nil {
		return nil, err
	}
	*c.nextCursor() = sealed
	return v.Elem().Interface(), nil
}

// statusEntry is an entry whose success status depends on what happened:
// new (201) or found again (200), as a post repeating an externalId is,
// or accepted for someone else's decision (202), as an invitation is.
type statusEntry struct {
	entry
	status int
}

func (c statusEntry) MarshalJSON() ([]byte, error) { return json.Marshal(c.entry) }
