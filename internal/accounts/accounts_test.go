package accounts

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"cloud.google.com/go/datastore"
	"golang.org/x/crypto/bcrypt"

	"socialstream/internal/derrors"
	"socialstream/internal/ids"
	"socialstream/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

func newService(t *testing.T, ttl time.Duration) *Service {
	t.Helper()
	s, err := New(testenv.DB(t), ids.New(), Config{BcryptCost: bcrypt.MinCost, TokenTTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestTokenExpires(t *testing.T) {
	ctx := context.Background()
	s := newService(t, time.Hour)
	now := time.Now()
	s.now = func() time.Time { return now }
	p, token, err := s.Register(ctx, "clocky", "password1", "")
	if err != nil {
		t.Fatal(err)
	}
	if id, err := s.Authenticate(ctx, token); err != nil || id != p.ID {
		t.Fatalf("Authenticate = %q, %v", id, err)
	}
	now = now.Add(time.Hour)
	if _, err := s.Authenticate(ctx, token); !errors.Is(err, derrors.Unauthenticated) {
		t.Errorf("Authenticate after the TTL = %v, want Unauthenticated", err)
	}
}

// An app's token lasts until it is revoked, however long past a login's
// lifetime, and the entity has no expires property for the TTL policy.
func TestAppTokenLastsUntilRevoked(t *testing.T) {
	ctx := context.Background()
	s := newService(t, time.Hour)
	now := time.Now()
	s.now = func() time.Time { return now }
	p, login, err := s.Register(ctx, "appy", "password1", "")
	if err != nil {
		t.Fatal(err)
	}
	app, err := s.Issue(ctx, Grant{App: "client-1", User: p.ID, Scopes: []string{"read"}})
	if err != nil {
		t.Fatal(err)
	}
	var stored datastore.PropertyList
	if _, err := s.db.Get(ctx, tokenKey(s.db, app), &stored); err != nil {
		t.Fatal(err)
	}
	for _, prop := range stored {
		if prop.Name == "expires" {
			t.Errorf("an app's token stores expires %v", prop.Value)
		}
	}
	now = now.Add(400 * 24 * time.Hour)
	if id, err := s.Authenticate(ctx, app); err != nil || id != p.ID {
		t.Errorf("an app's token after 400 days: %q, %v", id, err)
	}
	if _, err := s.Authenticate(ctx, login); !errors.Is(err, derrors.Unauthenticated) {
		t.Errorf("a login's token after its TTL: %v", err)
	}
	if err := s.Logout(ctx, app); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(ctx, app); !errors.Is(err, derrors.Unauthenticated) {
		t.Errorf("an app's token after its revocation: %v", err)
	}
}

// TestTokenCache: a cached token is served without the Datastore (here:
// after another instance deleted it), is dropped at once by a logout on
// this instance, never outlives the token's own expiry, and is read again
// once its entry expires.
func TestTokenCache(t *testing.T) {
	ctx := context.Background()
	db := testenv.DB(t)
	const cacheTTL = 300 * time.Millisecond
	s, err := New(db, ids.New(), Config{BcryptCost: bcrypt.MinCost, TokenTTL: time.Hour, TokenCacheTTL: cacheTTL})
	if err != nil {
		t.Fatal(err)
	}
	other, err := New(db, ids.New(), Config{BcryptCost: bcrypt.MinCost}) // another instance, no cache
	if err != nil {
		t.Fatal(err)
	}
	p, token, err := s.Register(ctx, "cachy", "password1", "")
	if err != nil {
		t.Fatal(err)
	}
	if id, err := s.Authenticate(ctx, token); err != nil || id != p.ID {
		t.Fatalf("Authenticate = %q, %v", id, err)
	}
	// Another instance logs out: this one trusts its entry until it expires.
	if err := other.Logout(ctx, token); err != nil {
		t.Fatal(err)
	}
	if id, err := s.Authenticate(ctx, token); err != nil || id != p.ID {
		t.Errorf("Authenticate from the cache = %q, %v", id, err)
	}
	if _, err := other.Authenticate(ctx, token); !errors.Is(err, derrors.Unauthenticated) {
		t.Errorf("uncached Authenticate after logout = %v, want Unauthenticated", err)
	}
	time.Sleep(cacheTTL + 200*time.Millisecond)
	if _, err := s.Authenticate(ctx, token); !errors.Is(err, derrors.Unauthenticated) {
		t.Errorf("Authenticate after the cache entry expired = %v, want Unauthenticated", err)
	}

	// A logout here drops the entry at once.
	_, token, err = s.Login(ctx, "cachy", "password1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(ctx, token); err != nil {
		t.Fatal(err)
	}
	if err := s.Logout(ctx, token); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(ctx, token); !errors.Is(err, derrors.Unauthenticated) {
		t.Errorf("Authenticate after logout on the same instance = %v, want Unauthenticated", err)
	}

	// The token's own expiry holds for a cached token.
	_, token, err = s.Login(ctx, "cachy", "password1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(ctx, token); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	s.now = func() time.Time { return now.Add(time.Hour) }
	if _, err := s.Authenticate(ctx, token); !errors.Is(err, derrors.Unauthenticated) {
		t.Errorf("cached Authenticate after the token's TTL = %v, want Unauthenticated", err)
	}
}

func TestTokensAreStoredHashed(t *testing.T) {
	ctx := context.Background()
	s := newService(t, 0)
	_, token, err := s.Register(ctx, "hashy", "password1", "")
	if err != nil {
		t.Fatal(err)
	}
	var te tokenEntity
	if ok, err := s.db.Get(ctx, s.db.NameKey(KindToken, token, nil), &te); err != nil || ok {
		t.Errorf("a Token entity is keyed by the raw token: %v, %v", ok, err)
	}
	if ok, err := s.db.Get(ctx, tokenKey(s.db, token), &te); err != nil || !ok {
		t.Errorf("no Token entity under the token's hash: %v, %v", ok, err)
	}
}

func TestResolve(t *testing.T) {
	ctx := context.Background()
	s := newService(t, 0)
	p, _, err := s.Register(ctx, "Resolver", "password1", "")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		ref, want string
		kind      error
	}{
		{"@me", "caller1", nil},
		{"@viewer", "caller1", nil},
		{"@username:resolver", p.ID, nil},
		{"@username:RESOLVER", p.ID, nil},
		{"@username:ghost", "", derrors.NotFound},
		{"123", "123", nil},
		{"abc", "", derrors.InvalidArgument},
	}
	for _, tt := range tests {
		got, err := s.Resolve(ctx, "caller1", tt.ref)
		if got != tt.want || (tt.kind == nil) != (err == nil) || (tt.kind != nil && !errors.Is(err, tt.kind)) {
			t.Errorf("Resolve(%q) = %q, %v; want %q, %v", tt.ref, got, err, tt.want, tt.kind)
		}
	}
}

// TestExpiryAndLogoutAll: a token past its expiry works for no one (the
// TTL policy deletes it later); LogoutAll ends every session of one user,
// live ones cached included, and no one else's.
func TestExpiryAndLogoutAll(t *testing.T) {
	ctx := context.Background()
	db := testenv.DB(t)
	s, err := New(db, ids.New(), Config{BcryptCost: bcrypt.MinCost, TokenTTL: time.Hour, TokenCacheTTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return now }
	p, first, err := s.Register(ctx, "sweepy", "password1", "")
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(50 * time.Minute)
	_, second, _ := s.Login(ctx, "sweepy", "password1")
	_, third, _ := s.Login(ctx, "sweepy", "password1")
	_, bystander, _ := s.Register(ctx, "bystander", "password1", "")

	now = now.Add(20 * time.Minute) // the first token is 70 minutes old
	if _, err := s.Authenticate(ctx, first); !errors.Is(err, derrors.Unauthenticated) {
		t.Errorf("the expired token: %v", err)
	}
	for _, tok := range []string{second, third} {
		if id, err := s.Authenticate(ctx, tok); err != nil || id != p.ID { // now cached, too
			t.Fatalf("a live token: %q %v", id, err)
		}
	}

	if n, err := s.LogoutAll(ctx, p.ID); err != nil || n != 3 {
		t.Fatalf("LogoutAll = %d, %v; want the 3 sessions, the expired one too", n, err)
	}
	for _, tok := range []string{second, third} {
		if _, err := s.Authenticate(ctx, tok); !errors.Is(err, derrors.Unauthenticated) {
			t.Errorf("a token after LogoutAll: %v", err)
		}
	}
	if _, err := s.Authenticate(ctx, bystander); err != nil {
		t.Errorf("another user's token after LogoutAll: %v", err)
	}
}
