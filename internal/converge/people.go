package converge

// The operations on people: registering, sessions, follows, blocks,
// mutes and deleting an account.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sort"
	"time"

	"socialstream/internal/blocks"
	"socialstream/internal/graph"
	"socialstream/internal/mutes"
	"socialstream/internal/store"
)

// follows reports whether the model has a following b.
func (r *runner) follows(a, b string) bool {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	return r.m.following[pair{a, b}]
}

// newcomer picks one of the four users registered last, other than not.
func (r *runner) newcomer(a *actor, not string) *user {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	n := len(r.m.users)
	u := r.m.users[max(0, n-1-a.rng.IntN(min(4, n)))]
	if u.id == not || u.gone {
		return nil
	}
	return u
}

// password is every checker user's.
const password = "correct horse battery"

func (r *runner) register(ctx context.Context, a *actor) error {
	a.count++
	name := fmt.Sprintf("u%d_%d", a.n, a.count)
	rep, out := r.write(ctx, "register", http.MethodPost, "/auth/register", "", map[string]string{"username": name, "password": password}, http.StatusConflict)
	failed := out != acked
	if out == unknown || out == refused {
		// A 409 for one's own name means an earlier attempt took it.
		for {
			rep, out = r.write(ctx, "register (login)", http.MethodPost, "/auth/login", "", map[string]string{"username": name, "password": password}, http.StatusUnauthorized)
			if out != unknown {
				break
			}
		}
	}
	end := time.Now()
	r.m.done("register", failed, end)
	if out != acked {
		return nil // never registered
	}
	u := &user{id: str(entry(rep), "id"), name: name, token: str(rep.body, "token")}
	if u.id == "" || u.token == "" {
		return fmt.Errorf("register %s: no id or token in %v", name, rep.body)
	}
	if a.count%2 == 0 { // before they post: every post of theirs is found
		if err := r.makeIndexable(ctx, u); err != nil {
			return err
		}
	}
	r.subscribe(ctx, u)
	a.users = append(a.users, u)
	r.m.mu.Lock()
	r.m.users = append(r.m.users, u)
	r.m.byID[u.id] = u
	r.m.mu.Unlock()
	return nil
}

func (r *runner) follow(ctx context.Context, a *actor) (bool, error) {
	f := a.pick()
	b := r.otherUser(a, f.id)
	if a.rng.IntN(10) < 4 {
		// Newcomers are followed while they post their first activities:
		// the race of a post with a follow whose job finds nothing yet.
		b = r.newcomer(a, f.id)
	}
	if b == nil {
		return false, nil
	}
	return true, r.followAs(ctx, f, b, copyLimit(a.rng))
}

// copyLimit draws a follow's copyLimit: none (-1, the default), 0, or 1 to 6.
func copyLimit(rng *rand.Rand) int {
	switch k := rng.IntN(10); {
	case k < 3:
		return 0
	case k < 6:
		return 1 + rng.IntN(6)
	}
	return -1
}

// followAs makes f follow b with copyLimit limit (-1: none given); if b
// is locked, f asks to.
func (r *runner) followAs(ctx context.Context, f, b *user, limit int) error {
	path := "/social/rest/people/@me/@friends"
	if limit >= 0 {
		path += fmt.Sprintf("?copyLimit=%d", limit)
	}
	key := pair{f.id, b.id}
	defer r.lock("standing " + b.id)()
	defer r.lock("follow " + f.id + " " + b.id)()
	r.m.mu.Lock()
	before := r.m.following[key]
	blocked := r.m.between(f.id, b.id)
	locked := r.m.locked[b.id]
	r.m.mu.Unlock()
	var refusals []int
	if blocked {
		refusals = append(refusals, http.StatusForbidden)
	}
	start := time.Now()
	rep, out := r.writeIf(ctx, "follow", http.MethodPost, path, f.token, map[string]string{"id": b.id}, r.hiddenAnswer(b.id), refusals...)
	now, asked := out == acked && rep.status != http.StatusAccepted, out == acked && rep.status == http.StatusAccepted
	if out == unknown && locked && !before {
		rep, err := r.probe(ctx, "follow", "/social/rest/people/@me/@requested/"+b.id, f.token, 200, 404)
		if err != nil {
			return err
		}
		asked = rep.status == 200
	} else if out == unknown {
		var err error
		if now, err = r.followsNow(ctx, "follow", f, b.id); err != nil {
			return err
		}
	}
	end := time.Now()
	r.m.done("follow", out != acked, end)
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	switch {
	case asked && (!locked || before):
		r.m.violate(fmt.Sprintf("follow: %s's follow of %s, %s, became a request", f.name, b.name, map[bool]string{true: "followed already", false: "not locked"}[before]))
	case now && locked && !before:
		r.m.violate(fmt.Sprintf("follow: %s follows %s, who is locked, without approval", f.name, b.name))
	case asked:
		if _, ok := r.m.requested[key]; !ok {
			r.m.requested[key] = limit // asking again keeps the first request
		}
	}
	if now && !before && !locked {
		r.m.follows[key] = append(r.m.follows[key], event{add: true, start: start, end: end, copyLimit: limit})
	}
	r.m.following[key] = now && !locked || before
	return nil
}

func (r *runner) unfollow(ctx context.Context, a *actor) (bool, error) {
	f := a.pick()
	r.m.mu.Lock()
	var followees, asked []string
	for k, on := range r.m.following {
		if on && k.a == f.id {
			followees = append(followees, k.b)
		}
	}
	for k := range r.m.requested {
		if k.a == f.id {
			asked = append(asked, k.b)
		}
	}
	r.m.mu.Unlock()
	if len(asked) > 0 && (len(followees) == 0 || a.rng.IntN(4) == 0 || r.wants("withdraw")) {
		sort.Strings(asked)
		return true, r.withdraw(ctx, f, asked[a.rng.IntN(len(asked))])
	}
	if len(followees) == 0 {
		return false, nil
	}
	sort.Strings(followees)
	return true, r.unfollowAs(ctx, f, followees[a.rng.IntN(len(followees))], a.rng.IntN(10) < 3)
}

// truth reads, straight from the Datastore, what the API rightly will not
// tell: whether f follows, or mutes, someone suspended, whose card no
// answer hands out (a 404 by id, and in no list). add adds the entity to
// a lookup and returns whether it holds once the lookup has run. Reads
// that fail (the fault layer) are tried again.
func (r *runner) truth(ctx context.Context, add func(l *store.Lookup) func() bool) (bool, error) {
	var holds bool
	err := r.retry(ctx, func() error {
		l := r.db.Lookup()
		h := add(l)
		if err := l.Run(ctx); err != nil {
			return err
		}
		holds = h()
		return nil
	})
	return holds, err
}

// retry runs read, a read of the Datastore's, until it succeeds: the
// fault layer fails reads too.
func (r *runner) retry(ctx context.Context, read func() error) error {
	for try := 0; ; try++ {
		err := read()
		if err == nil {
			return nil
		}
		if try == 50 || ctx.Err() != nil {
			return fmt.Errorf("truth: %w", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// held reads whether a tie with person holds: from the API's answer to
// path with token (200 or 404), or, for someone who may be suspended,
// whose card no answer hands out, the truth add reads.
func (r *runner) held(ctx context.Context, op, person, path, token string, add func(l *store.Lookup) func() bool) (bool, error) {
	r.m.mu.Lock()
	hidden := r.m.mayBeSuspended(person)
	r.m.mu.Unlock()
	if hidden {
		return r.truth(ctx, add)
	}
	rep, err := r.probe(ctx, op, path, token, 200, 404)
	return rep.status == 200, err
}

// followsNow reads whether f follows b.
func (r *runner) followsNow(ctx context.Context, op string, f *user, b string) (bool, error) {
	return r.held(ctx, op, b, "/social/rest/people/@me/@friends/"+b, f.token, func(l *store.Lookup) func() bool {
		return graph.Follows(l, f.id, b).Found
	})
}

// unfollowAs makes f unfollow b, keeping the copies' history if keep.
func (r *runner) unfollowAs(ctx context.Context, f *user, b string, keep bool) error {
	return r.endFollow(ctx, "unfollow", f, b, keep)
}

// withdraw makes f withdraw their request to follow b: an unfollow.
func (r *runner) withdraw(ctx context.Context, f *user, b string) error {
	return r.endFollow(ctx, "withdraw", f, b, false)
}

// endFollow is an unfollow by f of b, op as reports name it: it ends the
// follow, or the request to follow.
func (r *runner) endFollow(ctx context.Context, op string, f *user, b string, keep bool) error {
	defer r.lock("standing " + b)()
	defer r.lock("follow " + f.id + " " + b)()
	path := "/social/rest/people/@me/@friends/" + b
	if keep {
		path += "?keepHistory=true"
	}
	start := time.Now()
	_, out := r.write(ctx, op, http.MethodDelete, path, f.token, nil)
	// An unfollow is idempotent: one whose answer was lost is sent again
	// until one answers, as a client would (a probe cannot always tell: a
	// suspended person is in no list, and answers 404 by id).
	for try := 0; out == unknown && try < 10 && ctx.Err() == nil; try++ {
		_, out = r.write(ctx, op, http.MethodDelete, path, f.token, nil)
	}
	gone := out == acked
	if out == unknown {
		still, err := r.followsNow(ctx, op, f, b)
		if err != nil {
			return err
		}
		asked, err := r.probe(ctx, op, "/social/rest/people/@me/@requested/"+b, f.token, 200, 404)
		if err != nil {
			return err
		}
		gone = !still && asked.status == 404
	}
	end := time.Now()
	r.m.done(op, out != acked, end)
	if gone {
		key := pair{f.id, b}
		r.m.mu.Lock()
		delete(r.m.requested, key)
		if op != "withdraw" || r.m.following[key] {
			r.m.follows[key] = append(r.m.follows[key], event{start: start, end: end, keep: keep})
		}
		r.m.following[key] = false
		r.m.mu.Unlock()
	}
	return nil
}

// sessions logs in anew, ends every session of the user (the new one
// included) and logs in again, going on with the last token: the old
// ones must stop working and nothing else change.
func (r *runner) sessions(ctx context.Context, a *actor) (bool, error) {
	u := a.pick()
	login := func() (string, error) {
		for ctx.Err() == nil {
			rep, out := r.write(ctx, "sessions", http.MethodPost, "/auth/login", "", map[string]string{"username": u.name, "password": password})
			if out == acked {
				return str(rep.body, "token"), nil
			}
		}
		return "", ctx.Err()
	}
	old := u.token
	tok, err := login()
	if err != nil {
		return true, err
	}
	_, out := r.write(ctx, "sessions", http.MethodPost, "/auth/logout?all=true", tok, nil, http.StatusUnauthorized)
	for out == unknown {
		_, out = r.write(ctx, "sessions", http.MethodPost, "/auth/logout?all=true", tok, nil, http.StatusUnauthorized)
	}
	if tok, err = login(); err != nil {
		return true, err
	}
	r.m.mu.Lock()
	u.token = tok
	r.m.mu.Unlock()
	r.m.done("sessions", false, time.Now())
	if rep, err := r.c.read(ctx, "/social/rest/people/@me/@self", old); err == nil && rep.status != http.StatusUnauthorized {
		r.m.violate(fmt.Sprintf("sessions: %s's token works after logout?all=true: %d", u.name, rep.status))
	}
	return true, nil
}

// blockedAnswer tolerates the 403 of a like or comment between two people
// who ever had a block between them.
func (r *runner) blockedAnswer(a, b string) func(int) bool {
	return func(status int) bool {
		r.m.mu.Lock()
		defer r.m.mu.Unlock()
		return status == http.StatusForbidden && r.m.blockedOnce(a, b)
	}
}

// lockPair takes the follow locks of a and b both ways, in one order, for
// a block or unblock, which changes both.
// lockStandings holds what a and b's lock and pending requests may
// change by, taken before any pair's lock.
func (r *runner) lockStandings(a, b string) func() {
	keys := []string{"standing " + a, "standing " + b}
	sort.Strings(keys)
	u1, u2 := r.lock(keys[0]), r.lock(keys[1])
	return func() { u2(); u1() }
}

func (r *runner) lockPair(a, b string) func() {
	keys := []string{"follow " + a + " " + b, "follow " + b + " " + a}
	sort.Strings(keys)
	u1, u2 := r.lock(keys[0]), r.lock(keys[1])
	return func() { u2(); u1() }
}

// block makes one of a's users block someone: the follows between them
// end both ways, as an unfollow's would.
func (r *runner) block(ctx context.Context, a *actor) (bool, error) {
	u := a.pick()
	b := r.otherUser(a, u.id)
	if b == nil {
		return false, nil
	}
	defer r.lockStandings(u.id, b.id)()
	defer r.lockPair(u.id, b.id)()
	r.m.mu.Lock()
	r.m.everBlocked[pair{u.id, b.id}] = true // from the moment it is asked
	r.m.mu.Unlock()
	start := time.Now()
	_, out := r.writeIf(ctx, "block", http.MethodPost, "/social/rest/people/@me/@blocked", u.token, map[string]string{"id": b.id}, r.hiddenAnswer(b.id))
	now := out == acked
	r.m.mu.Lock()
	hidden := r.m.mayBeSuspended(b.id)
	r.m.mu.Unlock()
	switch {
	case out == unknown && hidden: // in no list of the blocker's
		var err error
		if now, err = r.truth(ctx, func(l *store.Lookup) func() bool {
			between := blocks.ReadBetween(l, u.id, b.id)
			return between.First
		}); err != nil {
			return true, err
		}
	case out == unknown:
		items, err := r.c.list(ctx, "/social/rest/people/@me/@blocked", u.token)
		if err != nil {
			return true, err
		}
		now = slices.ContainsFunc(items, func(it map[string]any) bool { return str(it, "id") == b.id })
	}
	end := time.Now()
	r.m.done("block", out != acked, end)
	if !now {
		return true, nil
	}
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	r.m.blocks[pair{u.id, b.id}] = true
	for _, k := range []pair{{u.id, b.id}, {b.id, u.id}} {
		delete(r.m.requested, k) // a block ends requests both ways
		if r.m.following[k] {
			r.m.follows[k] = append(r.m.follows[k], event{start: start, end: end})
			r.m.following[k] = false
		}
	}
	return true, nil
}

// unblock ends a block one of a's users made: no follow comes back.
func (r *runner) unblock(ctx context.Context, a *actor) (bool, error) {
	r.m.mu.Lock()
	var mine []pair
	for k, on := range r.m.blocks {
		if on && slices.Contains(a.users, r.m.byID[k.a]) {
			mine = append(mine, k)
		}
	}
	r.m.mu.Unlock()
	if len(mine) == 0 {
		return false, nil
	}
	sort.Slice(mine, func(i, j int) bool { return mine[i].a+mine[i].b < mine[j].a+mine[j].b })
	k := mine[a.rng.IntN(len(mine))]
	r.m.mu.Lock()
	u := r.m.byID[k.a]
	r.m.mu.Unlock()
	defer r.lockPair(k.a, k.b)()
	path := "/social/rest/people/@me/@blocked/" + k.b
	_, out := r.write(ctx, "unblock", http.MethodDelete, path, u.token, nil)
	for out == unknown {
		_, out = r.write(ctx, "unblock", http.MethodDelete, path, u.token, nil)
	}
	r.m.done("unblock", false, time.Now())
	r.m.mu.Lock()
	r.m.blocks[k] = false
	r.m.mu.Unlock()
	return true, nil
}

// mute makes one of a's users mute someone, or unmute someone they mute,
// by REST or JSON-RPC in turn: nothing changes but what the muter's feeds
// show.
func (r *runner) mute(ctx context.Context, a *actor) (bool, error) {
	u, b := a.pick(), (*user)(nil)
	r.m.mu.Lock()
	var mine []pair
	for k, on := range r.m.mutes {
		if on && slices.Contains(a.users, r.m.byID[k.a]) {
			mine = append(mine, k)
		}
	}
	if len(mine) > 0 && a.rng.IntN(2) == 0 {
		sort.Slice(mine, func(i, j int) bool { return mine[i].a+mine[i].b < mine[j].a+mine[j].b })
		k := mine[a.rng.IntN(len(mine))]
		u, b = r.m.byID[k.a], r.m.byID[k.b]
	}
	r.m.mu.Unlock()
	if b == nil {
		if b = r.otherUser(a, u.id); b == nil {
			return false, nil
		}
	}
	r.m.mu.Lock()
	on := !r.m.mutes[pair{u.id, b.id}]
	r.m.mu.Unlock()
	op := "mute"
	var out outcome
	switch {
	case !on:
		op = "unmute"
		_, out = r.write(ctx, op, http.MethodDelete, "/social/rest/people/@me/@muted/"+b.id, u.token, nil)
	case r.turns.Add(1)%2 == 0:
		_, out = r.writeIf(ctx, op, viaRPC, "people.create", u.token, map[string]string{"groupId": "@muted", "id": b.id}, r.hiddenAnswer(b.id))
	default:
		_, out = r.writeIf(ctx, op, http.MethodPost, "/social/rest/people/@me/@muted", u.token, map[string]string{"id": b.id}, r.hiddenAnswer(b.id))
	}
	now := on == (out == acked) // refused: as it was
	if out == unknown {
		var err error
		if now, err = r.held(ctx, op, b.id, "/social/rest/people/@me/@muted/"+b.id, u.token, func(l *store.Lookup) func() bool {
			ref := mutes.Read(l, u.id, b.id)
			return func() bool { return ref.ActiveAt(time.Now()) }
		}); err != nil {
			return true, err
		}
	}
	r.m.done(op, out != acked, time.Now())
	r.m.mu.Lock()
	r.m.mutes[pair{u.id, b.id}] = now
	if now || op == "mute" {
		r.m.everMuted[pair{u.id, b.id}] = true // a mute refused may have held for a moment
	}
	r.m.mu.Unlock()
	return true, nil
}

// deleteAccount deletes one of a's users (a keeps one at least, and the
// mix deletes at most one user in eight). At once its token must stop
// working; once the jobs have run, nothing anywhere may show it.
func (r *runner) deleteAccount(ctx context.Context, a *actor) (bool, error) {
	if len(a.users) < 2 {
		return false, nil
	}
	r.m.mu.Lock()
	gone := 0
	for _, u := range r.m.users {
		if u.gone {
			gone++
		}
	}
	if (gone+1)*8 > len(r.m.users) {
		r.m.mu.Unlock()
		return false, nil
	}
	i := a.rng.IntN(len(a.users))
	u := a.users[i]
	u.gone = true
	r.m.mu.Unlock()
	a.users = slices.Delete(a.users, i, i+1)
	r.trust(ctx, u)
	failed := false
	for {
		// A 401 after an attempt that answered nothing: that attempt
		// deleted the account.
		var refusals []int
		if failed {
			refusals = []int{http.StatusUnauthorized}
		}
		_, out := r.write(ctx, "delete account", http.MethodDelete, "/auth/account", u.token, map[string]string{"password": password}, refusals...)
		if out != unknown {
			break
		}
		failed = true
		if ctx.Err() != nil {
			return true, ctx.Err()
		}
	}
	r.m.done("delete account", failed, time.Now())
	r.staleWrites(ctx, u, "deleted", http.StatusUnauthorized)
	if rep, err := r.c.read(ctx, "/social/rest/people/@me/@self", u.token); err == nil && rep.status != http.StatusUnauthorized {
		r.m.violate(fmt.Sprintf("delete account: %s's token works after the deletion: %d", u.name, rep.status))
	}
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	u.deleted = true
	for _, p := range r.m.posts {
		if p.author == u.id && !p.deleted {
			r.m.drop(p, "its author deleted")
		}
	}
	for _, c := range r.m.comments {
		if c.author == u.id {
			c.deleted = true
		}
	}
	return true, nil
}

// App data: each user writes only their own, one operation at a time, so
// the model knows it exactly: what was acknowledged, or, after an answer
// that was lost, what a read finds.
