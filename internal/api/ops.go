package api

import (
	"context"
	"encoding/json"
	"net/http"

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

// statusEntry is an entry whose success status depends on what happened:
// new (201) or found again (200), as a post repeating an externalId is,
// or accepted for someone else's decision (202), as an invitation is.
type statusEntry struct {
	entry
	status int
}

func (c statusEntry) MarshalJSON() ([]byte, error) { return json.Marshal(c.entry) }
