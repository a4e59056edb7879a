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
		if ce, ok := body.(createdEntry); ok && !ce.created {
			c.JSON(http.StatusOK, body)
			return
		}
		c.JSON(status, body)
	}
}

// createdEntry is an entry that may be new (201) or found again (200), as
// a post repeating an externalId is.
type createdEntry struct {
	entry
	created bool
}

func (c createdEntry) MarshalJSON() ([]byte, error) { return json.Marshal(c.entry) }
