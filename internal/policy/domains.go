package policy

import (
	"slices"
	"strings"
)

// DomainBlocked decides whether host, of another server (host:port on
// loopback), is cut off by domains: a person's own blocked domains, or
// the operator's. A blocked domain covers its subdomains; names are
// compared without case. A person of this server has no host, and no
// block of a domain covers them.
func DomainBlocked(domains []string, host string) bool {
	if host == "" {
		return false
	}
	host = strings.ToLower(host)
	return slices.ContainsFunc(domains, func(d string) bool { return host == d || strings.HasSuffix(host, "."+d) })
}

// HostOf returns the host of a person's name as this server keeps it:
// name@host for a person of another server, "" for one of this server.
func HostOf(username string) string {
	_, host, _ := strings.Cut(username, "@")
	return host
}
