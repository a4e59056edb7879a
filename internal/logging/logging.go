// Package logging sets up log/slog for App Engine: JSON lines whose keys are
// the ones Cloud Logging reads (severity, message, time, and
// logging.googleapis.com/trace, spanId and trace_sampled), so that a
// request's lines group together and link to its trace. The trace is the
// request's span's (package tracing), or, without one, the trace its
// X-Cloud-Trace-Context header names.
package logging

import (
	"context"
	"io"
	"log/slog"
	"strings"

	"go.opentelemetry.io/otel/trace"
)

// The fields Cloud Logging groups log lines by and links to traces with.
const (
	TraceKey   = "logging.googleapis.com/trace"
	SpanKey    = "logging.googleapis.com/spanId"
	SampledKey = "logging.googleapis.com/trace_sampled"
)

// New returns a logger writing JSON to w at level. project, if not empty,
// qualifies trace ids as Cloud Logging expects
// (projects/PROJECT/traces/TRACE).
func New(w io.Writer, level slog.Level, project string) *slog.Logger {
	h := slog.NewJSONHandler(w, &slog.HandlerOptions{
		Level:       level,
		ReplaceAttr: replace,
	})
	return slog.New(traceHandler{Handler: h, project: project})
}

// replace renames slog's built-in keys to Cloud Logging's.
func replace(groups []string, a slog.Attr) slog.Attr {
	if len(groups) > 0 {
		return a
	}
	switch a.Key {
	case slog.MessageKey:
		a.Key = "message"
	case slog.LevelKey:
		a.Key = "severity"
		a.Value = slog.StringValue(severity(a.Value.Any().(slog.Level)))
	}
	return a
}

func severity(l slog.Level) string {
	switch {
	case l >= slog.LevelError:
		return "ERROR"
	case l >= slog.LevelWarn:
		return "WARNING"
	case l >= slog.LevelInfo:
		return "INFO"
	default:
		return "DEBUG"
	}
}

type traceCtxKey struct{}

// WithTrace returns ctx carrying the trace id from an X-Cloud-Trace-Context
// header value ("TRACE_ID/SPAN_ID;o=OPTIONS"). An empty or malformed header
// leaves ctx as it is.
func WithTrace(ctx context.Context, header string) context.Context {
	id, _, _ := strings.Cut(header, "/")
	id, _, _ = strings.Cut(id, ";")
	if id == "" || len(id) > 64 || strings.ContainsFunc(id, func(r rune) bool {
		return !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F')
	}) {
		return ctx
	}
	return context.WithValue(ctx, traceCtxKey{}, id)
}

// Trace returns the trace id carried by ctx, if any.
func Trace(ctx context.Context) string {
	id, _ := ctx.Value(traceCtxKey{}).(string)
	return id
}

type traceHandler struct {
	slog.Handler
	project string
}

func (h traceHandler) Handle(ctx context.Context, r slog.Record) error {
	id := Trace(ctx)
	sc := trace.SpanContextFromContext(ctx)
	if sc.IsValid() {
		id = sc.TraceID().String()
	}
	if id != "" {
		if h.project != "" {
			id = "projects/" + h.project + "/traces/" + id
		}
		r.AddAttrs(slog.String(TraceKey, id))
	}
	if sc.IsValid() {
		r.AddAttrs(slog.String(SpanKey, sc.SpanID().String()), slog.Bool(SampledKey, sc.IsSampled()))
	}
	return h.Handler.Handle(ctx, r)
}

func (h traceHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return traceHandler{Handler: h.Handler.WithAttrs(attrs), project: h.project}
}

func (h traceHandler) WithGroup(name string) slog.Handler {
	return traceHandler{Handler: h.Handler.WithGroup(name), project: h.project}
}
