// Package forwarded reads what the proxy in front of the service says
// of a request it passed on: the scheme the client used and the host it
// asked for. A proxy that terminates TLS (App Engine's front end, a load
// balancer, cmd/dev's https door) reaches the service over plain http,
// so the connection alone cannot tell; its headers can, but only those
// the operator names are trusted, for a client can send any header, and
// one the proxy does not overwrite says what the client chose.
package forwarded

import (
	"fmt"
	"net/http"
	"strings"
)

// The headers a Trust may name.
const (
	XForwardedProto = "X-Forwarded-Proto"
	XForwardedHost  = "X-Forwarded-Host"
	Forwarded       = "Forwarded" // RFC 7239: proto= and host=
)

// Trust says which forwarded headers the proxy in front of the service
// sets (overwriting or appending to what a client sent), and so which
// the service believes. The zero Trust believes none.
type Trust struct {
	Proto     bool // X-Forwarded-Proto
	Host      bool // X-Forwarded-Host
	Forwarded bool // Forwarded
}

// Parse reads FORWARDED_HEADERS: header names, comma-separated, in any
// case; empty or "none" is none.
func Parse(s string) (Trust, error) {
	var t Trust
	if strings.TrimSpace(s) == "none" {
		return t, nil
	}
	for _, name := range strings.Split(s, ",") {
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "":
		case strings.ToLower(XForwardedProto):
			t.Proto = true
		case strings.ToLower(XForwardedHost):
			t.Host = true
		case strings.ToLower(Forwarded):
			t.Forwarded = true
		default:
			return Trust{}, fmt.Errorf("%q is not one of %s, %s, %s", strings.TrimSpace(name), XForwardedProto, XForwardedHost, Forwarded)
		}
	}
	return t, nil
}

// String writes t as Parse reads it.
func (t Trust) String() string {
	var names []string
	for _, h := range []struct {
		on   bool
		name string
	}{{t.Proto, XForwardedProto}, {t.Host, XForwardedHost}, {t.Forwarded, Forwarded}} {
		if h.on {
			names = append(names, h.name)
		}
	}
	return strings.Join(names, ",")
}

// Origin returns the root the client reached the service at:
// scheme://host. The scheme is https over TLS, else the trusted headers'
// (Forwarded first), else http; the host is the trusted headers', else
// the request's Host. Of a header a chain of proxies appended to, the
// last value counts: the one the nearest proxy, the operator's, wrote.
func (t Trust) Origin(r *http.Request) string {
	scheme, host := "http", r.Host
	if r.TLS != nil {
		scheme = "https"
	}
	if t.Host {
		if h := last(r.Header.Values(XForwardedHost)); validHost(h) {
			host = h
		}
	}
	if t.Proto && r.TLS == nil {
		if p := strings.ToLower(last(r.Header.Values(XForwardedProto))); p == "https" || p == "http" {
			scheme = p
		}
	}
	if t.Forwarded {
		p, h := forwardedPair(last(r.Header.Values(Forwarded)))
		if (p == "https" || p == "http") && r.TLS == nil {
			scheme = p
		}
		if validHost(h) {
			host = h
		}
	}
	return scheme + "://" + host
}

// last returns the last of a header's comma-separated values, trimmed.
func last(values []string) string {
	if len(values) == 0 {
		return ""
	}
	v := values[len(values)-1]
	if i := strings.LastIndexByte(v, ','); i >= 0 {
		v = v[i+1:]
	}
	return strings.TrimSpace(v)
}

// forwardedPair reads proto= and host= of one element of a Forwarded
// header (RFC 7239, 4), values quoted or not.
func forwardedPair(element string) (proto, host string) {
	for _, pair := range strings.Split(element, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok {
			continue
		}
		v = strings.Trim(v, `"`)
		switch strings.ToLower(k) {
		case "proto":
			proto = strings.ToLower(v)
		case "host":
			host = v
		}
	}
	return proto, host
}

// validHost reports whether h may stand as a link's host: a name or an
// address, with a port or not, and nothing else.
func validHost(h string) bool {
	if h == "" || len(h) > 261 {
		return false
	}
	for _, c := range h {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune(".-:[]", c)) {
			return false
		}
	}
	return true
}
