package converge

// Polls: a post may carry one, and whoever may see it votes once. Every
// vote counts exactly once, under faults, retries and votes at once: the
// oracle reads each poll's counts, as its author sees them, against the
// votes the model knows.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"time"

	"socialstream/internal/polls"
	"socialstream/internal/store"
)

// pollOptions are every poll's options.
var pollOptions = []string{"yes", "no", "maybe"}

// somePoll gives one in eight posts with no picture (body) a poll, of
// one choice or several: whether it did, and whether it takes several.
func somePoll(rng *rand.Rand, body map[string]any, pictured bool) (bool, bool) {
	poll, multiple := !pictured && rng.IntN(8) == 0, rng.IntN(2) == 0
	if poll {
		body["poll"] = map[string]any{"options": pollOptions, "expiresIn": 86400, "multiple": multiple}
	}
	return poll, multiple
}

// vote has one of a's people vote in a poll they may see, or again in
// one they voted in (the same choices: a retry; others: refused).
func (r *runner) vote(ctx context.Context, a *actor) (bool, error) {
	u := a.pick()
	r.m.mu.Lock()
	var some []*post
	for _, p := range r.m.posts {
		if p.poll && !p.deleted && (p.open() || p.author == u.id) {
			some = append(some, p)
		}
	}
	r.m.mu.Unlock()
	if len(some) == 0 {
		return false, nil
	}
	p := some[a.rng.IntN(len(some))]
	choices := []int{a.rng.IntN(len(pollOptions))}
	if p.multiple && a.rng.IntN(2) == 0 {
		if other := (choices[0] + 1) % len(pollOptions); a.rng.IntN(2) == 0 {
			choices = append(choices, other)
		}
	}
	defer r.lock("vote " + u.id)()
	// A 404: the post is gone or hidden from u; a 400: u voted otherwise
	// before.
	rep, out := r.write(ctx, "vote", http.MethodPost, "/social/rest/polls/"+p.id+"/votes", u.token, map[string]any{"choices": choices},
		http.StatusNotFound, http.StatusBadRequest)
	if out == acked {
		if poll, _ := entry(rep)["poll"].(map[string]any); poll == nil || poll["voted"] != true {
			r.m.violate(fmt.Sprintf("a vote of %s in %s answered %v", u.name, p.id, rep.body))
		}
	}
	r.m.done("vote", out != acked, time.Now())
	// What was counted is read: a refusal after a vote of u's whose
	// answer was lost, or an error after a commit, leaves the model
	// unsure of which choices count.
	var kept *polls.Ballot
	found, err := r.truth(ctx, func(l *store.Lookup) func() bool {
		kept = polls.ReadBallot(l, p.id, p.id, u.id)
		return kept.Found
	})
	if err != nil {
		return true, err
	}
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	had, voted := r.m.votes[p.id][u.id]
	switch {
	case found:
		now := make([]int, len(kept.Choices()))
		for i, c := range kept.Choices() {
			now[i] = int(c)
		}
		if voted && !slices.Equal(had, now) {
			r.m.violate(fmt.Sprintf("%s's vote in %s changed from %v to %v", u.name, p.id, had, now))
		}
		if out == acked && !slices.Equal(now, sorted(choices)) && !voted {
			r.m.violate(fmt.Sprintf("%s's vote in %s of %v was kept as %v", u.name, p.id, choices, now))
		}
		if r.m.votes[p.id] == nil {
			r.m.votes[p.id] = map[string][]int{}
		}
		r.m.votes[p.id][u.id] = now
	case voted:
		r.m.violate(fmt.Sprintf("%s's vote in %s is gone", u.name, p.id))
	case out == acked:
		r.m.violate(fmt.Sprintf("%s's vote in %s was acknowledged and not kept", u.name, p.id))
	}
	return true, nil
}

func sorted(s []int) []int {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// checkPolls: each poll of a post that is there shows its author the
// votes the model knows, exactly: its voters, its choices, each option's.
func (o *oracle) checkPolls(ctx context.Context, rep *Report) error {
	m := o.m
	for _, p := range o.live {
		if !p.poll {
			continue
		}
		entry, ok, err := o.byItsAuthor(ctx, rep, p)
		if err != nil {
			return err
		} else if !ok {
			continue
		}
		poll, _ := entry["poll"].(map[string]any)
		want := make([]float64, len(pollOptions))
		votes := 0
		for _, choices := range m.votes[p.id] {
			for _, c := range choices {
				want[c]++
				votes++
			}
		}
		got := make([]float64, len(pollOptions))
		if opts, _ := poll["options"].([]any); len(opts) == len(pollOptions) {
			for i, op := range opts {
				got[i], _ = op.(map[string]any)["votesCount"].(float64)
			}
		}
		if poll == nil || poll["votersCount"] != float64(len(m.votes[p.id])) || poll["votesCount"] != float64(votes) || !slices.Equal(got, want) {
			rep.Violations = append(rep.Violations, fmt.Sprintf("the poll %s shows %v; the votes were %v", p.id, poll, m.votes[p.id]))
		}
	}
	return nil
}
