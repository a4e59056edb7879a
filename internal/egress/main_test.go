package egress

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"testing"
)

// outside is the one address off this machine a test names on purpose
// (TestConfinement): confinement refuses it before any packet.
var outside = netip.MustParseAddr("8.8.8.8")

// The tests name private and metadata addresses to see them refused: the
// process is confined to loopback, so that none of them is reached even
// if the guard broke, and a run in which the guard let one through fails.
func TestMain(m *testing.M) {
	ConfineToLoopback()
	code := m.Run()
	for _, a := range Escapes() {
		if a != outside {
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
