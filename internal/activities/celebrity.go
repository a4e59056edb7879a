package activities

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"cloud.google.com/go/datastore"

	"socialstream/internal/graph"
	"socialstream/internal/ids"
	"socialstream/internal/order"
	"socialstream/internal/queue"
	"socialstream/internal/store"
)

// Celebrities' posts (package graph says who is one): a post of a
// celebrity's that reaches all their followers (no reply to someone
// else, no repost, none for the mentioned alone) copies no follower's id.
// Its place c:{author} finds it, and its job (KeepJob) keeps its id
// among the author's newest in CelebrityPosts. A home page reads, beside its range of
// audience chunks, the celebrities its reader follows (one keys-only
// query) and their CelebrityPosts (through the page cache: every one of
// a celebrity's followers reads the same entity), and merges them in
// place order. A page that reaches past what a CelebrityPosts keeps
// reads that celebrity's range of c:{author} instead.

// KindCelebrityPosts is the kind of a celebrity's newest posts:
// CelebrityPosts/{user}.
const KindCelebrityPosts = "CelebrityPosts"

// KeptCelebrityPosts is how many posts a CelebrityPosts keeps: a page of
// Mastodon's largest (40), so that the first page of any home needs no
// query of a celebrity's posts.
const KeptCelebrityPosts = 40

// CelebrityPosts are the ids of a celebrity's newest posts that reach
// all their followers, newest first.
type CelebrityPosts struct {
	IDs []string `datastore:"ids,noindex"`
	// More: older ones were let go.
	More bool `datastore:"more,noindex,omitempty"`
}

// CelebrityPostsKey returns the key of user's newest posts.
func CelebrityPostsKey(db *store.DB, user string) *datastore.Key {
	return db.NameKey(KindCelebrityPosts, user, nil)
}

func celebrityFeed(user string) string { return "c:" + user }

// KeepJob keeps a celebrity's post among their newest, once it has
// committed.
var KeepJob = queue.Job[KeepTask]{Name: "celebrity-post", Queue: queue.Fanout,
	TaskName: func(t KeepTask) string { return "celebrity-post-" + t.ActivityID }}

// KeepTask names the post a KeepJob keeps.
type KeepTask struct {
	ActivityID string `json:"activityId"`
}

// Keep runs a KeepJob and says why it changed nothing, if it did not.
// It writes what the author's newest posts are, as one keys-only query of
// their place c:{author} finds them, rather than adding its post to what
// is stored: in no transaction, so that the jobs of one celebrity's
// posts, which all write the one entity, never wait on each other's
// locks. (Each added its post in a transaction once: nine jobs of one
// author's posts at once, delivered twice and under faults, were still
// waiting on each other three minutes on.) It can run any number of
// times, in any order with the jobs of the author's other posts. A job
// whose query another job's write overtook writes an older list over a
// newer one: each reads the range again after its write, and writes
// again until the two agree, so the last write is of the newest posts. A
// post not there yet is waited for (the job is enqueued ahead of its
// commit), up to GiveUpAfter; one deleted has left the range.
func (s *Service) Keep(ctx context.Context, t KeepTask) (string, error) {
	seq, ok := ids.Parse(t.ActivityID)
	if !ok {
		return "malformed task", nil
	}
	var a Activity // its author and whether it is a celebrity's never change
	found, err := s.db.Get(ctx, Key(s.db, t.ActivityID), &a)
	switch {
	case err != nil:
		return "", fmt.Errorf("activities.Keep(%s): %w", t.ActivityID, err)
	case !found && s.now().Sub(ids.Time(seq)) < s.cfg.GiveUpAfter:
		return "", ErrNotYet
	case !found:
		return "no such activity", nil
	case !a.Celebrity:
		return "not a celebrity's post", nil
	}
	if err := s.writeNewest(ctx, a.UserID); err != nil {
		return "", fmt.Errorf("activities.Keep(%s): %w", t.ActivityID, err)
	}
	return "", nil
}

// writeNewest writes celebrity's newest posts as their range has them,
// and again while the range read after a write has changed.
func (s *Service) writeNewest(ctx context.Context, celebrity string) error {
	key := CelebrityPostsKey(s.db, celebrity)
	kept, err := s.newestCelebrityPosts(ctx, celebrity)
	for round := 0; err == nil; round++ {
		if round == maxKeepRounds {
			return fmt.Errorf("overtaken %d times: the author posts faster than it writes", round)
		}
		if err = s.db.Put(ctx, key, &kept); err != nil {
			break
		}
		var now CelebrityPosts
		if now, err = s.newestCelebrityPosts(ctx, celebrity); err == nil && slices.Equal(now.IDs, kept.IDs) && now.More == kept.More {
			return nil
		}
		kept = now
	}
	return err
}

// maxKeepRounds is how many times at most a KeepJob writes a celebrity's
// newest posts, each overtaken by a newer post, before it gives its task
// back to the queue.
const maxKeepRounds = 5

// newestCelebrityPosts reads user's newest posts by one keys-only query
// of their place c:{user}: the newest KeptCelebrityPosts, and whether
// there are more.
func (s *Service) newestCelebrityPosts(ctx context.Context, user string) (CelebrityPosts, error) {
	q := order.Range(s.db.Query(KindActivity), feedsProp, celebrityFeed(user), 0, order.Place{}).KeysOnly().Limit(KeptCelebrityPosts + 1)
	keys, err := s.db.GetAll(ctx, q, nil)
	if err != nil {
		return CelebrityPosts{}, err
	}
	var c CelebrityPosts
	for _, k := range keys[:min(len(keys), KeptCelebrityPosts)] {
		c.IDs = append(c.IDs, k.Name)
	}
	c.More = len(keys) > KeptCelebrityPosts
	return c, nil
}

// celebrityPost reports whether a celebrity's post of visibility is
// merged into their followers' homes: one that reaches them all alike,
// not for the mentioned alone, not a repost (which a follower may take
// none of), nor a reply to someone else (which reaches those who follow
// that person too).
func celebrityPost(visibility, repostOf, answers string) bool {
	return visibility != MentionedOnly && repostOf == "" && answers == ""
}

// homeItem is one activity of a home page.
type homeItem struct {
	seq int64
	key *datastore.Key
	// follow: it reached the page by a follow of its author (a chunk of
	// their followers, or a celebrity's post), which lets the reader see
	// what is for followers.
	follow bool
}

// within returns the posts kept that are in the window of a page from
// from, in the page's order, and whether they are all the window's that
// a page of n needs (every one of the window, or its newest n); edge,
// when not 0, is the seq past which they say nothing (the oldest kept:
// older ones were let go), where the page stops.
func (c *CelebrityPosts) within(db *store.DB, w window, from order.Place, n int) (list []homeItem, edge int64, ok bool) {
	var oldest int64
	for _, id := range c.IDs {
		seq, good := ids.Parse(id)
		if !good {
			continue
		}
		if oldest == 0 || seq < oldest {
			oldest = seq
		}
		if w.holds(seq, from) {
			list = append(list, homeItem{seq: seq, key: Key(db, id), follow: true})
		}
	}
	sortItems(list, w.up)
	switch {
	case !c.More || oldest != 0 && oldest <= w.since+1:
		return list, 0, true // every post of the window is kept
	case !w.up && oldest != 0 && len(list) >= n:
		return list, oldest, true // the newest n of the window are kept
	}
	return nil, 0, false
}

// holds reports whether a page of w from from may hold seq.
func (w window) holds(seq int64, from order.Place) bool {
	if seq <= w.since {
		return false
	}
	return w.up || from.Seq == 0 || seq < from.Seq
}

// sortItems sorts a page's items in its order: newest first, or, up,
// oldest first.
func sortItems(items []homeItem, up bool) {
	slices.SortStableFunc(items, func(a, b homeItem) int {
		if up {
			return cmp.Compare(a.seq, b.seq)
		}
		return cmp.Compare(b.seq, a.seq)
	})
}

// celebritiesOf returns the celebrities reader follows, when the
// deployment has celebrities (nil: none).
func (s *Service) celebritiesOf(ctx context.Context, reader string) ([]string, error) {
	if s.cfg.CelebrityFollowers <= 0 {
		return nil, nil
	}
	return graph.CelebritiesFollowed(ctx, s.db, reader)
}

// withCelebrities merges into a home page's items (home, in the page's
// order, the audience range's; homeMore says the range has more past
// them) the posts of the celebrities the reader follows in the page's
// window, and returns the page's items from offset, count of them at
// most, and whether more follow.
func (s *Service) withCelebrities(ctx context.Context, celebs []string, w window, from order.Place, home []homeItem, homeMore bool, offset, count int) ([]homeItem, bool, error) {
	n := offset + count
	all := slices.Clone(home)
	// edges are where the sources that stopped short stopped: the page
	// goes no further than the nearest, or it would skip what lies past
	// it.
	var edges []int64
	if homeMore && len(home) > 0 {
		edges = append(edges, home[len(home)-1].seq)
	}
	kept := make([]CelebrityPosts, len(celebs))
	l := s.db.PageLookup()
	for i, c := range celebs {
		l.Add(CelebrityPostsKey(s.db, c), &kept[i])
	}
	if err := l.Run(ctx); err != nil {
		return nil, false, fmt.Errorf("activities: celebrities' posts: %w", err)
	}
	for i, c := range celebs {
		list, edge, ok := kept[i].within(s.db, w, from, n)
		if !ok {
			// Past what is kept: the range of the celebrity's posts.
			list, more, err := s.celebrityRange(ctx, c, w, from, n)
			if err != nil {
				return nil, false, err
			}
			if all = append(all, list...); more {
				edges = append(edges, list[len(list)-1].seq)
			}
			continue
		}
		all = append(all, list...)
		if edge != 0 {
			edges = append(edges, edge)
		}
	}
	sortItems(all, w.up)
	// Each activity once: a follower may be in a chunk of a tag's or of
	// the mentioned beside being a celebrity's follower.
	var out []homeItem
	at := map[string]int{}
	for _, it := range all {
		if i, ok := at[it.key.Name]; ok {
			out[i].follow = out[i].follow || it.follow
			continue
		}
		if past(it.seq, edges, w.up) {
			continue
		}
		at[it.key.Name] = len(out)
		out = append(out, it)
	}
	more := len(edges) > 0
	out = out[min(offset, len(out)):]
	if len(out) > count {
		out, more = out[:count], true
	}
	return out, more, nil
}

// past reports whether seq lies past the nearest of edges, in a page's
// order.
func past(seq int64, edges []int64, up bool) bool {
	for _, e := range edges {
		if !up && seq < e || up && seq > e {
			return true
		}
	}
	return false
}

// celebrityRange reads up to n of celebrity's posts in a page's window,
// in its order, by a keys-only range of their place c:{celebrity}, and
// says whether there are more.
func (s *Service) celebrityRange(ctx context.Context, celebrity string, w window, from order.Place, n int) ([]homeItem, bool, error) {
	qs := s.feedQueries(KindActivity, feedsProp, []string{celebrityFeed(celebrity)}, w, from)
	keys, _, _, more, err := order.Page[Activity](ctx, s.db, []*datastore.Query{qs[0].KeysOnly()}, true, place(w, placeOfActivity), n, 0)
	if err != nil {
		return nil, false, fmt.Errorf("activities: posts of celebrity %s: %w", celebrity, err)
	}
	list := make([]homeItem, 0, len(keys))
	for _, k := range keys {
		seq, _ := ids.Parse(k.Name)
		list = append(list, homeItem{seq: seq, key: k, follow: true})
	}
	return list, more && len(list) > 0, nil
}

// ReadCelebrityPost adds activity id to a lookup; what it returns says,
// once the lookup has run, whether the activity is a celebrity's post:
// for the convergence checker, as no answer tells it.
func ReadCelebrityPost(l *store.Lookup, id string) func() bool {
	a := &Activity{}
	l.Add(Key(l.DB(), id), a)
	return func() bool { return a.Celebrity }
}
