package converge

// The operations of moderation: a report of a public post and its removal
// by the checker's moderator, who is named as the operator's command names
// the first admin and takes no other part in the mix.

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"socialstream/internal/accounts"
	"socialstream/internal/ids"
	"socialstream/internal/moderation"
	"socialstream/internal/store"
)

// staffName is the checker's moderator's username.
const staffName = "moderator0"

// startStaff registers the moderator and makes them an admin, through
// the faults (both are idempotent, so a fault is tried again).
func (r *runner) startStaff(ctx context.Context, db *store.DB) error {
	var rep reply
	for {
		var out outcome
		rep, out = r.write(ctx, "staff", http.MethodPost, "/auth/register", "", map[string]string{"username": staffName, "password": password}, http.StatusConflict)
		if out == acked {
			break
		}
		if rep, out = r.write(ctx, "staff", http.MethodPost, "/auth/login", "", map[string]string{"username": staffName, "password": password}, http.StatusUnauthorized); out == acked {
			break
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	r.staff = &user{id: str(entry(rep), "id"), name: staffName, token: str(rep.body, "token")}
	gen := ids.New()
	for tries := 0; ; tries++ {
		err := moderation.SetRole(ctx, db, gen, r.staff.id, accounts.RoleAdmin)
		if err == nil {
			return nil
		}
		if tries == 20 {
			return fmt.Errorf("converge: naming the moderator: %w", err)
		}
	}
}

// remove has one of a's users report someone else's public post, and the
// moderator remove it, resolving the report: from then on the oracle
// expects it (and reposts of it) nowhere. A report refused (the reporter
// cannot see the post any more, or has reported too much this hour) leaves
// the moderator to act on the post directly.
func (r *runner) remove(ctx context.Context, a *actor) (bool, error) {
	u := a.pick()
	r.m.mu.Lock()
	var candidates []*post
	for _, p := range r.m.posts {
		if !p.deleted && !p.removed && !p.removing && p.public() && p.repostOf == "" && p.author != u.id && !r.m.gone(p.author) {
			candidates = append(candidates, p)
		}
	}
	var p *post
	if len(candidates) > 0 {
		p = candidates[a.rng.IntN(len(candidates))]
		p.removing = true
	}
	r.m.mu.Unlock()
	if p == nil {
		return false, nil
	}
	defer r.lock("moderate " + p.id)() // no delete of it meanwhile
	removed := false
	defer func() {
		r.m.mu.Lock()
		p.removing, p.removed = false, p.removed || removed
		r.m.mu.Unlock()
	}()
	rep, out := r.writeIf(ctx, "report", http.MethodPost, "/social/rest/reports/@me", u.token,
		map[string]any{"accountId": p.author, "activityIds": []string{p.id}, "category": "spam", "comment": "checker"},
		r.blockedAnswer(u.id, p.author), http.StatusNotFound, http.StatusTooManyRequests)
	r.m.done("report", out != acked, time.Now())
	action := map[string]any{"action": "remove", "accountId": p.author, "activityIds": []string{p.id}, "reason": "checker"}
	report := ""
	if out == acked {
		report = str(entry(rep), "id")
		action = map[string]any{"action": "remove", "reportId": report, "reason": "checker"}
	}
	// A post deleted meanwhile is a 404; one whose author's account is
	// going may be refused otherwise too.
	_, out = r.writeIf(ctx, "remove", http.MethodPost, "/social/rest/moderation/actions", r.staff.token, action,
		r.goneAnswer(p.author), http.StatusNotFound)
	removed = out == acked
	if out == unknown {
		var err error
		if removed, err = r.removedByProbe(ctx, p.id, report); err != nil {
			return true, err
		}
	}
	r.m.done("remove", out != acked, time.Now())
	return true, nil
}

// removedByProbe tells whether the removal of id happened: by its report's
// state, or by the audit log.
func (r *runner) removedByProbe(ctx context.Context, id, report string) (bool, error) {
	if report != "" {
		rep, err := r.probe(ctx, "remove", "/social/rest/moderation/reports/"+report, r.staff.token, 200)
		if err != nil {
			return false, err
		}
		return str(entry(rep), "state") == moderation.Actioned, nil
	}
	rep, err := r.probe(ctx, "remove", "/social/rest/moderation/actions?count=100", r.staff.token, 200)
	if err != nil {
		return false, err
	}
	items, _ := rep.body["list"].([]any)
	for _, it := range items {
		e, _ := it.(map[string]any)
		named, _ := e["activityIds"].([]any)
		if str(e, "action") == moderation.Remove && slices.Contains(named, any(id)) {
			return true, nil
		}
	}
	return false, nil
}

// limit has the moderator limit someone, or lift their limit: from then
// on the oracle expects their posts (and reposts of them) in no @all or
// tag feed but their own reader's, and elsewhere with their followers
// alone.
func (r *runner) limit(ctx context.Context, a *actor) (bool, error) {
	u := r.someUser(a.rng)
	defer r.lock("standing " + u.id)()
	defer r.underWay(u.id)()
	r.m.mu.Lock()
	on, gone := !r.m.limited[u.id], r.m.gone(u.id)
	r.m.mu.Unlock()
	if gone {
		return false, nil
	}
	op := map[bool]string{true: moderation.Limit, false: moderation.Unlimit}[on]
	_, out := r.writeIf(ctx, op, http.MethodPost, "/social/rest/moderation/actions", r.staff.token,
		map[string]any{"action": op, "accountId": u.id, "reason": "checker"}, r.goneAnswer(u.id))
	r.m.mu.Lock()
	now := r.m.limited[u.id]
	r.m.mu.Unlock()
	switch out {
	case acked:
		now = on
	case unknown:
		// Their account says: the audit log's newest entries may be
		// others' by the time it is read.
		var err error
		if now, err = r.truth(ctx, func(l *store.Lookup) func() bool {
			rec := accounts.Read(l, u.id)
			return func() bool { return rec.Account().Limited }
		}); err != nil {
			return true, err
		}
	}
	r.m.done(op, out != acked, time.Now())
	r.m.mu.Lock()
	r.m.limited[u.id] = now
	r.m.standings[u.id] = append(r.m.standings[u.id], fmt.Sprintf("%s %s, %s: limited %v", op, time.Now().Format("15:04:05.000"), out, now))
	r.m.mu.Unlock()
	return true, nil
}

// suspend has the moderator suspend one of a's users, or lift the
// suspension of one: a suspended user takes no part in the mix (their
// tokens end), and the oracle expects their posts and reposts of them in
// no feed, and their likes and comments in no count; lifted, they sign in
// anew and all is back.
func (r *runner) suspend(ctx context.Context, a *actor) (bool, error) {
	if len(a.suspended) > 0 && (len(a.users) < 2 || a.rng.IntN(2) == 0) {
		return true, r.unsuspend(ctx, a)
	}
	if len(a.users) < 2 {
		return false, nil
	}
	i := a.rng.IntN(len(a.users))
	u := a.users[i]
	defer r.lock("standing " + u.id)()
	defer r.underWay(u.id)()
	r.trust(ctx, u)
	_, out := r.write(ctx, "suspend", http.MethodPost, "/social/rest/moderation/actions", r.staff.token,
		map[string]any{"action": moderation.Suspend, "accountId": u.id, "reason": "checker"})
	now := out == acked
	if out == unknown {
		// A sign-in says: 403 while suspended.
		rep, err := r.signIn(ctx, u)
		if err != nil {
			return true, err
		}
		now = rep.status == http.StatusForbidden
	}
	r.m.done("suspend", out != acked, time.Now())
	r.standing(u, "suspend", out, now)
	if !now {
		return true, nil
	}
	r.staleWrites(ctx, u, "suspended", http.StatusForbidden, http.StatusUnauthorized)
	a.users = slices.Delete(a.users, i, i+1)
	a.suspended = append(a.suspended, u)
	r.m.mu.Lock()
	r.m.suspended[u.id] = true
	r.m.mu.Unlock()
	return true, nil
}

// unsuspend lifts the suspension of one of a's suspended users, who then
// signs in anew.
func (r *runner) unsuspend(ctx context.Context, a *actor) error {
	i := a.rng.IntN(len(a.suspended))
	u := a.suspended[i]
	defer r.lock("standing " + u.id)()
	defer r.underWay(u.id)()
	_, out := r.write(ctx, "unsuspend", http.MethodPost, "/social/rest/moderation/actions", r.staff.token,
		map[string]any{"action": moderation.Unsuspend, "accountId": u.id, "reason": "checker"})
	r.m.done("unsuspend", out != acked, time.Now())
	rep, err := r.signIn(ctx, u)
	if err != nil {
		return err
	}
	r.standing(u, "unsuspend", out, rep.status == http.StatusForbidden)
	switch {
	case rep.status == http.StatusForbidden && out != acked:
		return nil // still suspended
	case rep.status != http.StatusOK:
		r.m.violate(fmt.Sprintf("unsuspend: %s signs in with %d %v", u.name, rep.status, rep.body))
		return nil
	}
	u.token = str(rep.body, "token")
	a.suspended = slices.Delete(a.suspended, i, i+1)
	a.users = append(a.users, u)
	r.m.mu.Lock()
	delete(r.m.suspended, u.id)
	r.m.mu.Unlock()
	return nil
}

// standing records a change of u's suspension, asked and resolved: what
// a delivery that ran meanwhile decided of u's notifications, or of
// theirs, is not the oracle's to expect (checkPush), whatever the change
// came to.
func (r *runner) standing(u *user, op string, out outcome, suspended bool) {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	r.m.standings[u.id] = append(r.m.standings[u.id], fmt.Sprintf("%s %s, %s: suspended %v", op, time.Now().Format("15:04:05.000"), out, suspended))
}

// trust has the second instance verify u's token, which it then trusts
// for its token cache's life (30 seconds) without reading it again.
func (r *runner) trust(ctx context.Context, u *user) {
	_, _ = r.other.read(ctx, "/social/rest/people/@me/@self", u.token)
}

// staleWrites sends writes of u's through the second instance, whose token
// cache may still trust u's token after u was suspended or deleted through
// the first: each must be refused with one of statuses (a refusal of the
// actor; 401 once the cache has let the token go), and none may land. A
// transient failure is tried again.
func (r *runner) staleWrites(ctx context.Context, u *user, what string, statuses ...int) {
	r.seq.Lock()
	r.n++
	title := fmt.Sprintf("stale %d by %s", r.n, u.name)
	r.seq.Unlock()
	writes := []func() (reply, error){
		func() (reply, error) {
			return r.other.call(ctx, http.MethodPost, "/social/rest/activities/@me/@self", u.token, map[string]string{"title": title})
		},
		func() (reply, error) {
			return r.other.rpcCall(ctx, "people.create", u.token, map[string]string{"userId": "@me", "groupId": "@friends", "id": r.staff.id})
		},
		func() (reply, error) {
			return r.other.call(ctx, http.MethodPost, "/social/rest/tags/@me", u.token, map[string]string{"name": tagNames[0]})
		},
	}
	for _, w := range writes {
		for try := 0; try < 10; try++ {
			rep, err := w()
			if err != nil || rep.status == http.StatusServiceUnavailable {
				continue
			}
			if !slices.Contains(statuses, rep.status) {
				r.m.violate(fmt.Sprintf("stale token: %s, %s, wrote through another instance: %d %v", u.name, what, rep.status, rep.body))
			}
			break
		}
	}
}

// underWay marks a suspension or lift of id under way until the function
// it returns is called.
func (r *runner) underWay(id string) func() {
	r.m.mu.Lock()
	r.m.suspending[id]++
	r.m.moderated[id] = true
	r.m.mu.Unlock()
	return func() {
		r.m.mu.Lock()
		r.m.suspending[id]--
		r.m.mu.Unlock()
	}
}

// signIn signs u in, through the faults, until an answer says how it went.
func (r *runner) signIn(ctx context.Context, u *user) (reply, error) {
	for tries := 0; ; tries++ {
		rep, err := r.c.call(ctx, http.MethodPost, "/auth/login", "", map[string]string{"username": u.name, "password": password})
		if err == nil && rep.status != http.StatusServiceUnavailable && rep.status < 500 {
			return rep, nil
		}
		if tries == 20 || ctx.Err() != nil {
			return rep, fmt.Errorf("sign in %s: %v %d", u.name, err, rep.status)
		}
	}
}
