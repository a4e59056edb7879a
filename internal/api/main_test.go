package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"socialstream/internal/accounts"
	"socialstream/internal/activities"
	"socialstream/internal/app"
	"socialstream/internal/ids"
	"socialstream/internal/likes"
	"socialstream/internal/logging"
	"socialstream/internal/queue"
	"socialstream/internal/rebuild"
	"socialstream/internal/store"
	"socialstream/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// env is one test's API over real HTTP, in its own namespace.
type env struct {
	t     testing.TB
	url   string
	db    *store.DB
	tasks *testenv.Tasks
	logs  *syncBuffer
}

// syncBuffer collects log lines from handlers running concurrently.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// lines returns the JSON log lines whose message is msg.
func (b *syncBuffer) lines(msg string) []map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for _, line := range bytes.Split(b.buf.Bytes(), []byte("\n")) {
		var m map[string]any
		if json.Unmarshal(line, &m) == nil && m["message"] == msg {
			out = append(out, m)
		}
	}
	return out
}

func newEnv(t testing.TB) *env {
	t.Helper()
	return newEnvWith(t, rebuild.Config{BackfillMax: 1000})
}

// newEnvWith is newEnv with the rebuild jobs configured.
func newEnvWith(t testing.TB, rcfg rebuild.Config) *env {
	t.Helper()
	return newEnvOn(t, testenv.DB(t), rcfg)
}

// newEnvOn is newEnv on the given store.
func newEnvOn(t testing.TB, db *store.DB, rcfg rebuild.Config) *env {
	t.Helper()
	acc, err := accounts.New(db, ids.New(), accounts.Config{BcryptCost: bcrypt.MinCost})
	if err != nil {
		t.Fatal(err)
	}
	tasks := testenv.StartTasks(t)
	logs := &syncBuffer{}
	h, err := app.Handler(db, ids.New(), acc, tasks.Queue, logging.New(logs, slog.LevelInfo, testenv.Project), rcfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	tasks.Server.SetTarget(ts.URL)
	return &env{t: t, url: ts.URL, db: db, tasks: tasks, logs: logs}
}

// resp is a decoded answer.
type resp struct {
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
	r := resp{status: res.StatusCode, raw: raw}
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

func (e *env) post(u user, title string) string {
	e.t.Helper()
	r := e.do("POST", "/social/rest/activities/@me/@self", u.token, map[string]string{"title": title})
	if r.status != 201 {
		e.t.Fatalf("%s posts: %d %s", u.name, r.status, r.raw)
	}
	return e.entry(r)["id"].(string)
}

// activitiesService returns a service over the env's store, to read feeds
// of synthetic users that have no tokens.
func (e *env) activitiesService() *activities.Service {
	e.t.Helper()
	acc, err := accounts.New(e.db, ids.New(), accounts.Config{BcryptCost: bcrypt.MinCost})
	if err != nil {
		e.t.Fatal(err)
	}
	s, err := activities.New(e.db, ids.New(), acc, nopQueue{}, activities.Config{})
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// nopQueue refuses to enqueue: the service it is given only reads.
type nopQueue struct{}

func (nopQueue) Enqueue(context.Context, queue.Task) error {
	return errors.New("this service only reads")
}

// likesService returns a likes service over the env's store and queue, to
// like as synthetic users that have no tokens.
func (e *env) likesService() *likes.Service {
	e.t.Helper()
	acc, err := accounts.New(e.db, ids.New(), accounts.Config{BcryptCost: bcrypt.MinCost})
	if err != nil {
		e.t.Fatal(err)
	}
	act, err := activities.New(e.db, ids.New(), acc, e.tasks.Queue, activities.Config{})
	if err != nil {
		e.t.Fatal(err)
	}
	l, err := likes.New(e.db, act)
	if err != nil {
		e.t.Fatal(err)
	}
	return l
}
