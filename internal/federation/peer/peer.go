// Package peer is another server of the fediverse on loopback, for the
// tests, the bill and the checker: ActivityPub over real HTTP on loopback, with people of
// its own, each with a key pair, that signs what it sends as a
// Mastodon-like server does and checks the signature of everything it
// receives against the sender's key, fetched from the sender's actor. It
// owns no entity.
package peer

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"socialstream/internal/federation"
)

// Server is the other server.
type Server struct {
	// URL is its root, http://127.0.0.1:port; Domain its host:port.
	URL, Domain string
	srv         *httptest.Server

	mu       sync.Mutex
	people   map[string]*Person
	received []Received
	// keys are the keys it fetched, by their ids, kept as servers keep
	// them (a person deleted since signs their Delete with theirs).
	keys map[string]*rsa.PublicKey
	// pictures are the pictures it serves, by name, and fetched how many
	// times each was asked for.
	pictures map[string][]byte
	moved    map[string]string // pictures answered by a redirect, to where
	failing  map[string]bool   // pictures answered 503
	fetched  map[string]int
	// unreachable has its inboxes answer 503, as a server that is down;
	// heard is told of each activity its inboxes take.
	unreachable bool
	heard       func(Received)
	refused     int // deliveries answered 503 while unreachable
}

// Person is one of its people.
type Person struct {
	Name   string
	URI    string
	Locked bool
	key    *rsa.PrivateKey
	down   bool   // their actor answers 500
	gone   bool   // their actor answers 410: they deleted their account
	shown  string // their display name, when set
	// unshared has their actor name their own inbox alone, no shared
	// inbox of their server's.
	unshared bool
}

// Show has p's actor show display as their name.
func (s *Server) Show(p *Person, display string) {
	s.mu.Lock()
	p.shown = display
	s.mu.Unlock()
}

// Down has p's actor answer 500 (down true), as a server that fails.
func (s *Server) Down(p *Person, down bool) {
	s.mu.Lock()
	p.down = down
	s.mu.Unlock()
}

// Gone has p's actor answer 410, as a server answers for a person who
// deleted their account.
func (s *Server) Gone(p *Person) {
	s.mu.Lock()
	p.gone = true
	s.mu.Unlock()
}

// Unshare has p's actor name their own inbox alone, no shared inbox: as
// a server does that moves a person's deliveries to their own inbox.
func (s *Server) Unshare(p *Person) {
	s.mu.Lock()
	p.unshared = true
	s.mu.Unlock()
}

// KeyID is the id of the person's key.
func (p *Person) KeyID() string { return p.URI + "#main-key" }

// Received is an activity posted to one of its inboxes.
type Received struct {
	Inbox    string
	Activity map[string]any
	// KeyID is who signed it; Err why its signature does not hold (nil:
	// it does, with the key the signer's actor shows).
	KeyID string
	Err   error
	// Bytes is the request's size as it came: its request line, its
	// header and its body (what the sender sent, but TCP's and TLS's).
	Bytes int
}

// New starts the server; Close stops it.
func New() *Server {
	s := &Server{people: map[string]*Person{}, keys: map[string]*rsa.PublicKey{}, pictures: map[string][]byte{}, moved: map[string]string{}, failing: map[string]bool{}, fetched: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /users/{name}", s.actor)
	mux.HandleFunc("POST /users/{name}/inbox", s.inbox)
	mux.HandleFunc("POST /inbox", s.inbox)
	mux.HandleFunc("GET /.well-known/webfinger", s.webfinger)
	mux.HandleFunc("GET /media/{name}", s.picture)
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL
	s.Domain = strings.TrimPrefix(s.URL, "http://")
	return s
}

// Picture has the server serve data as the picture name (nil: answer
// 404), and returns its address.
func (s *Server) Picture(name string, data []byte) string {
	s.mu.Lock()
	s.pictures[name] = data
	s.mu.Unlock()
	return s.URL + "/media/" + name
}

// Moved has picture name answered by a redirect to the address to, and
// returns its address.
func (s *Server) Moved(name, to string) string {
	s.mu.Lock()
	s.moved[name] = to
	s.mu.Unlock()
	return s.URL + "/media/" + name
}

// Failing has picture name answered 503 (failing true), as a server
// that fails for a while.
func (s *Server) Failing(name string, failing bool) {
	s.mu.Lock()
	s.failing[name] = failing
	s.mu.Unlock()
}

// Fetched says how many times picture name was asked for.
func (s *Server) Fetched(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fetched[name]
}

func (s *Server) picture(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	s.mu.Lock()
	s.fetched[name]++
	data, to, failing := s.pictures[name], s.moved[name], s.failing[name]
	s.mu.Unlock()
	if failing {
		http.Error(w, "failing", http.StatusServiceUnavailable)
		return
	}
	if to != "" {
		http.Redirect(w, r, to, http.StatusFound)
		return
	}
	if data == nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", http.DetectContentType(data))
	w.Write(data)
}

// Unreachable has its inboxes answer 503 (down true), as a server that
// is down, taking nothing.
func (s *Server) Unreachable(down bool) {
	s.mu.Lock()
	s.unreachable = down
	s.mu.Unlock()
}

// Refused says how many deliveries its inboxes refused while
// unreachable.
func (s *Server) Refused() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

// Hear has f told of each activity its inboxes take, once it is
// recorded: a server's own answer to it (an Accept of a Follow) is sent
// from there.
func (s *Server) Hear(f func(Received)) {
	s.mu.Lock()
	s.heard = f
	s.mu.Unlock()
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Person returns its person named name, made the first time.
func (s *Server) Person(name string) *Person {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.people[name]; ok {
		return p
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	p := &Person{Name: name, URI: s.URL + "/users/" + name, key: key}
	s.people[name] = p
	return p
}

// Rekey gives p a new key pair, as a server does that makes its keys
// anew: what it signs from now on checks with the new key alone.
func (s *Server) Rekey(p *Person) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	s.mu.Lock()
	p.key = key
	s.mu.Unlock()
}

func (s *Server) actor(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	p, ok := s.people[r.PathValue("name")]
	var pub, display string
	down, gone := false, false
	endpoints := map[string]string{"sharedInbox": s.URL + "/inbox"}
	if ok {
		pub, _ = federation.PublicPEM(&p.key.PublicKey)
		down, gone = p.down, p.gone
		if p.unshared {
			endpoints = map[string]string{}
		}
		display = p.shown
		if display == "" {
			display = strings.ToUpper(p.Name[:1]) + p.Name[1:] + " <b>of elsewhere</b>"
		}
	}
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	if down {
		http.Error(w, "down", http.StatusInternalServerError)
		return
	}
	if gone {
		http.Error(w, "gone", http.StatusGone)
		return
	}
	w.Header().Set("Content-Type", "application/activity+json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"@context":                  []string{"https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"},
		"id":                        p.URI,
		"type":                      "Person",
		"preferredUsername":         p.Name,
		"name":                      display,
		"summary":                   "<p>A person of another server.</p>",
		"inbox":                     p.URI + "/inbox",
		"outbox":                    p.URI + "/outbox",
		"followers":                 p.URI + "/followers",
		"endpoints":                 endpoints,
		"publicKey":                 map[string]string{"id": p.KeyID(), "owner": p.URI, "publicKeyPem": pub},
		"manuallyApprovesFollowers": p.Locked,
	})
}

// webfinger finds a person by acct:name@domain; asked for another kind
// than WebFinger's JSON, it answers 406, as GoToSocial does.
func (s *Server) webfinger(w http.ResponseWriter, r *http.Request) {
	if a := r.Header.Get("Accept"); !strings.Contains(a, "application/jrd+json") && !strings.Contains(a, "application/json") {
		http.Error(w, "not acceptable", http.StatusNotAcceptable)
		return
	}
	name, domain, _ := strings.Cut(strings.TrimPrefix(r.URL.Query().Get("resource"), "acct:"), "@")
	s.mu.Lock()
	p, ok := s.people[name]
	s.mu.Unlock()
	if !ok || domain != s.Domain {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/jrd+json")
	_ = json.NewEncoder(w).Encode(map[string]any{"subject": "acct:" + name + "@" + s.Domain,
		"links": []map[string]string{{"rel": "self", "type": "application/activity+json", "href": p.URI}}})
}

// inbox takes an activity, and checks its signature with the key its
// keyId's actor shows: kept, or fetched (again, when the kept one does
// not check it).
func (s *Server) inbox(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	down := s.unreachable
	if down {
		s.refused++
	}
	s.mu.Unlock()
	if down {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, "unreadable", http.StatusBadRequest)
		return
	}
	rec := Received{Inbox: r.URL.Path, Bytes: requestBytes(r, len(body))}
	if err := json.Unmarshal(body, &rec.Activity); err != nil {
		http.Error(w, "not JSON", http.StatusBadRequest)
		return
	}
	sig, err := federation.ReadSignature(r, body, time.Now())
	if err == nil {
		rec.KeyID = sig.KeyID
		s.mu.Lock()
		pub := s.keys[sig.KeyID]
		s.mu.Unlock()
		if pub == nil || sig.Verify(pub) != nil {
			if pub, err = fetchKey(r.Context(), sig.KeyID); err == nil {
				s.mu.Lock()
				s.keys[sig.KeyID] = pub
				s.mu.Unlock()
			}
		}
		if err == nil {
			err = sig.Verify(pub)
		}
	}
	rec.Err = err
	s.mu.Lock()
	s.received = append(s.received, rec)
	heard := s.heard
	s.mu.Unlock()
	w.WriteHeader(http.StatusAccepted)
	if heard != nil {
		heard(rec)
	}
}

// fetchKey reads the public key of keyID from its actor.
func fetchKey(ctx context.Context, keyID string) (*rsa.PublicKey, error) {
	doc, _, _ := strings.Cut(keyID, "#")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, doc, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/activity+json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	var actor struct {
		ID        string `json:"id"`
		PublicKey struct {
			ID, Owner, PublicKeyPem string
		} `json:"publicKey"`
	}
	if err := json.NewDecoder(res.Body).Decode(&actor); err != nil {
		return nil, fmt.Errorf("the signer's actor: %w", err)
	}
	if actor.PublicKey.ID != keyID || actor.PublicKey.Owner != actor.ID {
		return nil, fmt.Errorf("the actor at %s does not own %s", doc, keyID)
	}
	block, _ := pem.Decode([]byte(actor.PublicKey.PublicKeyPem))
	if block == nil {
		return nil, errors.New("the signer's key is not PEM")
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	pub, ok := k.(*rsa.PublicKey)
	if !ok {
		return nil, errors.New("the signer's key is not RSA")
	}
	return pub, nil
}

// Received returns what its inboxes took so far.
func (s *Server) Received() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.received...)
}

// Send posts activity to inbox, signed as from, and returns the status.
func (s *Server) Send(ctx context.Context, from *Person, inbox string, activity any) (int, []byte, error) {
	body, err := json.Marshal(activity)
	if err != nil {
		return 0, nil, err
	}
	req, err := s.Signed(ctx, from, inbox, body)
	if err != nil {
		return 0, nil, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	answer, _ := io.ReadAll(res.Body)
	return res.StatusCode, answer, nil
}

// Signed is the POST of body to inbox, signed as from.
func (s *Server) Signed(ctx context.Context, from *Person, inbox string, body []byte) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, inbox, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/activity+json")
	s.mu.Lock()
	key := from.key
	s.mu.Unlock()
	return req, federation.Sign(req, body, from.KeyID(), key, time.Now())
}

// requestBytes is the size of r as it came, with a body of n bytes: its
// request line, each header line (Host among them) and the blank line
// after them.
func requestBytes(r *http.Request, n int) int {
	size := len(r.Method) + 1 + len(r.RequestURI) + 1 + len(r.Proto) + 2
	size += len("Host: ") + len(r.Host) + 2
	for name, values := range r.Header {
		for _, v := range values {
			size += len(name) + 2 + len(v) + 2
		}
	}
	return size + 2 + n
}
