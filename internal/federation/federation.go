// Package federation is the deployment's place in the fediverse
// (ActivityPub, with the conventions Mastodon and GoToSocial keep): the
// domain it answers for, the addresses of its people and their posts
// there, and each person's key pair, with which what the service sends on
// their behalf is signed. It is off unless FEDERATION_DOMAIN names the
// domain; the ActivityPub face (package activitypub) serves what it
// describes. It owns ActorKey.
package federation

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// Config says where the deployment federates.
type Config struct {
	// Domain is FEDERATION_DOMAIN: the host (and, on loopback alone, the
	// port) other servers know the deployment by, the host of its
	// people's addresses (name@domain); "": federation is off.
	Domain string
	// AllowLoopback is FEDERATION_ALLOW_LOOPBACK=1: the domain may be a
	// loopback address served over plain http, and the fetch client may
	// reach loopback addresses; tests on one machine alone, refused on
	// App Engine.
	AllowLoopback bool
	// LoopbackTLS: a loopback domain is served over https (the local
	// stack's TLS front door, for peers that reach servers over https
	// alone); else over plain http.
	LoopbackTLS bool
	// BlockRefresh is how long an instance keeps the domain blocks it
	// read; 0 means BlockRefresh (the bill sets it longer than its run,
	// so that no row pays for another's reading).
	BlockRefresh time.Duration
}

// On reports whether the deployment federates.
func (c Config) On() bool { return c.Domain != "" }

// IsHost reports whether host, a request's Host (which a signature
// covers), is the deployment's domain: with its scheme's default port
// or none, in any case.
func (c Config) IsHost(host string) bool {
	host = strings.ToLower(host)
	if h, port, ok := strings.Cut(host, ":"); ok && !strings.Contains(port, ":") && (port == "443" || port == "80") {
		host = h
	}
	return c.Domain != "" && host == c.Domain
}

// ParseDomain checks a FEDERATION_DOMAIN: a lowercase host name of at
// least two labels, or, when loopback is allowed, a loopback address or
// localhost with a port. No scheme, path, user or upper case: it is
// compared as it is written.
func ParseDomain(s string, allowLoopback bool) (string, error) {
	if s == "" {
		return "", nil
	}
	if loopbackHost(s) {
		if !allowLoopback {
			return "", fmt.Errorf("FEDERATION_DOMAIN %q is a loopback address: only with FEDERATION_ALLOW_LOOPBACK=1, for tests", s)
		}
		return s, nil
	}
	if err := checkHostName(s); err != nil {
		return "", fmt.Errorf("FEDERATION_DOMAIN %q: %w", s, err)
	}
	return s, nil
}

// checkHostName refuses what is not a DNS name a server may be known by:
// lowercase letters, digits and hyphens in labels of 1 to 63 characters,
// at least two labels, 253 characters at most, and not an IP address.
func checkHostName(s string) error {
	if len(s) > 253 {
		return errors.New("longer than a host name may be")
	}
	if _, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil {
		return errors.New("an address, not a domain (loopback alone, for tests)")
	}
	labels := strings.Split(s, ".")
	if len(labels) < 2 {
		return errors.New("not a domain of two labels or more (example.com)")
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return fmt.Errorf("the label %q is not a host name's", l)
		}
		for _, r := range l {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
				return errors.New("only lowercase letters, digits, hyphens and dots, no scheme, port or path")
			}
		}
	}
	return nil
}

// loopbackHost reports whether s is host:port with a loopback address or
// localhost as its host.
func loopbackHost(s string) bool {
	host, port, err := net.SplitHostPort(s)
	if err != nil || port == "" {
		return false
	}
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}

// Base is the root of the deployment's addresses: https://domain, or
// http:// for a loopback domain (but with LoopbackTLS).
func (c Config) Base() string {
	if loopbackHost(c.Domain) && !c.LoopbackTLS {
		return "http://" + c.Domain
	}
	return "https://" + c.Domain
}

// PublicCollection is ActivityStreams' collection of everyone: a post
// addressed to it is public.
const PublicCollection = "https://www.w3.org/ns/activitystreams#Public"

// The paths of what the deployment serves to other servers (package
// activitypub routes them).
const (
	PeoplePath      = "/users/"    // + the person's id: their actor
	NotesPath       = "/statuses/" // + the post's number: a post's Note
	SharedInboxPath = "/inbox"
)

// Actor is the address of the person whose id is user: their actor's
// id. It is by id, not by name: a deleted account's name is free to
// take, and its new holder must not inherit what other servers keep of
// the actor before (its followers, its key).
func (c Config) Actor(user string) string { return c.Base() + PeoplePath + url.PathEscape(user) }

// KeyID is the id of the public key of the person whose id is user.
func (c Config) KeyID(user string) string { return c.Actor(user) + "#main-key" }

// Note is the address of a post, by its number (Mastodon's id of it).
func (c Config) Note(number string) string { return c.Base() + NotesPath + number }

// Acct is a person's address as people write it: name@domain.
func (c Config) Acct(name string) string { return name + "@" + c.Domain }
