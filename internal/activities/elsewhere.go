package activities

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"socialstream/internal/ids"
	"socialstream/internal/store"
)

// Posts and other servers (package federation): which posts go to them,
// and which came from them.

// Config.Publisher (package outbox's jobs, when the deployment
// federates) tells other servers of the posts of people here that reach
// followers (public, unlisted, followers-only), their reposts, and posts
// that name people or posts there: its jobs find out themselves whether
// the author has followers there. Posts of other servers' people are not
// sent back (no job is made for them).

// ElsewherePrefix begins the external id of a post of another server's
// (package federation): its Note's id, hashed.
const ElsewherePrefix = "ap:"

// Elsewhere reports whether the activity is a post of another server,
// and the address of its Note there (its URL), if so.
func (a *Activity) Elsewhere() (string, bool) {
	if strings.HasPrefix(a.ExternalID, ElsewherePrefix) && a.URL != "" {
		return a.URL, true
	}
	return "", false
}

// Elsewhere reports whether the post is of another server, and the
// address of its Note there, if so.
func (v View) Elsewhere() (string, bool) {
	if strings.HasPrefix(v.ExternalID, ElsewherePrefix) && v.URL != "" {
		return v.URL, true
	}
	return "", false
}

// published reports whether a post goes to other servers: one that
// reaches followers (to its author's followers there), a repost (to
// them, and to the server of what it shares), or one that mentions
// someone there (names, the names it mentions, holds a name@domain).
func published(visibility string, repost bool, names []string) bool {
	switch {
	case repost, visibility == Public || visibility == Unlisted || visibility == FollowersOnly:
		return true
	}
	return mentionsElsewhere(names)
}

// mentionsElsewhere reports whether names (those a post mentions) hold
// someone of another server's (name@domain).
func mentionsElsewhere(names []string) bool {
	return slices.ContainsFunc(names, func(n string) bool { return strings.Contains(n, "@") })
}

// fromElsewhere reports whether an activity is a post of another
// server's, by the external id it was posted with.
func fromElsewhere(externalID string) bool { return strings.HasPrefix(externalID, ElsewherePrefix) }

// NotesElsewhere returns, of the posts idList names, the addresses of
// the Notes of those of another server (the address a reply to one
// names as what it answers), by their ids: one read each, outside any
// transaction, whoever may see them (an address is not their text).
func NotesElsewhere(ctx context.Context, db *store.DB, idList []string) (map[string]string, error) {
	l := db.Lookup()
	var (
		named []string
		found []*Activity
		refs  []store.Ref
	)
	for _, id := range idList {
		if _, ok := ids.Parse(id); !ok {
			continue
		}
		a := &Activity{}
		named, found, refs = append(named, id), append(found, a), append(refs, l.Add(Key(db, id), a))
	}
	if l.Len() == 0 {
		return nil, nil
	}
	if err := l.Run(ctx); err != nil {
		return nil, fmt.Errorf("activities.NotesElsewhere: %w", err)
	}
	out := map[string]string{}
	for i, a := range found {
		if !refs[i].Found() {
			continue
		}
		if at, ok := a.Elsewhere(); ok {
			out[named[i]] = at
		}
	}
	return out, nil
}
