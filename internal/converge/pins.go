package converge

// Pins: a person pins their own public and unlisted posts to the top of
// their page (at most five), and unpins them.

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"
)

// maxPins is the service's limit of pins.
const maxPins = 5

// livePins returns what u pins that is still there, the last pinned
// first; maybe says how many more may be there still (a removal under
// way). The caller holds m.mu.
func (m *model) livePins(u string) (live []string, maybe int) {
	for _, id := range m.pins[u] {
		switch p := m.postByID[id]; {
		case p == nil || p.deleted || p.removed && !p.removing:
		case p.removing:
			maybe++
			live = append(live, id)
		default:
			live = append(live, id)
		}
	}
	return live, maybe
}

// pin makes one of a's people pin one of their own public or unlisted
// posts, or unpin one they pin.
func (r *runner) pin(ctx context.Context, a *actor) (bool, error) {
	u := a.pick()
	r.m.mu.Lock()
	pinned, _ := r.m.livePins(u.id)
	unpinning := len(pinned) > 0 && a.rng.IntN(3) == 0 // a third unpin, when they can
	var mine []*post
	for _, p := range r.m.posts {
		if p.author == u.id && !p.deleted && p.open() && p.repostOf == "" && (!unpinning || slices.Contains(pinned, p.id)) {
			mine = append(mine, p)
		}
	}
	r.m.mu.Unlock()
	if len(mine) == 0 {
		return false, nil
	}
	p := mine[a.rng.IntN(len(mine))]
	defer r.lock("moderate " + p.id)() // not while a moderator removes it
	r.m.mu.Lock()
	pins, maybe := r.m.livePins(u.id)
	skip := p.removed || p.deleted
	r.m.mu.Unlock()
	if skip {
		return false, nil
	}
	on := !slices.Contains(pins, p.id)
	op, method := "pin", http.MethodPost
	if !on {
		op, method = "unpin", http.MethodDelete
	}
	path := "/social/rest/pins/" + p.id
	rep, out := r.write(ctx, op, method, path, u.token, nil, http.StatusConflict)
	now := on
	switch out {
	case acked:
		if e := entry(rep); str(e, "id") != p.id || (e["pinned"] == true) != on {
			r.m.violate(fmt.Sprintf("%s %s by %s answered %v", op, p.id, u.name, rep.body))
		}
		if on && len(pins)-maybe >= maxPins {
			r.m.violate(fmt.Sprintf("%s %s by %s: a pin past %d (%v) answered %v", op, p.id, u.name, maxPins, pins, rep.body))
		}
	case refused: // 409: five pinned already
		if !on || len(pins) < maxPins {
			r.m.violate(fmt.Sprintf("%s %s by %s, with %v pinned, answered %d %v", op, p.id, u.name, pins, rep.status, rep.body))
		}
		now = false
	case unknown:
		pr, err := r.probe(ctx, op, "/social/rest/activities/@me/@pinned", u.token, 200)
		if err != nil {
			return true, err
		}
		now = slices.Contains(listed(pr), p.id)
	}
	r.m.done(op, out != acked, time.Now())
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	list := slices.DeleteFunc(slices.Clone(r.m.pins[u.id]), func(id string) bool { return id == p.id })
	if now {
		if slices.Contains(r.m.pins[u.id], p.id) {
			return true, nil // pinned already: it keeps its place
		}
		list = append([]string{p.id}, list...)
	}
	r.m.pins[u.id] = list
	return true, nil
}

// listed returns the ids of a list's items.
func listed(rep reply) []string {
	items, _ := rep.body["list"].([]any)
	var out []string
	for _, it := range items {
		if m, ok := it.(map[string]any); ok {
			out = append(out, str(m, "id"))
		}
	}
	return out
}

// checkPins: each person's @pinned, read as themselves, lists what they
// pin that is still there, the last pinned first.
func (o *oracle) checkPins(ctx context.Context, rep *Report) error {
	for _, u := range o.people {
		want, _ := o.m.livePins(u.id)
		if err := o.checkList(ctx, rep, u, "/social/rest/activities/"+u.id+"/@pinned", "pins", want); err != nil {
			return err
		}
	}
	return nil
}

// checkList reads a list of activities at path as u, and compares its
// ids, in order, with want.
func (o *oracle) checkList(ctx context.Context, rep *Report, u *user, path, what string, want []string) error {
	rp, err := o.r.c.read(ctx, path, u.token)
	if err != nil || rp.status != 200 {
		return fmt.Errorf("read the %s of %s: %v %v", what, u.name, err, rp.body)
	}
	rep.Checked++
	if got := listed(rp); !slices.Equal(got, want) {
		o.violate("%s: %s %v, want %v", u.name, what, got, want)
	}
	return nil
}
