package accounts

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

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

func TestTokensAreStoredHashed(t *testing.T) {
	ctx := context.Background()
	s := newService(t, 0)
	_, token, err := s.Register(ctx, "hashy", "password1", "")
	if err != nil {
		t.Fatal(err)
	}
	var te tokenEntity
	if err := s.db.Client.Get(ctx, s.db.NameKey(KindToken, token, nil), &te); err == nil {
		t.Error("a Token entity is keyed by the raw token")
	}
	if err := s.db.Client.Get(ctx, tokenKey(s.db, token), &te); err != nil {
		t.Errorf("no Token entity under the token's hash: %v", err)
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
