package converge

// Bookmarks: a person keeps posts they may see in a private list, newest
// bookmark first, and takes them off it.

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"socialstream/internal/bookmarks"
	"socialstream/internal/store"
)

// bookmark makes one of a's people bookmark a post anyone may read (or
// their own), or take one off their bookmarks.
func (r *runner) bookmark(ctx context.Context, a *actor) (bool, error) {
	u := a.pick()
	r.m.mu.Lock()
	removing := len(r.m.bookmarks[u.id]) > 0 && a.rng.IntN(3) == 0 // a third take one off, when they can
	some := r.m.bookmarkable(u.id, removing)
	r.m.mu.Unlock()
	if len(some) == 0 {
		return false, nil
	}
	p := some[a.rng.IntN(len(some))]
	on := !removing
	op, method := "bookmark", http.MethodPost
	if !on {
		op, method = "unbookmark", http.MethodDelete
	}
	defer r.lock("bookmark " + u.id)()
	path := "/social/rest/bookmarks/" + p.id
	r.m.mu.Lock()
	before := r.m.hiddenFrom(u.id, p)
	r.m.mu.Unlock()
	// A 404: the post is gone or hidden from u (an unbookmark deletes all
	// the same).
	rep, out := r.write(ctx, op, method, path, u.token, nil, http.StatusNotFound)
	r.m.mu.Lock()
	after := r.m.hiddenFrom(u.id, p)
	r.m.mu.Unlock()
	now := on
	switch out {
	case acked:
		if before != "" && after != "" {
			r.m.violate(fmt.Sprintf("%s of %s by %s, hidden from them (%s), answered %v", op, p.id, u.name, after, rep.body))
		}
		if e := entry(rep); str(e, "id") != p.id || (e["bookmarked"] == true) != on {
			r.m.violate(fmt.Sprintf("%s %s by %s answered %v", op, p.id, u.name, rep.body))
		}
	case refused:
		if !on {
			break
		}
		// A bookmark answers what it kept as u sees it after the write: a
		// 404 when the post was hidden from them meanwhile (its author
		// blocked them, say), though the bookmark is kept, and shows
		// again if the hiding ends. What it did is read.
		out = unknown
		fallthrough
	case unknown:
		var err error
		if now, err = r.truth(ctx, func(l *store.Lookup) func() bool {
			return bookmarks.Kept(l, u.id, p.id).Found
		}); err != nil {
			return true, err
		}
	}
	r.m.done(op, out != acked, time.Now())
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	had := slices.Contains(r.m.bookmarks[u.id], p.id)
	if out == refused {
		// An unbookmark of what is hidden deletes it all the same.
		now = false
	}
	switch {
	case now && !had:
		r.m.bookmarks[u.id] = append([]string{p.id}, r.m.bookmarks[u.id]...)
	case !now && had:
		r.m.bookmarks[u.id] = slices.DeleteFunc(slices.Clone(r.m.bookmarks[u.id]), func(id string) bool { return id == p.id })
	}
	return true, nil
}

// bookmarkable are the posts user may bookmark (anyone's that anyone
// may read, or their own), or, removing, those they keep; m.mu is held.
func (m *model) bookmarkable(user string, removing bool) []*post {
	kept := m.bookmarks[user]
	var some []*post
	for _, p := range m.posts {
		if p.deleted || p.repostOf != "" {
			continue
		}
		if removing && slices.Contains(kept, p.id) || !removing && (p.open() || p.author == user) {
			some = append(some, p)
		}
	}
	return some
}

// checkBookmarks: each person's bookmarks list what they kept that is
// still there and that they may see, newest bookmark first.
func (o *oracle) checkBookmarks(ctx context.Context, rep *Report) error {
	m := o.m
	for _, u := range o.people {
		var want []string
		for _, id := range m.bookmarks[u.id] {
			if p := m.postByID[id]; p != nil && !p.deleted && !m.hidden(p) && o.readable(u.id, p) {
				want = append(want, id)
			}
		}
		if len(m.bookmarks[u.id]) > 100 {
			continue // more than a page: the service's own tests page them
		}
		if err := o.checkList(ctx, rep, u, "/social/rest/bookmarks?count=100", "bookmarks", want); err != nil {
			return err
		}
	}
	return nil
}

// readable reports whether reader may read p by id now, all jobs run:
// its visibility, its author's standing, blocks.
func (o *oracle) readable(reader string, p *post) bool {
	m := o.m
	a := p.author
	switch {
	case a == reader:
		return true
	case m.deleted(a), m.suspended[a], m.between(reader, a):
		return false
	case m.limited[a] && !m.following[pair{reader, a}]:
		return false
	case p.open():
		return true
	case p.visibility == "followers" && m.following[pair{reader, a}]:
		return true
	}
	return slices.Contains(p.mentions, reader)
}
