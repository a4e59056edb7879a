package api_test

import (
	"fmt"
	"net/http"
	"os"
	"testing"

	"github.com/mattn/go-mastodon"

	"socialstream/internal/activities"
	"socialstream/internal/app"
	"socialstream/internal/likes"
	"socialstream/internal/localstack"
	"socialstream/internal/stacktest"
	"socialstream/internal/store"
	"socialstream/internal/tasksemu"
	"socialstream/internal/testenv"
)

func TestMain(m *testing.M) {
	code := stacktest.Main(m)
	if code == 0 {
		if err := checkContractCovered(); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// env is one test's API over real HTTP, in its own namespace: the faces'
// harness (package stacktest), every answer checked against the REST
// contract, in this package's shapes.
type env struct {
	*stacktest.Env
	t     testing.TB
	url   string
	db    *store.DB
	tasks *tasksemu.Local
	svc   *app.Services
	logs  *testenv.Logs
	stack *localstack.Stack
}

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
	s := stacktest.New(t, o)
	s.Check = checkContract
	return &env{Env: s, t: s.T, url: s.URL, db: s.DB, tasks: s.Tasks, svc: s.Svc, logs: s.Logs, stack: s.Stack}
}

// parallel lets a test that works on stacks of its own run beside the
// others (stacktest.Parallel).
func parallel(t testing.TB) { stacktest.Parallel(t) }

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
	r := e.Do(method, path, token, body, headers...)
	return resp{header: r.Header, status: r.Status, body: r.Body, raw: r.Raw}
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

// st is u as the harness names people.
func (u user) st() stacktest.User { return stacktest.User{ID: u.id, Token: u.token, Name: u.name} }

func (e *env) register(name string) user {
	e.t.Helper()
	u := e.Register(name)
	return user{id: u.ID, token: u.Token, name: u.Name}
}

func (e *env) entry(r resp) map[string]any {
	e.t.Helper()
	return e.Entry(stacktest.Resp{Status: r.status, Body: r.body, Raw: r.raw})
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
	e.Follow(u.st(), target)
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
	return e.Post(u.st(), title)
}

// mastoClient signs u in to a new app with scopes, as an app does.
func (e *env) mastoClient(u user, scopes string) *mastodon.Client {
	e.t.Helper()
	return e.MastoClient(u.st(), scopes)
}

// approve walks the consent page as u, and returns the code it shows.
func (e *env) approve(app *mastodon.Application, u user, scope string) string {
	e.t.Helper()
	return e.Approve(app, u.st(), scope)
}

// activitiesService returns the env's activities service, to read feeds
// of synthetic users that have no tokens.
func (e *env) activitiesService() *activities.Service { return e.svc.Activities }

// likesService returns the env's likes service, to like as synthetic
// users that have no tokens.
func (e *env) likesService() *likes.Service { return e.svc.Likes }
