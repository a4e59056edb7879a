// Package oauth is the sign-in of OAuth 2 apps (RFC 6749, with PKCE, RFC
// 7636), as Mastodon's apps expect it: an app registers itself, a person
// approves it on the service's own page and the app trades the code it
// got for a token, or an app takes a token of its own (client
// credentials). The tokens are the accounts package's, the store of the
// service's own sign-in, marked with their app and scopes (accounts.Grant).
//
// Entities:
//   - OAuthApp/{client id}: a registered app, with the hash of its secret.
//   - OAuthCode/{hash of the code}: an approval, for ten minutes; the
//     Datastore's TTL policy on expires deletes it. Its trade marks it
//     used, with the id of the token it gave: a second trade revokes that
//     token (RFC 6749 section 4.1.2: the code was stolen).
package oauth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"socialstream/internal/accounts"
	"socialstream/internal/derrors"
	"socialstream/internal/ids"
	"socialstream/internal/store"
)

// Kinds.
const (
	KindApp  = "OAuthApp"
	KindCode = "OAuthCode"
)

// OOB is the redirect of an app that cannot receive one: the page shows
// the code for the person to copy.
const OOB = "urn:ietf:wg:oauth:2.0:oob"

// CodeTTL is how long an approval may wait to be traded.
const CodeTTL = 10 * time.Minute

// Limits of what an app registers.
const (
	MaxName      = 200
	MaxURIs      = 10
	MaxURI       = 2000
	MaxWebsite   = 2000
	secretLength = 32
)

// Errors, each OAuth's code first (RFC 6749 section 5.2).
var (
	ErrInvalidClient  = derrors.New(derrors.Unauthenticated, "invalid_client: client authentication failed")
	ErrInvalidGrant   = derrors.New(derrors.InvalidArgument, "invalid_grant: the authorization code is invalid, expired, used, or was issued to another client or redirect")
	ErrBadRedirect    = derrors.New(derrors.InvalidArgument, "invalid_request: the redirect_uri is not one the app registered")
	ErrUnsupported    = derrors.New(derrors.InvalidArgument, "unsupported_grant_type: the grant types are authorization_code and client_credentials")
	ErrUnauthorized   = derrors.New(derrors.PermissionDenied, "unauthorized_client: the token was not issued to this client")
	ErrBadChallenge   = derrors.New(derrors.InvalidArgument, "invalid_request: code_challenge_method must be S256")
	errAppNameMissing = derrors.New(derrors.InvalidArgument, "client_name is required")
)

// app is a registered app, as stored.
type app struct {
	ID           string    `datastore:"id,noindex"` // Mastodon's numeric id
	Name         string    `datastore:"name,noindex"`
	Website      string    `datastore:"website,noindex"`
	RedirectURIs []string  `datastore:"redirectUris,noindex"`
	Scopes       []string  `datastore:"scopes,noindex"`
	SecretHash   []byte    `datastore:"secretHash,noindex"`
	Created      time.Time `datastore:"created,noindex"`
}

// App is a registered app as this package answers it: ClientID is its
// key's name.
type App struct {
	ID, ClientID, Name, Website string
	RedirectURIs, Scopes        []string
	secretHash                  []byte
}

func (a *app) view(clientID string) App {
	return App{ID: a.ID, ClientID: clientID, Name: a.Name, Website: a.Website, RedirectURIs: a.RedirectURIs, Scopes: a.Scopes, secretHash: a.SecretHash}
}

type code struct {
	App         string   `datastore:"app,noindex"`
	User        string   `datastore:"user,noindex"`
	Scopes      []string `datastore:"scopes,noindex"`
	RedirectURI string   `datastore:"redirectUri,noindex"`
	// Named: the authorization named RedirectURI (else it was the app's
	// one), so the trade must name it too (RFC 6749 section 4.1.3).
	Named     bool      `datastore:"named,noindex"`
	Challenge string    `datastore:"challenge,noindex"`
	Expires   time.Time `datastore:"expires,noindex"` // the TTL policy's
	// Used: traded once; Token is the id (accounts.TokenID) of the token
	// that trade gave, if it gave one.
	Used  bool   `datastore:"used,noindex"`
	Token string `datastore:"token,noindex"`
}

// Service registers apps and grants them tokens.
type Service struct {
	db       *store.DB
	ids      *ids.Generator
	accounts *accounts.Service
	now      func() time.Time
}

// New returns a Service.
func New(db *store.DB, gen *ids.Generator, acc *accounts.Service) (*Service, error) {
	if db == nil || gen == nil || acc == nil {
		return nil, errors.New("oauth.New: nil dependency")
	}
	return &Service{db: db, ids: gen, accounts: acc, now: time.Now}, nil
}

// Registration is what an app sends to register.
type Registration struct {
	Name         string
	RedirectURIs []string
	Scopes       string
	Website      string
}

// Registered is a new app, with the secret shown this once.
type Registered struct {
	App
	Secret string
}

// Register registers an app.
func (s *Service) Register(ctx context.Context, r Registration) (Registered, error) {
	a, err := r.clean()
	if err != nil {
		return Registered{}, err
	}
	clientID, err := random()
	if err != nil {
		return Registered{}, err
	}
	secret, err := random()
	if err != nil {
		return Registered{}, err
	}
	a.SecretHash = hash(secret)
	a.ID = s.ids.NextString()
	a.Created = s.now().UTC().Truncate(time.Second)
	if err := s.db.Put(ctx, s.db.NameKey(KindApp, clientID, nil), &a); err != nil {
		return Registered{}, fmt.Errorf("oauth.Register: %w", err)
	}
	return Registered{App: a.view(clientID), Secret: secret}, nil
}

func (r Registration) clean() (app, error) {
	name := strings.TrimSpace(r.Name)
	if name == "" {
		return app{}, errAppNameMissing
	}
	if utf8.RuneCountInString(name) > MaxName {
		return app{}, derrors.New(derrors.InvalidArgument, fmt.Sprintf("client_name is over %d characters", MaxName))
	}
	if len(r.RedirectURIs) == 0 {
		return app{}, derrors.New(derrors.InvalidArgument, "redirect_uris is required")
	}
	if len(r.RedirectURIs) > MaxURIs {
		return app{}, derrors.New(derrors.InvalidArgument, fmt.Sprintf("at most %d redirect_uris", MaxURIs))
	}
	for _, u := range r.RedirectURIs {
		if err := checkRedirect(u); err != nil {
			return app{}, err
		}
	}
	scopes, err := ParseScopes(r.Scopes)
	if err != nil {
		return app{}, err
	}
	if r.Website != "" {
		if u, err := url.Parse(r.Website); err != nil || len(r.Website) > MaxWebsite || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return app{}, derrors.New(derrors.InvalidArgument, "website must be an http(s) URL")
		}
	}
	return app{Name: name, Website: r.Website, RedirectURIs: slices.Compact(r.RedirectURIs), Scopes: scopes}, nil
}

// errRedirect refuses a redirect URI an app registers.
var errRedirect = derrors.New(derrors.InvalidArgument,
	"redirect_uris must be https URLs, http URLs of a loopback address, an app's own scheme (com.example.app:/callback), or "+OOB+"; without a fragment")

// checkRedirect checks a redirect URI an app registers, by an allow-list
// (RFC 8252 and the OAuth 2.0 Security BCP): OOB; https; http to a
// loopback address (a native app's local listener); or a private-use
// scheme, an app's own, which no browser gives a meaning to (so none that
// runs code, reads files or fetches: javascript, vbscript, data, file,
// blob, ...). No fragment, no user info.
func checkRedirect(raw string) error {
	if raw == OOB {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || len(raw) > MaxURI || !u.IsAbs() || u.Fragment != "" || strings.Contains(raw, "#") || u.User != nil {
		return errRedirect
	}
	switch scheme := strings.ToLower(u.Scheme); {
	case scheme == "https":
		if u.Host == "" {
			return errRedirect
		}
	case scheme == "http":
		if !loopback(u.Hostname()) {
			return errRedirect
		}
	case browserSchemes[scheme], !privateScheme.MatchString(scheme):
		return errRedirect
	}
	return nil
}

// privateScheme is what an app's own scheme looks like (RFC 3986's
// scheme, at least two characters).
var privateScheme = regexp.MustCompile(`^[a-z][a-z0-9+.-]+$`)

// browserSchemes are the schemes a browser or the system acts on by
// itself, which an app's redirect may not use.
var browserSchemes = map[string]bool{
	"javascript": true, "vbscript": true, "livescript": true, "data": true, "file": true, "blob": true,
	"filesystem": true, "about": true, "view-source": true, "ftp": true, "ws": true, "wss": true,
	"mailto": true, "tel": true, "sms": true, "intent": true, "jar": true, "resource": true,
	"chrome": true, "chrome-extension": true, "moz-extension": true, "ms-browser-extension": true,
}

// loopback reports whether host is a loopback address or localhost.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// App returns a registered app by its client id.
func (s *Service) App(ctx context.Context, clientID string) (App, error) {
	if clientID == "" || len(clientID) > 100 {
		return App{}, ErrInvalidClient
	}
	var a app
	ok, err := s.db.Get(ctx, s.db.NameKey(KindApp, clientID, nil), &a)
	if err != nil {
		return App{}, fmt.Errorf("oauth.App: %w", err)
	}
	if !ok {
		return App{}, ErrInvalidClient
	}
	return a.view(clientID), nil
}

// client returns the app whose id and secret these are.
func (s *Service) client(ctx context.Context, clientID, secret string) (App, error) {
	a, err := s.App(ctx, clientID)
	if err != nil {
		return App{}, err
	}
	if subtle.ConstantTimeCompare(hash(secret), a.secretHash) != 1 {
		return App{}, ErrInvalidClient
	}
	return a, nil
}

// Request is what an app asks a person to approve: the parameters of
// GET /oauth/authorize.
type Request struct {
	ClientID, RedirectURI, Scope, State string
	// Challenge and Method are PKCE's: an app that sends a challenge
	// must prove it holds its verifier when it trades the code.
	Challenge, Method string
}

// Asked is a checked request: its app and the scopes it asks for, and
// whether it named its redirect (else the app's one is taken).
type Asked struct {
	App    App
	Scopes []string
	Named  bool
	Request
}

// Check checks a request before the person is asked: a known app, one
// of its redirects, scopes within its own, a challenge of S256.
func (s *Service) Check(ctx context.Context, r Request) (Asked, error) {
	a, err := s.App(ctx, r.ClientID)
	if err != nil {
		return Asked{}, err
	}
	named := r.RedirectURI != ""
	if r.RedirectURI == "" && len(a.RedirectURIs) == 1 {
		r.RedirectURI = a.RedirectURIs[0]
	}
	if !slices.Contains(a.RedirectURIs, r.RedirectURI) {
		return Asked{}, ErrBadRedirect
	}
	scopes := a.Scopes
	if r.Scope != "" {
		if scopes, err = ParseScopes(r.Scope); err != nil {
			return Asked{}, err
		}
		if !Within(scopes, a.Scopes) {
			return Asked{}, ErrInvalidScope
		}
	}
	switch {
	case r.Challenge == "" && r.Method == "":
	case r.Method != "S256" || len(r.Challenge) < 43 || len(r.Challenge) > 128:
		return Asked{}, ErrBadChallenge
	}
	return Asked{App: a, Scopes: scopes, Named: named, Request: r}, nil
}

// Approve records that user approved what was asked, and returns the
// code the app trades for a token.
func (s *Service) Approve(ctx context.Context, user string, a Asked) (string, error) {
	c, err := random()
	if err != nil {
		return "", err
	}
	e := &code{App: a.App.ClientID, User: user, Scopes: a.Scopes, RedirectURI: a.RedirectURI, Named: a.Named, Challenge: a.Challenge,
		Expires: s.now().Add(CodeTTL).UTC()}
	if err := s.db.Put(ctx, s.db.NameKey(KindCode, hex.EncodeToString(hash(c)), nil), e); err != nil {
		return "", fmt.Errorf("oauth.Approve: %w", err)
	}
	return c, nil
}

// Exchange is what an app sends to POST /oauth/token.
type Exchange struct {
	GrantType, Code, RedirectURI, ClientID, ClientSecret, Verifier, Scope string
}

// Token is a token granted.
type Token struct {
	Token   string
	Scopes  []string
	Created time.Time
}

// Token grants a token: for a code a person approved
// (authorization_code), or for the app itself (client_credentials).
func (s *Service) Token(ctx context.Context, x Exchange) (Token, error) {
	switch x.GrantType {
	case "authorization_code":
		return s.trade(ctx, x)
	case "client_credentials":
		a, err := s.client(ctx, x.ClientID, x.ClientSecret)
		if err != nil {
			return Token{}, err
		}
		scopes := a.Scopes
		if x.Scope != "" {
			if scopes, err = ParseScopes(x.Scope); err != nil {
				return Token{}, err
			}
			if !Within(scopes, a.Scopes) {
				return Token{}, ErrInvalidScope
			}
		}
		return s.issue(ctx, accounts.Grant{App: a.ClientID, Scopes: scopes})
	}
	return Token{}, ErrUnsupported
}

// trade trades a code for a token, once: the transaction that reads the
// code marks it used, with the id of the token it is about to give. A
// second trade (the code stolen, or replayed) gives nothing and revokes
// that token (RFC 6749 section 4.1.2). A public client (no secret)
// proves itself by the PKCE verifier alone; one with a secret must send
// it, and with a challenge the verifier too; a verifier for a code that
// had no challenge is refused (the OAuth 2.0 Security BCP: PKCE
// downgrade).
func (s *Service) trade(ctx context.Context, x Exchange) (Token, error) {
	a, err := s.App(ctx, x.ClientID)
	if err != nil {
		return Token{}, err
	}
	if x.ClientSecret != "" && subtle.ConstantTimeCompare(hash(x.ClientSecret), a.secretHash) != 1 {
		return Token{}, ErrInvalidClient
	}
	if x.Code == "" || len(x.Code) > 100 {
		return Token{}, ErrInvalidGrant
	}
	token, err := accounts.Mint()
	if err != nil {
		return Token{}, err
	}
	key := s.db.NameKey(KindCode, hex.EncodeToString(hash(x.Code)), nil)
	var c code
	var refused error
	ctx = store.Unguarded(ctx)
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		ok, err := tx.Get(key, &c)
		switch {
		case err != nil:
			return err
		case !ok:
			return ErrInvalidGrant
		case c.Used:
			return errReplayed
		}
		refused = decideTrade(c, x, a, s.now())
		c.Used = true
		if refused == nil {
			c.Token = accounts.TokenID(token)
		}
		return tx.Put(key, &c)
	})
	if errors.Is(err, errReplayed) {
		if err := s.accounts.Revoke(ctx, c.Token); err != nil {
			return Token{}, err
		}
		return Token{}, ErrInvalidGrant
	}
	if err != nil {
		return Token{}, err
	}
	if refused != nil {
		return Token{}, refused
	}
	// Whoever approved may have been deleted or suspended since: as a
	// sign-in, no token then.
	p, err := s.accounts.Get(ctx, c.User)
	if errors.Is(err, accounts.ErrNoSuchPerson) || err == nil && p.Standing().IsSuspended() {
		return Token{}, ErrInvalidGrant
	}
	if err != nil {
		return Token{}, err
	}
	g := accounts.Grant{User: c.User, App: a.ClientID, Scopes: c.Scopes}
	if err := s.accounts.IssueMinted(ctx, token, g); err != nil {
		return Token{}, err
	}
	return Token{Token: token, Scopes: g.Scopes, Created: s.now().UTC()}, nil
}

// errReplayed is a code traded before.
var errReplayed = errors.New("oauth: the code was traded before")

// decideTrade decides whether x may trade c, a code not traded before,
// for app a at now: the app it was given to, in time, the redirect the
// authorization named (or the app's one, when it named none), and proof
// of the client: the PKCE verifier of its challenge, or, without one, the
// secret (and then no verifier, which a code without a challenge never
// asked for).
func decideTrade(c code, x Exchange, a App, now time.Time) error {
	switch {
	case c.App != a.ClientID, !now.Before(c.Expires):
		return ErrInvalidGrant
	case c.Named && x.RedirectURI != c.RedirectURI, !c.Named && x.RedirectURI != "" && x.RedirectURI != c.RedirectURI:
		return ErrInvalidGrant
	case c.Challenge != "" && !verifies(x.Verifier, c.Challenge):
		return ErrInvalidGrant
	case c.Challenge == "" && x.Verifier != "":
		return ErrInvalidGrant
	case c.Challenge == "" && x.ClientSecret == "":
		return ErrInvalidClient // neither proof
	}
	return nil
}

func (s *Service) issue(ctx context.Context, g accounts.Grant) (Token, error) {
	t, err := s.accounts.Issue(ctx, g)
	if err != nil {
		return Token{}, err
	}
	return Token{Token: t, Scopes: g.Scopes, Created: s.now().UTC()}, nil
}

// verifies reports whether verifier is the one challenge was made of
// (S256: the unpadded base64url of its SHA-256).
func verifies(verifier, challenge string) bool {
	if len(verifier) < 43 || len(verifier) > 128 {
		return false
	}
	sum := sha256.Sum256([]byte(verifier))
	want := base64.RawURLEncoding.EncodeToString(sum[:])
	return subtle.ConstantTimeCompare([]byte(want), []byte(challenge)) == 1
}

// Revoke ends a token the app holds (RFC 7009): a token unknown or gone
// already is no error; one of another app's, or of no app, is refused.
func (s *Service) Revoke(ctx context.Context, clientID, secret, token string) error {
	a, err := s.client(ctx, clientID, secret)
	if err != nil {
		return err
	}
	g, err := s.accounts.Grant(ctx, token)
	if errors.Is(err, accounts.ErrBadToken) {
		return nil
	}
	if err != nil {
		return err
	}
	if g.App != a.ClientID {
		return ErrUnauthorized
	}
	return s.accounts.Logout(ctx, token)
}

func random() (string, error) {
	var b [secretLength]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

func hash(s string) []byte {
	sum := sha256.Sum256([]byte(s))
	return sum[:]
}
