// Package stacktest is the faces' test harness: one test's deployment
// (the local stack: the app on real HTTP, its tasks emulator, the
// Datastore emulator in a namespace of its own) and the requests a test
// makes of it, as a client would. The REST face's tests and the
// Mastodon face's, each beside its face, drive it; it is imported by
// tests alone.
package stacktest

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mattn/go-mastodon"
	"golang.org/x/crypto/bcrypt"

	"socialstream/internal/app"
	"socialstream/internal/localstack"
	"socialstream/internal/logging"
	"socialstream/internal/store"
	"socialstream/internal/tasksemu"
	"socialstream/internal/testenv"
)

// Main runs a face's tests, and returns the exit code: four stacks at a
// time (their tests wait on their jobs, not the CPU), no address off the
// loopback reached even if the guard broke (tests name private and
// metadata addresses: a picture of another server's at 169.254.169.254),
// and a run in which the guard let one through fails.
func Main(m *testing.M) int {
	testenv.Parallel(4)
	return testenv.Main(m) // confined to loopback
}

// Env is one test's deployment over real HTTP, in its own namespace.
type Env struct {
	T     testing.TB
	URL   string
	DB    *store.DB
	Tasks *tasksemu.Local
	Svc   *app.Services
	Logs  *testenv.Logs
	Stack *localstack.Stack
	// Check, when set, is asked of every answer Do and Fetch read: the
	// REST face's tests check each against the contract.
	Check func(t testing.TB, req *http.Request, status int, header http.Header, body []byte)
}

// New starts a test's deployment on a namespace of its own.
func New(t testing.TB, o localstack.Options) *Env {
	t.Helper()
	Parallel(t)
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
	return &Env{T: t, URL: st.URL, DB: o.DB, Tasks: st.Tasks, Svc: st.Services, Logs: logs, Stack: st}
}

// Parallel lets a test that works on stacks of its own (each on its own
// namespace, tasks emulator and HTTP server) run beside the others, once:
// a test that builds two stacks asks twice.
func Parallel(t testing.TB) {
	p, ok := t.(interface{ Parallel() })
	if !ok || strings.Contains(t.Name(), "/") {
		return // a benchmark, or a subtest, which its test may wait for
	}
	if _, again := parallelTests.LoadOrStore(t, true); !again {
		p.Parallel()
	}
}

var parallelTests sync.Map // testing.TB → true: the tests that called Parallel

// Resp is a decoded answer.
type Resp struct {
	Header http.Header
	Status int
	Body   map[string]any // a JSON object's
	Raw    []byte
}

// Do sends body (a string or bytes as they are, anything else as JSON)
// with token as a Bearer, and headers, name and value after another.
func (e *Env) Do(method, path, token string, body any, headers ...string) Resp {
	e.T.Helper()
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
			e.T.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, e.URL+path, rd)
	if err != nil {
		e.T.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.T.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if e.Check != nil {
		e.Check(e.T, req, res.StatusCode, res.Header, raw)
	}
	r := Resp{Status: res.StatusCode, Raw: raw, Header: res.Header}
	if len(raw) > 0 && raw[0] == '{' {
		if err := json.Unmarshal(raw, &r.Body); err != nil {
			e.T.Fatalf("%s %s: answer is not JSON: %q", method, path, raw)
		}
	}
	return r
}

// JSON is the header of a JSON body, for Do: the Mastodon face reads a
// body by its Content-Type.
var JSON = []string{"Content-Type", "application/json"}

// Fetch reads link as a browser would, with no token: its status, its
// type and its bytes.
func (e *Env) Fetch(link string) (int, string, []byte) {
	e.T.Helper()
	res, err := http.Get(link)
	if err != nil {
		e.T.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if e.Check != nil {
		req, _ := http.NewRequest("GET", link, nil)
		e.Check(e.T, req, res.StatusCode, res.Header, body)
	}
	return res.StatusCode, res.Header.Get("Content-Type"), body
}

// User is a person registered by a test, with their token.
type User struct {
	ID, Token, Name string
}

// Register registers name, with the password Password(name).
func (e *Env) Register(name string) User {
	e.T.Helper()
	r := e.Do("POST", "/auth/register", "", map[string]string{"username": name, "password": Password(name)})
	if r.Status != http.StatusCreated {
		e.T.Fatalf("register %s: %d %s", name, r.Status, r.Raw)
	}
	entry := r.Body["entry"].(map[string]any)
	return User{ID: entry["id"].(string), Token: r.Body["token"].(string), Name: name}
}

// Password is the password Register gives name.
func Password(name string) string { return "password-" + name }

// Entry is the entry of a REST answer.
func (e *Env) Entry(r Resp) map[string]any {
	e.T.Helper()
	m, ok := r.Body["entry"].(map[string]any)
	if !ok {
		e.T.Fatalf("no entry in %d %s", r.Status, r.Raw)
	}
	return m
}

// Follow has u follow target, by REST.
func (e *Env) Follow(u User, target string) {
	e.T.Helper()
	if r := e.Do("POST", "/social/rest/people/@me/@friends", u.Token, map[string]string{"id": target}); r.Status != 201 {
		e.T.Fatalf("%s follows %s: %d %s", u.Name, target, r.Status, r.Raw)
	}
}

// Post posts title as u, by REST, and returns its id.
func (e *Env) Post(u User, title string) string {
	e.T.Helper()
	r := e.Do("POST", "/social/rest/activities/@me/@self", u.Token, map[string]string{"title": title})
	if r.Status != 201 {
		e.T.Fatalf("%s posts: %d %s", u.Name, r.Status, r.Raw)
	}
	return e.Entry(r)["id"].(string)
}

// Eventually waits, 30 seconds at most, until cond holds.
func (e *Env) Eventually(what string, cond func() bool) {
	e.T.Helper()
	e.eventually(what, 30*time.Second, cond)
}

func (e *Env) eventually(what string, within time.Duration, cond func() bool) {
	e.T.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			failed := e.Logs.Lines("task failed; the queue retries it")
			if len(failed) > 3 {
				failed = failed[len(failed)-3:]
			}
			e.T.Logf("last failed tasks: %v", failed)
			e.T.Logf("tasks pending: %v", e.Tasks.Server.Describe())
			e.T.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Settle waits for the queues to empty, the requests made so far having
// answered: a job's delay of moments (ahead of its commit, a pruning's
// window) is not sat out once nothing else is under way (Hurry).
func (e *Env) Settle() {
	e.T.Helper()
	e.eventually("queues empty", SettleWithin, func() bool {
		e.Tasks.Server.Hurry(HurryWithin)
		return e.Tasks.Server.Pending() == 0
	})
}

// SettleWithin is the longest Settle waits: a chain of jobs (an
// account's erasure, a dozen steps and a cleanup job for each post it
// deletes, each waiting on the step's commit) takes seconds alone, and
// took over 30 on CI's 2 cores beside three other stacks and the other
// packages' tests. A queue that never empties still fails, with what it
// holds.
const SettleWithin = 90 * time.Second

// HurryWithin is the longest delay Settle skips: a pruning's window, a
// delivery's wait for its notification.
const HurryWithin = 15 * time.Second

// OOB is the redirect of an app that shows its code rather than being
// sent it.
const OOB = "urn:ietf:wg:oauth:2.0:oob"

// MastoApp registers an app with scopes, through a Mastodon client
// library nobody here wrote (github.com/mattn/go-mastodon).
func (e *Env) MastoApp(scopes string) *mastodon.Application {
	e.T.Helper()
	app, err := mastodon.RegisterApp(context.Background(), &mastodon.AppConfig{
		Server: e.URL, ClientName: "test app", Scopes: scopes, RedirectURIs: OOB, Website: "https://example.com"})
	if err != nil {
		e.T.Fatal(err)
	}
	return app
}

// Approve walks the consent page as a person would, with a form post,
// and returns the code it shows (out of band).
func (e *Env) Approve(app *mastodon.Application, u User, scope string) string {
	e.T.Helper()
	page := e.GetPage("/oauth/authorize?" + url.Values{"client_id": {app.ClientID}, "redirect_uri": {OOB},
		"response_type": {"code"}, "scope": {scope}}.Encode())
	if !strings.Contains(page, "test app wants to use your account") {
		e.T.Fatalf("the consent page does not name the app: %s", page)
	}
	resp, err := http.PostForm(e.URL+"/oauth/authorize", url.Values{"client_id": {app.ClientID}, "redirect_uri": {OOB},
		"scope": {scope}, "username": {u.Name}, "password": {Password(u.Name)}, "decision": {"approve"}})
	if err != nil {
		e.T.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`<code id="code">([^<]+)</code>`).FindSubmatch(body)
	if resp.StatusCode != http.StatusOK || m == nil {
		e.T.Fatalf("approve: %d %s", resp.StatusCode, body)
	}
	return string(m[1])
}

// GetPage reads a page at path.
func (e *Env) GetPage(path string) string {
	e.T.Helper()
	resp, err := http.Get(e.URL + path)
	if err != nil {
		e.T.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// MastoClient signs u in to a new app with scopes, as an app does.
func (e *Env) MastoClient(u User, scopes string) *mastodon.Client {
	e.T.Helper()
	app := e.MastoApp(scopes)
	c := mastodon.NewClient(&mastodon.Config{Server: e.URL, ClientID: app.ClientID, ClientSecret: app.ClientSecret})
	if err := c.AuthenticateToken(context.Background(), e.Approve(app, u, scopes), OOB); err != nil {
		e.T.Fatal(err)
	}
	return c
}

// MastoForm sends form (with a Bearer token, if given) and decodes the
// JSON answer, whatever its status.
func (e *Env) MastoForm(method, path, token string, form url.Values) (int, map[string]any) {
	e.T.Helper()
	req, _ := http.NewRequest(method, e.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.T.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		e.T.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	return resp.StatusCode, out
}

// FormPost posts a form (with a Bearer token, if given) and decodes the
// JSON answer, which must be a 200.
func (e *Env) FormPost(path, token string, form url.Values) map[string]any {
	e.T.Helper()
	status, out := e.MastoForm("POST", path, token, form)
	if status != http.StatusOK {
		e.T.Fatalf("POST %s: %d %v", path, status, out)
	}
	return out
}

// FormStatus posts a form with no token, and returns the answer's
// status.
func (e *Env) FormStatus(path string, form url.Values) int {
	e.T.Helper()
	resp, err := http.PostForm(e.URL+path, form)
	if err != nil {
		e.T.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Picture returns a w × h image encoded as kind (png or jpeg).
func Picture(t testing.TB, kind string, w, h int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.SetNRGBA(x, y, color.NRGBA{R: uint8(x), G: uint8(y), B: 200, A: 255})
		}
	}
	var buf bytes.Buffer
	var err error
	if kind == "jpeg" {
		err = jpeg.Encode(&buf, img, nil)
	} else {
		err = png.Encode(&buf, img)
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
