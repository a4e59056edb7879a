package converge

import (
	"context"
	"fmt"
	"strings"
	"time"

	"socialstream/internal/accounts"
	"socialstream/internal/graph"
)

// readRemote reads the page here of each of the other server's people,
// which learns the ids here of the Notes taken, and checks it: a Note
// taken surely is there, one never taken or deleted is not.
func (o *oracle) readRemote(ctx context.Context, rep *Report) error {
	o.remoteByID = map[string]*post{}
	if o.r.remote == nil || len(o.people) == 0 {
		return nil
	}
	reader := o.people[0]
	shown := map[string]bool{}
	for _, rp := range o.r.remote.people {
		items, err := o.r.c.list(ctx, "/social/rest/activities/"+rp.id+"/@self", reader.token)
		if err != nil {
			return fmt.Errorf("read the page of %s: %w", rp.p.Name, err)
		}
		rep.Checked++
		for _, it := range items {
			q := o.m.rByNote[str(it, "url")]
			if q == nil || q.author != rp.id {
				o.violate("page of %s here: shows %s (%q, at %s), which their server never sent", rp.p.Name, str(it, "id"), str(it, "title"), str(it, "url"))
				continue
			}
			q.id, q.seqTime = str(it, "id"), seqTime(str(it, "id"))
			shown[q.note] = true
		}
	}
	for _, q := range o.m.rPosts {
		on := shown[q.note]
		switch {
		case on && q.deleted:
			o.violate("page of %s here: shows %s (%s), %s", q.author, q.id, q.note, q.dropped)
		case on && !q.taken.sure && !q.taken.maybe:
			o.violate("page of %s here: shows %s (%s), which came when no one here followed its author", q.author, q.id, q.note)
		case !on && !q.deleted && q.taken.sure:
			o.violate("page of %s here: lacks %s, which came (%s-%s) while someone here followed its author; %s", q.author, q.note, clock(q.start), clock(q.end), o.whyLacks(ctx, q))
		}
		if on && !q.deleted {
			o.remoteLive = append(o.remoteLive, q)
			o.remoteByID[q.id] = q
		}
		rep.Remote.Notes++
		if q.deleted {
			rep.Remote.Deleted++
		}
		if q.overtaken {
			rep.Remote.Overtaken++
		}
	}
	rep.Remote.Taken = len(o.remoteLive)
	rep.Remote.Twice, rep.Remote.Retried = int(o.r.remote.twice.Load()), int(o.r.remote.retried.Load())
	rep.Remote.Refused = o.r.remote.srv.Refused()
	return nil
}

// remoteHome is whether a Note of the other server's is in u's home: as
// a local post is, by u's follows of its author; a celebrity's while u
// follows them, whatever the copy window (celebrities.go).
func (o *oracle) remoteHome(u *user) rule {
	win := o.remoteWindow()
	return func(q *post) presence {
		follows := o.m.rFollows[pair{u.id, q.author}]
		if o.celebrity[q.id] {
			return celebrityPresence(follows)
		}
		return presenceOf(q, follows, win)
	}
}

// remoteWindow is window for the other server's Notes: a follow copies
// the newest of its author's Notes kept here. Surely if even counting
// every one that may have been kept (a deleted one, whenever it was
// made) q is among them; maybe if counting those surely kept before the
// follow it is.
func (o *oracle) remoteWindow() window {
	limit := o.r.cfg.CopyLimit + o.r.cfg.BackfillMax
	return func(ev event, q *post) (sure, maybe bool) {
		if o.r.cfg.CopyLimit == 0 {
			return false, false
		}
		newer, surely := 0, 0
		for _, b := range o.m.rPosts {
			if b == q || b.author != q.author {
				continue
			}
			kept := b.id != "" && o.remoteByID[b.id] == b
			switch {
			case kept && newerOrSame(b.id, q.id):
				newer++
				if b.end.Before(ev.start) {
					surely++
				}
			case !kept && b.deleted && (b.taken.sure || b.taken.maybe):
				newer++
			}
		}
		return newer+1 <= limit, surely+1 <= limit
	}
}

// checkRemoteItem checks a feed's item that is a Note of the other
// server's.
func (o *oracle) checkRemoteItem(f feed, q *post, rep *Report) {
	if f.reader != "" && f.name != "@all" {
		rep.Remote.InHomes++
	}
	if f.remote == nil {
		o.violate("%s: shows %s (%s), a Note of another server", f.name, q.id, q.note)
		return
	}
	if f.remote(q).forbid() {
		o.violate("%s: shows %s (%s, taken %s-%s) though it must not; follows %s", f.name, q.id, q.note, clock(q.start), clock(q.end), describe(o.m.rFollows[pair{f.reader, q.author}]))
	}
}

// lacksRemote checks that f holds every Note of the other server's it
// must.
func (o *oracle) lacksRemote(f feed, seen map[string]bool) {
	if f.remote == nil {
		return
	}
	for _, q := range o.remoteLive {
		if !seen[q.id] && f.remote(q).must() {
			o.violate("%s: lacks %s (%s, taken %s-%s); follows %s", f.name, q.id, q.note, clock(q.start), clock(q.end), describe(o.m.rFollows[pair{f.reader, q.author}]))
		}
	}
}

// whyLacks tells, for a violation, what the model and the Datastore hold
// of a Note the service did not keep: its deliveries, the follows of its
// author the model knows, and the author's follows and followers count
// here now (a Note is kept while that count is above zero).
func (o *oracle) whyLacks(ctx context.Context, q *post) string {
	var b strings.Builder
	fmt.Fprintf(&b, "its deliveries: %v; the follows of its author:", q.landings)
	for k, evs := range o.m.rFollows {
		if k.b == q.author {
			fmt.Fprintf(&b, " %s %s", k.a, describe(evs))
		}
	}
	var follows int
	var p accounts.Person
	err := o.r.retry(ctx, func() (err error) {
		follows = 0
		if err := graph.Each(ctx, o.r.db, q.author, true, func(string, time.Time) error { follows++; return nil }); err != nil {
			return err
		}
		p, _, err = accounts.Load(ctx, o.r.db, q.author)
		return err
	})
	if err != nil {
		return b.String() + "; the Datastore unread: " + err.Error()
	}
	fmt.Fprintf(&b, "; here now: %d follows of its author, followers count %d", follows, p.FollowersCount)
	return b.String()
}
