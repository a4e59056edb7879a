package oauth

import (
	"slices"
	"strings"

	"socialstream/internal/derrors"
	"socialstream/internal/policy"
)

// The scopes an app may ask for, as Mastodon names them: read and write
// cover every granular scope under them; follow covers the follows,
// blocks and mutes, read and write; profile is the person's own account,
// read, alone; admin:read and admin:write, the moderation API's, for
// staff alone, are covered by neither read nor write.
const (
	Read       = "read"
	Write      = "write"
	Follow     = "follow"
	Profile    = "profile"
	AdminRead  = "admin:read"
	AdminWrite = "admin:write"
)

// granular are the scopes under read and write.
var granular = []string{
	"read:accounts", "read:blocks", "read:bookmarks", "read:favourites", "read:filters", "read:follows",
	"read:lists", "read:mutes", "read:notifications", "read:search", "read:statuses",
	"write:accounts", "write:blocks", "write:bookmarks", "write:conversations", "write:favourites",
	"write:filters", "write:follows", "write:lists", "write:media", "write:mutes", "write:notifications",
	"write:reports", "write:statuses",
}

// Granular returns the scopes under read and write.
func Granular() []string { return slices.Clone(granular) }

// known reports whether s is a scope an app may ask for; push grants
// the token's Web Push subscription (read and write alike, as Mastodon).
func known(s string) bool {
	switch s {
	case Read, Write, Follow, Profile, AdminRead, AdminWrite, "push":
		return true
	}
	return slices.Contains(granular, s)
}

// ErrInvalidScope is asking for a scope the service does not know, or
// the app was not registered with.
var ErrInvalidScope = derrors.New(derrors.InvalidArgument, "invalid_scope: the requested scope is invalid, unknown, or malformed")

// ParseScopes reads a space-separated list of scopes (OAuth's form; a
// plus, as a form may leave it, separates too); empty means read.
func ParseScopes(s string) ([]string, error) {
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '+' })
	if len(fields) == 0 {
		return []string{Read}, nil
	}
	if len(fields) > 40 {
		return nil, ErrInvalidScope
	}
	for _, f := range fields {
		if !known(f) {
			return nil, ErrInvalidScope
		}
	}
	slices.Sort(fields)
	return slices.Compact(fields), nil
}

// Within reports whether every scope of asked is allowed by registered:
// what an app registered with bounds what it may ask a person for.
func Within(asked, registered []string) bool {
	for _, a := range asked {
		if !policy.Scoped(true, registered, a) {
			return false
		}
	}
	return true
}
