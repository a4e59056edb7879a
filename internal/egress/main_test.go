package egress

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"
)

// outside and private are the addresses off this machine that tests let
// through the guard on purpose (TestConfinement, TestConfinementOfABrokenGuard):
// confinement refuses them before any packet.
var (
	outside = netip.MustParseAddr("8.8.8.8")
	private = netip.MustParseAddr("10.0.0.1")
)

// The tests name private and metadata addresses to see them refused: the
// process is confined to loopback, so that none of them is reached even
// if the guard broke, and a run in which the guard let one through fails.
func TestMain(m *testing.M) {
	ConfineToLoopback()
	code := m.Run()
	for _, a := range Escapes() {
		if a != outside && a != private {
			fmt.Fprintf(os.Stderr, "FAIL: the guard let %s through (confinement refused it)\n", a)
			code = 1
		}
	}
	os.Exit(code)
}

// Confinement refuses what the guard lets through, and tells of it.
func TestConfinement(t *testing.T) {
	resp, err := get(t, New(Config{}), "https://"+outside.String()+"/")
	if err == nil {
		resp.Body.Close()
	}
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("GET a public address while confined: %v, want ErrRefused", err)
	}
	if !slices.Contains(Escapes(), outside) {
		t.Errorf("escapes %v: want %s", Escapes(), outside)
	}
}

// A guard that broke and allows everything still reaches nothing off
// this machine: confinement refuses the private address before any
// packet, and tells of it.
func TestConfinementOfABrokenGuard(t *testing.T) {
	defer func(v func(netip.Addr, bool, bool) error) { verdict = v }(verdict)
	verdict = func(netip.Addr, bool, bool) error { return nil }
	resp, err := get(t, New(Config{AllowHTTP: true}), "http://"+private.String()+":9/")
	if err == nil {
		resp.Body.Close()
	}
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "confined to loopback") {
		t.Fatalf("GET a private address through a broken guard: %v, want confinement's refusal", err)
	}
	if !slices.Contains(Escapes(), private) {
		t.Errorf("escapes %v: want %s", Escapes(), private)
	}
}

// Every transport the guarded clients dial through (https; plain http
// to loopback alone; plain http where https goes) is confined beneath
// its guard: with the guard broken, a private address is refused by
// confinement before any packet, by each of them.
func TestConfinementOfEveryTransportWithABrokenGuard(t *testing.T) {
	defer func(v func(netip.Addr, bool, bool) error) { verdict = v }(verdict)
	verdict = func(netip.Addr, bool, bool) error { return nil }
	for _, c := range []struct {
		name string
		cfg  Config
		url  string
	}{
		{"https", Config{}, "https://" + private.String() + ":9/"},
		{"https, loopback allowed", Config{AllowLoopback: true}, "https://" + private.String() + ":9/"},
		{"plain http to loopback alone", Config{AllowLoopback: true}, "http://" + private.String() + ":9/"},
		{"plain http where https goes", Config{AllowHTTP: true}, "http://" + private.String() + ":9/"},
		{"https, plain http allowed", Config{AllowHTTP: true}, "https://" + private.String() + ":9/"},
	} {
		resp, err := get(t, New(c.cfg), c.url)
		if err == nil {
			resp.Body.Close()
		}
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "confined to loopback") {
			t.Errorf("%s: GET %s through a broken guard: %v, want confinement's refusal", c.name, c.url, err)
		}
	}
}
