package accounts

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"socialstream/internal/policy"
	"socialstream/internal/store"
	"time"

	"cloud.google.com/go/datastore"
)

// Tokens: the bearer tokens of the service's own sign-in and of OAuth
// apps, one store (KindToken), each stored under its hash.

// tokenEntity is indexed by user (to end every session of one). Past
// Expires it works for no one, and the Datastore's TTL policy on expires
// (docs/deploy.md) deletes it, usually within a day. An OAuth app's token
// has no Expires (the property is not stored, so the TTL policy leaves
// it): it works until it is revoked, as Mastodon's do, since Mastodon
// apps have no way to refresh one.
type tokenEntity struct {
	UserID string `datastore:"userId"`
	// App and Scopes, on a token an OAuth app was given, say which app
	// holds it and what it may do; a token of the service's own sign-in
	// has neither and may do all its person may.
	App     string    `datastore:"app,noindex"`
	Scopes  []string  `datastore:"scopes,noindex"`
	Created time.Time `datastore:"created,noindex"`
	Expires time.Time `datastore:"expires,noindex,omitempty"`
}

// live reports whether the token works at now.
func (te *tokenEntity) live(now time.Time) bool { return te.Expires.IsZero() || now.Before(te.Expires) }

func tokenKey(db *store.DB, token string) *datastore.Key {
	return db.NameKey(KindToken, TokenID(token), nil)
}

// TokenID is the name a token is stored under: its hash, which is no
// bearer of it.
func TokenID(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// Mint returns a new random token, not yet issued: for a grant that must
// record which token it gives (by TokenID) before it gives it (an OAuth
// code's trade, whose replay revokes it).
func Mint() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

func (s *Service) newToken(ctx context.Context, userID string, g Grant) (string, error) {
	token, err := Mint()
	if err != nil {
		return "", err
	}
	return token, s.store(ctx, token, userID, g)
}

// store stores token as userID's, of grant g.
func (s *Service) store(ctx context.Context, token, userID string, g Grant) error {
	now := s.now().UTC()
	te := &tokenEntity{UserID: userID, App: g.App, Scopes: g.Scopes, Created: now}
	if g.App == "" {
		te.Expires = now.Add(s.ttl) // a login's; an app's lasts until revoked
	}
	if err := s.db.Put(ctx, tokenKey(s.db, token), te); err != nil {
		return fmt.Errorf("accounts: a token: %w", err)
	}
	return nil
}

// tokenLen is the length of the tokens newToken makes.
var tokenLen = base64.RawURLEncoding.EncodedLen(32)

// Authenticate returns the id of the user a token belongs to. An app's
// token that speaks for no one (OAuth's client credentials) is refused.
func (s *Service) Authenticate(ctx context.Context, token string) (string, error) {
	g, err := s.Grant(ctx, token)
	if err == nil && g.User == "" {
		err = ErrBadToken
	}
	return g.User, err
}

// A Grant is what a token allows: whose it is (none, for an app's token
// of its own), and, on a token an OAuth app was given, which app holds
// it and the scopes it was granted.
type Grant struct {
	User   string
	App    string
	Scopes []string
}

// Grant returns what token allows.
func (s *Service) Grant(ctx context.Context, token string) (Grant, error) {
	if len(token) != tokenLen {
		return Grant{}, ErrBadToken
	}
	key := tokenKey(s.db, token)
	if s.tokens != nil {
		if te, ok := s.tokens.Get(key.Name); ok && te.live(s.now()) {
			return te.grant(), nil
		}
	}
	var te tokenEntity
	ok, err := s.db.Get(ctx, key, &te)
	if err != nil {
		return Grant{}, fmt.Errorf("accounts.Grant: %w", err)
	}
	if !ok || !te.live(s.now()) {
		return Grant{}, ErrBadToken
	}
	if s.tokens != nil {
		s.tokens.Add(key.Name, te)
	}
	return te.grant(), nil
}

// Allows reports whether the grant permits what needs scope need
// (policy.Scoped): anything, on a token of no app's.
func (g Grant) Allows(need string) bool { return policy.Scoped(g.App != "", g.Scopes, need) }

func (te tokenEntity) grant() Grant { return Grant{User: te.UserID, App: te.App, Scopes: te.Scopes} }

// Issue makes a token of g for an app (package oauth): the store of the
// tokens of the service's own sign-in, so one revocation, one logout of
// every session and one erasure reach both.
func (s *Service) Issue(ctx context.Context, g Grant) (string, error) {
	if g.App == "" {
		return "", errors.New("accounts.Issue: a grant names its app")
	}
	return s.newToken(ctx, g.User, g)
}

// IssueMinted is Issue of a token Mint made.
func (s *Service) IssueMinted(ctx context.Context, token string, g Grant) error {
	if g.App == "" || len(token) != tokenLen {
		return errors.New("accounts.IssueMinted: a grant names its app, and a token Mint's")
	}
	return s.store(ctx, token, g.User, g)
}

// Revoke ends the token stored under id (TokenID), if any, as Logout
// ends one by its bearer: for a grant that learns it was stolen (an
// OAuth code traded twice).
func (s *Service) Revoke(ctx context.Context, id string) error {
	if id == "" {
		return nil
	}
	key := s.db.NameKey(KindToken, id, nil)
	err := s.db.Delete(store.Unguarded(ctx), key)
	if s.tokens != nil {
		s.tokens.Remove(key.Name)
	}
	if err != nil {
		return fmt.Errorf("accounts.Revoke: %w", err)
	}
	return nil
}

// Logout ends the session of token. Ending an unknown token is not an error.
// One may end one's session whatever one's standing: it is not guarded.
func (s *Service) Logout(ctx context.Context, token string) error {
	ctx = store.Unguarded(ctx)
	if len(token) != tokenLen {
		return nil
	}
	key := tokenKey(s.db, token)
	err := s.db.Delete(ctx, key)
	if s.tokens != nil {
		// After the delete: a request that read the token just before it
		// may have cached it meanwhile.
		s.tokens.Remove(key.Name)
	}
	if err != nil {
		return fmt.Errorf("accounts.Logout: %w", err)
	}
	return nil
}

// logoutBatch is how many tokens LogoutAll deletes at a time.
const logoutBatch = 500

// LogoutAll ends every session of user, and returns how many there were.
// This instance forgets them at once; other instances that verified one
// within TokenCacheTTL trust it until their entry expires.
func (s *Service) LogoutAll(ctx context.Context, user string) (int, error) {
	n, err := s.db.DeleteAll(ctx, s.db.Query(KindToken).FilterField("userId", "=", user).KeysOnly(), logoutBatch)
	if s.tokens != nil {
		for _, k := range s.tokens.Keys() {
			if te, ok := s.tokens.Peek(k); ok && te.UserID == user {
				s.tokens.Remove(k)
			}
		}
	}
	if err != nil {
		return n, fmt.Errorf("accounts.LogoutAll(%s): %w", user, err)
	}
	return n, nil
}

// TokenRef is a token read in a lookup by its id (TokenID).
type TokenRef struct {
	ref store.Ref
	te  tokenEntity
	now time.Time
}

// ReadToken adds the token stored under id to a lookup: for whoever keeps
// something by a token (a push subscription) and must know it still
// works.
func (s *Service) ReadToken(l *store.Lookup, id string) *TokenRef {
	r := &TokenRef{now: s.now()}
	r.ref = l.Add(l.DB().NameKey(KindToken, id, nil), &r.te)
	return r
}

// Works reports whether the token is there, unexpired, and user's.
func (r *TokenRef) Works(user string) bool {
	return r.ref.Found() && r.te.UserID == user && r.te.live(r.now)
}
