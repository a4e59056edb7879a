package converge

// The operations of locked accounts: locking and unlocking, and deciding
// the requests to follow (follows and withdrawals are in people.go).

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"time"

	"socialstream/internal/graph"
	"socialstream/internal/store"
)

// setLocked locks one of a's users, or unlocks them: then the job that
// approves what was pending runs, and the operation waits for it, so the
// follows it makes fall within the operation's window.
func (r *runner) setLocked(ctx context.Context, a *actor) (bool, error) {
	u := a.pick()
	defer r.lock("standing " + u.id)()
	r.m.mu.Lock()
	lock := !r.m.locked[u.id]
	r.m.mu.Unlock()
	op := map[bool]string{true: "lock", false: "unlock"}[lock]
	if !lock {
		// Until the model records what the unlock approved, those
		// requests may be follows already (mayApprove).
		r.m.mu.Lock()
		r.m.unlocking[u.id]++
		r.m.mu.Unlock()
		defer func() {
			r.m.mu.Lock()
			r.m.unlocking[u.id]--
			r.m.mu.Unlock()
		}()
	}
	start := time.Now()
	_, out := r.write(ctx, op, http.MethodPut, "/social/rest/people/@me/@self", u.token, map[string]bool{"locked": lock})
	now := out == acked
	if out == unknown {
		rep, err := r.probe(ctx, op, "/social/rest/people/@me/@self", u.token, 200)
		if err != nil {
			return true, err
		}
		now = entry(rep)["locked"] == lock
	}
	if !now {
		r.m.done(op, true, time.Now())
		return true, nil
	}
	if !lock {
		// The unlock's job approves what is pending: wait for it.
		deadline := time.Now().Add(3 * time.Minute)
		for {
			items, err := r.c.list(ctx, "/social/rest/people/@me/@requests", u.token)
			if err != nil {
				return true, err
			}
			if len(items) == 0 {
				break
			}
			if time.Now().After(deadline) {
				r.m.violate(fmt.Sprintf("unlock: %s still has %d requests pending 3 minutes after unlocking", u.name, len(items)))
				break
			}
			select {
			case <-ctx.Done():
				return true, ctx.Err()
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	end := time.Now()
	r.m.done(op, out != acked, end)
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	r.m.locked[u.id] = lock
	if !lock {
		for k, limit := range r.m.requested {
			if k.b != u.id {
				continue
			}
			delete(r.m.requested, k)
			if !r.m.gone(k.a) && !r.m.following[k] {
				r.m.follows[k] = append(r.m.follows[k], event{add: true, start: start, end: end, copyLimit: limit})
				r.m.following[k] = true
			}
		}
	}
	return true, nil
}

// decide makes one of a's users approve, or reject, a pending request to
// follow them.
func (r *runner) decide(ctx context.Context, a *actor) (bool, error) {
	r.m.mu.Lock()
	var pending []pair
	for k := range r.m.requested {
		if slices.Contains(a.users, r.m.byID[k.b]) && !r.m.gone(k.a) {
			pending = append(pending, k)
		}
	}
	r.m.mu.Unlock()
	if len(pending) == 0 {
		return false, nil
	}
	sort.Slice(pending, func(i, j int) bool { return pending[i].a+pending[i].b < pending[j].a+pending[j].b })
	k := pending[a.rng.IntN(len(pending))]
	r.m.mu.Lock()
	u, requester := r.m.byID[k.b], r.m.byID[k.a]
	r.m.mu.Unlock()
	defer r.lock("standing " + u.id)()
	defer r.lock("follow " + k.a + " " + k.b)()
	r.m.mu.Lock()
	limit, ok := r.m.requested[k]
	if ok {
		r.m.approving[k]++ // an approval, or a rejection, under way: mayApprove
	}
	r.m.mu.Unlock()
	if !ok {
		return true, nil // decided meanwhile
	}
	defer func() {
		r.m.mu.Lock()
		r.m.approving[k]--
		r.m.mu.Unlock()
	}()
	approve := a.rng.IntN(3) > 0
	// Past the mix's Duration, the one of the two that ran less goes
	// first: decisions are rare, and each must run (MinEach).
	switch wantReject, wantApprove := r.wants("reject"), r.wants("approve"); {
	case wantReject && wantApprove:
		approve = r.ran("approve") <= r.ran("reject")
	case wantReject:
		approve = false
	case wantApprove:
		approve = true
	}
	op, method, path := "approve", http.MethodPost, "/social/rest/people/@me/@followers"
	var body any = map[string]string{"id": requester.id}
	if !approve {
		op, method, path, body = "reject", http.MethodDelete, "/social/rest/people/@me/@requests/"+requester.id, nil
	}
	start := time.Now()
	_, out := r.writeIf(ctx, op, method, path, u.token, body, r.goneAnswer(requester.id))
	followed, pending2 := out == acked && approve, out != acked
	if out == unknown {
		var err error
		if followed, err = r.held(ctx, op, requester.id, "/social/rest/people/@me/@followers/"+requester.id, u.token, func(l *store.Lookup) func() bool {
			return graph.Follows(l, requester.id, u.id).Found
		}); err != nil {
			return true, err
		}
		asked, err := r.probe(ctx, op, "/social/rest/people/@me/@requests/"+requester.id, u.token, 200, 404)
		if err != nil {
			return true, err
		}
		pending2 = asked.status == 200
	}
	end := time.Now()
	r.m.done(op, out != acked, end)
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	if !pending2 {
		delete(r.m.requested, k)
	}
	if followed {
		r.m.follows[k] = append(r.m.follows[k], event{add: true, start: start, end: end, copyLimit: limit})
		r.m.following[k] = true
	}
	return true, nil
}
