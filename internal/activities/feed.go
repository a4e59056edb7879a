package activities

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/derrors"
	"socialstream/internal/filters"
	"socialstream/internal/graph"
	"socialstream/internal/ids"
	"socialstream/internal/order"
	"socialstream/internal/store"
	"socialstream/internal/tags"
)

// Feed selectors.
const (
	Self     = "@self"
	Friends  = "@friends"
	Mentions = "@mentions"
	All      = "@all"
	// Pinned lists what a person pins to the top of their page, the last
	// pinned first (unpaged: at most MaxPins).
	Pinned = "@pinned"
	// TagPrefix starts the selector of a tag's feed: @tag:name.
	TagPrefix = "@tag:"
	// ListPrefix starts the selector of a list's timeline, its owner's
	// alone: @list:id (package graph's lists).
	ListPrefix = "@list:"
)

// FeedRequest asks for one page of a feed.
type FeedRequest struct {
	Viewer   string
	Selector string // Self, Friends, Mentions, All, TagPrefix and a tag, or a group id
	UserID   string // whose feed, for Self, Friends and Mentions
	AppID    string // only this app's activities; empty or @app for all
	// Since, if set, is an activity id: only the activities newer than
	// it (what is new since a reader last looked), newest first.
	Since string
	// Before, if set, is an activity id: the page starts below it, as a
	// cursor would (Mastodon's max_id). A cursor, if given, wins.
	Before string
	// After, if set, is an activity id: the page is the one just above
	// it (Mastodon's min_id), newest first, with no page after it.
	After string
	Page  store.PageRequest
	// Only, if set, keeps some of what the feed holds (Mastodon's
	// exclude_replies, only_media, exclude_reblogs).
	Only Only
}

// Only says what of a feed a page keeps.
type Only struct {
	// NoReplies leaves out replies to someone else (a thread of one's
	// own stays); WithMedia keeps those with pictures alone; NoReposts
	// leaves out reposts.
	NoReplies, WithMedia, NoReposts bool
}

// keeps decides whether a page that asks o shows v.
func (o Only) keeps(v View) bool {
	switch {
	case o.NoReplies && v.InReplyTo != "" && v.InReplyToUserID != v.UserID:
		return false
	case o.WithMedia && len(v.MediaItems) == 0:
		return false
	case o.NoReposts && v.RepostOf != nil:
		return false
	}
	return true
}

// maxOnlyRounds bounds the ranges one page of a feed reads to fill
// itself: past them, it is short, with the cursor of what follows.
const maxOnlyRounds = 8

// window bounds a feed's range: newer than since (0: no bound) and,
// without a cursor, older than before (0: no bound).
type window struct {
	since, before int64
	// up reads the range oldest first from since: the page just above it.
	up bool
}

var (
	errOwnFeedOnly = derrors.New(derrors.PermissionDenied, "@friends and @mentions are visible to their owner only")
	errAppFilter   = derrors.New(derrors.InvalidArgument, "an appId filter applies to @self and @all only")
)

// Feed returns one page of a feed, newest first, and the cursor of the next.
//
// Every feed is one range query on one index (its places; @all reads
// the ranges of its four shards at once) and one batch lookup (of the
// authors, and for a group feed the group and the viewer's membership
// too); the home feed, a keys-only query on the audience entities, adds
// one batch lookup of the activities themselves, and, with celebrities
// (Config.CelebrityFollowers), a keys-only query of those its reader
// follows, whose newest posts it merges in (celebrity.go).
func (s *Service) Feed(ctx context.Context, r FeedRequest) ([]View, string, error) {
	if r.Selector == Pinned || r.Page.Count <= 0 {
		return s.feed(ctx, r)
	}
	// What a page leaves out (what Only does not keep, and what the
	// page's decision hides: a block, a mute, an exclusive list's member)
	// is decided as each range is read, and the page reads on, a range
	// of what it still lacks at a time, until it holds Page.Count or the
	// feed ends: short only at the feed's end (or after maxOnlyRounds
	// ranges, with the cursor of what follows).
	var out []View
	want := r.Page.Count
	for round := 0; ; round++ {
		r.Page.Count = want - len(out)
		vs, next, err := s.feed(ctx, r)
		if err != nil {
			return nil, "", err
		}
		if out == nil {
			// The first range's views, kept in place: a view is large,
			// and most pages keep all of them.
			out = slices.DeleteFunc(vs, func(v View) bool { return !r.Only.keeps(v) })
		} else {
			for _, v := range vs {
				if r.Only.keeps(v) {
					out = append(out, v)
				}
			}
		}
		if len(out) >= want || next == "" || r.After != "" || round+1 == maxOnlyRounds {
			if out == nil {
				out = []View{}
			}
			return out, next, nil
		}
		r.Page.Cursor, r.Page.Offset = next, 0
	}
}

// feed is Feed without Only.
func (s *Service) feed(ctx context.Context, r FeedRequest) ([]View, string, error) {
	if r.Selector == Pinned {
		return s.pinnedFeed(ctx, r)
	}
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
	w, sinceTag, err := windowOf(r)
	if err != nil {
		return nil, "", err
	}
	switch r.Selector {
	case Self:
		prefix := selfFeed(r.UserID, app)
		// Read by someone else: what they may see, by the query.
		tag := "self:" + r.UserID + ":" + app + sinceTag
		var followed map[string]bool // whom the viewer is known to follow
		if r.Viewer != r.UserID {
			audience := Public
			if r.Viewer != "" {
				l := s.db.Lookup()
				follows := graph.Follows(l, r.Viewer, r.UserID)
				if err := l.Run(ctx); err != nil {
					return nil, "", fmt.Errorf("activities: does %s follow %s: %w", r.Viewer, r.UserID, err)
				}
				if follows.Found() {
					audience, followed = FollowersOnly, map[string]bool{r.UserID: true}
				}
			}
			prefix = pageFeed(r.UserID, app, audience)
			tag += ":" + audience
		}
		// A person's own feed shows them even to someone who mutes them,
		// as their page.
		where := filters.Account // a person's page, read by someone else
		if r.Viewer == r.UserID {
			where = ""
		}
		return s.activityFeed(ctx, r.Viewer, []string{prefix}, w, tag, r.Page, look{where: where, followed: followed})
	case All:
		prefixes := make([]string, PublicShards)
		for i := range prefixes {
			prefixes[i] = publicFeed(i, app)
		}
		return s.activityFeed(ctx, r.Viewer, prefixes, w, "all:"+app+sinceTag, r.Page, look{quiet: true, where: filters.Public})
	case Mentions:
		if r.UserID != r.Viewer {
			return nil, "", errOwnFeedOnly
		}
		return s.activityFeed(ctx, r.Viewer, []string{mentionFeed(r.UserID)}, w, "mentions:"+r.UserID+sinceTag, r.Page, look{quiet: true, where: filters.Notifications})
	case Friends:
		if r.UserID != r.Viewer {
			return nil, "", errOwnFeedOnly
		}
		return s.homeFeed(ctx, r.Viewer, r.Viewer, w, sinceTag, r.Page)
	default:
		return s.namedFeed(ctx, r, w, sinceTag)
	}
}

// namedFeed reads a page of a feed its selector names: a list's, a
// tag's or a group's.
func (s *Service) namedFeed(ctx context.Context, r FeedRequest, w window, sinceTag string) ([]View, string, error) {
	if list, ok := strings.CutPrefix(r.Selector, ListPrefix); ok {
		if err := graph.OwnsList(ctx, s.db, r.Viewer, list); err != nil {
			return nil, "", err
		}
		return s.homeFeed(ctx, r.Viewer, graph.Reader(list), w, sinceTag, r.Page)
	}
	if name, ok := strings.CutPrefix(r.Selector, TagPrefix); ok {
		tag, err := tags.Normalize(name)
		if err != nil {
			return nil, "", err
		}
		return s.activityFeed(ctx, r.Viewer, []string{tagFeed(tag)}, w, "tag:"+tag+sinceTag, r.Page, look{quiet: true, where: filters.Tags})
	}
	group := r.Selector
	if _, ok := ids.Parse(group); !ok {
		return nil, "", derrors.New(derrors.NotFound, "unknown feed selector "+group)
	}
	return s.activityFeed(ctx, r.Viewer, []string{groupFeed(group)}, w, "group:"+group+sinceTag, r.Page, look{group: group, quiet: true, where: filters.Home})
}

// activityFeed reads a page of the feed of the activities in the ranges of
// prefixes, newer
// than since; for a group's feed, group names the group whose access the
// batch lookup checks too. quiet leaves out the activities of the people
// the viewer mutes. One range is one query of the activities themselves;
// more (the shards of @all) are keys-only queries, merged, and one batch
// lookup of the activities of the page.
func (s *Service) activityFeed(ctx context.Context, viewer string, prefixes []string, w window, tag string, p store.PageRequest, lk look) ([]View, string, error) {
	from, err := w.from(tag, p.Cursor)
	if err != nil {
		return nil, "", err
	}
	qs := s.feedQueries(KindActivity, feedsProp, prefixes, w, from)
	// Keys alone, and the activities through the instance's cache, when
	// there is one: a query bills a read for each activity it returns.
	keysOnly := len(qs) > 1 || s.db.Cache() != nil
	if keysOnly {
		for i := range qs {
			qs[i] = qs[i].KeysOnly()
		}
	}
	keys, vals, last, more, err := order.Page[Activity](ctx, s.db, qs, keysOnly, place(w, placeOfActivity), p.Count, p.Offset)
	if err != nil {
		return nil, "", fmt.Errorf("activities: feed %s: %w", tag, err)
	}
	if w.up {
		slices.Reverse(keys)
		slices.Reverse(vals)
		more = false
	}
	var acts []*Activity
	if keysOnly {
		// An activity deleted since the query is left out.
		if keys, acts, err = s.loadPage(ctx, keys); err != nil {
			return nil, "", fmt.Errorf("activities: feed %s: %w", tag, err)
		}
	} else {
		acts = make([]*Activity, len(vals))
		for i := range vals {
			acts[i] = &vals[i]
		}
	}
	lk.hide, lk.cached = true, true
	views, err := s.viewsOf(ctx, viewer, keys, acts, lk)
	if err != nil {
		return nil, "", err
	}
	next := ""
	if more {
		next = order.EncodeCursor(tag, last)
	}
	return views, next, nil
}

// windowOf reads the bounds a request sets, and the tag its since
// gives the feed's cursors. Since narrows a feed to what is newer: the
// lower bound of the range of its places.
func windowOf(r FeedRequest) (window, string, error) {
	var w window
	sinceTag := ""
	if r.Since != "" {
		seq, ok := ids.Parse(r.Since)
		if !ok {
			return w, "", derrors.New(derrors.InvalidArgument, "since must be an activity id")
		}
		w.since, sinceTag = seq, ":since"+r.Since
	}
	if r.Before != "" {
		seq, ok := ids.Parse(r.Before)
		if !ok {
			return w, "", derrors.New(derrors.InvalidArgument, "max_id must be an activity id")
		}
		w.before = seq
	}
	if r.After != "" {
		seq, ok := ids.Parse(r.After)
		if !ok || r.Page.Cursor != "" || r.Page.Offset != 0 {
			return w, "", derrors.New(derrors.InvalidArgument, "min_id must be an activity id, and pages alone")
		}
		w.since, w.up = max(w.since, seq), true
	}
	return w, sinceTag, nil
}

// place is the place function of a page read as w reads it.
func place[T any](w window, f func(*datastore.Key, *T) order.Place) func(*datastore.Key, *T) order.Place {
	if w.up {
		return order.Up(f)
	}
	return f
}

// from returns where a page starts: at its cursor, or else below before.
func (w window) from(tag, cursor string) (order.Place, error) {
	if cursor == "" && w.before > 0 {
		return order.Place{Seq: w.before}, nil
	}
	return order.DecodeCursor(tag, cursor)
}

// homeFeed reads a page of viewer's home feed (reader viewer), or of the
// timeline of a list of theirs (reader the list's, graph.Reader): a
// keys-only range of reader's home places of the audience chunks, and
// one batch lookup of their activities. At home, the members of the
// viewer's exclusive lists are left out (their state says whom). A
// viewer may be in more than one chunk of an activity (a chunk of the
// author's followers and a page of a tag's): they share its place, so
// the activity is shown once, and the next page starts below it. The
// posts of the celebrities the reader follows are merged in (homePage).
// The feed ends at its edge: the range goes no further back, though a
// chunk past it may not be trimmed yet.
func (s *Service) homeFeed(ctx context.Context, viewer, reader string, w window, sinceTag string, p store.PageRequest) ([]View, string, error) {
	tag := "home:" + reader + sinceTag
	from, err := w.from(tag, p.Cursor)
	if err != nil {
		return nil, "", err
	}
	items, last, more, err := s.homePage(ctx, reader, w, from, p)
	if err != nil {
		return nil, "", err
	}
	if w.up {
		slices.Reverse(items)
		more = false
	}
	keys := make([]*datastore.Key, len(items))
	for i, it := range items {
		keys[i] = it.key
	}
	// An activity deleted since is left out: its audience went with it.
	found, list, err := s.loadPage(ctx, keys)
	if err != nil {
		return nil, "", fmt.Errorf("activities: home feed of %s: %w", viewer, err)
	}
	viaFollow := map[string]bool{}
	for _, it := range items {
		viaFollow[it.key.Name] = it.follow
	}
	followed := map[string]bool{}
	for i, k := range found {
		if viaFollow[k.Name] && list[i].Visibility != MentionedOnly {
			followed[list[i].UserID] = true
		}
	}
	views, err := s.viewsOf(ctx, viewer, found, list, look{hide: true, quiet: true, where: filters.Home, followed: followed, home: reader == viewer, cached: true})
	if err != nil {
		return nil, "", err
	}
	next := ""
	if more {
		next = order.EncodeCursor(tag, last)
	}
	return views, next, nil
}

// homePage reads the items of a page of reader's home from from, in the
// page's order: the range of its audience chunks, and, when the reader
// follows celebrities, their posts merged in. It returns the place of
// the last and whether more follow.
func (s *Service) homePage(ctx context.Context, reader string, w window, from order.Place, p store.PageRequest) ([]homeItem, order.Place, bool, error) {
	// The celebrities the reader follows, asked beside the range (none
	// asked when the deployment has none).
	var celebs []string
	celebsRead := make(chan error, 1)
	if s.cfg.CelebrityFollowers > 0 {
		go func() {
			var err error
			celebs, err = s.celebritiesOf(ctx, reader)
			celebsRead <- err
		}()
	} else {
		celebsRead <- nil
	}
	count, offset := p.Count, p.Offset
	if s.cfg.CelebrityFollowers > 0 {
		count, offset = p.Offset+p.Count, 0 // the offset is the merged page's
	}
	edge := s.homeEdge()
	r, err := s.homeRange(ctx, reader, w, edge, from, count, offset)
	if cerr := <-celebsRead; err == nil {
		err = cerr
	}
	if err != nil {
		return nil, order.Place{}, false, fmt.Errorf("activities: home feed of %s: %w", reader, err)
	}
	items, last, more := r.items, r.last, r.more
	switch {
	case len(celebs) > 0:
		if items, more, err = s.withCelebrities(ctx, celebs, bounded(w, edge), from, items, more, p.Offset, p.Count); err != nil {
			return nil, last, false, err
		}
		if len(items) > 0 {
			last = order.Place{Seq: items[len(items)-1].seq}
		}
	case s.cfg.CelebrityFollowers > 0:
		items = items[min(p.Offset, len(items)):]
	}
	return items, last, more, nil
}

// homeAnswers is the family of the kept answers of homes' ranges
// (store.DB.Kept), by reader: the audience chunks are what they are made
// of (PageAnswers).
const homeAnswers = "home"

// PageAnswers are the families of kept answers, by the kind of what they
// are made of, that the instance's cache must be told of
// (store.CacheConfig.Answers).
func PageAnswers() map[string]string { return map[string]string{KindAudience: homeAnswers} }

// homeRange is what one range of a reader's home answered: its items,
// the place of the last and whether more follow.
type homeRange struct {
	items []homeItem
	last  order.Place
	more  bool
}

// homeRange reads count items of reader's home range from offset, in w
// from from: kept by the instance (store.DB.Kept) for the reader's
// latest bounds (a first page's, whatever its size up to keptHomePage),
// and dropped by any write that changes the reader's audience chunks
// (one that adds the reader to them says so: Tx.Touches), so that a
// home read again, when nothing reached it since, makes no query. The
// feed's edge moves with time: a range kept from before, should any of
// its items now be past it, is read again (and not kept: it is dropped
// in its time).
func (s *Service) homeRange(ctx context.Context, reader string, w window, edge int64, from order.Place, count, offset int) (homeRange, error) {
	// A first page of up to keptHomePage reads and keeps keptHomePage:
	// pages of other sizes take it too.
	first := from.Seq == 0 && offset == 0 && !w.up && count > 0 && count <= keptHomePage
	asked := count
	if first {
		count = keptHomePage
	}
	spec := fmt.Sprintf("%d %d %t %d %d %d", w.since, w.before, w.up, from.Seq, count, offset)
	read := func(ctx context.Context) (any, error) {
		b := bounded(w, edge)
		qs := s.feedQueries(KindAudience, homeProp, []string{reader}, b, from)
		for i := range qs {
			qs[i] = qs[i].KeysOnly()
		}
		audKeys, _, last, more, err := order.Page[Audience](ctx, s.db, qs, true, place(b, placeOfChunk), count, offset)
		if err != nil {
			return nil, err
		}
		return &homeRange{items: itemsOf(audKeys), last: last, more: more}, nil
	}
	v, err := s.db.Kept(ctx, homeAnswers, reader, spec, read)
	if err == nil && edge > 0 && slices.ContainsFunc(v.(*homeRange).items, func(it homeItem) bool { return it.seq < edge }) {
		v, err = read(ctx) // kept from before the edge passed some of it
	}
	if err != nil {
		return homeRange{}, err
	}
	r := *v.(*homeRange)
	if first && len(r.items) > asked {
		r.items, r.last, r.more = r.items[:asked], order.Place{Seq: r.items[asked-1].seq}, true
	}
	r.items = slices.Clone(r.items)
	return r, nil
}

// keptHomePage is how many of a home's newest items its kept first page
// holds (Mastodon's largest page): a first page of any size up to it,
// of one reader, reads and keeps that many, and the next of another size
// takes them (an app's poll of 5 and its page of 20, say). A query bills
// a read for up to 1,000 keys alike.
const keptHomePage = 40

// bounded is w within the home feed's edge (0: none): the range goes no
// further back.
func bounded(w window, edge int64) window {
	if edge > 0 {
		w.since = max(w.since, edge-1)
	}
	return w
}

// itemsOf returns the activities a home page's audience chunks
// (audKeys, in the page's order) are of, each once, and whether each came
// by a chunk of its author's followers (named by its number), which says
// the reader follows the author; one of a tag's or of the mentioned does
// not.
func itemsOf(audKeys []*datastore.Key) []homeItem {
	var items []homeItem
	at := map[string]int{}
	for _, k := range audKeys {
		if k.Parent == nil {
			continue
		}
		follow := k.Name != "" && k.Name[0] >= '0' && k.Name[0] <= '9'
		if i, ok := at[k.Parent.Name]; ok {
			items[i].follow = items[i].follow || follow
			continue
		}
		seq, _ := ids.Parse(k.Parent.Name)
		at[k.Parent.Name] = len(items)
		items = append(items, homeItem{seq: seq, key: k.Parent, follow: follow})
	}
	return items
}

// HomeIDs runs the home feed's query for viewer alone, outside any view:
// the ids of up to n activities they see, newest first, from offset. For
// the bench's floor and probes, which measure the Datastore work a feed
// cannot avoid.
func HomeIDs(ctx context.Context, db *store.DB, viewer string, offset, n int) ([]string, error) {
	q := order.Range(db.Query(KindAudience), homeProp, viewer, 0, order.Place{}).KeysOnly().Offset(offset)
	keys, _, err := db.KeysFrom(ctx, q, "", n)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, k := range keys {
		if k.Parent != nil && !slices.Contains(out, k.Parent.Name) {
			out = append(out, k.Parent.Name)
		}
	}
	return out, nil
}

// LookupBare does a feed's two batch lookups for the activities with the
// given ids and nothing more: the activities, then their authors, counts,
// viewer's likes (through likes), blocks and mutes. It returns how many
// activities it found. For the bench's floor.
func LookupBare(ctx context.Context, db *store.DB, viewer string, idList []string, likes Likes) (int, error) {
	keys := make([]*datastore.Key, len(idList))
	for i, id := range idList {
		keys[i] = Key(db, id)
	}
	s := &Service{db: db, cfg: Config{Likes: likes}, now: time.Now}
	found, acts, err := s.load(ctx, keys)
	if err != nil {
		return 0, err
	}
	// The keys a home feed's second lookup reads: the authors' cards
	// and the viewer's state (and what those cannot answer, by key).
	if _, err := s.viewsOf(ctx, viewer, found, acts, look{hide: true, quiet: true, where: filters.Home}); err != nil {
		return 0, err
	}
	return len(found), nil
}

// AudienceSize counts the distinct ids in an activity's audience chunks.
func AudienceSize(ctx context.Context, db *store.DB, activity string) (int, error) {
	var auds []Audience
	if _, err := db.GetAll(ctx, db.Query(KindAudience).Ancestor(Key(db, activity)), &auds); err != nil {
		return 0, err
	}
	seen := map[string]bool{}
	for _, a := range auds {
		for _, id := range a.FollowerIDs {
			seen[id] = true
		}
	}
	return len(seen), nil
}
