package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"socialstream/internal/derrors"
	"socialstream/internal/logging"
	"socialstream/internal/mastodon"
)

// A panic is a 500 in the error envelope, logged at ERROR as Error
// Reporting groups it: the Go panic's text with its stack, and the
// ReportedErrorEvent type.
func TestPanicLoggedForErrorReporting(t *testing.T) {
	var logs bytes.Buffer
	s := &Server{doors: doors{log: logging.New(&logs, slog.LevelInfo, "p")}}
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.Use(s.recover)
	r.GET("/boom", func(*gin.Context) { panic("the handler's bug") })
	w := httptest.NewRecorder()
	r.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/boom", nil))
	if w.Code != http.StatusInternalServerError || !strings.Contains(w.Body.String(), `"code":500`) {
		t.Errorf("answer %d %s, want the 500 envelope", w.Code, w.Body)
	}
	var line map[string]any // the first line; "request failed" follows
	if err := json.NewDecoder(&logs).Decode(&line); err != nil {
		t.Fatalf("log %q: %v", logs.String(), err)
	}
	msg, _ := line["message"].(string)
	if line["severity"] != "ERROR" || line["@type"] != reportedErrorEvent ||
		!strings.HasPrefix(msg, "panic: the handler's bug\n\ngoroutine ") || !strings.Contains(msg, "recover_test.go") {
		t.Errorf("the panic's log line: %v", line)
	}
}

// What the service answers 503 for (a Datastore that failed, uploads past
// the instance's memory) passes in moments: the answer says when to try
// again.
func TestUnavailableSaysWhenToRetry(t *testing.T) {
	s := &Server{doors: doors{log: logging.New(io.Discard, slog.LevelInfo, "p")}}
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.GET("/busy", func(c *gin.Context) { s.fail(c, derrors.New(derrors.Unavailable, "busy")) })
	r.GET("/gone", func(c *gin.Context) { s.fail(c, derrors.New(derrors.NotFound, "gone")) })
	for path, want := range map[string]string{"/busy": "1", "/gone": ""} {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		if got := w.Header().Get("Retry-After"); got != want {
			t.Errorf("%s: %d with Retry-After %q, want %q", path, w.Code, got, want)
		}
	}
}

// A request its client abandoned is no failure anyone can fix: whatever
// error its canceled context surfaced as (the context's own, or a
// Datastore call's), it is logged at INFO as abandoned, never at ERROR,
// on both faces; a failure of a request still awaited stays an ERROR.
// (A job's, in package jobs.)
func TestAbandonedRequestIsNoError(t *testing.T) {
	var logs bytes.Buffer
	s := &Server{doors: doors{log: logging.New(&logs, slog.LevelInfo, "p")}}
	masto := mastodon.New(mastodon.Deps{Logger: s.log, Host: Host{s.doors}})
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.GET("/rest", func(c *gin.Context) { s.fail(c, fmt.Errorf("activities.Feed: %w", c.Request.Context().Err())) })
	r.GET("/api/v1/masto", func(c *gin.Context) {
		masto.Fail(c, errors.New("rpc error: code = Canceled desc = context canceled"))
	})
	r.GET("/broken", func(c *gin.Context) { s.fail(c, errors.New("boom")) })
	for _, path := range []string{"/rest", "/api/v1/masto"} {
		logs.Reset()
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // the client went away
		r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, path, nil).WithContext(ctx))
		var line map[string]any
		if err := json.NewDecoder(&logs).Decode(&line); err != nil {
			t.Fatalf("%s: log %q: %v", path, logs.String(), err)
		}
		if line["severity"] != "INFO" || line["message"] != "request abandoned by its client" {
			t.Errorf("%s: logged %v", path, line)
		}
	}
	logs.Reset()
	r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/broken", nil))
	if !strings.Contains(logs.String(), `"severity":"ERROR"`) {
		t.Errorf("a failure of an awaited request: %s", logs.String())
	}

}
