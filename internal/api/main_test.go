package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"socialstream/internal/activities"
	"socialstream/internal/app"
	"socialstream/internal/egress"
	"socialstream/internal/likes"
	"socialstream/internal/localstack"
	"socialstream/internal/logging"
	"socialstream/internal/store"
	"socialstream/internal/tasksemu"
	"socialstream/internal/testenv"
)

func TestMain(m *testing.M) {
	// The tests that build stacks of their own wait on their jobs, not
	// the CPU: four at a time.
	testenv.Parallel(4)
	// Tests name private and metadata addresses (a picture of another
	// server's at 169.254.169.254): none is reached even if the guard
	// broke, and a run in which it let one through fails.
	egress.ConfineToLoopback()
	code := testenv.Main(m)
	if escaped := egress.Escapes(); len(escaped) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: the guard let %v through (confinement refused them)\n", escaped)
		code = 1
	}
	if code == 0 {
		if err := checkContractCovered(); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// env is one test's API over real HTTP, in its own namespace.
type env struct {
	t     testing.TB
	url   string
	db    *store.DB
	tasks *tasksemu.Local
	svc   *app.Services
	logs  *testenv.Logs
	stack *localstack.Stack
}

// parallel lets a test that works on stacks of its own (each on its own
// namespace, tasks emulator and HTTP server) run beside the others, once:
// a test that builds two stacks asks twice.
func parallel(t testing.TB) {
	p, ok := t.(interface{ Parallel() })
	if !ok || strings.Contains(t.Name(), "/") {
		return // a benchmark, or a subtest, which its test may wait for
	}
	if _, again := parallelTests.LoadOrStore(t, true); !again {
		p.Parallel()
	}
}

var parallelTests sync.Map // testing.TB → true: the tests that called Parallel

func newEnv(t testing.TB) *env {
	t.Helper()
	return newEnvOn(t, testenv.DB(t), app.Config{BackfillMax: 1000})
}

// newEnvOn is newEnv on the given store and configuration: the local
// stack, with its tasks emulator and the API on real HTTP.
func newEnvOn(t testing.TB, db *store.DB, cfg app.Config) *env {
	t.Helper()
	return newEnvFrom(t, localstack.Options{DB: db, Config: cfg})
}

// newEnvFrom is newEnv with the local stack's options o (its store, its
// rate limits); the test's own settings fill in the rest.
func newEnvFrom(t testing.TB, o localstack.Options) *env {
	t.Helper()
	parallel(t)
	root, err := testenv.RepoFile("")
	if err != nil {
		t.Fatal(err)
	}
	if o.DB == nil {
		o.DB = testenv.DB(t)
	}
	logs := &testenv.Logs{}
	o.Dir, o.Project, o.Location, o.DispatchDeadline = root, testenv.Project, "test", time.Minute
	o.Config.BcryptCost = bcrypt.MinCost
	o.Logger = logging.New(logs, slog.LevelInfo, testenv.Project)
	st, err := localstack.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return &env{t: t, url: st.URL, db: o.DB, tasks: st.Tasks, svc: st.Services, logs: logs, stack: st}
}

// resp is a decoded answer.
type resp struct {
	header http.Header
	status int
	body   map[string]any
	raw    []byte
}

func (r resp) errMessage() string {
	e, _ := r.body["error"].(map[string]any)
	m, _ := e["message"].(string)
	return m
}

// do sends body (a string is sent as is, anything else as JSON).
func (e *env) do(method, path, token string, body any, headers ...string) resp {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = bytes.NewBufferString(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, e.url+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	checkContract(e.t, req, res.StatusCode, res.Header, raw)
	r := resp{status: res.StatusCode, raw: raw, header: res.Header}
	if len(raw) > 0 && raw[0] == '{' {
		if err := json.Unmarshal(raw, &r.body); err != nil {
			e.t.Fatalf("%s %s: answer is not JSON: %q", method, path, raw)
		}
	}
	return r
}

// wantError checks an answer is the contract's error envelope with status.
func (e *env) wantError(r resp, status int) {
	e.t.Helper()
	if r.status != status {
		e.t.Errorf("status %d, want %d; body %s", r.status, status, r.raw)
		return
	}
	env, ok := r.body["error"].(map[string]any)
	if !ok || env["code"] != float64(status) || env["message"] == "" {
		e.t.Errorf("not an error envelope for %d: %s", status, r.raw)
	}
}

type user struct {
	id, token, name string
}

func (e *env) register(name string) user {
	e.t.Helper()
	r := e.do("POST", "/auth/register", "", map[string]string{"username": name, "password": "password-" + name})
	if r.status != http.StatusCreated {
		e.t.Fatalf("register %s: %d %s", name, r.status, r.raw)
	}
	entry := r.body["entry"].(map[string]any)
	return user{id: entry["id"].(string), token: r.body["token"].(string), name: name}
}

func (e *env) entry(r resp) map[string]any {
	e.t.Helper()
	m, ok := r.body["entry"].(map[string]any)
	if !ok {
		e.t.Fatalf("no entry in %d %s", r.status, r.raw)
	}
	return m
}

// list returns the ids of a collection answer.
func (e *env) list(r resp) []string {
	e.t.Helper()
	if r.status != 200 {
		e.t.Fatalf("status %d: %s", r.status, r.raw)
	}
	items, ok := r.body["list"].([]any)
	if !ok {
		e.t.Fatalf("no list in %s", r.raw)
	}
	out := []string{}
	for _, it := range items {
		out = append(out, it.(map[string]any)["id"].(string))
	}
	return out
}

func (e *env) follow(u user, target string) {
	e.t.Helper()
	if r := e.do("POST", "/social/rest/people/@me/@friends", u.token, map[string]string{"id": target}); r.status != 201 {
		e.t.Fatalf("%s follows %s: %d %s", u.name, target, r.status, r.raw)
	}
}

// postFor posts title as u for visibility, and returns its id.
func (e *env) postFor(u user, title, visibility string) string {
	e.t.Helper()
	r := e.do("POST", "/social/rest/activities/@me/@self", u.token, map[string]string{"title": title, "visibility": visibility})
	if r.status != 201 || e.entry(r)["visibility"] != visibility {
		e.t.Fatalf("post for %s: %d %s", visibility, r.status, r.raw)
	}
	return e.entry(r)["id"].(string)
}

func (e *env) post(u user, title string) string {
	e.t.Helper()
	r := e.do("POST", "/social/rest/activities/@me/@self", u.token, map[string]string{"title": title})
	if r.status != 201 {
		e.t.Fatalf("%s posts: %d %s", u.name, r.status, r.raw)
	}
	return e.entry(r)["id"].(string)
}

// activitiesService returns the env's activities service, to read feeds
// of synthetic users that have no tokens.
func (e *env) activitiesService() *activities.Service { return e.svc.Activities }

// likesService returns the env's likes service, to like as synthetic
// users that have no tokens.
func (e *env) likesService() *likes.Service { return e.svc.Likes }
