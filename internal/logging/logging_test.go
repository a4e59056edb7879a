package logging

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/trace"
)

func TestCloudLoggingKeys(t *testing.T) {
	tests := []struct {
		name   string
		header string
		level  slog.Level
		want   map[string]any
	}{
		{
			name:   "trace from header",
			header: "105445aa7843bc8bf206b12000100000/1;o=1",
			level:  slog.LevelWarn,
			want: map[string]any{
				"severity": "WARNING", "message": "hello", "k": "v",
				TraceKey: "projects/p1/traces/105445aa7843bc8bf206b12000100000",
			},
		},
		{
			name:   "no header",
			header: "",
			level:  slog.LevelError,
			want:   map[string]any{"severity": "ERROR", "message": "hello", "k": "v"},
		},
		{
			name:   "malformed header is ignored",
			header: "not-hex/1",
			level:  slog.LevelInfo,
			want:   map[string]any{"severity": "INFO", "message": "hello", "k": "v"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			log := New(&buf, slog.LevelDebug, "p1").With("k", "v")
			log.Log(WithTrace(context.Background(), tt.header), tt.level, "hello")
			var got map[string]any
			if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
				t.Fatalf("not JSON: %q: %v", buf.String(), err)
			}
			if _, ok := got["time"]; !ok {
				t.Errorf("no time in %v", got)
			}
			delete(got, "time")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLevelFilters(t *testing.T) {
	var buf bytes.Buffer
	New(&buf, slog.LevelInfo, "").Debug("quiet")
	if buf.Len() != 0 {
		t.Errorf("debug line written at info level: %q", buf.String())
	}
}

// A request's span (package tracing) names the trace and the span, and
// wins over the header.
func TestSpanOfTheRequest(t *testing.T) {
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	ctx := WithTrace(context.Background(), "105445aa7843bc8bf206b12000100000/1;o=1")
	ctx = trace.ContextWithSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}))
	var buf bytes.Buffer
	New(&buf, slog.LevelDebug, "p1").InfoContext(ctx, "hello")
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	delete(got, "time")
	want := map[string]any{"severity": "INFO", "message": "hello",
		TraceKey: "projects/p1/traces/4bf92f3577b34da6a3ce929d0e0e4736", SpanKey: "00f067aa0ba902b7", SampledKey: true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}
