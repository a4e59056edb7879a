package converge

// The other server's people follow people here too, and stop: their
// Follows and Undos come to the service's inbox as that server sends
// them (one at a time for each pair, each tried again on a 5xx or no
// answer). A post here then goes to that server as its author's remote
// followers stand when the post's job runs.
//
// The oracle checks both ways, for each live post here that goes to
// followers (public, unlisted, followers-only; no repost, reply or
// mention of theirs, which go there on their own account): its Create
// reached the other server when one of its people followed the author
// all through (their Follow accepted, its Accept there, before the post
// began, and never undone), whatever the faults and the server's
// outages did to the deliveries; and never reached it when none of its
// people followed the author from before the post began (each one's
// last Follow undone before it).

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"socialstream/internal/federation"
)

// farOp is a Follow of a person here by one of the other server's
// people, or its Undo, as the service's inbox answered it.
type farOp struct {
	follow     bool
	id         string // the Follow's id (for an Undo, the Follow it undoes)
	start, end time.Time
	status     int // the inbox's answer (0: none)
}

// farFollow has one of the other server's people follow the actor's
// person here, or undo their last Follow of them: half the time a pair
// that follows, so that undoing is as common as following.
func (r *runner) farFollow(ctx context.Context, a *actor) (bool, error) {
	rm := r.remote
	u, by := a.pick(), rm.pick(a.rng)
	if a.rng.IntN(2) == 0 {
		if f, ok := r.someFarFollow(a); ok {
			u, by = f.u, f.by
		}
	}
	key := pair{by.id, u.id}
	// Held with the person's standing: a Follow of someone unlocked, in
	// good standing, begins a follow, not a request.
	defer r.lock("standing " + u.id)()
	defer r.lock("far follow " + key.a + " " + key.b)()
	r.m.mu.Lock()
	ops := slices.Clone(r.m.farOps[key])
	odd := u.gone || r.m.locked[u.id] || r.m.limited[u.id] || r.m.mayBeSuspended(u.id)
	r.m.mu.Unlock()
	if odd || by.id == "" {
		return false, nil
	}
	op := farOp{follow: true, id: fmt.Sprintf("%s/follows/%s/%d", by.p.URI, u.id, len(ops))}
	follow := map[string]any{"@context": "https://www.w3.org/ns/activitystreams", "id": op.id, "type": "Follow",
		"actor": by.p.URI, "object": rm.base + federation.PeoplePath + u.id}
	activity, name := follow, "far follow"
	if n := len(ops); n > 0 && ops[n-1].follow {
		op = farOp{id: ops[n-1].id}
		follow["id"] = op.id
		activity, name = map[string]any{"@context": "https://www.w3.org/ns/activitystreams", "id": op.id + "/undo", "type": "Undo",
			"actor": by.p.URI, "object": follow}, "far unfollow"
	}
	op.start = time.Now()
	for try := 0; try < 20; try++ {
		status, _, err := rm.srv.Send(ctx, by.p, rm.inbox, activity)
		if err == nil && status < 500 {
			op.status = status
			break
		}
		rm.retried.Add(1)
		time.Sleep(time.Duration(100+a.rng.IntN(400)) * time.Millisecond)
	}
	op.end = time.Now()
	r.m.done(name, op.status != http.StatusAccepted, op.end)
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	r.m.farOps[key] = append(r.m.farOps[key], op)
	if op.status == 0 {
		return true, fmt.Errorf("%s: the service's inbox gave no answer in 20 tries", name)
	}
	return true, nil
}

// farFollowing is a follow of a person here by one of the other
// server's people.
type farFollowing struct {
	u  *user
	by remotePerson
}

// someFarFollow draws a follow of one of the actor's people by the other
// server's, as their last Follow or Undo left it (false: none).
func (r *runner) someFarFollow(a *actor) (farFollowing, bool) {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	var on []farFollowing
	for _, u := range a.users {
		for _, by := range r.remote.people {
			if ops := r.m.farOps[pair{by.id, u.id}]; len(ops) > 0 && ops[len(ops)-1].follow {
				on = append(on, farFollowing{u, by})
			}
		}
	}
	if len(on) == 0 {
		return farFollowing{}, false
	}
	return on[a.rng.IntN(len(on))], true
}

// accepts are when the other server took each Accept of a Follow of
// its people's, by the Follow's id. Its inbox records them as it takes
// them, so under a lock of their own: the model's may be held meanwhile
// by what waits on that inbox.
type accepts struct {
	mu sync.Mutex
	at map[string]time.Time
}

// heardAccept records when the other server took the Accept of a Follow
// of one of its people (by the Follow's id).
func (r *runner) heardAccept(a map[string]any) {
	id := fmt.Sprint(a["object"])
	if obj, ok := a["object"].(map[string]any); ok {
		id = fmt.Sprint(obj["id"])
	}
	acc := &r.remote.accepts
	acc.mu.Lock()
	defer acc.mu.Unlock()
	if _, ok := acc.at[id]; !ok {
		acc.at[id] = time.Now()
	}
}

// acceptedAt returns when the other server took the Accept of Follow id.
func (acc *accepts) acceptedAt(id string) (time.Time, bool) {
	acc.mu.Lock()
	defer acc.mu.Unlock()
	at, ok := acc.at[id]
	return at, ok
}

// farFollows reports whether far follows the person here now: the last
// of their Follows and Undos the inbox took (202) is a Follow, of someone
// unlocked and in good standing (farFollow). The caller holds m.mu.
func (m *model) farFollows(far, id string) bool {
	ops := m.farOps[pair{far, id}]
	for i := len(ops) - 1; i >= 0; i-- {
		if ops[i].status == http.StatusAccepted {
			return ops[i].follow
		}
	}
	return false
}

// farFollowedAllThrough reports whether far followed author from before
// t to the end: their last Follow taken, its Accept at their server
// before t, and not undone. The caller holds m.mu.
func (m *model) farFollowedAllThrough(acc *accepts, far, author string, t time.Time) bool {
	ops := m.farOps[pair{far, author}]
	if len(ops) == 0 || m.everBlocked[pair{author, far}] || m.everBlocked[pair{far, author}] {
		return false
	}
	last := ops[len(ops)-1]
	at, ok := acc.acceptedAt(last.id)
	return last.follow && last.status == http.StatusAccepted && ok && at.Before(t)
}

// farFollowedNever reports whether far followed author at no time from
// t on: never asked to, or their last Follow undone before t (an Undo
// the inbox took, of a Follow or of a request). The caller holds m.mu.
func (m *model) farFollowedNever(far, author string, t time.Time) bool {
	ops := m.farOps[pair{far, author}]
	if len(ops) == 0 {
		return true
	}
	last := ops[len(ops)-1]
	return !last.follow && last.status == http.StatusAccepted && last.end.Before(t)
}

// checkFarFollowers: each live post here that goes to followers reached
// the other server when one of its people followed its author all
// through, and never when none of them did at any time since it began.
func (o *oracle) checkFarFollowers(_ context.Context, rep *Report) error {
	rm := o.r.remote
	took, signed := map[string]bool{}, map[string]bool{}
	for _, got := range rm.srv.Received() {
		if got.Activity["type"] != "Create" {
			continue
		}
		obj, _ := got.Activity["object"].(map[string]any)
		id := fmt.Sprint(obj["id"])
		took[id] = true
		if got.Err == nil {
			signed[id] = true
		}
	}
	for _, p := range o.live {
		note := rm.base + "/statuses/" + federation.Number(p.id)
		switch o.farOwed(p) {
		case owedSurely:
			if !signed[note] {
				rep.Violations = append(rep.Violations, fmt.Sprintf("the post %s of %s, whom the other server's people followed all through, never reached it", p.id, p.author))
			} else {
				rep.Remote.Reached++
			}
		case owedNever:
			if took[note] {
				rep.Violations = append(rep.Violations, fmt.Sprintf("the post %s of %s reached the other server, whose people did not follow %s from before it", p.id, p.author, p.author))
			} else {
				rep.Remote.Withheld++
			}
		}
	}
	return nil
}

// What the other server is owed of a post here.
const (
	owedMaybe  = iota // it may or may not have it
	owedSurely        // it must have it
	owedNever         // it must not
)

// farOwed says whether the other server must have p's Create: surely
// when one of its people followed p's author all through, never when
// none did since it began; maybe for a post that goes there on another
// account (a repost, a reply, a post for the mentioned, a mention of its
// people), one under removal, or one whose author's standing changed.
// The caller holds m.mu (check does).
func (o *oracle) farOwed(p *post) int {
	m, rm := o.m, o.r.remote
	if p.repostOf != "" || p.inReplyTo != "" || p.visibility == "mentioned" || p.removing {
		return owedMaybe
	}
	sure, never := false, true
	for _, q := range rm.people {
		if slices.Contains(p.mentions, q.id) {
			return owedMaybe
		}
		sure = sure || m.farFollowedAllThrough(&rm.accepts, q.id, p.author, p.start)
		never = never && m.farFollowedNever(q.id, p.author, p.start)
	}
	switch {
	case sure && !m.moderated[p.author] && !m.deleted(p.author):
		return owedSurely
	case never:
		return owedNever
	}
	return owedMaybe
}
