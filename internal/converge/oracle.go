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
)

// check compares every feed and count with the oracle.
func (r *runner) check(ctx context.Context, rep *Report) error {
	m := r.m
	m.mu.Lock()
	defer m.mu.Unlock()
	var live []*post
	for _, p := range m.posts {
		if !p.deleted && !m.hidden(p) {
			live = append(live, p) // a removed post must be nowhere: no feed must show it
		}
	}
	var people []*user // those whose accounts live, and may sign in
	for _, u := range m.users {
		if !u.deleted && !m.suspended[u.id] {
			people = append(people, u)
		}
	}
	rep.Users, rep.Activities, rep.Groups = len(people), len(live), len(m.groups)
	r.checkHidden(ctx, people)
	// Every author's posts, newest first, and each post's place there.
	byAuthor := map[string][]*post{}
	for _, p := range m.posts {
		byAuthor[p.author] = append(byAuthor[p.author], p)
	}
	rank := map[string]int{}
	for _, ps := range byAuthor {
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
			rank[p.id] = i
		}
	}
	likes, comments := map[string]int64{}, map[string]int64{}
	// A suspended person's likes and comments are in no count.
	for k, on := range m.likes {
		if on && !m.deleted(k.b) && !m.suspended[k.b] {
			likes[k.a]++
		}
	}
	for _, c := range m.comments {
		if !c.deleted && !m.suspended[c.author] {
			comments[c.activity]++
		}
	}
	// A feed leaves out the activities of people its reader has a block
	// with, either way, and (all but their own) of people its reader
	// mutes.
	unblocked := func(reader string, want func(p *post) presence) func(p *post) presence {
		return func(p *post) presence {
			if m.between(reader, p.author) || m.mutes[pair{reader, p.author}] ||
				p.repostOf != "" && (m.between(reader, p.sharedAuthor) || m.mutes[pair{reader, p.sharedAuthor}]) {
				return mayOut
			}
			return want(p)
		}
	}
	// A limited person's posts, and reposts of them, are in no public or
	// tag feed but their own reader's, and elsewhere reach their followers
	// alone: one who unfollowed keeping the copies may still have them.
	reach := func(reader string, public bool, want func(p *post) presence) func(p *post) presence {
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
	// A reader's keyword filter hides, in every feed but their own page,
	// others' posts whose title (or that of what a repost shares) names
	// its word.
	unfiltered := func(reader string, want func(p *post) presence) func(p *post) presence {
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
	// One's own page hides no post of one's own but a repost of someone
	// one has a block with.
	own := func(reader string, want func(p *post) presence) func(p *post) presence {
		return func(p *post) presence {
			if p.repostOf != "" && m.between(reader, p.sharedAuthor) {
				return mayOut
			}
			return want(p)
		}
	}
	reposts := map[string]int64{}
	for _, p := range live {
		if p.repostOf != "" {
			reposts[p.repostOf]++
		}
	}
	followWin := r.window(r.cfg.CopyLimit, byAuthor, rank)
	// Feeds: read as their owner (a group's as its owner, a member).
	type feed struct {
		name, path, token string
		want              func(p *post) presence
		history           func(p *post) string
	}
	exact := func(ok func(p *post) bool) func(p *post) presence {
		return func(p *post) presence {
			if ok(p) {
				return mayIn
			}
			return mayOut
		}
	}
	var feeds []feed
	for _, u := range people {
		feeds = append(feeds,
			feed{name: "@self of " + u.name, path: "/social/rest/activities/@me/@self", token: u.token,
				want: reach(u.id, false, own(u.id, exact(func(p *post) bool { return p.author == u.id })))},
			feed{name: "@mentions of " + u.name, path: "/social/rest/activities/@me/@mentions", token: u.token,
				want: unfiltered(u.id, reach(u.id, false, unblocked(u.id, exact(func(p *post) bool { return slices.Contains(p.mentions, u.id) }))))},
			feed{name: "home (@friends) of " + u.name, path: "/social/rest/activities/@me/@friends", token: u.token,
				want: unfiltered(u.id, reach(u.id, false, unblocked(u.id, func(p *post) presence {
					switch {
					case p.author == u.id:
						return mayIn
					case p.visibility == "mentioned":
						// Whom it mentions, as last edited.
						return exact(func(p *post) bool { return slices.Contains(p.mentions, u.id) })(p)
					}
					in := presenceOf(p, m.follows[pair{u.id, p.author}], followWin)
					if p.public() {
						for _, tag := range p.tags {
							in = union(in, tagPresence(p, m.tagFollows[pair{u.id, tag}]))
						}
					}
					return in
				}))),
				history: func(p *post) string {
					h := describe(m.follows[pair{u.id, p.author}])
					for _, tag := range p.tags {
						h += "; #" + tag + " " + describe(m.tagFollows[pair{u.id, tag}])
					}
					return h
				}})
	}
	// Groups whose owners are gone: handed to a member, or deleted with
	// no member left.
	heirs, err := r.heirs(ctx, rep)
	if err != nil {
		return err
	}
	for _, g := range m.groups {
		reader := m.byID[g.owner]
		if m.deleted(g.owner) {
			if reader = heirs[g.id]; reader == nil {
				continue // deleted, as it must be
			}
		}
		if m.suspended[reader.id] {
			continue // its reader cannot sign in
		}
		feeds = append(feeds, feed{name: "feed of group " + g.title, path: "/social/rest/activities/@me/" + g.id, token: reader.token,
			want: unfiltered(reader.id, reach(reader.id, false, unblocked(reader.id, func(p *post) presence {
				if !p.public() {
					return mayOut // group copies are of public posts alone
				}
				return presenceOf(p, m.members[pair{g.id, p.author}], followWin)
			}))),
			history: func(p *post) string { return describe(m.members[pair{g.id, p.author}]) }})
	}
	allReader := people[0]
	feeds = append(feeds, feed{name: "@all", path: "/social/rest/activities/@me/@all", token: allReader.token,
		want: unfiltered(allReader.id, reach(allReader.id, true, unblocked(allReader.id, exact(func(p *post) bool { return p.public() }))))})
	for _, tag := range tagNames {
		feeds = append(feeds, feed{name: "#" + tag, path: "/social/rest/activities/@me/@tag:" + strings.ToUpper(tag), token: allReader.token,
			want: unfiltered(allReader.id, reach(allReader.id, true, unblocked(allReader.id, exact(func(p *post) bool { return p.public() && slices.Contains(p.tags, tag) }))))})
	}

	// Read every feed, several at a time, then compare.
	got := make([][]map[string]any, len(feeds))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i, f := range feeds {
		g.Go(func() error {
			items, err := r.c.list(gctx, f.path, f.token)
			if err != nil {
				return fmt.Errorf("read %s: %w", f.name, err)
			}
			got[i] = items
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	var all []map[string]any
	for i, f := range feeds {
		items := got[i]
		if f.path == "/social/rest/activities/@me/@all" {
			all = items
		}
		rep.Checked++
		seen := map[string]bool{}
		prev := ""
		for _, it := range items {
			id := str(it, "id")
			if prev != "" && newerOrSame(id, prev) {
				m.violations = append(m.violations, fmt.Sprintf("%s: %s comes after %s, not newest first", f.name, id, prev))
			}
			prev = id
			seen[id] = true
			p := m.postByID[id]
			switch {
			case p == nil:
				m.violations = append(m.violations, fmt.Sprintf("%s: shows %s (%q), which no acknowledged post made", f.name, id, str(it, "title")))
			case p.deleted:
				m.violations = append(m.violations, fmt.Sprintf("%s: shows deleted %s (%q by %s, repost of %q, dropped: %s)", f.name, id, p.title, p.author, p.repostOf, p.dropped))
			case m.hidden(p):
				m.violations = append(m.violations, fmt.Sprintf("%s: shows %s (%q), which a moderator removed", f.name, id, p.title))
			case f.want(p).forbid():
				m.violations = append(m.violations, fmt.Sprintf("%s: shows %s (%q, posted %s) though it must not; history %s", f.name, id, p.title, clock(p.start), f.history(p)))
			default:
				if v := pictureViolation(f.name, it, p); v != "" {
					m.violations = append(m.violations, v)
				}
			}
		}
		for _, p := range live {
			if !seen[p.id] && f.want(p).must() {
				h := ""
				if f.history != nil {
					h = "; history " + f.history(p)
				}
				m.violations = append(m.violations, fmt.Sprintf("%s: lacks %s (%q, posted %s-%s)%s", f.name, p.id, p.title, clock(p.start), clock(p.end), h))
			}
		}
	}

	if err := r.checkPictureObjects(ctx, all); err != nil {
		return err
	}

	// Counts of activities, from @all, and mentions of nobody gone.
	for _, it := range all {
		p := m.postByID[str(it, "id")]
		if p == nil {
			continue
		}
		rep.Checked++
		if got := str(it, "title"); got != p.title {
			m.violations = append(m.violations, fmt.Sprintf("activity %s: title %q, want %q, as last written", p.id, got, p.title))
		}
		ms, _ := it["mentions"].([]any)
		for _, id := range ms {
			if m.deleted(fmt.Sprint(id)) {
				m.violations = append(m.violations, fmt.Sprintf("activity %s still mentions deleted %s", p.id, id))
			}
		}
		if got := num(it, "likesCount"); got != likes[p.id] {
			m.violations = append(m.violations, fmt.Sprintf("activity %s: likesCount %d, want %d", p.id, got, likes[p.id]))
		}
		if got := num(it, "commentsCount"); got != comments[p.id] {
			m.violations = append(m.violations, fmt.Sprintf("activity %s: commentsCount %d, want %d", p.id, got, comments[p.id]))
		}
		if got := num(it, "repostsCount"); got != reposts[p.id] {
			m.violations = append(m.violations, fmt.Sprintf("activity %s: repostsCount %d, want %d", p.id, got, reposts[p.id]))
		}
		if o, _ := it["repostOf"].(map[string]any); p.repostOf != "" && (o == nil || str(o, "id") != p.repostOf) {
			m.violations = append(m.violations, fmt.Sprintf("repost %s: repostOf %v, want %s", p.id, it["repostOf"], p.repostOf))
		}
	}
	// Home markers: where the last acknowledged move left them.
	for _, u := range people {
		rm, err := r.c.read(ctx, "/social/rest/markers/@me?feeds=home", u.token)
		if err != nil || rm.status != 200 {
			return fmt.Errorf("read %s's markers: %v %v", u.name, err, rm.body)
		}
		home, _ := entry(rm)["home"].(map[string]any)
		if got, want := str(home, "lastReadId"), m.marks[u.id]; got != want {
			m.violations = append(m.violations, fmt.Sprintf("%s: home marker %q, want %q", u.name, got, want))
		}
	}
	// People's counts, and that no notification points at a deleted
	// activity.
	for _, u := range people {
		var followers, following int64
		for k, on := range m.following {
			if !on || m.deleted(k.a) || m.deleted(k.b) {
				continue
			}
			if k.b == u.id {
				followers++
			}
			if k.a == u.id {
				following++
			}
		}
		rp, err := r.c.read(ctx, "/social/rest/people/"+u.id+"/@self", u.token)
		if err != nil || rp.status != 200 {
			return fmt.Errorf("read %s: %v %v", u.name, err, rp.body)
		}
		e := entry(rp)
		rep.Checked++
		if got := num(e, "followersCount"); got != followers {
			m.violations = append(m.violations, fmt.Sprintf("%s: followersCount %d, want %d", u.name, got, followers))
		}
		if got := num(e, "followingCount"); got != following {
			m.violations = append(m.violations, fmt.Sprintf("%s: followingCount %d, want %d", u.name, got, following))
		}
		// Locked or not, and the requests pending, those of people still
		// there.
		if got := e["locked"] == true; got != m.locked[u.id] {
			m.violations = append(m.violations, fmt.Sprintf("%s: locked %v, want %v", u.name, got, m.locked[u.id]))
		}
		var wantAsked, gotAsked []string
		for k := range m.requested {
			if k.b == u.id && !m.gone(k.a) {
				wantAsked = append(wantAsked, k.a)
			}
		}
		asked, err := r.c.list(ctx, "/social/rest/people/@me/@requests", u.token)
		if err != nil {
			return fmt.Errorf("read %s's follow requests: %w", u.name, err)
		}
		rep.Checked++
		for _, it := range asked {
			if id := str(it, "id"); !m.gone(id) {
				gotAsked = append(gotAsked, id)
			}
		}
		slices.Sort(wantAsked)
		slices.Sort(gotAsked)
		if !slices.Equal(gotAsked, wantAsked) {
			m.violations = append(m.violations, fmt.Sprintf("%s: follow requests pending %v, want %v", u.name, gotAsked, wantAsked))
		}
		ns, err := r.c.list(ctx, "/social/rest/notifications/@me", u.token)
		if err != nil {
			return fmt.Errorf("read notifications of %s: %w", u.name, err)
		}
		rep.Checked++
		// Grouped, the same notifications: every one in one group, the
		// unread groups those holding an unread one.
		rg, err := r.c.read(ctx, "/social/rest/notifications/@me?grouped=true&count=100", u.token)
		if err != nil || rg.status != 200 {
			return fmt.Errorf("read %s's grouped notifications: %v %v", u.name, err, rg.body)
		}
		rep.Checked++
		inGroups, unreadGroups := map[string]bool{}, int64(0)
		groups, _ := rg.body["list"].([]any)
		for _, g := range groups {
			gm, _ := g.(map[string]any)
			ids, _ := gm["ids"].([]any)
			if num(gm, "count") != int64(len(ids)) {
				m.violations = append(m.violations, fmt.Sprintf("%s: group %s counts %d of %d ids", u.name, str(gm, "groupKey"), num(gm, "count"), len(ids)))
			}
			for _, id := range ids {
				inGroups[fmt.Sprint(id)] = true
			}
			if gm["read"] != true {
				unreadGroups++
			}
		}
		if got := num(rg.body, "unreadCount"); got != unreadGroups {
			m.violations = append(m.violations, fmt.Sprintf("%s: grouped unreadCount %d, want the %d unread groups", u.name, got, unreadGroups))
		}
		for _, n := range ns {
			if len(ns) < 100 && !inGroups[str(n, "id")] {
				m.violations = append(m.violations, fmt.Sprintf("%s: notification %s (%s) in no group", u.name, str(n, "id"), str(n, "type")))
			}
		}
		for _, n := range ns {
			if n["actor"] == nil && str(n, "type") != "moderation" { // the service's own notice has no actor
				m.violations = append(m.violations, fmt.Sprintf("%s: notification %s (%s) from someone deleted", u.name, str(n, "id"), str(n, "type")))
			}
			if id := str(n, "activityId"); id != "" {
				if p := m.postByID[id]; p == nil || p.deleted {
					m.violations = append(m.violations, fmt.Sprintf("%s: notification %s (%s) points at deleted activity %s", u.name, str(n, "id"), str(n, "type"), id))
				}
			}
		}
	}
	// App data: a living user's is what they wrote, a deleted user's is
	// gone, read by someone else (anyone may read it).
	if len(people) > 0 {
		reader := people[0]
		for _, u := range m.users {
			for _, app := range apps {
				want := map[string]string{}
				if !m.deleted(u.id) {
					maps.Copy(want, m.appData[pair{u.id, app}])
				}
				ra, err := r.c.read(ctx, "/social/rest/appdata/"+u.id+"/@self/"+app, reader.token)
				if err != nil || ra.status != 200 {
					return fmt.Errorf("read %s's app data: %v %v", u.name, err, ra.body)
				}
				rep.Checked++
				if got := appDataOf(ra, u.id); !maps.Equal(got, want) {
					m.violations = append(m.violations, fmt.Sprintf("%s: app data of %s is %v, want %v", u.name, app, got, want))
				}
			}
		}
	}
	for _, g := range m.groups {
		var members int64
		for k, on := range m.isMember {
			if on && k.a == g.id && !m.deleted(k.b) {
				members++
			}
		}
		reader := m.byID[g.owner]
		if m.deleted(g.owner) {
			if reader = heirs[g.id]; reader == nil {
				continue // deleted: heirs checked that
			}
		}
		if m.suspended[reader.id] {
			continue // its owner cannot sign in to read it
		}
		rg, err := r.c.read(ctx, "/social/rest/groups/@all/"+g.id, reader.token)
		if err != nil || rg.status != 200 {
			return fmt.Errorf("read group %s: %v %v", g.title, err, rg.body)
		}
		rep.Checked++
		if got := num(entry(rg), "membersCount"); got != members {
			m.violations = append(m.violations, fmt.Sprintf("group %s: membersCount %d, want %d", g.title, got, members))
		}
	}
	return nil
}

// heirs finds who holds each group whose owner was deleted, under the
// model's lock: the group must have gone to one of its members, or, when
// none is left, be gone itself.
func (r *runner) heirs(ctx context.Context, rep *Report) (map[string]*user, error) {
	m := r.m
	out := map[string]*user{}
	for _, g := range m.groups {
		if !m.deleted(g.owner) {
			continue
		}
		var members []*user
		for _, u := range m.users {
			if !u.deleted && m.isMember[pair{g.id, u.id}] {
				members = append(members, u)
			}
		}
		rep.Checked++
		if len(members) == 0 {
			var anyone *user
			for _, u := range m.users {
				if !u.deleted && !m.suspended[u.id] {
					anyone = u
					break
				}
			}
			rg, err := r.c.read(ctx, "/social/rest/groups/@all/"+g.id, anyone.token)
			if err != nil {
				return nil, err
			}
			if rg.status != 404 {
				m.violations = append(m.violations, fmt.Sprintf("group %s: its owner is deleted and no member is left, yet it answers %d", g.title, rg.status))
			}
			continue
		}
		reader := members[0]
		for _, u := range members {
			if !m.suspended[u.id] {
				reader = u // one who may sign in
				break
			}
		}
		if m.suspended[reader.id] {
			continue // no member may sign in to read it
		}
		rg, err := r.c.read(ctx, "/social/rest/groups/@all/"+g.id, reader.token)
		if err != nil {
			return nil, err
		}
		owner := str(entry(rg), "ownerId")
		i := slices.IndexFunc(members, func(u *user) bool { return u.id == owner })
		if rg.status != 200 || i < 0 {
			m.violations = append(m.violations, fmt.Sprintf("group %s: its owner is deleted; answers %d with owner %q, not one of its members", g.title, rg.status, owner))
			continue
		}
		out[g.id] = members[i]
	}
	return out, nil
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
// no token; no object of a deleted post's picture remains. Objects of no
// post are uploads never attached, which are collected a day later.
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
			for _, name := range []string{"media/" + id, "media/" + id + "/thumb"} {
				switch {
				case gone && stored[name]:
					m.violations = append(m.violations, fmt.Sprintf("object %s of deleted post %s remains", name, p.id))
				case !gone && !stored[name]:
					m.violations = append(m.violations, fmt.Sprintf("post %s lacks its picture's object %s", p.id, name))
				}
			}
		}
	}
	for _, it := range all {
		items, _ := it["mediaItems"].([]any)
		for _, x := range items {
			pic, _ := x.(map[string]any)
			for _, link := range []string{str(pic, "url"), str(pic, "thumbnailUrl")} {
				status, kind, err := r.c.fetch(ctx, link)
				if err != nil {
					return fmt.Errorf("fetch a picture: %w", err)
				}
				if status != 200 || !strings.HasPrefix(kind, "image/") {
					m.violations = append(m.violations, fmt.Sprintf("activity %s: picture link %s answered %d %s", str(it, "id"), link, status, kind))
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
