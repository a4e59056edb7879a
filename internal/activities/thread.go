package activities

import (
	"context"
	"fmt"
	"slices"

	"cloud.google.com/go/datastore"

	"socialstream/internal/graph"
	"socialstream/internal/ids"
	"socialstream/internal/policy"
	"socialstream/internal/store"
)

// Replies and threads, after Mastodon's. A reply keeps what it answers
// (InReplyTo, and its author), its thread's root (Thread), and the ids of
// the activities above it, nearest first (Ancestors, at most
// KeptAncestors, indexed). So a thread is read without a walk: the
// ancestors of an activity are one lookup of the nearest MaxAncestors
// ids it holds, and its descendants one equality query (ancestors = its
// id), whatever the thread's size or depth: a reply more than
// KeptAncestors below an activity has more than MaxDescendants replies
// of it above it, each listed before it, so it could never be among the
// MaxDescendants a context shows. A deleted activity leaves its replies as they are: they
// keep its id among their ancestors, and the thread shows them without it,
// as it shows them without whatever is hidden from its reader.
//
// At home, a reply reaches its author's followers who also follow the
// person it answers, and that person (Mastodon's rule): a decision of the
// fan-out (the post's first chunk, the chunk jobs, a follow's backfill),
// which reads the follows of the person answered (graph.ReachesAmong),
// never a read of a page. Its author's page, the @all and tag feeds hold
// it as any post.

// MaxAncestors is how far up a thread an activity's context reaches
// (Mastodon shows 40).
const MaxAncestors = 40

// KeptAncestors is how many of the activities above it a reply keeps
// (MaxDescendants: see above). A reply at that depth holds as many
// indexed values, far within an entity's 20,000 index entries.
const KeptAncestors = MaxDescendants

// MaxDescendants is how many replies below an activity its context
// shows at most (Mastodon shows up to 4,096 to those signed in, fewer
// deep).
const MaxDescendants = 500

// Context is an activity's place in its thread, as a reader sees it.
type Context struct {
	// Ancestors, from the thread's root down to what the activity
	// answers; Descendants, the replies below it, depth first, each
	// after what it answers, oldest first among siblings.
	Ancestors   []View `json:"ancestors"`
	Descendants []View `json:"descendants"`
}

// Context returns activity id's ancestors and descendants, as viewer
// sees them: what is gone or hidden from viewer is left out, and what
// answered it is shown under the nearest ancestor left. The activity
// itself must be user's and visible to viewer (ErrNoSuchActivity
// otherwise). It
// reads the activity, the ancestors in one lookup, the descendants in one
// query, and the page's lookups of each.
func (s *Service) Context(ctx context.Context, viewer, user, id string) (Context, error) {
	a, err := s.Visible(ctx, viewer, id)
	if err != nil {
		return Context{}, err
	}
	if a.UserID != user {
		return Context{}, ErrNoSuchActivity
	}
	out := Context{Ancestors: []View{}, Descendants: []View{}}
	if len(a.Ancestors) > 0 {
		up := slices.Clone(a.Ancestors[:min(len(a.Ancestors), MaxAncestors)])
		slices.Reverse(up) // root first
		if out.Ancestors, err = s.Shown(ctx, viewer, up); err != nil {
			return Context{}, err
		}
	}
	q := s.db.Query(KindActivity).FilterField("ancestors", "=", id).Limit(MaxDescendants)
	var below []*Activity
	keys, err := s.db.GetAll(ctx, q, &below)
	if err != nil {
		return Context{}, fmt.Errorf("activities.Context(%s): %w", id, err)
	}
	keys, below = threadOrder(id, keys, below)
	if keys, below, err = s.seen(ctx, viewer, keys, below); err != nil {
		return Context{}, err
	}
	if out.Descendants, err = s.views(ctx, viewer, keys, below, ""); err != nil {
		return Context{}, err
	}
	if out.Descendants == nil {
		out.Descendants = []View{}
	}
	return out, nil
}

// threadOrder orders the replies below root depth first: each after what
// it answers, siblings oldest first. A reply whose parent is not among
// them (deleted, or past MaxDescendants) goes under its nearest ancestor
// that is, or under root.
func threadOrder(root string, keys []*datastore.Key, acts []*Activity) ([]*datastore.Key, []*Activity) {
	present := make(map[string]int, len(keys))
	for i, k := range keys {
		present[k.Name] = i
	}
	children := map[string][]int{}
	for i, a := range acts {
		parent := root
		for _, up := range a.Ancestors {
			if _, ok := present[up]; ok || up == root {
				parent = up
				break
			}
		}
		children[parent] = append(children[parent], i)
	}
	for _, c := range children {
		slices.SortFunc(c, func(x, y int) int { return ids.Compare(keys[x].Name, keys[y].Name) })
	}
	outKeys := make([]*datastore.Key, 0, len(keys))
	outActs := make([]*Activity, 0, len(acts))
	var walk func(string)
	walk = func(id string) {
		for _, i := range children[id] {
			outKeys, outActs = append(outKeys, keys[i]), append(outActs, acts[i])
			walk(keys[i].Name)
		}
	}
	walk(root)
	return outKeys, outActs
}

// answersOther reports whether a is a reply to someone else, whose
// audience at home is narrowed (replyAudience).
func (a *Activity) answersOther() bool { return a.InReplyToUser != "" && a.InReplyToUser != a.UserID }

// replyFollowers narrows followers, a chunk of a's author's followers,
// to those a reaches at home: for a reply to someone else, those who
// follow that person too, and that person. The follows are read outside
// any transaction (a fan-out's decision, as of when it runs).
func replyFollowers(ctx context.Context, db *store.DB, a *Activity, followers []string) ([]string, error) {
	if !a.answersOther() {
		return followers, nil
	}
	also, err := graph.ReachesAmong(ctx, db, a.InReplyToUser, followers)
	if err != nil {
		return nil, err
	}
	return replyAudience(followers, a.UserID, a.InReplyToUser, also), nil
}

// reachesFollower reports whether a reaches follower at home as far as
// replies go: any post but a reply to someone else whom the follower does
// not follow (nor is). One read, of that follow, outside any transaction.
func reachesFollower(db *store.DB, a *Activity, follower string) (bool, error) {
	if policy.ReplyReaches(follower, a.UserID, a.InReplyToUser, false) {
		return true, nil
	}
	l := db.Lookup()
	f := graph.Reaches(l, follower, a.InReplyToUser)
	if err := l.Run(context.Background()); err != nil {
		return false, err
	}
	return policy.ReplyReaches(follower, a.UserID, a.InReplyToUser, f.Found()), nil
}
