// Package egress is the one HTTP client for addresses a user gave: a
// push endpoint, and later another server. Anything may be named there,
// so every request it makes is held to the open internet:
//
//   - https only; plain http only to a loopback address, and only when
//     the configuration allows loopback (tests and the local stack);
//   - the address actually dialled (after the name is resolved, each
//     address tried) is checked, so no name may point it at the machine
//     itself, a private network, a link-local address or the metadata
//     server; no proxy from the environment stands between;
//   - redirects are not followed: the answer is the redirect itself;
//   - the whole exchange has a timeout, and an answer's body a cap.
//
// It owns no entity.
package egress

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// Config tunes a Client.
type Config struct {
	// AllowLoopback lets requests reach loopback addresses, over https or
	// plain http (http to nothing else): for tests and the local stack
	// alone (WEB_PUSH_ALLOW_LOOPBACK; refused on App Engine).
	AllowLoopback bool
	// AllowHTTP lets requests be plain http to a public address too (a
	// link a person posted, for its preview); else plain http goes to
	// loopback alone, when allowed.
	AllowHTTP bool
	// Timeout bounds a whole exchange, the answer's body read included
	// (0: DefaultTimeout).
	Timeout time.Duration
	// MaxBody caps an answer's body (0: DefaultMaxBody): reading more is
	// ErrTooLarge.
	MaxBody int64
}

// Defaults.
const (
	DefaultTimeout = 10 * time.Second
	DefaultMaxBody = 64 << 10
)

// Errors.
var (
	// ErrRefused is a request to an address the client never reaches.
	ErrRefused = errors.New("egress: refused")
	// ErrTooLarge is an answer's body past the cap.
	ErrTooLarge = errors.New("egress: the answer is larger than allowed")
)

// New returns the guarded client of cfg.
func New(cfg Config) *http.Client {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	rt := &guard{cfg: cfg, tls: transport(dialer(cfg.AllowLoopback, false))}
	switch {
	case cfg.AllowHTTP:
		rt.plain = transport(dialer(cfg.AllowLoopback, false))
	case cfg.AllowLoopback:
		rt.plain = transport(dialer(true, true))
	}
	return &http.Client{
		Transport: rt,
		Timeout:   cfg.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// guard sends https through tls, and http, when loopback is allowed,
// through plain, which dials loopback alone.
type guard struct {
	cfg        Config
	tls, plain *http.Transport
}

func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	var t *http.Transport
	switch req.URL.Scheme {
	case "https":
		t = g.tls
	case "http":
		t = g.plain
	}
	if t == nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, fmt.Errorf("%w: %s is not https", ErrRefused, req.URL.Redacted())
	}
	resp, err := t.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &capped{r: resp.Body, left: g.cfg.MaxBody}
	return resp, nil
}

// capped reads at most left bytes of r, and is ErrTooLarge past them.
type capped struct {
	r    io.ReadCloser
	left int64
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left < 0 {
		return 0, ErrTooLarge
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.r.Read(p)
	if c.left -= int64(n); c.left < 0 {
		return n + int(c.left), ErrTooLarge
	}
	return n, err
}

func (c *capped) Close() error { return c.r.Close() }

func transport(d *net.Dialer) *http.Transport {
	return &http.Transport{
		Proxy:                 nil, // a proxy would dial for us, unchecked
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: 10 * time.Second,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
	}
}

// dialer checks each address it is about to dial: public, or loopback
// when allowed; only loopback when loopbackOnly (plain http).
func dialer(allowLoopback, loopbackOnly bool) *net.Dialer {
	return &net.Dialer{
		Timeout:  5 * time.Second,
		Resolver: resolver,
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("%w: %q is not an address", ErrRefused, address)
			}
			a := ap.Addr().Unmap()
			if err := verdict(a, allowLoopback, loopbackOnly); err != nil {
				return err
			}
			// Whatever the guard allowed, a confined process (a test's)
			// reaches loopback alone: a guard that broke sends no packet
			// off the machine, and the run is told of it.
			return confine(a)
		},
	}
}

// verdict is the guard's on dialling a: nil to go on. A variable, so that a
// test can break it and see confinement hold.
var verdict = refusal

// refusal refuses what the guarded clients may not reach: loopback unless
// allowed, anything but loopback for plain http's loopbackOnly, and every
// address that is not public.
func refusal(a netip.Addr, allowLoopback, loopbackOnly bool) error {
	switch {
	case a.IsLoopback() && allowLoopback:
		return nil
	case loopbackOnly:
		return fmt.Errorf("%w: plain http goes to loopback alone, not %s", ErrRefused, a)
	case !Public(a):
		return fmt.Errorf("%w: %s is not a public address", ErrRefused, a)
	}
	return nil
}

// special are the ranges that are neither private nor loopback nor
// link-local by netip's reckoning and are still no public host's (RFC
// 6890 and its updates), with those that embed an IPv4 address, whose
// embedded address is what is reached.
var special = prefixes(
	"0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "198.18.0.0/15",
	"198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4",
	"100::/64", "2001::/23", "2001:db8::/32", "3fff::/20", "5f00::/16",
)

// embedding are IPv6 ranges whose low 32 bits, or bits 16 to 48 for
// 6to4, name an IPv4 address: NAT64 and 6to4.
var (
	nat64 = prefixes("64:ff9b::/96", "64:ff9b:1::/48")
	sixTo = netip.MustParsePrefix("2002::/16")
)

func prefixes(ps ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ps))
	for i, p := range ps {
		out[i] = netip.MustParsePrefix(p)
	}
	return out
}

// Public reports whether a is an address of the open internet: not
// loopback, private (RFC 1918, unique local), link-local (where the
// metadata server answers, 169.254.169.254 and fd00:ec2::254 alike),
// multicast, unspecified, shared (100.64.0.0/10), reserved for
// documentation or benchmarks; an IPv6 address that carries an IPv4 one
// (mapped, NAT64, 6to4) is judged by the IPv4 one.
func Public(a netip.Addr) bool {
	a = a.Unmap()
	if a.Is6() {
		b := a.As16()
		for _, p := range nat64 {
			if p.Contains(a) {
				return Public(netip.AddrFrom4([4]byte(b[12:16])))
			}
		}
		if sixTo.Contains(a) {
			return Public(netip.AddrFrom4([4]byte(b[2:6])))
		}
	}
	if !a.IsValid() || !a.IsGlobalUnicast() || a.IsPrivate() || a.IsLoopback() || a.IsLinkLocalUnicast() {
		return false
	}
	for _, p := range special {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// Drain reads what is left of an answer's body, up to its cap, and
// closes it, so the connection is used again.
func Drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}
