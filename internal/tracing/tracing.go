// Package tracing traces requests with OpenTelemetry: a span for each
// request (otelhttp, named by its route), and, as children, the spans the
// Google client libraries make of their own calls to Datastore, Cloud
// Tasks and Cloud Storage, exported to Cloud Trace through its OTLP
// endpoint. Off, nothing is recorded, but a request's W3C traceparent is
// still read, so its log lines carry the trace App Engine's front end
// started (package logging).
package tracing

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/oauth2/google"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/oauth"
)

// Endpoint is Cloud Trace's OTLP endpoint (the Telemetry API).
const Endpoint = "telemetry.googleapis.com:443"

// ServiceName names the service in its spans.
const ServiceName = "socialstream"

// Start installs the process's tracing: with sample above 0, spans
// exported to Cloud Trace for project, every request whose caller asked
// for a trace (a sampled traceparent) and sample of the others (a share,
// up to 1); with 0, none. It returns what flushes the spans at shutdown.
func Start(ctx context.Context, project string, sample float64) (func(context.Context) error, error) {
	if sample <= 0 {
		Install(nil)
		return func(context.Context) error { return nil }, nil
	}
	creds, err := google.FindDefaultCredentials(ctx, "https://www.googleapis.com/auth/trace.append")
	if err != nil {
		return nil, fmt.Errorf("tracing: credentials: %w", err)
	}
	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(Endpoint),
		otlptracegrpc.WithHeaders(map[string]string{"x-goog-user-project": project}),
		otlptracegrpc.WithDialOption(
			grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12})),
			grpc.WithPerRPCCredentials(oauth.TokenSource{TokenSource: creds.TokenSource})))
	if err != nil {
		return nil, fmt.Errorf("tracing: exporter: %w", err)
	}
	tp := NewProvider(sdktrace.WithBatcher(exp), project, sample)
	Install(tp)
	return tp.Shutdown, nil
}

// NewProvider returns a tracer provider that hands its spans to export
// (sdktrace.WithBatcher, or a test's WithSyncer), sampling as Start says.
func NewProvider(export sdktrace.TracerProviderOption, project string, sample float64) *sdktrace.TracerProvider {
	res := resource.NewSchemaless(
		attribute.String("service.name", ServiceName),
		attribute.String("gcp.project_id", project), // the Telemetry API requires it
	)
	return sdktrace.NewTracerProvider(export, sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(min(sample, 1)))))
}

// Install makes tp the process's tracer provider (nil: none, spans are
// not recorded), and W3C Trace Context its propagator.
func Install(tp trace.TracerProvider) {
	if tp != nil {
		otel.SetTracerProvider(tp)
	}
	otel.SetTextMapPropagator(propagation.TraceContext{})
}

// Handler starts a span for each request h serves, the child of the
// caller's traceparent if it sent one; Route names it.
func Handler(h http.Handler) http.Handler {
	return otelhttp.NewHandler(h, "request")
}

// Route names the request's span by its method and route (the pattern,
// not the path, which holds ids).
func Route(ctx context.Context, method, route string) {
	if route == "" {
		return
	}
	span := trace.SpanFromContext(ctx)
	span.SetName(method + " " + route)
	span.SetAttributes(attribute.String("http.route", route))
}
