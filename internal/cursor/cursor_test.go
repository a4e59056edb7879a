package cursor_test

import (
	"context"
	"encoding/base64"
	"errors"
	"os"
	"strings"
	"testing"

	"socialstream/internal/cursor"
	"socialstream/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// A sealed cursor opens to what was sealed, on any instance of the
// deployment (one key, made once), says nothing of it, and any change
// to it is refused.
func TestSealAndOpen(t *testing.T) {
	ctx := context.Background()
	db := testenv.DB(t)
	a, b := cursor.New(db), cursor.New(db)
	inner := "feed:u:123\x00the place 456"
	sealed, err := a.Seal(ctx, inner)
	if err != nil {
		t.Fatal(err)
	}
	if shows(sealed, inner) {
		t.Errorf("the sealed cursor shows what it holds: %q", sealed)
	}
	if got, err := b.Open(ctx, sealed); err != nil || got != inner {
		t.Errorf("another instance opens %q, %v; want %q", got, err, inner)
	}
	again, _ := a.Seal(ctx, inner)
	if again == sealed {
		t.Error("two seals of one cursor are the same: a fresh nonce each time is wanted")
	}
	for i := range sealed {
		b := []byte(sealed)
		b[i] ^= 1
		if _, err := a.Open(ctx, string(b)); !errors.Is(err, cursor.ErrBad) {
			t.Errorf("byte %d changed: %v, want ErrBad", i, err)
		}
	}
	// Every other last character too, though base64 leaves bits of it
	// unused (the sealed bytes here are not a multiple of three).
	if n := base64.RawURLEncoding.DecodedLen(len(sealed)); n%3 == 0 {
		t.Fatalf("%d sealed bytes: the last character has no unused bits", n)
	}
	for _, c := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_" {
		edited := sealed[:len(sealed)-1] + string(c)
		if edited == sealed {
			continue
		}
		if _, err := a.Open(ctx, edited); !errors.Is(err, cursor.ErrBad) {
			t.Errorf("last character %q: %v, want ErrBad", c, err)
		}
	}
	for _, bad := range []string{"x", "!!!", sealed[:10], strings.Repeat("A", cursor.MaxSealed+1)} {
		if _, err := a.Open(ctx, bad); !errors.Is(err, cursor.ErrBad) {
			t.Errorf("Open(%.20q): %v, want ErrBad", bad, err)
		}
	}
	if s, err := a.Seal(ctx, ""); s != "" || err != nil {
		t.Errorf("Seal(\"\") = %q, %v", s, err)
	}
	if s, err := a.Open(ctx, ""); s != "" || err != nil {
		t.Errorf("Open(\"\") = %q, %v", s, err)
	}
	// Another deployment's key opens nothing of this one's.
	other := cursor.New(testenv.DB(t))
	if _, err := other.Open(ctx, sealed); !errors.Is(err, cursor.ErrBad) {
		t.Errorf("another deployment's cursor: %v", err)
	}
}

// shows reports whether sealed holds inner as it is, or base64 of it at
// any of its three alignments (a run of at least 20 characters: a short
// one, such as "456", turns up by chance in random bytes' base64 about
// once in 4,000 seals).
func shows(sealed, inner string) bool {
	if raw, err := base64.RawURLEncoding.DecodeString(sealed); err == nil && strings.Contains(string(raw), inner) {
		return true
	}
	if strings.Contains(sealed, inner) {
		return true
	}
	for pad := range 3 {
		enc := base64.RawURLEncoding.EncodeToString([]byte(strings.Repeat("\x00", pad) + inner))
		if strings.Contains(sealed, enc[4:len(enc)-4]) {
			return true
		}
	}
	return false
}
