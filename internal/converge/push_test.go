package converge

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// A notification whose delivery runs while its actor is suspended is
// rightly not pushed (a delivery decides when it runs, as the list does),
// and is in its reader's list again once the suspension is lifted: the
// checker must not take it for a lost push. A sweep of seeds found such
// "lost" pushes (a follow's, a reply's): a suspension was no change of
// standing to the checker, which excused a limit alone.
func TestPushOfSomeoneSuspendedMeanwhileIsNotOwed(t *testing.T) {
	ctx, r, st := faultlessRunner(t)
	if err := r.startStaff(ctx, st.db); err != nil {
		t.Fatal(err)
	}
	// A seed whose first draw of two picks the first: the suspension
	// (runner.suspend) falls on the follower.
	var seed uint64
	for rand.New(rand.NewPCG(seed, 1)).IntN(2) != 0 {
		seed++
	}
	a, b := &actor{n: 0, rng: rand.New(rand.NewPCG(seed, 1))}, &actor{n: 1, rng: rand.New(rand.NewPCG(2, 2))}
	for _, x := range []*actor{a, a, b} {
		if err := r.register(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	follower, reader := a.users[0], b.users[0]
	if !reader.pushed {
		t.Fatal("the reader's device is not subscribed")
	}

	// The follow's delivery runs once the follower is suspended.
	release := st.tasks.Hold()
	if err := r.followAs(ctx, follower, reader, -1); err != nil {
		release()
		t.Fatal(err)
	}
	if _, err := r.suspend(ctx, a); err != nil {
		release()
		t.Fatal(err)
	}
	release()
	if len(a.suspended) != 1 || a.suspended[0] != follower {
		t.Fatalf("suspended %v, want the follower", a.suspended)
	}
	r.settle(st)
	if err := r.unsuspend(ctx, a); err != nil {
		t.Fatal(err)
	}
	r.settle(st)
	if got := r.deliveries.of(reader.id, "follow"); !slices.ContainsFunc(got, func(d string) bool { return strings.HasSuffix(d, ": not shown") }) {
		t.Fatalf("the follow's deliveries %q: none ran while the follower was suspended", got)
	}

	r.m.mu.Lock()
	o := r.oracle()
	err := o.checkPush(ctx, &Report{})
	violations := slices.Clone(r.m.violations)
	r.m.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if len(violations) > 0 {
		t.Errorf("violations: %q", violations)
	}
}
