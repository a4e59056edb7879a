// Package derrors defines the error kinds shared by every domain package and
// the one place where a kind becomes an HTTP status.
//
// Domain packages wrap a kind with a message meant for the client:
//
//	return derrors.New(derrors.InvalidArgument, "title is required")
//
// and add operation context with fmt.Errorf("...: %w", err) as usual. The API
// layer shows the client only the message given to New, never the wrapped
// chain, so internal details do not leak.
package derrors

import (
	"context"
	"errors"
	"net/http"
)

// Kinds of error. Compare with errors.Is.
var (
	InvalidArgument  = errors.New("invalid argument")
	Unauthenticated  = errors.New("unauthenticated")
	PermissionDenied = errors.New("permission denied")
	NotFound         = errors.New("not found")
	Conflict         = errors.New("conflict")
	TooLarge         = errors.New("request too large")
	RateLimited      = errors.New("rate limited")
	// Unavailable is a transient failure of a dependency (a contended
	// transaction, a timeout); the client may retry.
	Unavailable = errors.New("unavailable")
	// Unimplemented is a method the service does not have (JSON-RPC's
	// notImplemented).
	Unimplemented = errors.New("not implemented")
	// Canceled is a request its client abandoned (its context canceled):
	// nothing failed that anyone could fix, and no one reads the answer.
	Canceled = errors.New("the client closed the request")
)

// StatusClientClosed is the status logged for a request its client
// abandoned (as proxies log it); no client ever reads it.
const StatusClientClosed = 499

// kinds maps each kind to its HTTP status, in the order they are tested.
var kinds = []struct {
	kind   error
	status int
}{
	{InvalidArgument, http.StatusBadRequest},
	{Unauthenticated, http.StatusUnauthorized},
	{PermissionDenied, http.StatusForbidden},
	{NotFound, http.StatusNotFound},
	{Conflict, http.StatusConflict},
	{TooLarge, http.StatusRequestEntityTooLarge},
	{RateLimited, http.StatusTooManyRequests},
	{Unavailable, http.StatusServiceUnavailable},
	{Unimplemented, http.StatusNotImplemented},
	{Canceled, StatusClientClosed},
	{context.Canceled, StatusClientClosed},
}

// Error is an error of a known kind with a message fit for the client.
type Error struct {
	Kind    error
	Message string
}

// New returns an error of the given kind whose client-facing text is msg.
func New(kind error, msg string) error { return &Error{Kind: kind, Message: msg} }

func (e *Error) Error() string { return e.Kind.Error() + ": " + e.Message }
func (e *Error) Unwrap() error { return e.Kind }

// Status returns the HTTP status for err and the message to show the client.
// An error of no known kind is a 500 with a generic message.
func Status(err error) (int, string) {
	for _, k := range kinds {
		if errors.Is(err, k.kind) {
			msg := k.kind.Error()
			var e *Error
			if errors.As(err, &e) {
				msg = e.Message
			}
			return k.status, msg
		}
	}
	return http.StatusInternalServerError, "internal error"
}
