package converge

// Profiles: a person writes their bio and fields, and sets or takes away
// their avatar; every card of theirs shows it.

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// profile is what the model knows of a person's profile.
type profile struct {
	note   string
	fields int
	avatar string // the picture's id; "" for none
}

// setProfile makes one of a's people change their profile: a new note
// and fields always, and a third of the time a new avatar (or none).
func (r *runner) setProfile(ctx context.Context, a *actor) (bool, error) {
	u := a.pick()
	r.seq.Lock()
	r.n++
	n := r.n
	r.seq.Unlock()
	want := profile{note: fmt.Sprintf("note %d of %s\nsecond line", n, u.name), fields: a.rng.IntN(5)}
	body := map[string]any{"note": want.note}
	fields := make([]map[string]string, want.fields)
	for i := range fields {
		fields[i] = map[string]string{"name": fmt.Sprintf("field %d", i), "value": fmt.Sprintf("value %d", n)}
	}
	body["fields"] = fields
	r.m.mu.Lock()
	want.avatar = r.m.profiles[u.id].avatar
	r.m.mu.Unlock()
	switch k := a.rng.IntN(6); {
	case k == 0 && want.avatar != "":
		want.avatar, body["avatar"] = "", ""
	case k <= 1:
		id, err := r.upload(ctx, u, "avatar of "+u.name)
		if err != nil {
			return true, err
		}
		if id != "" {
			want.avatar, body["avatar"] = id, id
		}
	}
	defer r.lock("profile " + u.id)()
	path := "/social/rest/people/@me/@self"
	rep, out := r.write(ctx, "profile", http.MethodPut, path, u.token, body)
	now := out == acked
	switch out {
	case acked:
		if got := profileOf(entry(rep)); got != want {
			r.m.violate(fmt.Sprintf("profile of %s answered %+v, want %+v", u.name, got, want))
		}
	case unknown:
		pr, err := r.probe(ctx, "profile", path, u.token, 200)
		if err != nil {
			return true, err
		}
		now = str(entry(pr), "note") == want.note // each change writes a note of its own
	}
	r.m.done("profile", out != acked, time.Now())
	if now {
		r.m.mu.Lock()
		r.m.profiles[u.id] = want
		r.m.mu.Unlock()
	}
	return true, nil
}

// profileOf returns the profile a person's card shows.
func profileOf(card map[string]any) profile {
	fields, _ := card["fields"].([]any)
	p := profile{note: str(card, "note"), fields: len(fields)}
	if link := str(card, "avatarUrl"); link != "" {
		if _, v, ok := strings.Cut(link, "?v="); ok {
			p.avatar = v
		} else {
			p.avatar = link
		}
	}
	return p
}

// checkCard: a person's card, wherever it is shown, shows their profile
// as last written.
func (o *oracle) checkCard(where string, card map[string]any, id string) {
	if card == nil {
		return
	}
	if got, want := profileOf(card), o.m.profiles[id]; got != want {
		o.violate("%s: the card of %s shows %+v, want %+v", where, id, got, want)
	}
}
