package federation

import (
	"context"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/accounts"
	"socialstream/internal/derrors"
	"socialstream/internal/egress"
	"socialstream/internal/queue"
	"socialstream/internal/store"
	"socialstream/internal/text"
)

// Remote people. The first time the service meets another server's actor
// (a signature's key, a follow), it fetches the actor and makes them a
// person here (accounts.AddRemote), under name@domain, the domain their
// actor's host. What it keeps of the actor beside the person is a
// RemoteActor, named by the person's id: the actor's address, its
// inboxes and its public key; and an ActorURI, named by a hash of an
// address (the actor's, and its key's when that is another document),
// that finds the person by it. A RemoteActor older than ActorRefresh is
// fetched again when next needed, and at once when a signature does not
// check with the key it holds (the key may have changed).

// Kinds of what the service keeps of remote actors.
const (
	KindRemoteActor = "RemoteActor"
	KindActorURI    = "ActorURI"
)

// ActorRefresh is how long a remote actor is taken as fetched.
const ActorRefresh = 24 * time.Hour

// Limits of what is fetched and kept of a remote actor.
const (
	MaxActorBytes = 1 << 20 // an actor's document
	MaxURI        = 1024    // an address
	maxName       = 64      // preferredUsername
	maxDisplay    = 100     // name, in characters
	maxSummary    = 2000    // the bio, as text
)

func remoteActorKey(db *store.DB, user string) *datastore.Key {
	return db.NameKey(KindRemoteActor, user, nil)
}

func actorURIKey(db *store.DB, uri string) *datastore.Key {
	sum := sha256.Sum256([]byte(uri))
	return db.NameKey(KindActorURI, hex.EncodeToString(sum[:]), nil)
}

// remoteActor is what is kept of a remote actor.
type remoteActor struct {
	URI         string    `datastore:"uri,noindex"`
	Inbox       string    `datastore:"inbox,noindex"`
	SharedInbox string    `datastore:"sharedInbox,noindex,omitempty"`
	Followers   string    `datastore:"followers,noindex,omitempty"`
	KeyID       string    `datastore:"keyId,noindex"`
	PublicKey   string    `datastore:"publicKey,noindex"` // PEM
	Fetched     time.Time `datastore:"fetched,noindex"`
}

// actorURI finds a remote person by an address of theirs.
type actorURI struct {
	UserID string `datastore:"userId,noindex"`
	URI    string `datastore:"uri,noindex"`
}

// Actor is a remote person as the service knows them.
type Actor struct {
	UserID      string // the person here
	URI         string // their actor's address
	Inbox       string
	SharedInbox string // "" if their server has none
	Followers   string // their followers' collection, which a post for them alone names
	KeyID       string
	PublicKey   *rsa.PublicKey
	Fetched     time.Time
}

// DeliveryInbox is where what is sent to them goes: their server's
// shared inbox, or their own.
func (a Actor) DeliveryInbox() string {
	if a.SharedInbox != "" {
		return a.SharedInbox
	}
	return a.Inbox
}

func (r remoteActor) actor(user string) (Actor, error) {
	pub, err := parsePublicPEM(r.PublicKey)
	if err != nil {
		return Actor{}, err
	}
	return Actor{UserID: user, URI: r.URI, Inbox: r.Inbox, SharedInbox: r.SharedInbox, Followers: r.Followers, KeyID: r.KeyID,
		PublicKey: pub, Fetched: r.Fetched}, nil
}

// refresh brings, in tx, what is kept of user, a person known before,
// to what their server shows now (f): their card, and, when their
// delivery inbox changes, the job that copies it onto their Follows of
// people here, which the commit needs (need).
func (s *Service) refresh(ctx context.Context, tx *store.Tx, user string, f fetchedActor, need func() error) error {
	l := tx.Lookup()
	prof := accounts.ReadProfile(l, user)
	var was remoteActor
	l.Add(remoteActorKey(s.db, user), &was)
	if err := l.Run(ctx); err != nil {
		return err
	}
	if was.deliveryInbox() != f.deliveryInbox() {
		if err := need(); err != nil {
			return err
		}
	}
	p := prof.Profile()
	if !prof.Found() || (p.Note == f.remote.Note && prof.DisplayName() == f.remote.DisplayName) {
		return nil
	}
	p.Note = f.remote.Note
	display := f.remote.DisplayName
	return prof.Set(tx, p, &display, nil, s.now().UnixMicro())
}

// ErrRemote is a remote server's answer the service cannot take: an
// actor that is not one, a document too large, an address refused.
var ErrRemote = derrors.New(derrors.InvalidArgument, "the other server's answer cannot be taken")

// EraseRemote erases what is kept of user's actor, when they were a
// remote person (package lifecycle's last phase): the Follows sent them
// from here (up to n, counted), then the actor and the addresses that
// find it (a handful of keys, not counted).
func EraseRemote(ctx context.Context, db *store.DB, user string, n int) (int, error) {
	ctx = store.Unguarded(ctx)
	if done, err := db.DeleteWhere(ctx, KindRemoteFollow, []string{"followee"}, user, n); err != nil || done == n {
		return done, err
	}
	var r remoteActor
	if ok, err := db.Get(ctx, remoteActorKey(db, user), &r); err != nil || !ok {
		return 0, err
	}
	keys := []*datastore.Key{remoteActorKey(db, user)}
	doc, _, _ := strings.Cut(r.KeyID, "#")
	for _, uri := range []string{r.URI, doc} {
		var link actorURI
		if ok, err := db.Get(ctx, actorURIKey(db, uri), &link); err != nil {
			return 0, err
		} else if ok && link.UserID == user {
			keys = append(keys, actorURIKey(db, uri))
		}
	}
	if err := db.DeleteMulti(ctx, keys); err != nil {
		return 0, fmt.Errorf("federation: erasing the actor of %s: %w", user, err)
	}
	return 0, nil
}

// ActorOf returns the remote person whose id is user; false if they are
// not one.
func (s *Service) ActorOf(ctx context.Context, user string) (Actor, bool, error) {
	var r remoteActor
	ok, err := s.db.Get(ctx, remoteActorKey(s.db, user), &r)
	if err != nil || !ok {
		return Actor{}, false, err
	}
	a, err := r.actor(user)
	return a, err == nil, err
}

// Resolve returns the remote person whose actor is at uri: kept, or
// fetched (and made a person here, the first time); fetched again when
// what is kept is older than ActorRefresh, or when refresh.
func (s *Service) Resolve(ctx context.Context, uri string, refresh bool) (Actor, error) {
	if err := s.checkRemoteURL(uri); err != nil {
		return Actor{}, err
	}
	kept, ok, err := s.byURI(ctx, uri)
	if err != nil {
		return Actor{}, err
	}
	if ok && !refresh && s.now().Sub(kept.Fetched) < ActorRefresh {
		return kept, nil
	}
	doc, err := s.fetchJSON(ctx, activityAccept, uri)
	if err != nil {
		if ok && !refresh {
			return kept, nil // their server is down: what is kept serves
		}
		return Actor{}, err
	}
	fetched, err := s.readActor(uri, doc)
	if err != nil {
		return Actor{}, err
	}
	return s.keep(ctx, fetched, "")
}

// byURI reads the remote person an address names, if there is one.
func (s *Service) byURI(ctx context.Context, uri string) (Actor, bool, error) {
	var link actorURI
	ok, err := s.db.Get(ctx, actorURIKey(s.db, uri), &link)
	if err != nil || !ok || link.URI != uri {
		return Actor{}, false, err
	}
	return s.ActorOf(ctx, link.UserID)
}

// fetchedActor is an actor's document, read and checked.
type fetchedActor struct {
	remoteActor
	remote accounts.Remote
}

// actorDoc is what the service reads of an actor.
type actorDoc struct {
	ID                string `json:"id"`
	Type              string `json:"type"`
	PreferredUsername string `json:"preferredUsername"`
	Name              string `json:"name"`
	Summary           string `json:"summary"`
	Inbox             string `json:"inbox"`
	Followers         string `json:"followers"`
	Endpoints         struct {
		SharedInbox string `json:"sharedInbox"`
	} `json:"endpoints"`
	PublicKey struct {
		ID           string `json:"id"`
		Owner        string `json:"owner"`
		PublicKeyPem string `json:"publicKeyPem"`
	} `json:"publicKey"`
}

// remoteName is what a remote preferredUsername may be.
var remoteName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// readActor checks an actor's document fetched from uri.
func (s *Service) readActor(uri string, raw []byte) (fetchedActor, error) {
	var d actorDoc
	if err := json.Unmarshal(raw, &d); err != nil {
		return fetchedActor{}, fmt.Errorf("%w: the actor is not JSON", ErrRemote)
	}
	switch d.Type {
	case "Person", "Service", "Application", "Group", "Organization":
	default:
		return fetchedActor{}, fmt.Errorf("%w: a %q is no actor", ErrRemote, d.Type)
	}
	u, _ := url.Parse(uri)
	switch {
	case d.ID != uri:
		return fetchedActor{}, fmt.Errorf("%w: the actor at %s says it is %s", ErrRemote, uri, d.ID)
	case !remoteName.MatchString(d.PreferredUsername):
		return fetchedActor{}, fmt.Errorf("%w: the name %q", ErrRemote, d.PreferredUsername)
	case d.PublicKey.Owner != d.ID || d.PublicKey.ID == "" || !sameHost(d.PublicKey.ID, uri):
		return fetchedActor{}, fmt.Errorf("%w: the actor's key is not its own", ErrRemote)
	case s.checkRemoteURL(d.Inbox) != nil || d.Endpoints.SharedInbox != "" && s.checkRemoteURL(d.Endpoints.SharedInbox) != nil:
		return fetchedActor{}, fmt.Errorf("%w: the actor's inbox", ErrRemote)
	}
	if _, err := parsePublicPEM(d.PublicKey.PublicKeyPem); err != nil {
		return fetchedActor{}, fmt.Errorf("%w: the actor's key: %v", ErrRemote, err)
	}
	if d.Followers != "" && !sameHost(d.Followers, uri) {
		d.Followers = ""
	}
	f := fetchedActor{remoteActor: remoteActor{URI: uri, Inbox: d.Inbox, SharedInbox: d.Endpoints.SharedInbox, Followers: d.Followers,
		KeyID: d.PublicKey.ID, PublicKey: d.PublicKey.PublicKeyPem, Fetched: s.now().UTC()}}
	f.remote = accounts.Remote{Acct: d.PreferredUsername + "@" + strings.ToLower(u.Host), DisplayName: text.Strip(plainText(d.Name), maxDisplay, false),
		Note: text.Strip(plainText(d.Summary), maxSummary, true)}
	return f, nil
}

// keep stores a fetched actor: the person made the first time, what is
// kept of the actor replaced; also is an address of theirs besides
// their actor's that finds them (their key's).
//
// A person known before whose delivery inbox changes needs the job that
// copies it onto their Follows of people here (InboxesJob), enqueued
// ahead of the commit.
func (s *Service) keep(ctx context.Context, f fetchedActor, also string) (Actor, error) {
	var user string
	var jobs queue.Ahead
	copyInboxes := InboxesJob.Pending(s.q, InboxesTask{URI: f.URI, Fetched: f.Fetched.UnixMicro()}, 0)
	err := jobs.Commit(ctx, nil, func() error {
		return s.db.Update(store.Unguarded(ctx), func(tx *store.Tx) error {
			var link actorURI
			l := tx.Lookup()
			linked := l.Add(actorURIKey(s.db, f.URI), &link)
			name := accounts.ReadName(l, f.remote.Acct)
			if err := l.Run(ctx); err != nil {
				return err
			}
			user = link.UserID
			if linked.Found() {
				if err := s.refresh(ctx, tx, user, f, func() error { return jobs.Need(copyInboxes) }); err != nil {
					return err
				}
			} else {
				if holder, taken := name.Holder(); taken {
					// Another actor held the name before (their server made
					// the account anew): the name stays its.
					return fmt.Errorf("%w: %s is another actor's here (%s)", ErrRemote, f.remote.Acct, holder)
				}
				user = s.gen.NextString()
				if err := accounts.AddRemote(tx, user, f.remote, s.now()); err != nil {
					return err
				}
				if err := tx.Put(actorURIKey(s.db, f.URI), &actorURI{UserID: user, URI: f.URI}); err != nil {
					return err
				}
			}
			if also != "" && also != f.URI {
				if err := tx.Put(actorURIKey(s.db, also), &actorURI{UserID: user, URI: also}); err != nil {
					return err
				}
			}
			return tx.Put(remoteActorKey(s.db, user), &f.remoteActor)
		})
	})
	if err != nil {
		return Actor{}, fmt.Errorf("federation: keeping %s: %w", f.URI, err)
	}
	return f.remoteActor.actor(user)
}

// KeyOwner returns the remote person whose key keyID is: kept, or
// fetched (the document at the key's address is the actor, or names it
// as the key's owner); with refresh, fetched again.
func (s *Service) KeyOwner(ctx context.Context, keyID string, refresh bool) (Actor, error) {
	doc, _, _ := strings.Cut(keyID, "#")
	if err := s.checkRemoteURL(doc); err != nil {
		return Actor{}, err
	}
	var kept Actor // the key's owner as kept, whose server may be down, or have deleted them
	if !refresh {
		a, ok, err := s.byURI(ctx, doc)
		if err != nil || ok && a.KeyID == keyID && s.now().Sub(a.Fetched) < ActorRefresh {
			return a, err
		} else if ok && a.KeyID == keyID {
			kept = a
		}
	}
	raw, err := s.fetchJSON(ctx, activityAccept, doc)
	if err != nil && kept.UserID != "" {
		return kept, nil // what is kept serves: a signature it does not check has it fetched again
	} else if err != nil {
		return Actor{}, err
	}
	var k struct {
		ID        string `json:"id"`
		Owner     string `json:"owner"`
		PublicKey *struct {
			ID    string `json:"id"`
			Owner string `json:"owner"`
		} `json:"publicKey"`
	}
	if err := json.Unmarshal(raw, &k); err != nil {
		return Actor{}, fmt.Errorf("%w: the key's document is not JSON", ErrRemote)
	}
	if k.PublicKey != nil && k.ID == doc { // the actor itself
		f, err := s.readActor(doc, raw)
		if err != nil {
			return Actor{}, err
		}
		if f.KeyID != keyID {
			return Actor{}, fmt.Errorf("%w: %s is not the key of %s", ErrRemote, keyID, doc)
		}
		return s.keep(ctx, f, "")
	}
	owner := k.Owner
	if owner == "" && k.PublicKey != nil {
		owner = k.PublicKey.Owner
	}
	if owner == "" || !sameHost(owner, doc) {
		return Actor{}, fmt.Errorf("%w: the key %s names no owner of its server", ErrRemote, keyID)
	}
	if err := s.checkRemoteURL(owner); err != nil {
		return Actor{}, err
	}
	raw, err = s.fetchJSON(ctx, activityAccept, owner)
	if err != nil {
		return Actor{}, err
	}
	f, err := s.readActor(owner, raw)
	if err != nil {
		return Actor{}, err
	}
	if f.KeyID != keyID {
		return Actor{}, fmt.Errorf("%w: %s is not the key of %s", ErrRemote, keyID, owner)
	}
	return s.keep(ctx, f, doc)
}

// What fetchJSON asks for: ActivityPub's JSON, or WebFinger's (some
// servers answer 406 to a WebFinger asked for the other).
const (
	activityAccept  = `application/activity+json, application/ld+json; profile="https://www.w3.org/ns/activitystreams"`
	webfingerAccept = "application/jrd+json, application/json"
)

// fetchJSON gets a document (accept says of which kind), signed as the
// service, through the one guarded client.
func (s *Service) fetchJSON(ctx context.Context, accept, uri string) ([]byte, error) {
	if err := s.checkNotBlocked(ctx, uri); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRemote, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, uri, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRemote, err)
	}
	req.Header.Set("Accept", accept)
	req.Header.Set("User-Agent", s.userAgent())
	key, err := s.keys.Of(ctx, InstanceKey)
	if err != nil {
		return nil, err
	}
	if err := Sign(req, nil, s.cfg.InstanceActor()+"#main-key", key.Private(), s.now()); err != nil {
		return nil, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		if errors.Is(err, egress.ErrRefused) {
			return nil, fmt.Errorf("%w: %v", ErrRemote, err)
		}
		return nil, fmt.Errorf("federation: fetching %s: %w", uri, err)
	}
	defer egress.Drain(resp)
	if resp.StatusCode != http.StatusOK {
		if resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests {
			return nil, fmt.Errorf("federation: fetching %s: status %d", uri, resp.StatusCode)
		}
		return nil, fmt.Errorf("%w: %s answered %d", ErrRemote, uri, resp.StatusCode)
	}
	raw, err := io.ReadAll(resp.Body)
	if errors.Is(err, egress.ErrTooLarge) {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrRemote, uri, MaxActorBytes)
	}
	if err != nil {
		return nil, fmt.Errorf("federation: fetching %s: %w", uri, err)
	}
	return raw, nil
}

// checkRemoteURL refuses an address no actor of another server has: not
// https (or http to loopback, when allowed), too long, of this
// deployment's own domain.
func (s *Service) checkRemoteURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil || len(raw) > MaxURI || u.Host == "" || u.User != nil:
		return fmt.Errorf("%w: %.100q is not an address", ErrRemote, raw)
	case u.Scheme == "http" && s.cfg.AllowLoopback && loopbackURL(u):
	case u.Scheme != "https":
		return fmt.Errorf("%w: %.100q is not https", ErrRemote, raw)
	}
	if strings.EqualFold(u.Host, s.cfg.Domain) {
		return fmt.Errorf("%w: %.100q is this server's own", ErrRemote, raw)
	}
	return nil
}

func loopbackURL(u *url.URL) bool {
	if u.Hostname() == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(u.Hostname())
	return err == nil && a.IsLoopback()
}

// sameHost reports whether two addresses are of one host.
func sameHost(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && ua.Host != "" && strings.EqualFold(ua.Host, ub.Host) && ua.Scheme == ub.Scheme
}

// parsePublicPEM reads an actor's RSA public key.
func parsePublicPEM(s string) (*rsa.PublicKey, error) {
	block, _ := pem.Decode([]byte(s))
	if block == nil {
		return nil, errors.New("not PEM")
	}
	var key any
	var err error
	switch block.Type {
	case "PUBLIC KEY":
		key, err = x509.ParsePKIXPublicKey(block.Bytes)
	case "RSA PUBLIC KEY":
		key, err = x509.ParsePKCS1PublicKey(block.Bytes)
	default:
		return nil, fmt.Errorf("a %q", block.Type)
	}
	if err != nil {
		return nil, err
	}
	pub, ok := key.(*rsa.PublicKey)
	if !ok || pub.N.BitLen() < 1024 {
		return nil, errors.New("not an RSA key of 1024 bits or more")
	}
	return pub, nil
}

// tags finds HTML's tags; breaks, a paragraph's end, the lines between.
var (
	tags   = regexp.MustCompile(`<[^>]*>`)
	breaks = regexp.MustCompile(`(?i)<br\s*/?>|</p>`)
)

// plainText makes the text the service keeps of another server's HTML:
// lines at breaks and paragraphs, no tags, entities read.
func plainText(h string) string {
	h = breaks.ReplaceAllString(h, "\n")
	return strings.TrimSpace(html.UnescapeString(tags.ReplaceAllString(h, "")))
}

// Find returns the remote person acct (name@domain) names: known, or
// found by their server's WebFinger and fetched.
func (s *Service) Find(ctx context.Context, acct string) (Actor, error) {
	name, host, ok := strings.Cut(strings.TrimPrefix(acct, "@"), "@")
	if !ok || !remoteName.MatchString(name) || host == "" || len(acct) > MaxURI || strings.ContainsAny(host, "/?#@ ") {
		return Actor{}, fmt.Errorf("%w: %q is not name@domain", ErrRemote, acct)
	}
	scheme := "https://"
	if s.cfg.AllowLoopback && loopbackHost(host) {
		scheme = "http://"
	}
	wf := scheme + host + "/.well-known/webfinger?resource=" + url.QueryEscape("acct:"+name+"@"+host)
	if err := s.checkRemoteURL(wf); err != nil {
		return Actor{}, err
	}
	raw, err := s.fetchJSON(ctx, webfingerAccept, wf)
	if err != nil {
		return Actor{}, err
	}
	var j struct {
		Links []struct {
			Rel, Type, Href string
		} `json:"links"`
	}
	if err := json.Unmarshal(raw, &j); err != nil {
		return Actor{}, fmt.Errorf("%w: the WebFinger answer is not JSON", ErrRemote)
	}
	for _, l := range j.Links {
		kind, _, _ := strings.Cut(l.Type, ";")
		if l.Rel == "self" && (kind == "application/activity+json" || kind == "application/ld+json") {
			return s.Resolve(ctx, l.Href, false)
		}
	}
	return Actor{}, fmt.Errorf("%w: %s has no actor", ErrRemote, acct)
}
