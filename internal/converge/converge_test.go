package converge

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"socialstream/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// A short run with a fixed seed: every operation of the mix and every
// kind of fault happens, and once the queues are empty every feed and
// count agrees with the oracle.
func TestConverges(t *testing.T) {
	index, err := testenv.RepoFile("index.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Defaults()
	cfg.Dir = filepath.Dir(index)
	cfg.Datastore = testenv.EmulatorHost(t)
	cfg.Seed = 7
	cfg.Duration = 25 * time.Second
	cfg.MinEach = 3 // a slow machine runs longer rather than skip one
	var progress strings.Builder
	cfg.Progress = &progress
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	rep.Print(&out)
	t.Log("\n" + out.String())
	for _, op := range kinds {
		if rep.Ops[op] == 0 {
			t.Errorf("the mix ran no %s", op)
		}
	}
	for _, k := range []string{"task delivered twice", "task delayed", "delivery answered 500", "delivery timed out after the app ran it", "CreateTask failed", "CreateTask failed after creating"} {
		if rep.TaskFaults[k] == 0 {
			t.Errorf("the tasks emulator injected no %q", k)
		}
	}
	after := 0
	for k, n := range rep.DatastoreFaults {
		if strings.Contains(k, "after it applied") {
			after += int(n)
		}
	}
	if after == 0 || len(rep.DatastoreFaults) < 4 {
		t.Errorf("Datastore faults: %v", rep.DatastoreFaults)
	}
	if len(rep.Violations) > 0 {
		t.Errorf("%d violations", len(rep.Violations))
	}
}

// The oracle's rule for one activity and one pair's history.
func TestPresenceOf(t *testing.T) {
	base := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return base.Add(time.Duration(s) * time.Second) }
	posted := func(s int) *post {
		return &post{start: at(s), end: at(s).Add(100 * time.Millisecond), seqTime: at(s).Add(50 * time.Millisecond)}
	}
	add := func(s, limit int) event {
		return event{add: true, start: at(s), end: at(s).Add(100 * time.Millisecond), copyLimit: limit}
	}
	remove := func(s int, keep bool) event {
		return event{start: at(s), end: at(s).Add(100 * time.Millisecond), keep: keep}
	}
	covered := func(event, *post) (bool, bool) { return true, true }
	uncovered := func(event, *post) (bool, bool) { return false, false }
	cases := []struct {
		name string
		post *post
		evs  []event
		win  window
		want presence
	}{
		{"never followed", posted(5), nil, covered, mayOut},
		{"posted while following", posted(5), []event{add(1, -1)}, uncovered, mayIn},
		{"posted before, copied", posted(1), []event{add(5, -1)}, covered, mayIn},
		{"posted before, copyLimit 0", posted(1), []event{add(5, 0)}, uncovered, mayOut},
		{"posted during the follow", posted(5), []event{{add: true, start: at(5), end: at(6)}}, uncovered, mayIn | mayOut},
		{"unfollowed", posted(3), []event{add(1, -1), remove(5, false)}, covered, mayOut},
		{"unfollowed, history kept", posted(3), []event{add(1, -1), remove(5, true)}, covered, mayIn},
		{"copy cut short by an unfollow that kept history", posted(1), []event{add(3, -1), remove(5, true)}, covered, mayIn | mayOut},
		{"removed, then followed again without copies", posted(1), []event{add(2, -1), remove(4, false), add(6, 0)}, uncovered, mayOut},
		{"posted after the follow that came back", posted(8), []event{add(2, -1), remove(4, false), add(6, 0)}, uncovered, mayIn},
		{"removed, then followed again with copies", posted(1), []event{add(2, -1), remove(4, false), add(6, -1)}, covered, mayIn},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := presenceOf(c.post, c.evs, c.win); got != c.want {
				t.Errorf("presence = %d, want %d", got, c.want)
			}
		})
	}
}

// The oracle's rule for one activity and a reader's follows of one of its
// tags, and how it joins the rule of the author's follows.
func TestTagPresence(t *testing.T) {
	base := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return base.Add(time.Duration(s) * time.Second) }
	posted := &post{start: at(5), end: at(5).Add(100 * time.Millisecond), seqTime: at(5).Add(50 * time.Millisecond)}
	ev := func(add bool, s int) event {
		return event{add: add, start: at(s), end: at(s).Add(100 * time.Millisecond)}
	}
	for _, c := range []struct {
		name string
		evs  []event
		want presence
	}{
		{"never followed", nil, mayOut},
		{"followed before", []event{ev(true, 1)}, mayIn},
		{"followed after: no reach back", []event{ev(true, 8)}, mayOut},
		{"followed before, unfollowed before", []event{ev(true, 1), ev(false, 2)}, mayOut},
		{"followed before, unfollowed after", []event{ev(true, 1), ev(false, 8)}, mayIn | mayOut},
		{"followed before, unfollowed and followed after", []event{ev(true, 1), ev(false, 7), ev(true, 8)}, mayIn | mayOut},
		{"a follow during the post", []event{{add: true, start: at(5), end: at(6)}}, mayIn | mayOut},
	} {
		if got := tagPresence(posted, c.evs); got != c.want {
			t.Errorf("%s: presence = %d, want %d", c.name, got, c.want)
		}
	}
	for _, c := range []struct{ p, q, want presence }{
		{mayIn, mayOut, mayIn}, {mayOut, mayOut, mayOut}, {mayIn | mayOut, mayOut, mayIn | mayOut},
		{mayIn | mayOut, mayIn, mayIn}, {mayIn | mayOut, mayIn | mayOut, mayIn | mayOut},
	} {
		if got := union(c.p, c.q); got != c.want || union(c.q, c.p) != c.want {
			t.Errorf("union(%d, %d) = %d, want %d", c.p, c.q, got, c.want)
		}
	}
}
