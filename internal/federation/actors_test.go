package federation

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"socialstream/internal/ids"
	"socialstream/internal/queue"
	"socialstream/internal/testenv"
)

// actorJSON is an actor's document at uri with the test key A, changed
// by change.
func actorJSON(t *testing.T, uri string, change func(map[string]any)) []byte {
	t.Helper()
	a, _ := testKeys(t)
	pub, err := PublicPEM(&a.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	doc := map[string]any{
		"id": uri, "type": "Person", "preferredUsername": "bob", "name": "Bob\u202E <i>B</i>",
		"summary": "<p>one</p><p>two &amp; three</p>", "inbox": uri + "/inbox",
		"endpoints": map[string]any{"sharedInbox": "https://b.example/inbox"},
		"publicKey": map[string]any{"id": uri + "#main-key", "owner": uri, "publicKeyPem": pub},
	}
	if change != nil {
		change(doc)
	}
	raw, _ := json.Marshal(doc)
	return raw
}

// An actor is taken only as itself: its id the address it was fetched
// from, its key its own and of its server, its inboxes addresses the
// service may reach, its name a name; its text is made plain.
func TestReadActor(t *testing.T) {
	s := &Service{cfg: Config{Domain: "a.example"}, now: time.Now}
	const uri = "https://b.example/users/bob"
	f, err := s.readActor(uri, actorJSON(t, uri, nil))
	if err != nil {
		t.Fatal(err)
	}
	if f.remote.Acct != "bob@b.example" || f.remote.DisplayName != "Bob B" || f.remote.Note != "one\ntwo & three" ||
		f.KeyID != uri+"#main-key" || f.SharedInbox != "https://b.example/inbox" {
		t.Errorf("read: %+v", f)
	}
	for name, change := range map[string]func(map[string]any){
		"another id":          func(d map[string]any) { d["id"] = "https://b.example/users/eve" },
		"not an actor":        func(d map[string]any) { d["type"] = "Note" },
		"a name with a space": func(d map[string]any) { d["preferredUsername"] = "bo b" },
		"a key of another":    func(d map[string]any) { d["publicKey"].(map[string]any)["owner"] = "https://b.example/users/eve" },
		"a key elsewhere":     func(d map[string]any) { d["publicKey"].(map[string]any)["id"] = "https://c.example/k" },
		"no key":              func(d map[string]any) { d["publicKey"].(map[string]any)["publicKeyPem"] = "" },
		"an inbox over http":  func(d map[string]any) { d["inbox"] = "http://b.example/inbox" },
		"an inbox here":       func(d map[string]any) { d["inbox"] = "https://a.example/inbox" },
	} {
		if _, err := s.readActor(uri, actorJSON(t, uri, change)); !errors.Is(err, ErrRemote) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := s.readActor(uri, []byte("<html>")); !errors.Is(err, ErrRemote) {
		t.Errorf("not JSON: %v", err)
	}
}

// The service reaches other servers over https alone, or plain http to
// loopback when allowed; never its own domain, nor an address with
// credentials or too long.
func TestCheckRemoteURL(t *testing.T) {
	strict := &Service{cfg: Config{Domain: "a.example"}}
	loose := &Service{cfg: Config{Domain: "127.0.0.1:8080", AllowLoopback: true}}
	for _, c := range []struct {
		s   *Service
		url string
		ok  bool
	}{
		{strict, "https://b.example/users/bob", true},
		{strict, "http://b.example/users/bob", false},
		{strict, "http://127.0.0.1:9/users/bob", false},
		{strict, "https://a.example/users/1", false},
		{strict, "https://user:pw@b.example/x", false},
		{strict, "https://b.example/" + strings.Repeat("a", MaxURI), false},
		{strict, "ftp://b.example/x", false},
		{strict, "/users/bob", false},
		{loose, "http://127.0.0.1:9/users/bob", true},
		{loose, "http://localhost:9/users/bob", true},
		{loose, "http://127.0.0.1:8080/users/1", false}, // its own
		{loose, "http://b.example/users/bob", false},
	} {
		if err := c.s.checkRemoteURL(c.url); (err == nil) != c.ok {
			t.Errorf("%s (domain %s): %v", c.url, c.s.cfg.Domain, err)
		}
	}
}

// A delivery signs and posts the activity: 2xx is delivered, a refusal
// (4xx but 408 and 429) final, 408, 429 and 5xx retried, an address
// the client may not reach refused; the inbox sees the sender's key.
func TestDeliverOutcomes(t *testing.T) {
	ctx := context.Background()
	db := testenv.DB(t)
	status := http.StatusAccepted
	var gotKey string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if sig, err := ReadSignature(r, mustRead(r), time.Now()); err == nil {
			gotKey = sig.KeyID
		}
		w.WriteHeader(status)
	}))
	defer srv.Close()
	keys := NewKeys(db)
	s := New(Config{Domain: "127.0.0.1:1", AllowLoopback: true}, db, ids.New(), keys, nil, Deps{})
	d := Delivery{From: "42", Inbox: srv.URL + "/inbox", ID: "https://x/1", Activity: json.RawMessage(`{"type":"Accept"}`)}
	// No one 42 here, and no key: a delivery makes none, and ends.
	if out, err := s.Deliver(ctx, d); out != Refused+" (its sender is gone)" || err != nil {
		t.Errorf("from no one: %q, %v", out, err)
	}
	if _, ok, err := keys.Stored(ctx, "42"); ok || err != nil {
		t.Fatalf("a delivery from no one made a key (%v)", err)
	}
	if _, err := keys.Of(ctx, "42"); err != nil { // as the person's first actor read makes it
		t.Fatal(err)
	}
	for _, c := range []struct {
		status  int
		outcome string
		retry   bool
	}{
		{http.StatusAccepted, Delivered, false},
		{http.StatusOK, Delivered, false},
		{http.StatusForbidden, Refused + " 403", false},
		{http.StatusGone, Refused + " 410", false},
		{http.StatusTooManyRequests, "", true},
		{http.StatusRequestTimeout, "", true},
		{http.StatusBadGateway, "", true},
	} {
		status = c.status
		out, err := s.Deliver(ctx, d)
		if out != c.outcome || errors.Is(err, ErrRetry) != c.retry {
			t.Errorf("%d: %q, %v", c.status, out, err)
		}
	}
	if gotKey != "http://127.0.0.1:1/users/42#main-key" {
		t.Errorf("signed as %q", gotKey)
	}
	status = http.StatusServiceUnavailable
	if out, err := s.Deliver(queue.WithAttempt(ctx, queue.Federation, queue.RetryLimits[queue.Federation]), d); out != Abandoned || err != nil {
		t.Errorf("the last attempt: %q, %v", out, err)
	}
	strict := New(Config{Domain: "a.example"}, db, ids.New(), NewKeys(db), nil, Deps{})
	if out, err := strict.Deliver(ctx, d); !strings.HasPrefix(out, Refused) || err != nil {
		t.Errorf("to loopback, not allowed: %q, %v", out, err)
	}
}

func mustRead(r *http.Request) []byte {
	b, _ := io.ReadAll(r.Body)
	return b
}

// A key's owner kept past ActorRefresh is fetched again; when their
// server does not answer (down, or the person gone, as a Delete of them
// comes), the key kept serves, and is fetched again only when asked to
// (a signature it does not check).
func TestKeyOwnerKeptServesWhenGone(t *testing.T) {
	ctx := context.Background()
	db := testenv.DB(t)
	gone := false
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if gone {
			http.Error(w, "gone", http.StatusGone)
			return
		}
		w.Header().Set("Content-Type", "application/activity+json")
		_, _ = w.Write(actorJSON(t, srv.URL+"/users/bob", nil))
	}))
	defer srv.Close()
	s := New(Config{Domain: "127.0.0.1:1", AllowLoopback: true}, db, ids.New(), NewKeys(db), nil, Deps{})
	keyID := srv.URL + "/users/bob#main-key"
	first, err := s.KeyOwner(ctx, keyID, false)
	if err != nil {
		t.Fatal(err)
	}
	gone = true
	s.now = func() time.Time { return time.Now().Add(ActorRefresh + time.Hour) }
	if kept, err := s.KeyOwner(ctx, keyID, false); err != nil || kept.UserID != first.UserID {
		t.Errorf("stale, their server gone: %+v, %v", kept, err)
	}
	if _, err := s.KeyOwner(ctx, keyID, true); err == nil {
		t.Error("fetched again when asked, their server gone: no error")
	}
}
