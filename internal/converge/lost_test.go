package converge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"socialstream/internal/accounts"
	"socialstream/internal/moderation"
	"socialstream/internal/store"
	"socialstream/internal/testenv"
)

// loseAnswer is a transport that sends every request, and for the first
// one lose picks, runs meanwhile and then drops the answer: the client
// sees a failed call whose change happened.
type loseAnswer struct {
	next      http.RoundTripper
	lose      func(*http.Request, []byte) bool
	meanwhile func()
	lost      bool
}

func (l *loseAnswer) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	resp, err := l.next.RoundTrip(req)
	if err != nil || l.lost || !l.lose(req, body) {
		return resp, err
	}
	l.lost = true
	resp.Body.Close()
	l.meanwhile()
	return nil, errors.New("the answer was lost")
}

// A limit whose answer is lost, after which the moderator files more than
// a page of the audit log about someone else: the checker must learn that
// the limit holds from the account, where reading the audit log's newest
// entries once made it believe the person unlimited, and then report the
// person's posts in others' feeds as violations.
func TestLostLimitIsReadFromTheAccount(t *testing.T) {
	ctx, r, st := faultlessRunner(t)
	if err := r.startStaff(ctx, st.db); err != nil {
		t.Fatal(err)
	}
	a := &actor{rng: rand.New(rand.NewPCG(1, 1))}
	if err := r.register(ctx, a); err != nil {
		t.Fatal(err)
	}
	target := a.users[0]
	// Someone the model does not know, whom the moderator limits and
	// lifts 60 times each.
	rep, err := r.c.call(ctx, http.MethodPost, "/auth/register", "", map[string]string{"username": "bystander", "password": password})
	if err != nil || rep.status != http.StatusCreated && rep.status != http.StatusOK {
		t.Fatalf("registering the bystander: %v %v", rep, err)
	}
	bystander := str(entry(rep), "id")
	noise := func() {
		for i := range 120 {
			op := []string{moderation.Limit, moderation.Unlimit}[i%2]
			rep, err := r.c.call(ctx, http.MethodPost, "/social/rest/moderation/actions", r.staff.token,
				map[string]any{"action": op, "accountId": bystander, "reason": "noise"})
			if err != nil || rep.status/100 != 2 {
				t.Errorf("%s of the bystander: %v %v", op, rep, err)
				return
			}
		}
	}
	lossy := &loseAnswer{next: http.DefaultTransport, meanwhile: noise, lose: func(req *http.Request, body []byte) bool {
		var b struct{ AccountID string }
		return req.URL.Path == "/social/rest/moderation/actions" && json.Unmarshal(body, &b) == nil && b.AccountID == target.id
	}}
	r.c = &client{base: st.url, http: &http.Client{Timeout: time.Minute, Transport: lossy}}

	if _, err := r.limit(ctx, a); err != nil {
		t.Fatal(err)
	}
	if !lossy.lost {
		t.Fatal("no limit of the target was sent")
	}
	limited, err := r.truth(ctx, func(l *store.Lookup) func() bool {
		rec := accounts.Read(l, target.id)
		return func() bool { return rec.Account().Limited }
	})
	if err != nil {
		t.Fatal(err)
	}
	if !limited {
		t.Fatal("the limit whose answer was lost did not happen")
	}
	if !r.m.limited[target.id] {
		t.Errorf("the checker believes %s unlimited though the account is limited: %v", target.id, r.m.standings[target.id])
	}
	if len(r.m.violations) > 0 {
		t.Errorf("violations: %v", r.m.violations)
	}
}

// faultlessRunner starts a stack with no faults, for a test of the
// checker's own, and a runner on it; both end with the test (within two
// minutes).
func faultlessRunner(t *testing.T) (context.Context, *runner, *stack) {
	t.Helper()
	index, err := testenv.RepoFile("index.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Defaults()
	cfg.Dir = filepath.Dir(index)
	cfg.Datastore = testenv.EmulatorHost(t)
	cfg.TaskFaults, cfg.EnqueueFaults, cfg.DatastoreFaults, cfg.CommitFaults, cfg.SlowCommits = 0, 0, 0, 0, 0
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	st, err := startStack(ctx, cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.close)
	r, err := newRunner(ctx, cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	return ctx, r, st
}
