package activities

import (
	"context"
	"fmt"

	"cloud.google.com/go/datastore"

	"socialstream/internal/accounts"
	"socialstream/internal/blocks"
	"socialstream/internal/derrors"
	"socialstream/internal/graph"
	"socialstream/internal/policy"
	"socialstream/internal/store"
	"socialstream/internal/viewer"
)

// Visibility, after Mastodon's: who may see an activity.
// The policy (package policy) owns them; who may see what is decided
// there.
const (
	// Public: anyone, in every feed that holds it.
	Public = policy.Public
	// Unlisted: anyone, on its author's page and in their followers'
	// homes, but in no public or tag feed (nor a group's).
	Unlisted = policy.Unlisted
	// FollowersOnly: the author's followers (at home, and on the author's
	// page when they read it), the people it mentions, and the author.
	FollowersOnly = policy.FollowersOnly
	// MentionedOnly: the people it mentions and the author alone.
	MentionedOnly = policy.MentionedOnly
)

// post returns a as the policy knows it.
func (a *Activity) post() policy.Post {
	return policy.Post{Author: a.UserID, Visibility: a.Visibility, Mentions: a.MentionIDs, Removed: a.Removed != 0}
}

// Every feed enforces visibility with its query, never by leaving out
// what a page read: an activity's visibleTo holds the audiences that may
// find it by a query, and its places (places.go) follow from it. A public
// or unlisted one holds both, a followers-only one "followers", one for
// the mentioned neither.
//   - @all and tag feeds are places of public activities alone (listed);
//   - a person's page, read by someone else, is the range of the
//     "followers" audience if the reader follows them (one lookup of the
//     follow, by key, before the query), else of "public";
//   - home and @mentions need no filter: the audience chunks of a
//     followers-only activity hold the followers, those of one for the
//     mentioned hold the people it mentions, and @mentions lists what
//     mentions the reader;
//   - a group's feed holds public activities alone: group copies are made
//     of those only.

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

var errVisibility = derrors.New(derrors.InvalidArgument, "visibility must be public, unlisted, followers or mentioned")

// visibleTo returns the visibleTo of an activity of visibility v.
func visibleTo(v string) []string {
	switch v {
	case FollowersOnly:
		return []string{FollowersOnly}
	case MentionedOnly:
		return nil
	}
	return []string{Public, FollowersOnly} // public and unlisted: on the page for anyone
}

// listed reports whether a post of visibility v is listed: in the public
// and tag feeds, a group's, and its tags' followers' homes (policy.Listed).
func listed(v string) bool { return policy.Post{Visibility: v}.Listed() }

// isPublic reports whether a is listed (public, not unlisted).
func (a *Activity) isPublic() bool { return listed(a.Visibility) }

// reachesFollowers reports whether a goes to the author's followers.
func (a *Activity) reachesFollowers() bool { return a.Visibility != MentionedOnly }

// seenBy reports whether viewer may see a, given whether viewer follows
// its author.
func (a *Activity) seenBy(viewer string, follows bool) bool {
	return policy.Addressed(viewer, a.post(), follows)
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

// Seen is what deciding whether a reader may see an activity needs,
// added to a batch lookup (outside a transaction, or in a reaction's): its
// author's account, the blocks between reader and author, and the
// reader's follow of the author where the policy needs it (for a limited
// author, once the author's read says so: a further round). Err decides,
// through the policy, once the lookup has run.
type Seen struct {
	viewer  string
	a       *Activity
	author  *accounts.Record // nil for the reader's own: the guard reads them
	between *blocks.Between
	// blocked is what the reader's state said of the blocks between
	// reader and author, when it knew them (ReadSeenBy): between is not
	// read then.
	blocked bool
	follow  store.Ref
	// shared is, for a repost, what deciding whether viewer may see the
	// activity it shares needs: a repost of what is hidden from its
	// reader is hidden too, and so is one whose shared activity is gone.
	shared *Seen
}

// ReadSeen adds to l what deciding whether viewer may see a needs: for a
// repost, as Exists read it, what seeing the activity it shares needs
// too (a repost read otherwise is taken as sharing what is gone).
func ReadSeen(l *store.Lookup, viewer string, a *Activity) *Seen {
	return readSeen(l, nil, viewer, a)
}

// ReadSeenBy is ReadSeen for a reader whose own state the lookup reads
// too (a reaction's transaction, which changes it): a state that knows
// whom its owner blocks and who blocks them (viewer.Ref.KnowsPeople)
// answers for the blocks between reader and author, which are read by
// key, in a further round, only when it does not. The state is written
// in every transaction that writes a block, so in a transaction it says
// what the blocks do.
func ReadSeenBy(l *store.Lookup, own *viewer.Ref, reader string, a *Activity) *Seen {
	return readSeen(l, own, reader, a)
}

func readSeen(l *store.Lookup, own *viewer.Ref, reader string, a *Activity) *Seen {
	s := &Seen{viewer: reader, a: a}
	if a.RepostOf != "" && a.shared != nil {
		s.shared = readSeen(l, own, reader, a.shared)
	}
	if reader != "" && reader == a.UserID {
		return s
	}
	s.author = accounts.Read(l, a.UserID)
	if reader == "" {
		return s
	}
	if own == nil {
		s.between = blocks.ReadBetween(l, reader, a.UserID)
	} else {
		l.Then(func() {
			if own.KnowsPeople() {
				s.blocked = own.Blocked(a.UserID)
			} else {
				s.between = blocks.ReadBetween(l, reader, a.UserID)
			}
		})
	}
	if policy.NeedsFollow(reader, a.post(), policy.Account{Exists: true}, true) {
		s.follow = graph.Follows(l, reader, a.UserID)
	} else {
		l.Then(func() {
			if s.author.Standing().Limited {
				s.follow = graph.Follows(l, reader, a.UserID)
			}
		})
	}
	return s
}

// Blocked reports whether a block stands between reader and author.
func (s *Seen) Blocked() bool { return s.blocked || s.between != nil && s.between.Any() }

// Err returns ErrNoSuchActivity unless the policy lets the reader see the
// activity (and, for a repost, the activity it shares). The reader's own
// is hidden only when removed: their own standing is their guard's to
// check.
func (s *Seen) Err() error { return s.err(false) }

// Unblocked is Err as if no block stood between reader and author: for
// taking back what one did before a block (an unlike). A repost of what
// is hidden from the reader, a block with its author included, stays not
// there: taking back a reaction answers what it is about.
func (s *Seen) Unblocked() error { return s.err(true) }

func (s *Seen) err(unblocked bool) error {
	author := policy.Account{ID: s.a.UserID, Exists: true}
	if s.author != nil {
		author = s.author.Account()
	}
	ties := policy.Ties{Follows: s.follow.Found(), Blocked: !unblocked && s.Blocked()}
	if !policy.SeePost(s.viewer, s.a.post(), author, ties) {
		return ErrNoSuchActivity
	}
	if s.a.RepostOf == "" {
		return nil
	}
	if s.shared == nil {
		return ErrNoSuchActivity // what it shared is gone
	}
	return s.shared.err(false)
}

// Visible returns the activity id as viewer may see it, or
// ErrNoSuchActivity: for a repost, the lists of reactions, an edit or a
// delete by someone else. It reads the activity, then what ReadSeen adds,
// in one lookup.
func (s *Service) Visible(ctx context.Context, viewer, id string) (*Activity, error) {
	a, err := s.Exists(ctx, id)
	if err != nil {
		return nil, err
	}
	if a.Removed != 0 {
		return nil, ErrNoSuchActivity
	}
	l := s.db.Lookup()
	seen := ReadSeen(l, viewer, a)
	if err := l.Run(ctx); err != nil {
		return nil, fmt.Errorf("activities.Visible(%s): %w", id, err)
	}
	if err := seen.Err(); err != nil {
		return nil, err
	}
	return a, nil
}
