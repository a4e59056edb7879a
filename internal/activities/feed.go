package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/accounts"
	"socialstream/internal/derrors"
	"socialstream/internal/graph"
	"socialstream/internal/groups"
	"socialstream/internal/ids"
	"socialstream/internal/store"
)

// Feed selectors.
const (
	Self     = "@self"
	Friends  = "@friends"
	Mentions = "@mentions"
	All      = "@all"
)

// FeedRequest asks for one page of a feed.
type FeedRequest struct {
	Viewer   string
	Selector string // Self, Friends, Mentions, All, or a group id
	UserID   string // whose feed, for Self, Friends and Mentions
	AppID    string // only this app's activities; empty or @app for all
	Page     store.PageRequest
}

var (
	errOwnFeedOnly = derrors.New(derrors.PermissionDenied, "@friends and @mentions are visible to their owner only")
	errAppFilter   = derrors.New(derrors.InvalidArgument, "an appId filter applies to @self and @all only")
)

// Feed returns one page of a feed, newest first, and the cursor of the next.
//
// Every feed is one equality query and one batch lookup (of the authors,
// and for a group feed the group and the viewer's membership too); the
// home feed, a keys-only query on the audience entities, adds one batch
// lookup of the activities themselves.
func (s *Service) Feed(ctx context.Context, r FeedRequest) ([]View, string, error) {
	app := r.AppID
	if app == "@app" {
		app = ""
	}
	if app != "" && !ValidAppID(app) {
		return nil, "", derrors.New(derrors.InvalidArgument, "invalid appId")
	}
	if app != "" && r.Selector != Self && r.Selector != All {
		return nil, "", errAppFilter
	}
	switch r.Selector {
	case Self:
		q := s.db.Query(KindActivity).FilterField("userId", "=", r.UserID)
		if app != "" {
			q = q.FilterField("appId", "=", app)
		}
		return s.activityFeed(ctx, r.Viewer, q.Order("-seq"), "self:"+r.UserID+":"+app, r.Page, nil)
	case All:
		q := s.db.Query(KindActivity)
		if app != "" {
			q = q.FilterField("appId", "=", app)
		}
		return s.activityFeed(ctx, r.Viewer, q.Order("-seq"), "all:"+app, r.Page, nil)
	case Mentions:
		if r.UserID != r.Viewer {
			return nil, "", errOwnFeedOnly
		}
		q := s.db.Query(KindActivity).FilterField("mentionIds", "=", r.UserID).Order("-seq")
		return s.activityFeed(ctx, r.Viewer, q, "mentions:"+r.UserID, r.Page, nil)
	case Friends:
		if r.UserID != r.Viewer {
			return nil, "", errOwnFeedOnly
		}
		return s.homeFeed(ctx, r.Viewer, r.Page)
	default:
		group := r.Selector
		if _, ok := ids.Parse(group); !ok {
			return nil, "", derrors.New(derrors.NotFound, "unknown feed selector "+group)
		}
		q := s.db.Query(KindActivity).FilterField("groupIds", "=", group).Order("-seq")
		return s.activityFeed(ctx, r.Viewer, q, "group:"+group, r.Page, &groupCheck{id: group})
	}
}

// groupCheck rides on a feed's batch lookup to check the viewer may see a
// group's feed.
type groupCheck struct {
	id string
	g  groups.Group
	m  groups.Membership
}

func (s *Service) activityFeed(ctx context.Context, viewer string, q *datastore.Query, tag string, p store.PageRequest, gc *groupCheck) ([]View, string, error) {
	keys, vals, next, err := store.Page[Activity](ctx, s.db, q, tag, p)
	if err != nil {
		return nil, "", err
	}
	acts := make([]*Activity, len(vals))
	for i := range vals {
		acts[i] = &vals[i]
	}
	views, err := s.views(ctx, viewer, keys, acts, gc)
	if err != nil {
		return nil, "", err
	}
	return views, next, nil
}

func (s *Service) homeFeed(ctx context.Context, viewer string, p store.PageRequest) ([]View, string, error) {
	q := s.db.Query(KindAudience).FilterField("followerIds", "=", viewer).Order("-seq").KeysOnly()
	audKeys, _, next, err := store.Page[Audience](ctx, s.db, q, "home:"+viewer, p)
	if err != nil {
		return nil, "", err
	}
	// A viewer is in one chunk of an activity; should a rebuild ever leave
	// them in two, show the activity once.
	var keys []*datastore.Key
	seen := map[string]bool{}
	for _, k := range audKeys {
		if k.Parent != nil && !seen[k.Parent.Name] {
			seen[k.Parent.Name] = true
			keys = append(keys, k.Parent)
		}
	}
	acts := make([]Activity, len(keys))
	err = s.db.Client.GetMulti(ctx, keys, acts)
	missing, ok := store.IsMissing(err, len(keys))
	if !ok {
		return nil, "", fmt.Errorf("activities: home feed of %s: %w", viewer, store.Convert(err))
	}
	var found []*datastore.Key
	var list []*Activity
	for i := range acts {
		if !missing[i] { // deleted since: its audience goes with it
			found = append(found, keys[i])
			list = append(list, &acts[i])
		}
	}
	views, err := s.views(ctx, viewer, found, list, nil)
	if err != nil {
		return nil, "", err
	}
	return views, next, nil
}

// views turns activities into views with their authors, fetched in one
// batch lookup together with what gc needs.
func (s *Service) views(ctx context.Context, viewer string, keys []*datastore.Key, acts []*Activity, gc *groupCheck) ([]View, error) {
	var lookup []*datastore.Key
	var dst []any
	authorAt := map[string]int{}
	for _, a := range acts {
		if _, ok := authorAt[a.UserID]; !ok {
			authorAt[a.UserID] = len(lookup)
			lookup = append(lookup, accounts.UserKey(s.db, a.UserID))
			dst = append(dst, &accounts.User{})
		}
	}
	// Each activity's counts and the viewer's like ride along.
	statsAt := len(lookup)
	liker := viewer
	if liker == "" {
		liker = "-" // no viewer: a key no like has
	}
	for i := range acts {
		lookup = append(lookup, StatsKey(s.db, keys[i].Name), LikeKey(s.db, keys[i].Name, liker))
		dst = append(dst, &Stats{}, &Like{})
	}
	gAt := len(lookup)
	if gc != nil {
		lookup = append(lookup, groups.GroupKey(s.db, gc.id), groups.MembershipKey(s.db, gc.id, viewer))
		dst = append(dst, &gc.g, &gc.m)
	}
	if len(lookup) == 0 {
		return []View{}, nil
	}
	err := s.db.Client.GetMulti(ctx, lookup, dst)
	missing, ok := store.IsMissing(err, len(lookup))
	if !ok {
		return nil, fmt.Errorf("activities: lookup: %w", store.Convert(err))
	}
	if gc != nil {
		if missing[gAt] {
			return nil, groups.ErrNoSuchGroup
		}
		if err := groups.CanSee(&gc.g, !missing[gAt+1]); err != nil {
			return nil, err
		}
	}
	out := make([]View, 0, len(acts))
	for i, a := range acts {
		var author *accounts.Person
		if j := authorAt[a.UserID]; !missing[j] {
			p := accounts.ToPerson(a.UserID, dst[j].(*accounts.User))
			author = &p
		}
		st := dst[statsAt+2*i].(*Stats)
		liked := viewer != "" && !missing[statsAt+2*i+1]
		out = append(out, toView(keys[i].Name, a, author, st, liked))
	}
	return out, nil
}

// ErrNotYet says a job came before the activity it works on was committed;
// the queue retries it.
var ErrNotYet = derrors.New(derrors.Unavailable, "activity not committed yet")

// defaultGiveUpAfter is how long after an activity id was minted a job stops
// waiting for the activity to appear: a post that has not committed by then
// never will.
const defaultGiveUpAfter = 2 * time.Minute

// A planning job that finds its activity not yet committed, within
// planWaitWindow of the id being minted, looks again planWaits times,
// planWait apart, before it returns ErrNotYet.
const (
	planWaits      = 10
	planWait       = 25 * time.Millisecond
	planWaitWindow = 5 * time.Second
)

// FanoutResult says what a fan-out job did, for its log line.
type FanoutResult struct {
	Enqueued int // chunk jobs planned
	Written  int // ids written to an audience chunk
	Skipped  string
}

// Fanout runs a fan-out job. It can run any number of times, in any order,
// with the same end state.
func (s *Service) Fanout(ctx context.Context, t FanoutTask) (FanoutResult, error) {
	seq, ok := ids.Parse(t.ActivityID)
	if !ok || t.Chunk < 0 || t.Chunk > 10000 {
		return FanoutResult{Skipped: "malformed task"}, nil
	}
	key := Key(s.db, t.ActivityID)
	if t.Chunk == 0 {
		var a Activity
		err := s.db.Client.Get(ctx, key, &a)
		// The post enqueued this job just before its commit, which lands
		// milliseconds later: wait a little rather than fail and wait for
		// the queue's backoff (half a second or more).
		for i := 0; i < planWaits && errors.Is(err, datastore.ErrNoSuchEntity) && s.now().Sub(ids.Time(seq)) < planWaitWindow; i++ {
			select {
			case <-ctx.Done():
				return FanoutResult{}, ctx.Err()
			case <-time.After(planWait):
			}
			err = s.db.Client.Get(ctx, key, &a)
		}
		if errors.Is(err, datastore.ErrNoSuchEntity) {
			if s.now().Sub(ids.Time(seq)) > s.cfg.GiveUpAfter {
				return FanoutResult{Skipped: "activity never committed or deleted"}, nil
			}
			return FanoutResult{}, ErrNotYet
		}
		if err != nil {
			return FanoutResult{}, store.Convert(err)
		}
		for n := 1; n < a.Chunks; n++ {
			if err := s.enqueueFanout(ctx, t.ActivityID, n); err != nil {
				return FanoutResult{Enqueued: n - 1}, err
			}
		}
		return FanoutResult{Enqueued: max(0, a.Chunks-1)}, nil
	}
	var res FanoutResult
	err := s.db.RunInTransaction(ctx, func(tx *datastore.Transaction) error {
		res = FanoutResult{}
		var a Activity
		if err := tx.Get(key, &a); errors.Is(err, datastore.ErrNoSuchEntity) {
			res.Skipped = "activity deleted"
			return nil
		} else if err != nil {
			return err
		}
		var chunk graph.Chunk
		if err := tx.Get(graph.ChunkKey(s.db, a.UserID, t.Chunk), &chunk); errors.Is(err, datastore.ErrNoSuchEntity) {
			res.Skipped = "no such follower chunk"
			return nil
		} else if err != nil {
			return err
		}
		// Merge, never overwrite: a follow job may have created this
		// chunk first, with the ids of new followers.
		n, err := mergeIDs(tx, s.db, Ref{ID: t.ActivityID, Seq: a.Seq, Author: a.UserID}, t.Chunk, chunk.IDs)
		res.Written = n
		if n == 0 {
			res.Skipped = "chunk already up to date"
		}
		return err
	})
	return res, err
}
