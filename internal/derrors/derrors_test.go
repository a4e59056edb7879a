package derrors

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
)

func TestStatus(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		wantStatus int
		wantMsg    string
	}{
		{"bare kind", NotFound, http.StatusNotFound, "not found"},
		{"message", New(InvalidArgument, "title is required"), http.StatusBadRequest, "title is required"},
		{"wrapped keeps only the public message", fmt.Errorf("activities.Post(%q): %w", "u1", New(Conflict, "username taken")), http.StatusConflict, "username taken"},
		{"unknown is a 500 without details", fmt.Errorf("datastore: secret detail: %w", context.DeadlineExceeded), http.StatusInternalServerError, "internal error"},
		{"plain error", errors.New("boom"), http.StatusInternalServerError, "internal error"},
		{"too large", New(TooLarge, "body over 1 MiB"), http.StatusRequestEntityTooLarge, "body over 1 MiB"},
		{"abandoned by its client", fmt.Errorf("activities.Feed: %w", context.Canceled), StatusClientClosed, "context canceled"},
		{"abandoned, as a kind", fmt.Errorf("store: %w", Canceled), StatusClientClosed, "the client closed the request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, msg := Status(tt.err)
			if status != tt.wantStatus || msg != tt.wantMsg {
				t.Errorf("Status(%v) = %d, %q; want %d, %q", tt.err, status, msg, tt.wantStatus, tt.wantMsg)
			}
		})
	}
}
