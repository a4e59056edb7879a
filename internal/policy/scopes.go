package policy

import (
	"slices"
	"strings"
)

// What a token lets an app do, by OAuth scopes as Mastodon names them
// (package oauth keeps their vocabulary): read and write cover every
// scope under them (read:statuses, write:favourites, ...); follow covers
// the follows, blocks and mutes, read and write; profile, the person's
// own account, is covered by read and read:accounts too.

// followScopes are what follow covers.
var followScopes = []string{"read:follows", "write:follows", "read:blocks", "write:blocks", "read:mutes", "write:mutes"}

// Scoped decides whether a token may do what needs the scope need: a
// token of the service's own sign-in (no app) may do all its person may;
// an app's, what the scopes it was granted cover. An empty need asks
// for nothing.
func Scoped(app bool, granted []string, need string) bool {
	if !app || need == "" || slices.Contains(granted, need) {
		return true
	}
	top, _, granular := strings.Cut(need, ":")
	switch {
	case granular && slices.Contains(granted, top):
		return true
	case slices.Contains(followScopes, need) && slices.Contains(granted, "follow"):
		return true
	case need == "profile":
		return slices.Contains(granted, "read") || slices.Contains(granted, "read:accounts")
	}
	return false
}
