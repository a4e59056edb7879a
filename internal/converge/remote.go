package converge

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"socialstream/internal/federation"
	"socialstream/internal/federation/peer"
)

// The mix has another server of the fediverse in it: package peer over
// real HTTP, with people of its own whom people here follow through the
// Mastodon API. Its people post Notes and delete them; it accepts the
// follows it is sent. What it sends goes as a server's deliveries do,
// with their faults: late, twice, and out of order (a Delete may come
// before the Create it deletes, or a Create again after it); a 5xx is
// tried again. Now and then its inboxes are unreachable for a while, and
// the service's deliveries to it (Follows, Undos) must wait it out.
//
// The oracle then checks the feeds that follow: each of its Notes taken
// here shows on its author's page here, is in the homes of those who
// followed its author as the follows' history says (as a local post
// is), and once deleted is nowhere. A Note is taken only when someone
// here follows its author as it arrives: surely when a follow held all
// through one of its deliveries, never when none could have.

// remotePeople is how many people the other server has.
const remotePeople = 3

// remote is the other server of a run.
type remote struct {
	srv   *peer.Server
	inbox string // the service's shared inbox
	base  string // the service's root, as it federates
	// people are its people, with their ids here.
	people []remotePerson
	notes  atomic.Int64
	// flights counts its deliveries, begun and landed: the run ends
	// only once none is under way and the queues are empty (see drain).
	flights flights
	rng     *rand.Rand
	rngMu   sync.Mutex
	// twice and retried count its deliveries sent twice and those tried
	// again after a 5xx or no answer.
	twice, retried atomic.Int64
	// accepts are the Accepts it took of its people's Follows of people
	// here (farfollowers.go).
	accepts accepts
}

// RemoteReport is what the other server of a run did and found.
type RemoteReport struct {
	Notes, Taken, Deleted int // Notes sent; kept here and not deleted; deleted
	// Overtaken counts the Notes whose Create landed after their
	// Delete; Twice the deliveries sent twice; Retried those tried again
	// after a 5xx or no answer; InHomes the Notes seen in homes here.
	Overtaken, Twice, Retried, InHomes int
	// Refused counts the service's deliveries its inboxes refused while
	// unreachable (tried again later by their jobs).
	Refused int
	// Celebrity counts the Notes kept here that are a celebrity's: merged
	// into homes as they are read.
	Celebrity int
	// Reached counts the posts here it must have taken and took, its
	// people following their authors all through; Withheld those it must
	// not have and did not, none of its people following (farfollowers.go).
	Reached, Withheld int
}

type remotePerson struct {
	p  *peer.Person
	id string // their id here
}

// pendingFollow is a follow of a person there asked from here, until
// their server's Accept lands: when it was asked. An Accept the service
// takes (202) while it is pending begins the follow; an Accept of a
// Follow replaced since is refused, and one of a follow withdrawn or
// begun already changes nothing.
type pendingFollow struct {
	start time.Time
}

// taking says whether a Note was taken here: by some delivery surely,
// or maybe.
type taking struct{ sure, maybe bool }

// newRemote starts the other server of a run against the service at
// base (its root as it federates).
func newRemote(seed uint64, base string) *remote {
	rm := &remote{srv: peer.New(), base: base, inbox: base + "/inbox", rng: rand.New(rand.NewPCG(seed, 99)), accepts: accepts{at: map[string]time.Time{}}}
	for i := range remotePeople {
		rm.people = append(rm.people, remotePerson{p: rm.srv.Person(fmt.Sprintf("far%d", i))})
	}
	return rm
}

func (rm *remote) close() { rm.srv.Close() }

// intn draws from the other server's own stream: its deliveries run
// apart from any client.
func (rm *remote) intn(n int) int {
	rm.rngMu.Lock()
	defer rm.rngMu.Unlock()
	return rm.rng.IntN(n)
}

// meet finds the other server's people here, as u, and has the server
// answer the Follows it is sent.
func (r *runner) meet(ctx context.Context, u *user) error {
	rm := r.remote
	for i := range rm.people {
		acct := rm.people[i].p.Name + "@" + rm.srv.Domain
		var rep reply
		var err error
		for try := 0; try < 10; try++ { // a fault answers 503 now and then
			if rep, err = r.probe(ctx, "meet", "/api/v1/accounts/lookup?acct="+url.QueryEscape(acct), u.token, 200); err == nil {
				break
			}
		}
		if err != nil {
			return err
		}
		rm.people[i].id = str(rep.body, "id")
	}
	rm.srv.Hear(r.heard)
	return nil
}

// heard is the other server's answer to what it takes: a Follow of one
// of its people is accepted, late, and now and then twice.
func (r *runner) heard(got peer.Received) {
	rm := r.remote
	a := got.Activity
	if got.Err == nil && a["type"] == "Accept" {
		r.heardAccept(a) // of a Follow of a person here (farfollowers.go)
		return
	}
	if got.Err != nil || a["type"] != "Follow" {
		return
	}
	follower, ok := strings.CutPrefix(fmt.Sprint(a["actor"]), rm.base+federation.PeoplePath)
	var to *remotePerson
	for i := range rm.people {
		if rm.people[i].p.URI == fmt.Sprint(a["object"]) {
			to = &rm.people[i]
		}
	}
	if !ok || to == nil {
		r.m.violate(fmt.Sprintf("the other server took a Follow it cannot place: %v", a))
		return
	}
	followID := fmt.Sprint(a["id"])
	key := pair{follower, to.id}
	accept := map[string]any{"@context": "https://www.w3.org/ns/activitystreams", "id": to.p.URI + "#accepts/" + url.PathEscape(followID),
		"type": "Accept", "actor": to.p.URI, "object": a}
	rm.later(to.p, accept, func(start, end time.Time, status int) {
		defer r.lock("follow " + key.a + " " + key.b)()
		r.m.mu.Lock()
		defer r.m.mu.Unlock()
		pf := r.m.rPending[key]
		if status != http.StatusAccepted || pf == nil {
			return // refused, or a follow withdrawn or begun already
		}
		delete(r.m.rPending, key)
		r.m.rFollows[key] = append(r.m.rFollows[key], event{add: true, start: pf.start, end: end, copyLimit: -1})
		r.m.rFollowing[key] = true
	})
}

// later delivers activity, signed by from, as a server does: after a
// while, again on a 5xx or no answer, and now and then twice. landed is
// told of each delivery's end, in turn: when it began and ended, and the
// status it ended with (0: none).
func (rm *remote) later(from *peer.Person, activity map[string]any, landed func(start, end time.Time, status int)) {
	copies := 1
	if rm.intn(5) == 0 {
		copies = 2
		rm.twice.Add(1)
	}
	for c := range copies {
		delay := time.Duration(rm.intn(1500)) * time.Millisecond
		if c > 0 {
			delay += time.Duration(rm.intn(2000)) * time.Millisecond
		}
		rm.flights.begin()
		go func() {
			defer rm.flights.land()
			time.Sleep(delay)
			for try := 0; ; try++ {
				start := time.Now()
				status, _, err := rm.srv.Send(context.Background(), from, rm.inbox, activity)
				if err == nil && status < 500 || try == 20 {
					landed(start, time.Now(), status)
					return
				}
				rm.retried.Add(1)
				time.Sleep(time.Duration(100+rm.intn(400)) * time.Millisecond)
			}
		}()
	}
}

// pickRemote draws one of the other server's people.
func (rm *remote) pick(rng *rand.Rand) remotePerson { return rm.people[rng.IntN(len(rm.people))] }

// followRemote has a person here follow, or stop following, one of the
// other server's: a follow is a request until their server's Accept
// lands (heard), an unfollow ends it or withdraws it.
func (r *runner) followRemote(ctx context.Context, a *actor) (bool, error) {
	f, to := a.pick(), r.remote.pick(a.rng)
	key := pair{f.id, to.id}
	defer r.lock("follow " + key.a + " " + key.b)()
	r.m.mu.Lock()
	on := r.m.rFollowing[key] || r.m.rPending[key] != nil
	gone := f.gone
	r.m.mu.Unlock()
	if gone {
		return false, nil
	}
	op, path := "follow remote", "/api/v1/accounts/"+to.id+"/follow"
	if on {
		op, path = "unfollow remote", "/api/v1/accounts/"+to.id+"/unfollow"
	}
	start := time.Now()
	if !on {
		// Asked before the answer: the Follow may be delivered, and
		// accepted, before it.
		r.m.mu.Lock()
		r.m.rPending[key] = &pendingFollow{start: start}
		r.m.mu.Unlock()
	}
	// Both are the same when asked again: an answer lost is asked for
	// again until one comes.
	_, out := r.write(ctx, op, http.MethodPost, path, f.token, map[string]any{})
	failed := out != acked
	for try := 0; out == unknown; try++ {
		if try == 10 {
			return true, fmt.Errorf("%s: no answer in 10 tries", op)
		}
		_, out = r.write(ctx, op, http.MethodPost, path, f.token, map[string]any{})
	}
	end := time.Now()
	r.m.done(op, failed, end)
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	if on {
		if out == refused {
			return true, nil
		}
		r.m.endRemoteFollow(key, start, end)
		return true, nil
	}
	if out == refused {
		delete(r.m.rPending, key)
	}
	return true, nil
}

// endRemoteFollow records the end of key's follow, or of its ask, by an
// unfollow that ran from start to end. The caller holds m.mu.
func (m *model) endRemoteFollow(key pair, start, end time.Time) {
	pf := m.rPending[key]
	delete(m.rPending, key)
	switch {
	case m.rFollowing[key]:
		m.rFollows[key] = append(m.rFollows[key], event{start: start, end: end})
		m.rFollowing[key] = false
	case pf != nil:
		// The other server's Accept may have been taken here, and the
		// follow begun, before this ended it: a follow maybe, from the ask
		// to the end of this, and surely none after.
		m.rFollows[key] = append(m.rFollows[key], event{add: true, start: pf.start, end: end, copyLimit: -1}, event{start: start, end: end})
	}
}

// remotePost has one of the other server's people post a public Note,
// delivered late, maybe twice; now and then its Delete follows soon
// after, which may overtake it.
func (r *runner) remotePost(ctx context.Context, a *actor) (bool, error) {
	rm := r.remote
	by := rm.pick(a.rng)
	n := rm.notes.Add(1)
	q := &post{note: fmt.Sprintf("%s/statuses/%d", by.p.URI, n), author: by.id, title: fmt.Sprintf("far note %d of %s", n, by.p.Name),
		visibility: "public"}
	r.m.mu.Lock()
	r.m.rPosts = append(r.m.rPosts, q)
	r.m.rByNote[q.note] = q
	r.m.mu.Unlock()
	create := map[string]any{"@context": "https://www.w3.org/ns/activitystreams", "id": q.note + "/activity", "type": "Create",
		"actor": by.p.URI, "to": []string{federation.PublicCollection}, "cc": []string{by.p.URI + "/followers"},
		"object": map[string]any{"id": q.note, "type": "Note", "attributedTo": by.p.URI, "content": "<p>" + q.title + "</p>",
			"to": []string{federation.PublicCollection}, "cc": []string{by.p.URI + "/followers"}, "published": time.Now().UTC().Format(time.RFC3339)}}
	r.m.done("remote post", false, time.Now())
	rm.later(by.p, create, func(start, end time.Time, status int) { r.delivered(q, start, end, status) })
	if a.rng.IntN(5) == 0 || r.wants("remote post") {
		r.deleteRemote(q, by) // may overtake it
	}
	return true, nil
}

// delivered records a delivery of q's Create: it was taken surely if
// someone here followed its author all through the delivery, maybe if
// anyone's follow of them changed meanwhile (or is being erased).
func (r *runner) delivered(q *post, start, end time.Time, status int) {
	m := r.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if end.After(m.lastOp) {
		m.lastOp = end
	}
	if status != http.StatusAccepted {
		if status != 0 {
			m.violations = append(m.violations, fmt.Sprintf("remote post %s: the inbox answered %d", q.note, status))
		}
		return
	}
	if q.deleted && !q.overtaken {
		q.overtaken = true
		m.rOvertaken++
	}
	if q.start.IsZero() || start.Before(q.start) {
		q.start = start
	}
	if end.After(q.end) {
		q.end = end
	}
	// Each pair with a follow of q's author, had or asked for.
	var judged []string
	pairs := map[pair]bool{}
	for k := range m.rFollows {
		pairs[k] = true
	}
	for k := range m.rPending {
		pairs[k] = true
	}
	for k := range pairs {
		if k.b != q.author {
			continue
		}
		held, changed := false, false
		for _, ev := range m.rFollows[k] {
			switch {
			case ev.end.Before(start):
				held = ev.add
			case ev.start.Before(end):
				changed = true
			}
		}
		// A follow asked for may have begun here already: the Accept is
		// taken before its sender hears so (see heard).
		if pf := m.rPending[k]; pf != nil && pf.start.Before(end) {
			changed = true
		}
		erased := m.gone(k.a)
		switch {
		case held && !changed && !erased:
			q.taken.sure = true
			judged = append(judged, "surely by "+k.a)
		case held || changed:
			q.taken.maybe = true
			judged = append(judged, "maybe by "+k.a)
		}
	}
	slices.Sort(judged)
	q.landings = append(q.landings, fmt.Sprintf("%s-%s: taken %v", clock(start), clock(end), judged))
}

// remoteDelete has one of the other server's people delete a Note of
// theirs, which may still be on its way.
func (r *runner) remoteDelete(ctx context.Context, a *actor) (bool, error) {
	rm := r.remote
	by := rm.pick(a.rng)
	r.m.mu.Lock()
	var mine []*post
	for _, q := range r.m.rPosts {
		if q.author == by.id && !q.deleted && !q.deleting {
			mine = append(mine, q)
		}
	}
	r.m.mu.Unlock()
	if len(mine) == 0 {
		return false, nil
	}
	r.deleteRemote(mine[a.rng.IntN(len(mine))], by)
	r.m.done("remote delete", false, time.Now())
	return true, nil
}

// deleteRemote sends the Delete of q: once it lands, q is nowhere.
func (r *runner) deleteRemote(q *post, by remotePerson) {
	r.m.mu.Lock()
	q.deleting = true
	r.m.mu.Unlock()
	del := map[string]any{"@context": "https://www.w3.org/ns/activitystreams", "id": q.note + "#delete", "type": "Delete",
		"actor": by.p.URI, "to": []string{federation.PublicCollection},
		"object": map[string]any{"id": q.note, "type": "Tombstone"}}
	r.remote.later(by.p, del, func(start, end time.Time, status int) {
		r.m.mu.Lock()
		defer r.m.mu.Unlock()
		if end.After(r.m.lastOp) {
			r.m.lastOp = end
		}
		switch {
		case status == http.StatusAccepted && !q.deleted:
			q.deleted = true
			q.dropped = fmt.Sprintf("deleted by its server at %s", clock(end))
		case status != http.StatusAccepted && status != 0:
			r.m.violations = append(r.m.violations, fmt.Sprintf("remote delete %s: the inbox answered %d", q.note, status))
		}
	})
}

// remoteOutage has the other server's inboxes unreachable for a while.
func (r *runner) remoteOutage(ctx context.Context, a *actor) (bool, error) {
	r.remote.srv.Unreachable(true)
	time.Sleep(time.Duration(300+a.rng.IntN(1500)) * time.Millisecond)
	r.remote.srv.Unreachable(false)
	r.m.done("remote outage", false, time.Now())
	return true, nil
}

// flights counts deliveries of the other server: those begun, and those
// landed (their sender told of their end).
type flights struct{ begun, landed atomic.Int64 }

func (f *flights) begin() { f.begun.Add(1) }
func (f *flights) land()  { f.landed.Add(1) }

// idle waits until every delivery begun has landed.
func (f *flights) idle() {
	for f.landed.Load() < f.begun.Load() {
		time.Sleep(20 * time.Millisecond)
	}
}

// drain waits until the other server's deliveries and the service's
// queues are quiet together. Each feeds the other: a job sends the
// other server a Follow, and its Accept, delivered later, enqueues jobs
// here. So it waits for the deliveries, settles the queues, and does
// both again until no delivery began meanwhile. (The checker once
// compared while an Accept sent during the settling was under way: the
// follow it began was in the service and not yet in the model.)
func drain(f *flights, settle func()) {
	for {
		f.idle()
		begun := f.begun.Load()
		settle()
		if f.begun.Load() == begun && f.landed.Load() == begun {
			return
		}
	}
}
