package activities

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/accounts"
	"socialstream/internal/blocks"
	"socialstream/internal/filters"
	"socialstream/internal/graph"
	"socialstream/internal/groups"
	"socialstream/internal/media"
	"socialstream/internal/mutes"
	"socialstream/internal/policy"
	"socialstream/internal/polls"
	"socialstream/internal/store"
	viewerstate "socialstream/internal/viewer"
)

// A page of activities, read for its viewer: the activities a feed's
// query found (or a list of ids), with their authors, their counts, what
// they share, their polls, and the viewer's likes, reposts, bookmarks,
// blocks and mutes, in one lookup of a few rounds; then, for each
// activity, whether the page shows it (decideShown) and its view.

// views turns activities into views with their authors, counts and the
// viewer's likes, fetched in one batch lookup; for a group's feed, the
// lookup checks that the viewer may see the group too. The same lookup
// reads the blocks between the viewer and each author: an activity of
// someone the viewer blocks, or who blocks the viewer, is left out (so a
// page may hold fewer than asked for).
func (s *Service) views(ctx context.Context, viewer string, keys []*datastore.Key, acts []*Activity, group string) ([]View, error) {
	return s.viewsOf(ctx, viewer, keys, acts, look{group: group, hide: true})
}

// look says how a page is read.
type look struct {
	group string // a group's feed: the lookup checks the viewer's access
	// hide leaves out the activities of people with a block with the
	// viewer; quiet those of the people the viewer mutes.
	hide, quiet bool
	where       string // the viewer's filters' context (package filters)
	// followed names authors the viewer is known to follow (what the
	// feed's query says), whose limited accounts need no read.
	followed map[string]bool
	// known are authors read already (a person's card, for their pins),
	// which the page does not read again.
	known map[string]*accounts.Record
	// home is the viewer's home feed: the members of their exclusive
	// lists are left out.
	home bool
	// cached: a feed's page, whose activities, shared activities and
	// authors are read through the instance's cache (store.PageLookup).
	cached bool
}

// viewsOf is views, leaving out the activities of people with a block
// with the viewer only if lk.hide, and, if lk.quiet, those of the people
// the viewer mutes (read in the same lookup). A repost comes with the
// activity it shares, read in the same lookup too (by the ids the repost
// holds): one whose activity is gone, or by someone the viewer has a block
// with or (if quiet) mutes, is left out.
//
// What moderation did is read from what the lookup reads anyway: an
// activity taken down (Removed), or by a suspended author (their card),
// is not there. An activity of a limited author is not in @all or tag
// feeds, and elsewhere reaches only the author's followers: those the
// feed's query says follow (lk.followed) need nothing more, anyone else
// has their follow read in a further round (only for a page that holds a
// limited author's activity).
func (s *Service) viewsOf(ctx context.Context, viewer string, keys []*datastore.Key, acts []*Activity, lk look) ([]View, error) {
	p, err := s.readPage(ctx, viewer, keys, acts, lk)
	if err != nil {
		return nil, err
	}
	var pictured []*Activity
	for i, a := range acts {
		pictured = append(pictured, a, p.shared[i])
	}
	mint, err := s.minter(ctx, pictured...)
	if err != nil {
		return nil, err
	}
	out := make([]View, 0, len(acts))
	for i, a := range acts {
		show, warn := decideShown(p.facts(i), p.filtered)
		if !show {
			continue
		}
		v := p.view(keys[i].Name, a, p.readingOf[i], mint)
		if a.RepostOf != "" {
			orig := p.view(a.RepostOf, p.shared[i], p.sharedRead[i], mint)
			v.RepostOf = &orig
		}
		v.Filtered = warn
		out = append(out, v)
	}
	return out, nil
}

// page is what viewsOf read for a page of activities.
type page struct {
	viewer  string
	lk      look
	now     time.Time
	acts    []*Activity
	own     *viewerstate.Ref
	authors map[string]*accounts.Record
	people  []string
	between map[string]*blocks.Between
	muted   map[string]*mutes.Ref
	// follows are the follows of limited authors the feed does not
	// vouch for, read once their cards say they are limited.
	follows   map[string]store.Ref
	readings  []*reading
	readingOf []*reading
	// A repost's shared activity, whether it is there, and its reading.
	shared      []*Activity
	sharedFound []store.Ref
	sharedRead  []*reading
	filtered    *filters.Set
}

// reading is what one activity shows a viewer, once the lookup has run.
type reading struct {
	id                          string
	sums                        func() (int64, int64)
	liked, reposted, bookmarked store.Ref
	// poll, for an activity with a poll, answers its view once read.
	poll func(now time.Time, own bool) *polls.View
}

// readPoll adds to l the counts of a's poll, if it has one, and
// viewer's vote in it.
func (r *reading) readPoll(l *store.Lookup, a *Activity, viewer string) {
	if a.Poll != nil {
		r.poll = polls.Read(l, a.Poll, viewer)
	}
}

func (p *page) public() bool { return p.lk.where == filters.Public || p.lk.where == filters.Tags }

func (p *page) person(l *store.Lookup, id string) {
	if p.authors[id] == nil {
		if p.authors[id] = p.lk.known[id]; p.authors[id] == nil {
			p.authors[id] = accounts.Read(l, id)
		}
		p.people = append(p.people, id)
	}
}

func (p *page) reading(id string, sums func() (int64, int64)) *reading {
	r := &reading{id: id, sums: sums}
	p.readings = append(p.readings, r)
	return r
}

// readPage reads, in one lookup of a few rounds, what a page of acts
// shows viewer.
func (s *Service) readPage(ctx context.Context, viewer string, keys []*datastore.Key, acts []*Activity, lk look) (*page, error) {
	p := &page{viewer: viewer, lk: lk, now: s.now(), acts: acts, authors: map[string]*accounts.Record{},
		between: map[string]*blocks.Between{}, muted: map[string]*mutes.Ref{}, follows: map[string]store.Ref{},
		readingOf: make([]*reading, len(acts)), shared: make([]*Activity, len(acts)),
		sharedFound: make([]store.Ref, len(acts)), sharedRead: make([]*reading, len(acts))}
	l := s.db.Lookup()
	if lk.cached {
		l = s.db.PageLookup()
	}
	// The viewer's own state, read once: it answers the blocks, mutes,
	// likes, reposts and bookmarks it knows; what it does not (lists grown past
	// their bounds, activities older than its likes reach) is read by key
	// in a further round.
	if viewer != "" {
		p.own = viewerstate.Read(l, viewer)
	}
	for i, a := range acts {
		p.person(l, a.UserID)
		p.readingOf[i] = p.reading(keys[i].Name, counts(a))
		p.readingOf[i].readPoll(l, a, viewer)
		if a.RepostOf != "" {
			p.person(l, a.RepostOfUser)
			p.shared[i] = &Activity{}
			p.sharedFound[i] = l.Add(Key(s.db, a.RepostOf), p.shared[i])
			p.sharedRead[i] = p.reading(a.RepostOf, counts(p.shared[i]))
		}
	}
	l.Then(func() { // the polls of what the reposts share, once read
		for i, sh := range p.shared {
			if sh != nil && p.sharedFound[i].Found() {
				p.sharedRead[i].readPoll(l, sh, viewer)
			}
		}
	})
	if viewer != "" {
		l.Then(func() { s.readViewerOf(l, p) })
	}
	if viewer != "" && !p.public() {
		l.Then(func() {
			for _, id := range p.people {
				if id != viewer && !lk.followed[id] && p.authors[id].Standing().Limited {
					p.follows[id] = graph.Follows(l, viewer, id)
				}
			}
		})
	}
	var access *groups.Access
	if lk.group != "" {
		access = groups.ReadAccess(l, lk.group, viewer)
	}
	if err := l.Run(ctx); err != nil {
		return nil, fmt.Errorf("activities: lookup: %w", err)
	}
	if access != nil {
		if err := access.Check(); err != nil {
			return nil, err
		}
	}
	// The viewer's keyword filters for this feed, from the state read
	// above: hidden, or shown with what matched.
	if viewer != "" {
		p.filtered = filters.Active(p.own.Filters(), lk.where, p.now)
	}
	return p, nil
}

// readViewerOf adds to l what the viewer's state does not answer: blocks
// and mutes of the page's people, likes, reposts and bookmarks of its
// activities.
func (s *Service) readViewerOf(l *store.Lookup, p *page) {
	if !p.own.KnowsPeople() {
		for _, id := range p.people {
			if id == p.viewer {
				continue
			}
			if p.lk.hide {
				p.between[id] = blocks.ReadBetween(l, p.viewer, id)
			}
			if p.lk.quiet {
				p.muted[id] = mutes.Read(l, p.viewer, id)
			}
		}
	}
	for _, r := range p.readings {
		if !p.own.KnowsActivity(r.id) {
			if s.cfg.Likes != nil {
				r.liked = s.cfg.Likes.Liked(l, r.id, p.viewer)
			}
			r.reposted = l.Add(RepostKey(s.db, r.id, p.viewer), &Repost{})
		}
		if !p.own.KnowsBookmark(r.id) && s.cfg.Bookmarks != nil {
			r.bookmarked = s.cfg.Bookmarks.Kept(l, p.viewer, r.id)
		}
	}
}

// hidden says whether the viewer's blocks or mutes keep user's
// activities from the page.
func (p *page) hidden(user string) bool {
	if p.viewer == "" || user == p.viewer {
		return false
	}
	if p.lk.home && p.own.Excludes(user) {
		return true
	}
	if p.lk.hide && p.ofBlockedDomain(user) {
		return true
	}
	if p.own.KnowsPeople() {
		return p.lk.hide && p.own.Blocked(user) || p.lk.quiet && p.own.Mutes(user, p.now)
	}
	b := p.between[user]
	return b != nil && b.Any() || p.muted[user].ActiveAt(p.now)
}

// ofBlockedDomain reports whether user, an author the page read, is a
// person of a domain the viewer blocks.
func (p *page) ofBlockedDomain(user string) bool {
	rec := p.authors[user]
	if rec == nil || !p.own.BlocksDomains() {
		return false
	}
	author, ok := rec.Person()
	return ok && p.own.BlocksDomainOf(author.PreferredUsername)
}

func (p *page) account(user string) policy.Account {
	rec := p.authors[user]
	return rec.Standing().Account(user, rec.Exists())
}

// facts are what decideShown takes of activity i.
func (p *page) facts(i int) shownFacts {
	a := p.acts[i]
	f := shownFacts{viewer: p.viewer, feed: policy.Personal, post: a.post(), author: p.account(a.UserID),
		followed: p.lk.followed[a.UserID] || p.follows[a.UserID].Found(), hidden: p.hidden(a.UserID),
		texts: []string{a.SpoilerText, a.Title, a.Body}}
	if p.public() {
		f.feed = policy.PublicFeed
	}
	if a.RepostOf != "" {
		sh, by := p.shared[i], a.RepostOfUser
		f.repost, f.sharedFound = true, p.sharedFound[i].Found()
		f.shared, f.sharedAuthor = sh.post(), p.account(by)
		f.sharedFollowed, f.sharedHidden = p.lk.followed[by] || p.follows[by].Found(), p.hidden(by)
		f.texts = append(f.texts, sh.SpoilerText, sh.Title, sh.Body)
	}
	return f
}

func (p *page) view(id string, a *Activity, r *reading, mint media.Minter) View {
	var author *accounts.Person
	if person, ok := p.authors[a.UserID].Person(); ok {
		author = &person
	}
	likes, comments := r.sums()
	liked, reposted, bookmarked := r.liked.Found(), r.reposted.Found(), r.bookmarked.Found()
	if p.viewer != "" && p.own.KnowsActivity(id) {
		liked, reposted = p.own.Likes(id), p.own.Reposts(id)
	}
	if p.viewer != "" && p.own.KnowsBookmark(id) {
		bookmarked = p.own.Bookmarks(id)
	}
	v := toView(id, a, author, likes, comments, liked)
	v.RepostedByViewer, v.Bookmarked = reposted, bookmarked
	v.Pinned = p.authors[a.UserID].Pins(id)
	v.MediaItems = pictures(mint, a.Media)
	v.Card = cardView(mint, a.Card)
	if r.poll != nil {
		v.Poll = r.poll(p.now, a.UserID == p.viewer)
	}
	return v
}

// shownFacts is what decides whether a page shows one activity.
type shownFacts struct {
	viewer   string
	feed     policy.Feed
	post     policy.Post
	author   policy.Account
	followed bool // the viewer follows its author (the feed says so, or a read)
	hidden   bool // by the viewer's blocks or mutes
	// A repost's shared activity, its author's, and what the viewer does
	// of them.
	repost, sharedFound          bool
	shared                       policy.Post
	sharedAuthor                 policy.Account
	sharedFollowed, sharedHidden bool
	texts                        []string // what the viewer's filters match
}

// decideShown decides whether a page shows an activity, and what of the
// viewer's filters it matched to warn of.
func decideShown(f shownFacts, filtered *filters.Set) (bool, []filters.Match) {
	switch {
	case f.hidden, policy.Moderated(f.viewer, f.feed, f.post, f.author, f.followed):
		return false, nil
	case f.repost && (!f.sharedFound || f.sharedHidden || policy.Moderated(f.viewer, f.feed, f.shared, f.sharedAuthor, f.sharedFollowed)):
		return false, nil
	case f.post.Author == f.viewer:
		return true, nil // one's own are not filtered
	}
	hide, warn := filtered.Apply(f.texts...)
	return !hide, warn
}
