package tracing_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"golang.org/x/crypto/bcrypt"

	"socialstream/internal/app"
	"socialstream/internal/localstack"
	"socialstream/internal/logging"
	"socialstream/internal/testenv"
	"socialstream/internal/tracing"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// Each request is a span named by its route, the child of the caller's
// traceparent; the Google client libraries' own spans of its Datastore,
// Cloud Tasks and Cloud Storage calls are its descendants; and its log
// lines name its trace and span as Cloud Logging links them.
func TestSpansOfARequestAndItsCalls(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tracing.Install(tracing.NewProvider(sdktrace.WithSyncer(exp), testenv.Project, 1))
	root, err := testenv.RepoFile("")
	if err != nil {
		t.Fatal(err)
	}
	logs := &testenv.Logs{}
	st, err := localstack.Start(context.Background(), localstack.Options{
		DB: testenv.DB(t), Dir: root, Project: testenv.Project, Location: "test", DispatchDeadline: time.Minute,
		Config: app.Config{BcryptCost: bcrypt.MinCost}, Logger: logging.New(logs, slog.LevelDebug, testenv.Project),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	const parent = "00f067aa0ba902b7"
	n := 0
	// call sends a request in a trace of its own, and returns the trace.
	call := func(method, path, token string, body io.Reader, kind string, out *map[string]any) string {
		t.Helper()
		n++
		traceID := fmt.Sprintf("4bf92f3577b34da6a3ce929d0e0e47%02d", n)
		req, err := http.NewRequest(method, st.URL+path, body)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("traceparent", "00-"+traceID+"-"+parent+"-01")
		req.Header.Set("Content-Type", kind)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil || resp.StatusCode/100 != 2 {
			t.Fatalf("%s %s: %d %v %v", method, path, resp.StatusCode, *out, err)
		}
		return traceID
	}
	var ann, bob, item, follow map[string]any
	register := call("POST", "/auth/register", "", strings.NewReader(`{"username":"ann","password":"password-ann"}`), "application/json", &ann)
	call("POST", "/auth/register", "", strings.NewReader(`{"username":"bob","password":"password-bob"}`), "application/json", &bob)
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	img.Set(1, 1, color.White)
	var pic bytes.Buffer
	if err := png.Encode(&pic, img); err != nil {
		t.Fatal(err)
	}
	upload := call("POST", "/social/rest/mediaItems/@me/@self", bob["token"].(string), &pic, "image/png", &item)
	annID := ann["entry"].(map[string]any)["id"].(string)
	follows := call("POST", "/social/rest/people/@me/@friends", bob["token"].(string), strings.NewReader(`{"id":"`+annID+`"}`), "application/json", &follow)

	spans := exp.GetSpans()
	byID := map[string]tracetest.SpanStub{}
	for _, s := range spans {
		byID[s.SpanContext.SpanID().String()] = s
	}
	// requestOf returns the request span at the root of s's trace in
	// this service (the one whose parent is the caller's).
	requestOf := func(s tracetest.SpanStub) (tracetest.SpanStub, bool) {
		for range 50 {
			if s.Parent.SpanID().String() == parent {
				return s, true
			}
			p, ok := byID[s.Parent.SpanID().String()]
			if !ok {
				return s, false
			}
			s = p
		}
		return s, false
	}
	for _, c := range []struct {
		trace, route, descendant string
	}{
		// A span per Datastore call, the library's own: the gRPC layer's
		// are off (store.Open).
		{register, "POST /auth/register", "cloud.google.com/go/datastore.datastoreClient."},
		{upload, "POST /social/rest/mediaItems/:userId/:groupId", "cloud.google.com/go/storage."},
		{follows, "POST /social/rest/people/:userId/:selector", "google.cloud.tasks.v2.CloudTasks/CreateTask"},
	} {
		var req *tracetest.SpanStub
		found := false
		for _, s := range spans {
			if s.SpanContext.TraceID().String() != c.trace {
				continue
			}
			r, ok := requestOf(s)
			if !ok {
				t.Errorf("span %q of trace %s is not under its request", s.Name, c.trace)
				continue
			}
			if s.Name == c.route {
				req = &r
				if !hasAttr(s.Attributes, "http.route", strings.TrimPrefix(c.route, "POST ")) {
					t.Errorf("%s: attributes %v", c.route, s.Attributes)
				}
			}
			if strings.HasPrefix(s.Name, c.descendant) && r.Name == c.route {
				found = true
			}
			if strings.HasPrefix(s.Name, "google.datastore.v1.") {
				t.Errorf("%s: a gRPC span of the Datastore client, %s, beside the library's", c.route, s.Name)
			}
		}
		if req == nil {
			t.Errorf("no span %q in trace %s", c.route, c.trace)
			continue
		}
		if !found {
			t.Errorf("%s: no span %s… under it", c.route, c.descendant)
		}
		// Its log line names its trace and span.
		logged := false
		for _, l := range logs.Lines("") {
			if l["message"] == "request" && l[logging.TraceKey] == "projects/"+testenv.Project+"/traces/"+c.trace {
				logged = l[logging.SpanKey] == req.SpanContext.SpanID().String() && l[logging.SampledKey] == true
			}
		}
		if !logged {
			t.Errorf("%s: no log line with its trace and span", c.route)
		}
	}
}

func hasAttr(attrs []attribute.KeyValue, key, value string) bool {
	for _, a := range attrs {
		if string(a.Key) == key && a.Value.AsString() == value {
			return true
		}
	}
	return false
}
