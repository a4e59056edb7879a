package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"socialstream/internal/api"
	"socialstream/internal/app"
)

// The contract: every answer the HTTP tests get (through env.do) is
// checked against the OpenAPI document the service serves, so the
// document cannot drift from the code. An answer on a path the document
// lacks must be an error; one the document has must match its operation's
// status and schema.
var contract struct {
	once   sync.Once
	doc    *openapi3.T
	router routers.Router
	err    error

	mu   sync.Mutex
	seen map[string]bool // operationIds answered with a 2xx
}

// notInContract are paths that are not the API: the web page, the task
// handlers and the scheduled work; and the Mastodon face, whose contract
// is Mastodon's own documentation (docs/mastodon.md), and the
// ActivityPub face, whose contract is ActivityPub's (docs/federation.md).
var notInContract = regexp.MustCompile(`^/($|static/|_tasks/|_cron/|api/v[12]/|oauth/|\.well-known/(oauth-|nodeinfo$|webfinger$|host-meta$)|nodeinfo/|avatars/|users/|statuses/|inbox$)`)

func loadContract() (*openapi3.T, routers.Router, error) {
	contract.once.Do(func() {
		// A picture's answer is its bytes.
		for _, kind := range []string{"image/jpeg", "image/png", "image/gif", "image/webp"} {
			openapi3filter.RegisterBodyDecoder(kind, openapi3filter.FileBodyDecoder)
		}
		data, err := api.OpenAPI()
		if err != nil {
			contract.err = err
			return
		}
		doc, err := openapi3.NewLoader().LoadFromData(data)
		if err != nil {
			contract.err = err
			return
		}
		if err := doc.Validate(context.Background()); err != nil {
			contract.err = fmt.Errorf("the OpenAPI document is invalid: %w", err)
			return
		}
		contract.doc = doc
		contract.router, contract.err = gorillamux.NewRouter(doc)
		contract.seen = map[string]bool{}
	})
	return contract.doc, contract.router, contract.err
}

// checkContract checks one answer against the document.
func checkContract(t testing.TB, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	if notInContract.MatchString(req.URL.Path) {
		return
	}
	if req.Method == http.MethodOptions && req.Header.Get("Access-Control-Request-Method") != "" {
		return // a CORS preflight, answered before any operation (TestCORSForListedOriginsOnly)
	}
	doc, router, err := loadContract()
	if err != nil {
		t.Fatal(err)
		return
	}
	route, params, err := router.FindRoute(req)
	if err != nil {
		// Not a documented operation: it must be refused, in the error shape.
		if status < 400 {
			t.Errorf("contract: %s %s answered %d but the OpenAPI document has no such operation", req.Method, req.URL.Path, status)
			return
		}
		var v any
		if jerr := json.Unmarshal(body, &v); jerr != nil {
			t.Errorf("contract: %s %s: %d is not JSON: %.200s", req.Method, req.URL.Path, status, body)
			return
		}
		if verr := doc.Components.Schemas["Error"].Value.VisitJSON(v, openapi3.EnableJSONSchema2020()); verr != nil {
			t.Errorf("contract: %s %s: %d is not an error body: %v", req.Method, req.URL.Path, status, verr)
		}
		return
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: status, Header: header,
		Body: io.NopCloser(bytes.NewReader(body)), Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}}
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		t.Errorf("contract: %s %s (operation %s): %d does not match the OpenAPI document: %v\nbody: %.300s",
			req.Method, req.URL.Path, route.Operation.OperationID, status, err, body)
		return
	}
	if status < 300 {
		contract.mu.Lock()
		contract.seen[route.Operation.OperationID] = true
		contract.mu.Unlock()
	}
}

// checkContractCovered, after a whole run of the package's tests, checks
// that each documented operation answered a test with success at least
// once, so no part of the document goes unchecked.
func checkContractCovered() error {
	if f := flag.Lookup("test.run"); f == nil || f.Value.String() != "" {
		return nil // a partial run
	}
	if f := flag.Lookup("test.short"); f != nil && f.Value.String() == "true" {
		return nil
	}
	doc, _, err := loadContract()
	if err != nil {
		return err
	}
	var missing []string
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if !contract.seen[op.OperationID] {
				missing = append(missing, method+" "+path)
			}
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		return fmt.Errorf("no test got a successful answer from these documented operations: %s", strings.Join(missing, "; "))
	}
	return nil
}

func TestOpenAPIDocument(t *testing.T) {
	e := newEnv(t)
	r := e.do("GET", "/openapi.json", "", nil)
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET /openapi.json: %d %v", r.status, r.header)
	}
	doc, err := openapi3.NewLoader().LoadFromData(r.raw)
	if err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" || !doc.IsOpenAPI31OrLater() {
		t.Errorf("openapi %q, want 3.1.0", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("invalid document: %v", err)
	}

	// The document and the router have the same operations.
	documented := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented[method+" "+path] = true
		}
	}
	param := regexp.MustCompile(`:(\w+)`)
	routed := map[string]bool{}
	router, err := app.Router(e.svc, slog.New(slog.DiscardHandler), api.Guard{})
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range router.Routes() {
		if notInContract.MatchString(rt.Path) || rt.Method == http.MethodHead {
			continue
		}
		routed[rt.Method+" "+param.ReplaceAllString(rt.Path, "{$1}")] = true
	}
	for op := range routed {
		if !documented[op] {
			t.Errorf("%s is served but not in the OpenAPI document", op)
		}
	}
	for op := range documented {
		if !routed[op] {
			t.Errorf("%s is in the OpenAPI document but not served", op)
		}
	}
}

// TestContractCatchesDrift shows the check fails an answer that departs
// from the document.
func TestContractCatchesDrift(t *testing.T) {
	req, _ := http.NewRequest("GET", "http://x/social/rest/people/@me/@self", nil)
	for name, body := range map[string]string{
		"unknown field":  `{"entry":{"id":"1","nickname":"x"}}`,
		"wrong type":     `{"entry":{"id":"1","followersCount":"many"}}`,
		"no entry":       `{"id":"1"}`,
		"error as a 200": `{"error":{"code":200,"message":"?"}}`,
	} {
		rec := &recorder{TB: t}
		checkContract(rec, req, 200, http.Header{"Content-Type": {"application/json"}}, []byte(body))
		if !rec.failed {
			t.Errorf("%s: the contract check let %s through", name, body)
		}
	}
	rec := &recorder{TB: t}
	checkContract(rec, req, 200, http.Header{"Content-Type": {"application/json"}}, []byte(`{"entry":{"id":"1","displayName":"x"}}`))
	if rec.failed {
		t.Errorf("a valid answer failed the check: %v", rec.msgs)
	}
	undocumented, _ := http.NewRequest("GET", "http://x/social/rest/nothing", nil)
	rec = &recorder{TB: t}
	checkContract(rec, undocumented, 200, nil, []byte(`{}`))
	if !rec.failed {
		t.Error("a success on an undocumented path passed the check")
	}
}

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	failed bool
	msgs   []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.failed = true
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatal(args ...any) { r.failed = true; r.msgs = append(r.msgs, fmt.Sprint(args...)) }
func (r *recorder) Helper()           {}
