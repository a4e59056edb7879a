package activities

import (
	"context"
	"fmt"
	"slices"

	"cloud.google.com/go/datastore"

	"socialstream/internal/derrors"
	"socialstream/internal/graph"
	"socialstream/internal/store"
)

// Visibility, after Mastodon's: who may see an activity.
const (
	// Public: anyone, in every feed that holds it.
	Public = "public"
	// FollowersOnly: the author's followers (at home, and on the author's
	// page when they read it), the people it mentions, and the author.
	FollowersOnly = "followers"
	// MentionedOnly: the people it mentions and the author alone.
	MentionedOnly = "mentioned"
)

// Every feed enforces visibility with its query, never by leaving out
// what a page read: an activity's visibleTo holds the audiences that may
// find it by a query, and its places (places.go) follow from it. A public
// one holds both, a followers-only one "followers", one for the mentioned
// neither.
//   - @all and tag feeds are places of public activities alone;
//   - a person's page, read by someone else, is the range of the
//     "followers" audience if the reader follows them (one lookup of the
//     follow, by key, before the query), else of "public";
//   - home and @mentions need no filter: the audience chunks of a
//     followers-only activity hold the followers, those of one for the
//     mentioned hold the people it mentions, and @mentions lists what
//     mentions the reader;
//   - a group's feed holds public activities alone: group copies are made
//     of those only.
//
// Activities of earlier versions have no visibility and no visibleTo:
// they are public, their places say so once this version writes them, and
// the migration job (MigrateVisibility) gives them both.

// MentionAudience is the value of Audience.UserID on the chunk of an
// activity for the mentioned alone: not the author's, so that no unfollow
// of the author takes a mentioned person out of it.
func MentionAudience(author string) string { return "@" + author }

// mentionedAudience returns the one audience chunk of a, an activity for
// the mentioned alone: its author and those it mentions (at most
// MaxMentions, far under a chunk's size).
func mentionedAudience(a *Activity) *Audience {
	return &Audience{FollowerIDs: append([]string{a.UserID}, a.MentionIDs...), Seq: a.Seq, UserID: MentionAudience(a.UserID)}
}

var errVisibility = derrors.New(derrors.InvalidArgument, "visibility must be public, followers or mentioned")

// visibleTo returns the visibleTo of an activity of visibility v.
func visibleTo(v string) []string {
	switch v {
	case FollowersOnly:
		return []string{FollowersOnly}
	case MentionedOnly:
		return nil
	}
	return []string{Public, FollowersOnly}
}

// visibility returns a's visibility: public for an earlier version's.
func (a *Activity) visibility() string {
	if a.Visibility == "" {
		return Public
	}
	return a.Visibility
}

// isPublic reports whether anyone may see a.
func (a *Activity) isPublic() bool { return a.visibility() == Public }

// reachesFollowers reports whether a goes to the author's followers.
func (a *Activity) reachesFollowers() bool { return a.visibility() != MentionedOnly }

// seenBy reports whether viewer may see a, given whether viewer follows
// its author.
func (a *Activity) seenBy(viewer string, follows bool) bool {
	switch {
	case a.UserID == viewer || a.isPublic() || slices.Contains(a.MentionIDs, viewer):
		return true
	case a.visibility() == FollowersOnly:
		return follows
	}
	return false
}

// needsFollow reports whether telling if viewer sees a needs viewer's
// follow of its author.
func (a *Activity) needsFollow(viewer string) bool {
	return viewer != "" && !a.seenBy(viewer, false) && a.seenBy(viewer, true)
}

// readFollows reads, in one lookup, the follows of the authors of acts by
// viewer that telling what viewer sees needs.
func (s *Service) readFollows(ctx context.Context, viewer string, acts []*Activity) (map[string]bool, error) {
	l := s.db.Lookup()
	refs := map[string]store.Ref{}
	for _, a := range acts {
		if _, ok := refs[a.UserID]; !ok && a.needsFollow(viewer) {
			refs[a.UserID] = graph.Follows(l, viewer, a.UserID)
		}
	}
	follows := map[string]bool{}
	if len(refs) == 0 {
		return follows, nil
	}
	if err := l.Run(ctx); err != nil {
		return nil, fmt.Errorf("activities: follows of %s: %w", viewer, err)
	}
	for id, r := range refs {
		follows[id] = r.Found()
	}
	return follows, nil
}

// seen keeps of keys and acts those viewer may see.
func (s *Service) seen(ctx context.Context, viewer string, keys []*datastore.Key, acts []*Activity) ([]*datastore.Key, []*Activity, error) {
	follows, err := s.readFollows(ctx, viewer, acts)
	if err != nil {
		return nil, nil, err
	}
	var k []*datastore.Key
	var a []*Activity
	for i, act := range acts {
		if act.seenBy(viewer, follows[act.UserID]) {
			k, a = append(k, keys[i]), append(a, act)
		}
	}
	return k, a, nil
}

// Visible returns the activity id as viewer may see it, or
// ErrNoSuchActivity: for a like, a comment, a repost, and their lists.
func (s *Service) Visible(ctx context.Context, viewer, id string) (*Activity, error) {
	a, err := s.Exists(ctx, id)
	if err != nil {
		return nil, err
	}
	if a.Removed != 0 {
		return nil, ErrNoSuchActivity
	}
	_, seen, err := s.seen(ctx, viewer, []*datastore.Key{Key(s.db, id)}, []*Activity{a})
	if err != nil {
		return nil, err
	}
	if len(seen) == 0 {
		return nil, ErrNoSuchActivity
	}
	return a, nil
}
