package oauth

import (
	"errors"
	"slices"
	"testing"
)

func TestParseScopes(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		err  bool
	}{
		{"", []string{"read"}, false},
		{"read write follow", []string{"follow", "read", "write"}, false},
		{"read+write:statuses", []string{"read", "write:statuses"}, false},
		{"read read", []string{"read"}, false},
		{"push profile", []string{"profile", "push"}, false},
		{"read admin:read", []string{"admin:read", "read"}, false},
		{"admin:read:accounts", nil, true},
		{"write:everything", nil, true},
	} {
		got, err := ParseScopes(c.in)
		if c.err != (err != nil) || !c.err && !slices.Equal(got, c.want) {
			t.Errorf("ParseScopes(%q) = %v, %v; want %v (error %v)", c.in, got, err, c.want, c.err)
		}
		if c.err && !errors.Is(err, ErrInvalidScope) {
			t.Errorf("ParseScopes(%q): %v, want ErrInvalidScope", c.in, err)
		}
	}
}

func TestWithin(t *testing.T) {
	for _, c := range []struct {
		asked, registered []string
		want              bool
	}{
		{[]string{"read"}, []string{"read", "write"}, true},
		{[]string{"write:statuses"}, []string{"write"}, true},
		{[]string{"write"}, []string{"write:statuses"}, false},
		{[]string{"read", "write"}, []string{"read"}, false},
		{[]string{"write:follows"}, []string{"follow"}, true},
	} {
		if got := Within(c.asked, c.registered); got != c.want {
			t.Errorf("Within(%v, %v) = %v, want %v", c.asked, c.registered, got, c.want)
		}
	}
}

func TestVerifies(t *testing.T) {
	// RFC 7636's example.
	const verifier, challenge = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
	if !verifies(verifier, challenge) {
		t.Error("the RFC's verifier does not verify")
	}
	if verifies(verifier[:42]+"X", challenge) || verifies("short", challenge) {
		t.Error("a wrong verifier verifies")
	}
}
