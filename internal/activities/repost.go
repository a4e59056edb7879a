package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/derrors"
	"socialstream/internal/ids"
	"socialstream/internal/policy"
	"socialstream/internal/store"
)

// A repost, after Mastodon's boost, is an activity of the reposter's that
// shares another: it has no text of its own, it reaches the reposter's
// followers and groups as their post would (the same audience chunks and
// group copies, the same fan-out), and every feed shows it carrying the
// activity it shares, read in the feed's one batch lookup with that
// activity's author, counts and the viewer's like and repost.
//
//   - Repost/{activityId}_{userId} says that user reposts the activity, and
//     which activity is the repost. Reposting again answers the first
//     repost: the post's transaction reads it, as it reads an externalId.
//   - The shared activity's repostsCount changes by server-side increments
//     in the commit of the repost and of its delete.
//   - A repost of a repost shares the activity first posted.
//   - Undoing a repost deletes it as a post is deleted. The delete of the
//     shared activity deletes its reposts too (its cleanup job), and until
//     then no feed shows a repost whose activity is gone.

// Repost is one user's repost of an activity.
type Repost struct {
	ActivityID string    `datastore:"activityId"`
	UserID     string    `datastore:"userId"`
	RepostID   string    `datastore:"repostId,noindex"`
	Created    time.Time `datastore:"created"`
}

// RepostKey returns the key of user's repost of an activity.
func RepostKey(db *store.DB, activity, user string) *datastore.Key {
	return db.NameKey(KindRepost, activity+"_"+user, nil)
}

var (
	errRepostEdit = derrors.New(derrors.InvalidArgument, "a repost has no text to edit; undo it instead")
)

// Repost makes user repost an activity (the one it shares, for a repost)
// and returns the repost as user sees it, and whether it is new: reposting
// again answers the first repost.
func (s *Service) Repost(ctx context.Context, user, id string) (View, bool, error) {
	a, err := s.Visible(ctx, user, id)
	if err != nil {
		return View{}, false, err
	}
	if a.RepostOf != "" {
		id = a.RepostOf
		if a, err = s.Visible(ctx, user, id); err != nil {
			return View{}, false, err
		}
	}
	vis, err := policy.Repost(a.post()) // a repost of an unlisted post is unlisted
	if err != nil {
		return View{}, false, err
	}
	return s.Post(ctx, user, PostInput{Visibility: vis, repostOf: id, repostOfUser: a.UserID, shared: a})
}

// Unrepost undoes user's repost of an activity, if any, and returns the
// activity as user sees it then. The repost is the reposter's own post:
// it is deleted even when the policy now hides what it shares from them
// (a block, moderation), and the answer is then a 404, as for an activity
// that is not there.
func (s *Service) Unrepost(ctx context.Context, user, id string) (View, error) {
	if _, ok := ids.Parse(id); !ok {
		return View{}, ErrNoSuchActivity
	}
	var r Repost
	ok, err := s.db.Get(ctx, RepostKey(s.db, id, user), &r)
	if err != nil {
		return View{}, fmt.Errorf("activities.Unrepost(%s, %s): %w", user, id, err)
	}
	if ok {
		if err := s.Delete(ctx, user, r.RepostID); err != nil && !errors.Is(err, ErrNoSuchActivity) {
			return View{}, err
		}
	}
	// As it is now, its count without the repost.
	a, err := s.Visible(ctx, user, id)
	if err != nil {
		return View{}, err
	}
	return s.viewOne(ctx, user, Key(s.db, id), a)
}

// Reposters lists who reposts an activity, newest repost first, as ids.
func (s *Service) Reposters(ctx context.Context, viewer, id string, p store.PageRequest) ([]string, string, error) {
	if _, err := s.Visible(ctx, viewer, id); err != nil {
		return nil, "", err
	}
	q := s.db.Query(KindRepost).FilterField("activityId", "=", id).Order("-created")
	_, vals, next, err := store.Page[Repost](ctx, s.db, q, "reposts:"+id, p)
	if err != nil {
		return nil, "", fmt.Errorf("activities.Reposters(%s): %w", id, err)
	}
	out := make([]string, len(vals))
	for i, r := range vals {
		out[i] = r.UserID
	}
	return out, next, nil
}

// unshare is what the delete of a repost does beside deleting it: its
// Repost entity goes, and the shared activity, if it is still there,
// counts one repost less. shared is the shared activity as tx read it.
func unshare(tx *store.Tx, a *Activity, shared store.Ref) ([]*datastore.Key, error) {
	if a.RepostOf == "" {
		return nil, nil
	}
	if shared.Found() {
		if err := tx.Increment(Key(tx.DB(), a.RepostOf), map[string]int64{"repostsCount": -1}); err != nil {
			return nil, err
		}
	}
	return []*datastore.Key{RepostKey(tx.DB(), a.RepostOf, a.UserID)}, nil
}

// dropReposts deletes the reposts of a deleted activity, as their authors
// would, and returns how many it deleted.
func (s *Service) dropReposts(ctx context.Context, id string) (int, error) {
	n := 0
	for {
		var reposts []Activity
		keys, err := s.db.GetAll(ctx, s.db.Query(KindActivity).FilterField("repostOf", "=", id).Limit(cleanupBatch), &reposts)
		if err != nil {
			return n, err
		}
		for i, k := range keys {
			if err := s.delete(ctx, reposts[i].UserID, k.Name, true); err != nil && !errors.Is(err, ErrNoSuchActivity) {
				return n, err
			}
			n++
		}
		if len(keys) < cleanupBatch {
			return n, nil
		}
	}
}
