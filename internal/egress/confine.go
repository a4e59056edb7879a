package egress

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
)

// confined, once set (ConfineToLoopback), has every guarded client of the
// process refuse, after its own guard, any address off this machine.
var confined atomic.Bool

var escapes struct {
	mu   sync.Mutex
	list []netip.Addr
}

// ConfineToLoopback is for tests: from now on every guarded client of
// this process refuses, beneath its guard, whatever address is not
// loopback, and keeps it (Escapes). A test of refusals (a private
// address, the metadata server) then sends no packet off the machine
// even if the guard were broken, and can tell that the guard held.
func ConfineToLoopback() { confined.Store(true) }

// Escapes returns the addresses the guard let through that confinement
// refused: none while the guard holds.
func Escapes() []netip.Addr {
	escapes.mu.Lock()
	defer escapes.mu.Unlock()
	return append([]netip.Addr(nil), escapes.list...)
}

// confine refuses a, which the guard allowed, if the process is confined
// and a is not loopback.
func confine(a netip.Addr) error {
	if !confined.Load() || a.IsLoopback() {
		return nil
	}
	escapes.mu.Lock()
	escapes.list = append(escapes.list, a)
	escapes.mu.Unlock()
	return fmt.Errorf("%w: %s is off this machine, and the process is confined to loopback", ErrRefused, a)
}

// resolver looks names up for the guarded clients: as the system's
// does, but, once the process is confined, it asks no name server off
// this machine (a test posting a link to a name sends no query out).
var resolver = &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
	if ap, err := netip.ParseAddrPort(address); confined.Load() && (err != nil || !ap.Addr().Unmap().IsLoopback()) {
		return nil, fmt.Errorf("%w: the name server %s is off this machine, and the process is confined to loopback", ErrRefused, address)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, address)
}}
