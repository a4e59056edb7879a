package converge

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"socialstream/internal/ids"
	"socialstream/internal/media"
)

// check compares every feed and count with the oracle, under the model's
// lock: the feeds, the activities' counts (from @all), the home markers,
// people's counts, requests and notifications, app data, and groups.
func (r *runner) check(ctx context.Context, rep *Report) error {
	m := r.m
	m.mu.Lock()
	defer m.mu.Unlock()
	o := r.oracle()
	rep.Users, rep.Activities, rep.Groups = len(o.people), len(o.live), len(m.groups)
	r.checkHidden(ctx, o.people)
	heirs, err := r.heirs(ctx, rep)
	if err != nil {
		return err
	}
	o.heirs = heirs
	if o.celebrity, err = r.celebrityPosts(ctx, o.live); err != nil {
		return err
	}
	rep.CelebrityPosts = len(o.celebrity)
	if err := o.readRemote(ctx, rep); err != nil {
		return err
	}
	// The other server's people become celebrities here as anyone does:
	// which of their Notes kept are celebrities' is known once their ids
	// here are (readRemote).
	remote, err := r.celebrityPosts(ctx, o.remoteLive)
	if err != nil {
		return err
	}
	maps.Copy(o.celebrity, remote)
	rep.Remote.Celebrity = len(remote)
	all, err := o.checkFeeds(ctx, rep)
	if err != nil {
		return err
	}
	if err := r.checkPictureObjects(ctx, all); err != nil {
		return err
	}
	o.checkActivities(ctx, all, rep)
	for _, check := range []func(context.Context, *Report) error{o.checkMarkers, o.checkPeople, o.checkPins, o.checkBookmarks, o.checkPolls, o.checkCards, o.checkConversations, o.checkTrends, o.checkThreads, o.checkAppData, o.checkGroups, o.checkPush, o.checkLater, o.checkFarFollowers} {
		if err := check(ctx, rep); err != nil {
			return err
		}
	}
	return nil
}

// oracle is what the model says the service must show, worked out once
// for a check.
type oracle struct {
	r      *runner
	m      *model
	live   []*post // posts neither deleted nor removed
	people []*user // those whose accounts live, and may sign in
	// Every author's posts, newest first, and each post's place there.
	byAuthor map[string][]*post
	rank     map[string]int
	// What each activity's counts must be.
	likes, comments, reposts map[string]int64
	followWin                window
	// heirs are the new owners of the groups whose owners are gone.
	heirs map[string]*user
	// celebrity are the live posts that are celebrities' (celebrities.go).
	celebrity map[string]bool
	// remoteLive are the other server's Notes kept here and not deleted,
	// remoteByID by their ids here (remote_oracle.go).
	remoteLive []*post
	remoteByID map[string]*post
}

func (r *runner) oracle() *oracle {
	m := r.m
	o := &oracle{r: r, m: m, byAuthor: map[string][]*post{}, rank: map[string]int{},
		likes: map[string]int64{}, comments: map[string]int64{}, reposts: map[string]int64{}}
	for _, p := range m.posts {
		if !p.deleted && !m.hidden(p) {
			o.live = append(o.live, p) // a removed post must be nowhere: no feed must show it
		}
		o.byAuthor[p.author] = append(o.byAuthor[p.author], p)
	}
	for _, u := range m.users {
		if !u.deleted && !m.suspended[u.id] {
			o.people = append(o.people, u)
		}
	}
	for _, ps := range o.byAuthor {
		slices.SortFunc(ps, func(a, b *post) int {
			switch {
			case a.id == b.id:
				return 0
			case newerOrSame(a.id, b.id):
				return -1
			}
			return 1
		})
		for i, p := range ps {
			o.rank[p.id] = i
		}
	}
	// A suspended person's likes and comments are in no count.
	for k, on := range m.likes {
		if on && !m.deleted(k.b) && !m.suspended[k.b] {
			o.likes[k.a]++
		}
	}
	for _, c := range m.comments {
		if !c.deleted && !m.suspended[c.author] {
			o.comments[c.activity]++
		}
	}
	for _, p := range o.live {
		if p.repostOf != "" {
			o.reposts[p.repostOf]++
		}
	}
	o.followWin = r.window(r.cfg.CopyLimit, o.byAuthor, o.rank)
	return o
}

func (o *oracle) violate(format string, args ...any) {
	o.m.violations = append(o.m.violations, fmt.Sprintf(format, args...))
}

// A rule of a feed: whether a post may or must be in it.
type rule func(p *post) presence

func exact(ok func(p *post) bool) rule {
	return func(p *post) presence {
		if ok(p) {
			return mayIn
		}
		return mayOut
	}
}

// unblocked: a feed leaves out the activities of people its reader has a
// block with, either way, and (all but their own) of people its reader
// mutes.
func (o *oracle) unblocked(reader string, want rule) rule {
	m := o.m
	return func(p *post) presence {
		if m.between(reader, p.author) || m.mutes[pair{reader, p.author}] ||
			p.repostOf != "" && (m.between(reader, p.sharedAuthor) || m.mutes[pair{reader, p.sharedAuthor}]) {
			return mayOut
		}
		return want(p)
	}
}

// reach: a limited person's posts, and reposts of them, are in no public
// or tag feed but their own reader's, and elsewhere reach their followers
// alone: one who unfollowed keeping the copies may still have them.
func (o *oracle) reach(reader string, public bool, want rule) rule {
	m := o.m
	return func(p *post) presence {
		for _, a := range []string{p.author, p.sharedAuthor} {
			if m.suspended[a] {
				return mayOut // a suspended person's posts are nowhere
			}
			if a == "" || a == reader || !m.limited[a] {
				continue
			}
			if public {
				return mayOut
			}
			if !m.following[pair{reader, a}] {
				if slices.ContainsFunc(m.follows[pair{reader, a}], func(ev event) bool { return !ev.add && ev.keep }) {
					return mayIn | mayOut
				}
				return mayOut
			}
		}
		return want(p)
	}
}

// unfiltered: a reader's keyword filter hides, in every feed but their
// own page, others' posts whose title (or that of what a repost shares)
// names its word.
func (o *oracle) unfiltered(reader string, want rule) rule {
	m := o.m
	return func(p *post) presence {
		f, ok := m.filters[reader]
		if !ok || p.author == reader {
			return want(p)
		}
		text := p.title
		if shared := m.postByID[p.repostOf]; shared != nil {
			text += "\n" + shared.title
		}
		if names(text, f.word) {
			return mayOut
		}
		return want(p)
	}
}

// own: one's own page hides no post of one's own but a repost of someone
// one has a block with.
func (o *oracle) own(reader string, want rule) rule {
	return func(p *post) presence {
		if p.repostOf != "" && o.m.between(reader, p.sharedAuthor) {
			return mayOut
		}
		return want(p)
	}
}

// others is what a feed of others' posts shows reader: filtered, reached
// and unblocked.
func (o *oracle) others(reader string, public bool, want rule) rule {
	return o.unfiltered(reader, o.reach(reader, public, o.unblocked(reader, want)))
}

// feed is one feed, read as its owner (a group's as its owner, a member).
type feed struct {
	name, path, token string
	want              rule
	history           func(p *post) string
	// remote is the rule of the other server's Notes, and reader whose
	// feed it is; nil: they are never in it.
	remote rule
	reader string
}

func (o *oracle) feeds() []feed {
	m := o.m
	var feeds []feed
	for _, u := range o.people {
		feeds = append(feeds,
			feed{name: "@self of " + u.name, path: "/social/rest/activities/@me/@self", token: u.token,
				want: o.reach(u.id, false, o.own(u.id, exact(func(p *post) bool { return p.author == u.id })))},
			feed{name: "@mentions of " + u.name, path: "/social/rest/activities/@me/@mentions", token: u.token,
				want: o.others(u.id, false, exact(func(p *post) bool { return slices.Contains(p.mentions, u.id) }))},
			feed{name: "home (@friends) of " + u.name, path: "/social/rest/activities/@me/@friends", token: u.token,
				want: o.others(u.id, false, o.home(u)), remote: o.others(u.id, false, o.remoteHome(u)), reader: u.id,
				history: func(p *post) string {
					h := describe(m.follows[pair{u.id, p.author}])
					for _, tag := range p.tags {
						h += "; #" + tag + " " + describe(m.tagFollows[pair{u.id, tag}])
					}
					if p.answers != "" && p.answers != p.author {
						h += "; answers " + p.answers + ", followed " + describe(m.follows[pair{u.id, p.answers}])
						if m.gone(p.answers) {
							h += " (their account deleted)"
						}
					}
					return h
				}})
	}
	// Groups whose owners are gone: handed to a member, or deleted with
	// no member left.
	for _, g := range m.groups {
		reader := o.groupReader(g)
		if reader == nil {
			continue
		}
		feeds = append(feeds, feed{name: "feed of group " + g.title, path: "/social/rest/activities/@me/" + g.id, token: reader.token,
			want: o.others(reader.id, false, func(p *post) presence {
				if !p.public() {
					return mayOut // group copies are of public posts alone
				}
				return presenceOf(p, m.members[pair{g.id, p.author}], o.followWin)
			}),
			history: func(p *post) string { return describe(m.members[pair{g.id, p.author}]) }})
	}
	feeds = append(feeds, o.searches()...)
	allReader := o.people[0]
	feeds = append(feeds, feed{name: "@all", path: "/social/rest/activities/@me/@all", token: allReader.token,
		want:   o.others(allReader.id, true, exact(func(p *post) bool { return p.public() })),
		remote: o.others(allReader.id, true, exact(func(p *post) bool { return p.public() })), reader: allReader.id})
	for _, tag := range tagNames {
		feeds = append(feeds, feed{name: "#" + tag, path: "/social/rest/activities/@me/@tag:" + strings.ToUpper(tag), token: allReader.token,
			want: o.others(allReader.id, true, exact(func(p *post) bool { return p.public() && slices.Contains(p.tags, tag) }))})
	}
	return feeds
}

// home is what u's home feed holds, before blocks, limits and filters.
func (o *oracle) home(u *user) rule {
	m := o.m
	return func(p *post) presence {
		switch {
		case p.author == u.id:
			return mayIn
		case p.visibility == "mentioned":
			// Whom it mentions, as last edited.
			return exact(func(p *post) bool { return slices.Contains(p.mentions, u.id) })(p)
		}
		in := presenceOf(p, m.follows[pair{u.id, p.author}], o.followWin)
		if o.celebrity[p.id] {
			in = celebrityPresence(m.follows[pair{u.id, p.author}])
		}
		// A reply to someone else reaches those who follow them too, as
		// the fan-out (or a follow's backfill) found them.
		if p.answers != "" && p.answers != p.author && p.answers != u.id {
			in = both(in, o.follower(u.id, p.answers, p))
		}
		if p.public() {
			for _, tag := range p.tags {
				in = union(in, tagPresence(p, m.tagFollows[pair{u.id, tag}]))
			}
		}
		return in
	}
}

// follower is whether reader followed b as p's fan-out and backfill
// saw it: surely when the follow did not change from p's posting on
// (then every copy decided the same), either if it did. Once b's account
// is erased, the reply no longer says whom it answered, and a later
// follow's copy takes it as any post: either, if b's deletion was asked.
func (o *oracle) follower(reader, b string, p *post) presence {
	if o.m.gone(b) {
		return mayIn | mayOut
	}
	held := false
	for _, ev := range o.m.follows[pair{reader, b}] {
		if !ev.end.Before(p.start) {
			return mayIn | mayOut
		}
		held = ev.add
	}
	if held {
		return mayIn
	}
	return mayOut
}

// groupReader is who reads group g: its owner, or its heir; nil if it is
// deleted (as it must be: heirs checked that), or its reader cannot sign
// in.
func (o *oracle) groupReader(g *group) *user {
	reader := o.m.byID[g.owner]
	if o.m.deleted(g.owner) {
		if reader = o.heirs[g.id]; reader == nil {
			return nil
		}
	}
	if o.m.suspended[reader.id] {
		return nil
	}
	return reader
}

// checkFeeds reads every feed, several at a time, compares each with its
// rule, and returns @all's items.
func (o *oracle) checkFeeds(ctx context.Context, rep *Report) ([]map[string]any, error) {
	feeds := o.feeds()
	got := make([][]map[string]any, len(feeds))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i, f := range feeds {
		g.Go(func() error {
			// Half through the second instance: past the bound, what
			// it kept is gone, and what it keeps since is as true.
			c := o.r.c
			if i%2 == 1 {
				c = o.r.other
			}
			if c == o.r.other && f.path == "/social/rest/activities/@me/@friends" {
				// Read once to keep its range, unless the mix left one
				// kept: the read compared takes it.
				if _, err := c.list(gctx, f.path, f.token); err != nil {
					return fmt.Errorf("read %s: %w", f.name, err)
				}
			}
			items, err := c.list(gctx, f.path, f.token)
			if err != nil {
				return fmt.Errorf("read %s: %w", f.name, err)
			}
			got[i] = items
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var all []map[string]any
	for i, f := range feeds {
		if f.path == "/social/rest/activities/@me/@all" {
			all = got[i]
		}
		rep.Checked++
		o.checkFeed(f, got[i], rep)
	}
	return all, nil
}

// checkFeed compares the items read of f with its rule.
func (o *oracle) checkFeed(f feed, items []map[string]any, rep *Report) {
	m := o.m
	seen := map[string]bool{}
	prev := ""
	for _, it := range items {
		id := str(it, "id")
		if prev != "" && newerOrSame(id, prev) {
			o.violate("%s: %s comes after %s, not newest first", f.name, id, prev)
		}
		prev = id
		seen[id] = true
		p := m.postByID[id]
		if q := o.remoteByID[id]; p == nil && q != nil {
			o.checkRemoteItem(f, q, rep)
			continue
		}
		switch {
		case p == nil:
			o.violate("%s: shows %s (%q), which no acknowledged post made", f.name, id, str(it, "title"))
		case p.deleted:
			o.violate("%s: shows deleted %s (%q by %s, repost of %q, dropped: %s)", f.name, id, p.title, p.author, p.repostOf, p.dropped)
		case m.hidden(p):
			o.violate("%s: shows %s (%q), which a moderator removed", f.name, id, p.title)
		case f.want(p).forbid():
			o.violate("%s: shows %s (%q, posted %s) though it must not; history %s", f.name, id, p.title, clock(p.start), f.history(p))
		default:
			if v := pictureViolation(f.name, it, p); v != "" {
				m.violations = append(m.violations, v)
			}
			o.checkWarning(f.name, it, p)
			author, _ := it["author"].(map[string]any)
			o.checkCard(f.name+", author of "+id, author, p.author)
			if pinned, _ := m.livePins(p.author); (it["pinned"] == true) != slices.Contains(pinned, p.id) {
				o.violate("%s: %s shows pinned %v; its author pins %v", f.name, id, it["pinned"], pinned)
			}
		}
	}
	o.lacksRemote(f, seen)
	for _, p := range o.live {
		if !seen[p.id] && f.want(p).must() {
			h := ""
			if f.history != nil {
				h = "; history " + f.history(p)
			}
			o.violate("%s: lacks %s (%q, posted %s-%s)%s", f.name, p.id, p.title, clock(p.start), clock(p.end), h)
		}
	}
}

// checkWarning: a post's content warning, and what a repost shares',
// travel with it, and make it sensitive.
func (o *oracle) checkWarning(feed string, it map[string]any, p *post) {
	if p.repostOf != "" {
		shared, _ := it["repostOf"].(map[string]any)
		if p = o.m.postByID[p.repostOf]; p == nil || shared == nil {
			return
		}
		it = shared
	}
	if got := str(it, "spoilerText"); got != p.warning || p.warning != "" && it["sensitive"] != true {
		o.violate("%s: %s warns %q (sensitive %v), want %q", feed, p.id, got, it["sensitive"], p.warning)
	}
}

// checkActivities checks the counts of activities, from @all, and that
// they mention nobody gone.
func (o *oracle) checkActivities(ctx context.Context, all []map[string]any, rep *Report) {
	m := o.m
	for _, it := range all {
		p := m.postByID[str(it, "id")]
		if p == nil {
			continue
		}
		rep.Checked++
		if got := str(it, "title"); got != p.title {
			o.violate("activity %s: title %q, want %q, as last written", p.id, got, p.title)
		}
		ms, _ := it["mentions"].([]any)
		for _, id := range ms {
			if m.deleted(fmt.Sprint(id)) {
				o.violate("activity %s still mentions deleted %s", p.id, id)
			}
		}
		for _, c := range []struct {
			name string
			want int64
		}{{"likesCount", o.likes[p.id]}, {"commentsCount", o.comments[p.id]}, {"repostsCount", o.reposts[p.id]}} {
			if got := num(it, c.name); got != c.want {
				detail := ""
				if c.name == "likesCount" {
					detail = "; " + o.r.likesStored(ctx, p.id)
				}
				o.violate("activity %s: %s %d, want %d%s", p.id, c.name, got, c.want, detail)
			}
		}
		if of, _ := it["repostOf"].(map[string]any); p.repostOf != "" && (of == nil || str(of, "id") != p.repostOf) {
			o.violate("repost %s: repostOf %v, want %s", p.id, it["repostOf"], p.repostOf)
		}
	}
}

// window says which of an author's activities a follow's or join's job
// copies: the newest copyLimit (or the default) when it runs, then
// BackfillMax older ones. An activity is surely covered if even counting
// every post the author ever made it is among them, maybe if counting only
// those that surely existed when the job ran it is.
func (r *runner) window(defaultLimit int, byAuthor map[string][]*post, rank map[string]int) window {
	return func(ev event, a *post) (sure, maybe bool) {
		n := ev.copyLimit
		if n < 0 {
			n = defaultLimit
		}
		if n == 0 {
			return false, false
		}
		limit := n + r.cfg.BackfillMax
		newer := byAuthor[a.author][:rank[a.id]] // newest first, a not included
		lower := 1
		for _, b := range newer {
			if lower > limit {
				break
			}
			if !b.deleted && b.end.Before(ev.start) {
				lower++
			}
		}
		return len(newer)+1 <= limit, lower <= limit
	}
}

// newerOrSame compares two activity ids by the ids they write.
func newerOrSame(a, b string) bool {
	x, _ := ids.Parse(a)
	y, _ := ids.Parse(b)
	return x >= y
}

func clock(t time.Time) string { return t.Format("15:04:05.000") }

// describe writes a pair's history for a violation's details.
func describe(evs []event) string {
	if len(evs) == 0 {
		return "[none]"
	}
	var b strings.Builder
	b.WriteString("[")
	for i, ev := range evs {
		if i > 0 {
			b.WriteString(", ")
		}
		switch {
		case ev.add && ev.copyLimit >= 0:
			fmt.Fprintf(&b, "add(copyLimit=%d)", ev.copyLimit)
		case ev.add:
			b.WriteString("add")
		case ev.keep:
			b.WriteString("remove(keepHistory)")
		default:
			b.WriteString("remove")
		}
		fmt.Fprintf(&b, " %s-%s", clock(ev.start), clock(ev.end))
	}
	b.WriteString("]")
	return b.String()
}

// pictureViolation says how a feed's item it differs from post p in its
// pictures (their ids and alt texts, in order), or "".
func pictureViolation(feed string, it map[string]any, p *post) string {
	items, _ := it["mediaItems"].([]any)
	var got, alts []string
	for _, x := range items {
		m, _ := x.(map[string]any)
		got, alts = append(got, str(m, "id")), append(alts, str(m, "description"))
	}
	if !slices.Equal(got, p.pictures) || !slices.Equal(alts, p.alts) {
		return fmt.Sprintf("%s: %s shows pictures %v %q, want %v %q", feed, p.id, got, alts, p.pictures, p.alts)
	}
	return ""
}

// checkPictureObjects checks the pictures' bucket against the model: the
// pictures of every post that remains (live, or removed and kept) have
// their image and thumbnail, and the links @all hands out open them with
// no token, the thumbnail for a client that takes WebP too; no object of
// a deleted post's picture remains, its thumbnail in WebP among them.
// Objects of no post are uploads never attached, which are collected a
// day later.
func (r *runner) checkPictureObjects(ctx context.Context, all []map[string]any) error {
	m := r.m
	names, err := r.objects()
	if err != nil {
		return fmt.Errorf("list the pictures' bucket: %w", err)
	}
	stored := map[string]bool{}
	for _, n := range names {
		stored[n] = true
	}
	for _, p := range m.posts {
		gone := p.deleted || m.deleted(p.author)
		for _, id := range p.pictures {
			for _, name := range media.ObjectsOf(id) {
				switch {
				case gone && stored[name]:
					m.violations = append(m.violations, fmt.Sprintf("object %s of deleted post %s remains", name, p.id))
				case !gone && !stored[name]:
					m.violations = append(m.violations, fmt.Sprintf("post %s lacks its picture's object %s", p.id, name))
				}
			}
			if name := "media/" + id + "/upload"; stored[name] {
				m.violations = append(m.violations, fmt.Sprintf("post %s's picture keeps its bytes as sent, %s, once the queues are empty", p.id, name))
			}
		}
	}
	for _, it := range all {
		items, _ := it["mediaItems"].([]any)
		for _, x := range items {
			pic, _ := x.(map[string]any)
			for _, f := range []struct{ link, accept string }{
				{str(pic, "url"), ""}, {str(pic, "thumbnailUrl"), ""}, {str(pic, "thumbnailUrl"), "image/webp,*/*"},
			} {
				status, kind, err := r.c.fetchAccepting(ctx, f.link, f.accept)
				if err != nil {
					return fmt.Errorf("fetch a picture: %w", err)
				}
				if status != 200 || !strings.HasPrefix(kind, "image/") {
					m.violations = append(m.violations, fmt.Sprintf("activity %s: picture link %s (Accept %q) answered %d %s", str(it, "id"), f.link, f.accept, status, kind))
				}
			}
		}
	}
	return nil
}

// maxHiddenReads bounds the (reader, post) pairs checkHidden reads.
const maxHiddenReads = 150

// checkHidden reads, as readers, what the model knows the policy hides
// from them once all has settled (a post removed, of someone suspended,
// of someone limited they never followed, or across a block): by id, its
// likes, comments and reposts, its history and its pictures must each
// answer 404 with nothing of it, as what never existed does. The caller
// holds m.mu.
func (r *runner) checkHidden(ctx context.Context, people []*user) {
	m := r.m
	n := 0
	for _, p := range m.posts {
		if p.deleted {
			continue
		}
		for _, u := range people {
			why := m.hiddenFrom(u.id, p)
			if why == "" || n == maxHiddenReads {
				continue
			}
			n++
			paths := []string{
				"/social/rest/activities/" + p.author + "/@self/@app/" + p.id,
				"/social/rest/likes/" + p.id,
				"/social/rest/comments/" + p.id,
				"/social/rest/reposts/" + p.id,
				"/social/rest/activities/@me/@self/@app/" + p.id + "/history", // under another's id, any is a 403
			}
			for _, pic := range p.pictures {
				paths = append(paths, "/social/rest/mediaItems/"+p.author+"/@self/@all/"+pic)
			}
			for _, path := range paths {
				rep, err := r.c.read(ctx, path, u.token)
				if err != nil {
					m.violations = append(m.violations, fmt.Sprintf("hidden: GET %s as %s: %v", path, u.name, err))
					continue
				}
				if rep.status != 404 || p.title != "" && strings.Contains(fmt.Sprint(rep.body), p.title) {
					m.violations = append(m.violations, fmt.Sprintf("hidden: GET %s as %s (%s) answered %d %v", path, u.name, why, rep.status, rep.body))
				}
			}
		}
	}
}

// checkThreads: a reply's context, read by its author, shows above it
// the posts it answers that they may read, root first; a post answered,
// read by its author, shows below it every reply they may read.
func (o *oracle) checkThreads(ctx context.Context, rep *Report) error {
	m := o.m
	people := map[string]*user{}
	for _, u := range o.people {
		people[u.id] = u
	}
	below := map[string][]string{}
	for _, p := range o.live {
		for _, up := range p.ancestors {
			below[up] = append(below[up], p.id)
		}
	}
	shown := func(reader, id string) bool {
		q := m.postByID[id]
		return q != nil && !q.deleted && !m.hidden(q) && o.readable(reader, q)
	}
	for _, p := range o.live {
		u := people[p.author]
		if u == nil || p.inReplyTo == "" && len(below[p.id]) == 0 {
			continue
		}
		var up, down []string
		for i := min(len(p.ancestors), maxAncestors) - 1; i >= 0; i-- {
			if shown(u.id, p.ancestors[i]) {
				up = append(up, p.ancestors[i])
			}
		}
		for _, id := range below[p.id] {
			if shown(u.id, id) {
				down = append(down, id)
			}
		}
		rp, err := o.r.c.read(ctx, "/social/rest/activities/"+u.id+"/@self/@app/"+p.id+"/context", u.token)
		if err != nil || rp.status != 200 {
			return fmt.Errorf("read the context of %s: %v %v", p.id, err, rp.body)
		}
		rep.Checked++
		ids := func(key string) []string {
			var out []string
			items, _ := rp.body[key].([]any)
			for _, it := range items {
				if v, ok := it.(map[string]any); ok {
					out = append(out, str(v, "id"))
				}
			}
			return out
		}
		if got := ids("ancestors"); !slices.Equal(got, up) {
			o.violate("context of %s to its author %s: ancestors %v, want %v", p.id, u.name, got, up)
		}
		got := ids("descendants")
		slices.Sort(got)
		slices.Sort(down)
		if !slices.Equal(got, down) {
			o.violate("context of %s to its author %s: descendants %v, want %v", p.id, u.name, got, down)
		}
	}
	return nil
}
