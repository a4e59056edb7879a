package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"

	"socialstream/internal/derrors"
)

var (
	errNoRoute      = derrors.New(derrors.NotFound, "no such endpoint")
	errNoMethod     = derrors.New(derrors.InvalidArgument, "method not allowed here")
	errTooLarge     = derrors.New(derrors.TooLarge, fmt.Sprintf("request body over %d bytes", MaxBody))
	errBadQuery     = derrors.New(derrors.InvalidArgument, "malformed query string")
	errNotFromQueue = derrors.New(derrors.PermissionDenied, "task and cron endpoints accept only Cloud Tasks' and App Engine cron's requests")
)

// errorBody is the contract's error envelope.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// fail writes err as the error envelope and stops the handler chain. 4xx
// are logged at Warn, 5xx at Error; a 5xx shows the client no details.
func (s doors) fail(c *gin.Context, err error) {
	status, msg := derrors.Status(err)
	if errors.Is(err, errNoMethod) {
		status = http.StatusMethodNotAllowed
	}
	status = s.logFailure(c, status, err)
	if status == http.StatusServiceUnavailable {
		c.Header("Retry-After", "1") // what we answer 503 for passes in moments
	}
	c.AbortWithStatusJSON(status, errorBody{errorDetail{Code: status, Message: msg}})
}

// logFailure logs a request that did not succeed, by what it was, and
// returns the status to answer: a 5xx at Error (someone must look), a
// refusal at Warn, and a request its client abandoned (its context
// canceled, whatever error that surfaced as) at Info with
// derrors.StatusClientClosed, since no one can fix it and no one reads the
// answer.
func (s doors) logFailure(c *gin.Context, status int, err error) int {
	ctx := c.Request.Context()
	attrs := []any{"method", c.Request.Method, "path", c.Request.URL.Path, "err", err}
	switch {
	case status == derrors.StatusClientClosed || ctx.Err() != nil:
		s.log.InfoContext(ctx, "request abandoned by its client", attrs...)
		return derrors.StatusClientClosed
	case status >= 500:
		s.log.ErrorContext(ctx, "request failed", append(attrs, "status", status)...)
	default:
		s.log.WarnContext(ctx, "request refused", append(attrs, "status", status)...)
	}
	return status
}

// decodeJSON reads the request body, a JSON object, into dst. Unknown fields
// are ignored; anything else that does not fit is a 400, an oversized body
// a 413.
func decodeJSON(r io.Reader, dst any) error {
	data, err := io.ReadAll(r)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return errTooLarge
		}
		return derrors.New(derrors.InvalidArgument, "could not read the request body")
	}
	return unmarshal(data, dst)
}

func unmarshal(data []byte, dst any) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return derrors.New(derrors.InvalidArgument, "a JSON object body is required")
	}
	if data[0] != '{' {
		return derrors.New(derrors.InvalidArgument, "the body must be a JSON object")
	}
	if err := checkText(data); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(dst); err != nil {
		return jsonError(err)
	}
	if dec.More() {
		return derrors.New(derrors.InvalidArgument, "unexpected data after the JSON object")
	}
	return nil
}

func jsonError(err error) error {
	var de *derrors.Error
	if errors.As(err, &de) {
		return err // a parameter's own check (list)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" {
			return derrors.New(derrors.InvalidArgument, fmt.Sprintf("field %q must be of JSON type %s", te.Field, jsonType(te.Type.Kind().String())))
		}
		return derrors.New(derrors.InvalidArgument, "the body has the wrong JSON type")
	}
	return derrors.New(derrors.InvalidArgument, "malformed JSON")
}

func jsonType(goKind string) string {
	switch goKind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "slice", "array":
		return "array"
	case "map", "struct", "ptr":
		return "object"
	default:
		return "number"
	}
}
