package converge

// The operations on groups: creating them, joining, invitations,
// leaving and removals by the owner.

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// ownerGone tolerates the refusals a join, acceptance or refusal may get
// while the group's owner's account is being deleted: 409 until the group
// is handed on, 404 once it is deleted.
func (r *runner) ownerGone(g *group) func(int) bool {
	return func(status int) bool {
		r.m.mu.Lock()
		defer r.m.mu.Unlock()
		return r.m.gone(g.owner) && (status == 403 || status == 404 || status == 409)
	}
}

// groupsOf lists the ids of the groups of user (by id or @me).
func (r *runner) groupsOf(ctx context.Context, who, token string) (map[string]string, error) {
	items, err := r.c.list(ctx, "/social/rest/groups/"+who, token)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, it := range items {
		out[str(it, "id")] = str(it, "title")
	}
	return out, nil
}

func (r *runner) createGroup(ctx context.Context, a *actor) (bool, error) {
	u := a.pick()
	r.seq.Lock()
	r.n++
	title := fmt.Sprintf("group %d", r.n)
	r.seq.Unlock()
	policy := "open"
	if a.rng.IntN(2) == 0 {
		policy = "closed"
	}
	start := time.Now()
	rep, out := r.write(ctx, "create group", http.MethodPost, "/social/rest/groups/@me", u.token, map[string]string{"title": title, "joinPolicy": policy}, http.StatusConflict)
	id := ""
	if out == acked {
		id = str(entry(rep), "id")
	}
	if out == unknown {
		gs, err := r.groupsOf(ctx, "@me", u.token)
		if err != nil {
			return true, err
		}
		for gid, t := range gs {
			if t == title {
				id = gid
			}
		}
	}
	end := time.Now()
	r.m.done("create group", out != acked, end)
	if id != "" {
		r.m.mu.Lock()
		r.m.groups = append(r.m.groups, &group{id: id, owner: u.id, title: title, policy: policy})
		key := pair{id, u.id}
		r.m.members[key] = append(r.m.members[key], event{add: true, start: start, end: end, copyLimit: 0})
		r.m.isMember[key] = true
		r.m.mu.Unlock()
	}
	return true, nil
}

// membership changes (group, user) on behalf of actor: add or remove.
func (r *runner) membership(ctx context.Context, op string, actor *user, g *group, target *user, add bool, refusals ...int) error {
	defer r.lock("member " + g.id + " " + target.id)()
	key := pair{g.id, target.id}
	r.m.mu.Lock()
	before := r.m.isMember[key]
	r.m.mu.Unlock()
	start := time.Now()
	var out outcome
	rpc := actor == target && r.turns.Add(1)%2 == 0 // half of one's own joins and leaves by JSON-RPC
	switch {
	case rpc:
		method := map[bool]string{true: "groups.join", false: "groups.leave"}[add]
		_, out = r.writeIf(ctx, op, viaRPC, method, actor.token, map[string]string{"groupId": g.id}, r.ownerGone(g), append(refusals, http.StatusConflict)...)
	case add:
		id := target.id
		if actor == target {
			id = "@me"
		}
		_, out = r.writeIf(ctx, op, http.MethodPost, "/social/rest/groups/@all/"+g.id+"/members", actor.token, map[string]string{"id": id}, r.ownerGone(g), append(refusals, http.StatusConflict)...)
	default:
		_, out = r.writeIf(ctx, op, http.MethodDelete, "/social/rest/groups/@all/"+g.id+"/members/"+target.id, actor.token, nil, r.ownerGone(g))
	}
	now := before
	switch out {
	case acked:
		now = add
	case unknown:
		gs, err := r.groupsOf(ctx, target.id, actor.token)
		if err != nil {
			return err
		}
		_, now = gs[g.id]
	}
	end := time.Now()
	r.m.done(op, out != acked, end)
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	if now != before {
		r.m.members[key] = append(r.m.members[key], event{add: now, start: start, end: end, copyLimit: -1})
	}
	r.m.isMember[key] = now
	if out != unknown {
		delete(r.m.invited, key) // accepted, declined, or never there
	}
	return nil
}

// someGroup picks a group for which ok holds.
func (r *runner) someGroup(a *actor, ok func(g *group) bool) *group {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	var gs []*group
	for _, g := range r.m.groups {
		if ok(g) {
			gs = append(gs, g)
		}
	}
	if len(gs) == 0 {
		return nil
	}
	return gs[a.rng.IntN(len(gs))]
}

func (r *runner) memberNow(g, u string) bool {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	return r.m.isMember[pair{g, u}]
}

func (r *runner) join(ctx context.Context, a *actor) (bool, error) {
	u := a.pick()
	g := r.someGroup(a, func(g *group) bool { return g.policy == "open" && !r.m.isMember[pair{g.id, u.id}] })
	if g == nil {
		return false, nil
	}
	return true, r.membership(ctx, "join", u, g, u, true)
}

// invite is an owner's invitation of someone else: no membership until
// they accept.
func (r *runner) invite(ctx context.Context, a *actor) (bool, error) {
	o := a.pick()
	g := r.someGroup(a, func(g *group) bool { return g.owner == o.id })
	v := r.otherUser(a, o.id)
	if g == nil || v == nil || r.memberNow(g.id, v.id) {
		return false, nil
	}
	defer r.lock("member " + g.id + " " + v.id)()
	_, out := r.writeIf(ctx, "invite", http.MethodPost, "/social/rest/groups/@all/"+g.id+"/members", o.token, map[string]string{"id": v.id}, r.hiddenFromAnswer(o.id, v.id))
	r.m.done("invite", out != acked, time.Now())
	if out != refused {
		r.m.mu.Lock()
		r.m.invited[pair{g.id, v.id}] = true
		r.m.mu.Unlock()
	}
	return true, nil
}

// invitation picks one of a's users and a group it may be invited to.
func (r *runner) invitation(a *actor) (*user, *group) {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	type open struct {
		u *user
		g *group
	}
	var all []open
	for _, u := range a.users {
		for _, g := range r.m.groups {
			if k := (pair{g.id, u.id}); r.m.invited[k] && !r.m.isMember[k] {
				all = append(all, open{u, g})
			}
		}
	}
	if len(all) == 0 {
		return nil, nil
	}
	o := all[a.rng.IntN(len(all))]
	return o.u, o.g
}

// accept joins a group one may be invited to; a closed group refuses it
// (403) when the invitation never landed.
func (r *runner) accept(ctx context.Context, a *actor) (bool, error) {
	u, g := r.invitation(a)
	if g == nil {
		return false, nil
	}
	return true, r.membership(ctx, "accept", u, g, u, true, http.StatusForbidden)
}

// decline ends an invitation: membership does not change.
func (r *runner) decline(ctx context.Context, a *actor) (bool, error) {
	u, g := r.invitation(a)
	if g == nil {
		return false, nil
	}
	return true, r.membership(ctx, "decline", u, g, u, false)
}

func (r *runner) leave(ctx context.Context, a *actor) (bool, error) {
	u := a.pick()
	g := r.someGroup(a, func(g *group) bool { return g.owner != u.id && !r.m.gone(g.owner) && r.m.isMember[pair{g.id, u.id}] })
	if g == nil {
		return false, nil
	}
	return true, r.membership(ctx, "leave", u, g, u, false)
}

func (r *runner) ownerRemove(ctx context.Context, a *actor) (bool, error) {
	o := a.pick()
	if r.wants("owner removes") {
		o = r.anOwner(a) // rare: any of the actor's people who owns a group, not one picked at random
	}
	g := r.someGroup(a, func(g *group) bool { return g.owner == o.id })
	if g == nil {
		return false, nil
	}
	r.m.mu.Lock()
	var members []*user
	for _, u := range r.m.users {
		if u.id != o.id && !u.gone && r.m.isMember[pair{g.id, u.id}] {
			members = append(members, u)
		}
	}
	r.m.mu.Unlock()
	if len(members) == 0 {
		return false, nil
	}
	return true, r.membership(ctx, "owner removes", o, g, members[a.rng.IntN(len(members))], false)
}

// anOwner returns one of a's people who owns a group with a member
// besides them, the first found (a's pick, when none does).
func (r *runner) anOwner(a *actor) *user {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	for _, o := range a.users {
		for _, g := range r.m.groups {
			if g.owner == o.id && !o.gone && r.hasOtherMember(g, o) {
				return o
			}
		}
	}
	return a.pick()
}

// hasOtherMember reports whether g has a member besides o (with the
// model's lock held).
func (r *runner) hasOtherMember(g *group, o *user) bool {
	for _, u := range r.m.users {
		if u.id != o.id && !u.gone && r.m.isMember[pair{g.id, u.id}] {
			return true
		}
	}
	return false
}
