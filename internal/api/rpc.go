package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"

	"socialstream/internal/derrors"
)

// MaxBatch is the most calls one JSON-RPC batch may hold.
const MaxBatch = 50

type rpcFunc func(ctx context.Context, caller string, params json.RawMessage) (any, error)

// method adapts an operation to JSON-RPC: params decode into P.
func method[P any](op operation[P]) rpcFunc {
	return func(ctx context.Context, caller string, raw json.RawMessage) (any, error) {
		var p P
		if len(bytes.TrimSpace(raw)) > 0 && string(bytes.TrimSpace(raw)) != "null" {
			if err := unmarshal(raw, &p); err != nil {
				if cerr := charge(ctx, costCall); cerr != nil {
					return nil, cerr
				}
				return nil, err
			}
		}
		if err := charge(ctx, costOf(p)); err != nil {
			return nil, err
		}
		return op(ctx, caller, p)
	}
}

func (s *Server) rpcMethods() map[string]rpcFunc {
	return map[string]rpcFunc{
		"people.get":         method(s.peopleGet),
		"people.create":      method(s.follow),
		"people.delete":      method(s.unfollow),
		"groups.get":         method(s.groupsGet),
		"groups.create":      method(s.groupsCreate),
		"groups.join":        method(s.join),
		"groups.leave":       method(s.leave),
		"activities.get":     method(s.activitiesGet),
		"activities.create":  method(s.activitiesCreate),
		"activities.delete":  method(s.activitiesDelete),
		"comments.get":       method(s.commentsGet),
		"comments.create":    method(s.commentsCreate),
		"comments.delete":    method(s.commentsDelete),
		"likes.get":          method(s.likesGet),
		"likes.create":       method(s.likesCreate),
		"likes.delete":       method(s.likesDelete),
		"notifications.get":  method(s.notificationsGet),
		"notifications.read": method(s.notificationsRead),
	}
}

// rpcCall is one decoded call; err is set when the call itself is malformed,
// to be answered in its own slot.
type rpcCall struct {
	ID     json.RawMessage
	Method string
	Params json.RawMessage
	err    error
}

type rpcResponse struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Result any             `json:"result,omitempty"`
	Error  *errorDetail    `json:"error,omitempty"`
}

// parseRPC decodes a JSON-RPC body: one call object or a batch array. A body
// that is neither is an error for the whole request; a malformed call in a
// batch is an error in that call's slot only.
func parseRPC(data []byte) (calls []rpcCall, batch bool, err error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, false, derrors.New(derrors.InvalidArgument, "a JSON-RPC call or batch is required")
	}
	var raws []json.RawMessage
	switch data[0] {
	case '[':
		if err := json.Unmarshal(data, &raws); err != nil {
			return nil, true, derrors.New(derrors.InvalidArgument, "malformed JSON")
		}
		if len(raws) == 0 {
			return nil, true, derrors.New(derrors.InvalidArgument, "empty batch")
		}
		if len(raws) > MaxBatch {
			return nil, true, derrors.New(derrors.InvalidArgument, fmt.Sprintf("a batch holds at most %d calls", MaxBatch))
		}
		batch = true
	case '{':
		if !json.Valid(data) {
			return nil, false, derrors.New(derrors.InvalidArgument, "malformed JSON")
		}
		raws = []json.RawMessage{data}
	default:
		return nil, false, derrors.New(derrors.InvalidArgument, "the body must be a JSON-RPC object or array")
	}
	calls = make([]rpcCall, len(raws))
	for i, raw := range raws {
		var c struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := unmarshal(raw, &c); err != nil {
			calls[i].err = err
			continue
		}
		calls[i] = rpcCall{ID: c.ID, Method: c.Method, Params: c.Params}
		if c.Method == "" {
			calls[i].err = derrors.New(derrors.InvalidArgument, "method is required")
		}
	}
	return calls, batch, nil
}

func (s *Server) serveRPC(c *gin.Context) {
	data, err := io.ReadAll(c.Request.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			s.fail(c, errTooLarge)
			return
		}
		s.fail(c, derrors.New(derrors.InvalidArgument, "could not read the request body"))
		return
	}
	calls, batch, err := parseRPC(data)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]rpcResponse, len(calls))
	for i, call := range calls {
		out[i] = s.runRPC(c.Request.Context(), caller(c), call)
	}
	if batch {
		c.JSON(http.StatusOK, out)
		return
	}
	c.JSON(http.StatusOK, out[0])
}

func (s *Server) runRPC(ctx context.Context, caller string, call rpcCall) rpcResponse {
	resp := rpcResponse{ID: call.ID}
	err := call.err
	f, ok := s.rpc[call.Method]
	switch {
	case err == nil && ok:
		resp.Result, err = f(ctx, caller, call.Params)
	case err == nil:
		err = derrors.New(derrors.NotFound, "unknown method "+call.Method)
		fallthrough
	default:
		// Each call of a batch counts, the malformed ones too.
		if cerr := charge(ctx, costCall); cerr != nil {
			err = cerr
		}
	}
	if err != nil {
		status, msg := derrors.Status(err)
		if status >= 500 {
			s.log.ErrorContext(ctx, "rpc call failed", "method", call.Method, "err", err)
		} else {
			s.log.WarnContext(ctx, "rpc call refused", "method", call.Method, "status", status, "err", err)
		}
		resp.Result = nil
		resp.Error = &errorDetail{Code: status, Message: msg}
	}
	return resp
}
