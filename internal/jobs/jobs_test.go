package jobs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"

	"socialstream/internal/derrors"
	"socialstream/internal/logging"
)

// A job's run its queue stopped waiting for (its dispatch deadline) is
// no failure: INFO, and an answer the queue takes as a retry, on its
// last attempt too; a job that failed while awaited is a WARNING and a
// 500 its queue retries.
func TestAbandonedJobIsNoError(t *testing.T) {
	var logs bytes.Buffer
	s := &Router{log: logging.New(&logs, slog.LevelInfo, "p")}
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()

	r.POST("/_tasks/job", func(c *gin.Context) {
		s.finish(c, fmt.Errorf("notifications.Run: %w", c.Request.Context().Err()), "notify")
	})
	r.POST("/_tasks/failing", func(c *gin.Context) { s.finish(c, errors.New("boom"), "notify") })
	for _, tc := range []struct {
		path     string
		canceled bool
		severity string
		status   int
	}{
		{"/_tasks/job", true, "INFO", derrors.StatusClientClosed},
		{"/_tasks/failing", false, "WARNING", http.StatusInternalServerError},
	} {
		logs.Reset()
		ctx, cancel := context.WithCancel(context.Background())
		if tc.canceled {
			cancel()
		}
		req := httptest.NewRequest(http.MethodPost, tc.path, nil).WithContext(ctx)
		req.Header.Set("X-AppEngine-QueueName", "notifications")
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		cancel()
		var line map[string]any
		if err := json.NewDecoder(&logs).Decode(&line); err != nil {
			t.Fatalf("%s: log %q: %v", tc.path, logs.String(), err)
		}
		if line["severity"] != tc.severity || w.Code != tc.status {
			t.Errorf("%s: %d, logged %v; want %d at %s", tc.path, w.Code, line, tc.status, tc.severity)
		}
	}
}
