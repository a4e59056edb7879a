package federation

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	testKeysOnce       sync.Once
	testKeyA, testKeyB *rsa.PrivateKey
)

func testKeys(t *testing.T) (*rsa.PrivateKey, *rsa.PrivateKey) {
	t.Helper()
	testKeysOnce.Do(func() {
		testKeyA, _ = rsa.GenerateKey(rand.Reader, KeyBits)
		testKeyB, _ = rsa.GenerateKey(rand.Reader, KeyBits)
	})
	if testKeyA == nil || testKeyB == nil {
		t.Fatal("no test keys")
	}
	return testKeyA, testKeyB
}

const testKeyID = "https://a.example/users/1#main-key"

// inbox is a server that reads each request's signature as an inbox
// does, at its clock now, and checks it with pub.
type inbox struct {
	srv *httptest.Server
	now time.Time
	pub *rsa.PublicKey

	mu    sync.Mutex
	keyID string
	err   error
}

func newInbox(t *testing.T, pub *rsa.PublicKey, now time.Time) *inbox {
	in := &inbox{now: now, pub: pub}
	in.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		if r.Method == http.MethodPost {
			body, _ = io.ReadAll(r.Body)
		}
		s, err := ReadSignature(r, body, in.now)
		in.mu.Lock()
		defer in.mu.Unlock()
		in.keyID, in.err = "", err
		if err == nil {
			in.keyID, in.err = s.KeyID, s.Verify(in.pub)
		}
	}))
	t.Cleanup(in.srv.Close)
	return in
}

// request is a request to the inbox's path, with body for a POST.
func (in *inbox) request(t *testing.T, method, path string, body []byte) *http.Request {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, in.srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// send sends req, with body instead of what it carries when body is
// set, and returns what the inbox found.
func (in *inbox) send(t *testing.T, req *http.Request, body []byte) (string, error) {
	t.Helper()
	if body != nil {
		req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.keyID, in.err
}

// handSign signs req over headers with params, as another server might.
func handSign(t *testing.T, req *http.Request, key *rsa.PrivateKey, headers []string, params map[string]string, header string) {
	t.Helper()
	str, err := signingString(req, headers, params)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(str))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	v := fmt.Sprintf(`keyId="%s",headers="%s",signature="%s"`, testKeyID, strings.Join(headers, " "), base64.StdEncoding.EncodeToString(sig))
	for name, p := range params {
		v += fmt.Sprintf(`,%s=%s`, name, p)
	}
	if header == "Authorization" {
		v = "Signature " + v
	}
	req.Header.Set(header, v)
}

// What Sign signs, an inbox reads and the key checks, over real HTTP: a
// POST with its body's digest, and a GET; the key's id is the one sent.
// hs2019 with (created) in place of Date, and the signature in
// Authorization, are read too.
func TestSignaturesHold(t *testing.T) {
	a, _ := testKeys(t)
	now := time.Now()
	in := newInbox(t, &a.PublicKey, now)
	body := []byte(`{"type":"Follow"}`)

	post := in.request(t, "POST", "/users/2/inbox?x=1", body)
	if err := Sign(post, body, testKeyID, a, now); err != nil {
		t.Fatal(err)
	}
	if post.Header.Get("Digest") != Digest(body) || !strings.Contains(post.Header.Get("Signature"), `headers="(request-target) host date digest"`) {
		t.Errorf("signed: Digest %q, Signature %q", post.Header.Get("Digest"), post.Header.Get("Signature"))
	}
	if id, err := in.send(t, post, nil); err != nil || id != testKeyID {
		t.Errorf("POST: key %q, %v", id, err)
	}
	get := in.request(t, "GET", "/users/2", nil)
	if err := Sign(get, nil, testKeyID, a, now); err != nil {
		t.Fatal(err)
	}
	if id, err := in.send(t, get, nil); err != nil || id != testKeyID {
		t.Errorf("GET: key %q, %v", id, err)
	}

	created := in.request(t, "POST", "/inbox", body)
	created.Header.Set("Digest", Digest(body))
	handSign(t, created, a, []string{"(request-target)", "host", "(created)", "digest"},
		map[string]string{"algorithm": `"hs2019"`, "created": strconv.FormatInt(now.Unix(), 10)}, "Signature")
	if _, err := in.send(t, created, nil); err != nil {
		t.Errorf("hs2019 with (created): %v", err)
	}
	auth := in.request(t, "GET", "/users/2", nil)
	auth.Header.Set("Date", now.UTC().Format(http.TimeFormat))
	handSign(t, auth, a, signedGet, nil, "Authorization")
	if _, err := in.send(t, auth, nil); err != nil {
		t.Errorf("in Authorization: %v", err)
	}
}

// A signature does not hold for another body, path, host, date or key,
// nor when stale or early, nor when it leaves out what it must sign; a
// request without one is unsigned; a malformed one is refused.
func TestSignaturesRefused(t *testing.T) {
	a, b := testKeys(t)
	now := time.Now()
	in := newInbox(t, &a.PublicKey, now)
	body := []byte(`{"type":"Follow"}`)
	signed := func(method, path string, at time.Time) *http.Request {
		var bd []byte
		if method == "POST" {
			bd = body
		}
		req := in.request(t, method, path, bd)
		if err := Sign(req, bd, testKeyID, a, at); err != nil {
			t.Fatal(err)
		}
		return req
	}
	for _, c := range []struct {
		name string
		req  func() *http.Request
		body []byte // sent instead
		want error
	}{
		{"another body", func() *http.Request { return signed("POST", "/inbox", now) }, []byte(`{"type":"Block"}`), ErrBadSignature},
		{"another path", func() *http.Request {
			r := signed("POST", "/inbox", now)
			r.URL.Path = "/users/3/inbox"
			return r
		}, body, ErrBadSignature},
		{"another host", func() *http.Request {
			r := signed("GET", "/users/2", now)
			r.Host = "c.example"
			return r
		}, nil, ErrBadSignature},
		{"another date", func() *http.Request {
			r := signed("GET", "/users/2", now)
			r.Header.Set("Date", now.Add(time.Second).UTC().Format(http.TimeFormat))
			return r
		}, nil, ErrBadSignature},
		{"stale", func() *http.Request { return signed("GET", "/users/2", now.Add(-SignatureWindow-time.Minute)) }, nil, ErrBadSignature},
		{"early", func() *http.Request { return signed("GET", "/users/2", now.Add(SignatureWindow+time.Minute)) }, nil, ErrBadSignature},
		{"another key", func() *http.Request {
			r := in.request(t, "GET", "/users/2", nil)
			if err := Sign(r, nil, testKeyID, b, now); err != nil {
				t.Fatal(err)
			}
			return r
		}, nil, ErrBadSignature},
		{"a body's digest not signed", func() *http.Request {
			r := in.request(t, "POST", "/inbox", body)
			r.Header.Set("Date", now.UTC().Format(http.TimeFormat))
			r.Header.Set("Digest", Digest(body))
			handSign(t, r, a, signedGet, nil, "Signature")
			return r
		}, body, ErrBadSignature},
		{"the host not signed", func() *http.Request {
			r := in.request(t, "GET", "/users/2", nil)
			r.Header.Set("Date", now.UTC().Format(http.TimeFormat))
			handSign(t, r, a, []string{"(request-target)", "date"}, nil, "Signature")
			return r
		}, nil, ErrBadSignature},
		{"unsigned", func() *http.Request { return in.request(t, "GET", "/users/2", nil) }, nil, ErrUnsigned},
		{"another algorithm", func() *http.Request {
			r := signed("GET", "/users/2", now)
			r.Header.Set("Signature", strings.Replace(r.Header.Get("Signature"), "rsa-sha256", "ed25519", 1))
			return r
		}, nil, ErrBadSignature},
		{"unterminated", func() *http.Request {
			r := signed("GET", "/users/2", now)
			r.Header.Set("Signature", `keyId="x,signature="AAAA`)
			return r
		}, nil, ErrBadSignature},
		{"no keyId", func() *http.Request {
			r := signed("GET", "/users/2", now)
			r.Header.Set("Signature", strings.Replace(r.Header.Get("Signature"), "keyId=", "kid=", 1))
			return r
		}, nil, ErrBadSignature},
		{"a parameter twice", func() *http.Request {
			r := signed("GET", "/users/2", now)
			r.Header.Set("Signature", r.Header.Get("Signature")+`,keyId="https://evil.example/k"`)
			return r
		}, nil, ErrBadSignature},
		{"too long", func() *http.Request {
			r := signed("GET", "/users/2", now)
			r.Header.Set("Signature", r.Header.Get("Signature")+`,x="`+strings.Repeat("a", maxSignatureHeader)+`"`)
			return r
		}, nil, ErrBadSignature},
	} {
		if _, err := in.send(t, c.req(), c.body); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

// A signature binds a delivery to the host it was sent to: the inbox
// takes the deployment's domain alone, with its scheme's default port or
// none, in any case.
func TestIsHost(t *testing.T) {
	for _, c := range []struct {
		domain, host string
		want         bool
	}{
		{"social.example", "social.example", true},
		{"social.example", "Social.Example", true},
		{"social.example", "social.example:443", true},
		{"social.example", "social.example:80", true},
		{"social.example", "social.example:8443", false},
		{"social.example", "other.example", false},
		{"social.example", "social.example.other.example", false},
		{"social.example", "", false},
		{"127.0.0.1:8443", "127.0.0.1:8443", true},
		{"127.0.0.1:8443", "127.0.0.1:8080", false},
		{"127.0.0.1:8443", "127.0.0.1", false},
		{"", "", false},
	} {
		if got := (Config{Domain: c.domain}).IsHost(c.host); got != c.want {
			t.Errorf("%q.IsHost(%q) = %v, want %v", c.domain, c.host, got, c.want)
		}
	}
}

// What signing a delivery and checking a delivery cost the instance's
// CPU, for the cost model (costmodel.Measured's SignCPU and VerifyCPU):
//
//	go test ./internal/federation -run '^$' -bench 'Sign|Verify' -benchtime 300x -count 5
func BenchmarkSign(b *testing.B) {
	key, body := benchKey(b), []byte(`{"type":"Create","object":{"type":"Note","content":"hello"}}`)
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodPost, "https://elsewhere.example/inbox", nil)
		if err := Sign(req, body, "https://here.example/users/1#main-key", key, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerify(b *testing.B) {
	key, body := benchKey(b), []byte(`{"type":"Create","object":{"type":"Note","content":"hello"}}`)
	req, _ := http.NewRequest(http.MethodPost, "https://here.example/inbox", nil)
	if err := Sign(req, body, "https://elsewhere.example/users/1#main-key", key, time.Now()); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		sig, err := ReadSignature(req, body, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		if err := sig.Verify(&key.PublicKey); err != nil {
			b.Fatal(err)
		}
	}
}

func benchKey(b *testing.B) *rsa.PrivateKey {
	b.Helper()
	key, err := rsa.GenerateKey(rand.Reader, KeyBits)
	if err != nil {
		b.Fatal(err)
	}
	return key
}
