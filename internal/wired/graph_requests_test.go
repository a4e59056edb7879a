package wired_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"socialstream/internal/accounts"
	"socialstream/internal/app"
	"socialstream/internal/app/apptest"
	"socialstream/internal/derrors"
	"socialstream/internal/federation"
	"socialstream/internal/graph"
	"socialstream/internal/ids"
	"socialstream/internal/rebuild"
	"socialstream/internal/store"
	"socialstream/internal/testenv"
	"socialstream/internal/trends"
)

// An unlock's job enqueued before the unlock commits, and run first, asks
// to be retried rather than end with nothing approved; run for an unlock
// that never committed, long ago, it ends; a second run after the
// approvals changes nothing.
func TestUnlockJobWaitsForItsUnlock(t *testing.T) {
	ctx := context.Background()
	db := testenv.DB(t)
	acc := apptest.Accounts(t, db, ids.New())
	svc, err := app.NewServices(db, ids.New(), acc, testenv.StartTasks(t).Queue, slog.New(slog.DiscardHandler), rebuild.Config{}, app.Pictures{}, app.Push{}, federation.Config{}, trends.Config{})
	if err != nil {
		t.Fatal(err)
	}
	star, _, err := acc.Register(ctx, "star", "password1", "")
	if err != nil {
		t.Fatal(err)
	}
	fan, _, err := acc.Register(ctx, "fan", "password1", "")
	if err != nil {
		t.Fatal(err)
	}
	setLocked(t, db, star.ID, true)
	if _, out, err := svc.Graph.Ask(ctx, fan.ID, star.ID, nil); err != nil || out != graph.Requested {
		t.Fatalf("ask: %v %v", out, err)
	}

	// Still locked: the job of an unlock not yet committed.
	n, err := svc.Graph.Unlocked(ctx, graph.UnlockTask{User: star.ID, At: time.Now().UnixMicro()})
	if !errors.Is(err, derrors.Unavailable) || n != 0 {
		t.Errorf("job before its unlock's commit: %d, %v; want a retry", n, err)
	}
	// An unlock that never committed, long ago: the job ends.
	if n, err := svc.Graph.Unlocked(ctx, graph.UnlockTask{User: star.ID, At: time.Now().Add(-time.Hour).UnixMicro()}); err != nil || n != 0 {
		t.Errorf("job of an unlock that never was: %d, %v", n, err)
	}
	if _, ok, err := svc.Graph.Asked(ctx, fan.ID, star.ID); err != nil || !ok {
		t.Fatalf("the request after those jobs: %v %v", ok, err)
	}

	setLocked(t, db, star.ID, false)
	// Its job, run here (the queue's may run too): the request is approved.
	if _, err := svc.Graph.Unlocked(ctx, graph.UnlockTask{User: star.ID, At: 1}); err != nil {
		t.Fatal(err)
	}
	p, _ := acc.Get(ctx, star.ID)
	st := p.Standing()
	if n, err := svc.Graph.Unlocked(ctx, graph.UnlockTask{User: star.ID, At: st.Unlocked}); err != nil || n != 0 {
		t.Errorf("the unlock's job run again: %d approved, %v", n, err)
	}
	if _, ok, err := svc.Graph.Get(ctx, fan.ID, star.ID); err != nil || !ok {
		t.Errorf("fan follows star after the unlock: %v %v", ok, err)
	}
	if _, ok, _ := svc.Graph.Asked(ctx, fan.ID, star.ID); ok {
		t.Error("the request is still pending after its approval")
	}
}

// An unfollow that found no follow, only a request, withdraws the request;
// when the followee approves it in between, the follow the approval began
// is the one the unfollow ends, not left behind with counts the follower
// never saw. (The convergence checker found it with a person of another
// server, whose Accept came as the follower here withdrew.)
func TestUnfollowEndsARequestApprovedAsItWithdraws(t *testing.T) {
	ctx := context.Background()
	db, acc, svc, hold := held(t)
	star, fan := register(t, acc, "star"), register(t, acc, "fan")
	setLocked(t, db, star, true)
	if _, out, err := svc.Graph.Ask(ctx, fan, star, nil); err != nil || out != graph.Requested {
		t.Fatalf("ask: %v %v", out, err)
	}
	// The unfollow reads no follow, then withdraws in a transaction:
	// the approval commits between the two.
	var approved error
	hold("/BeginTransaction", func() { _, approved = svc.Graph.Approve(ctx, star, fan) })
	if err := svc.Graph.Unfollow(ctx, fan, star, false); err != nil {
		t.Fatal(err)
	}
	if approved != nil {
		t.Fatalf("the approval between: %v", approved)
	}
	if ok, err := db.Get(ctx, graph.FollowKey(db, fan, star), &graph.Follow{}); err != nil || ok {
		t.Errorf("after the unfollow, a follow: %v %v", ok, err)
	}
	if _, ok, err := svc.Graph.Asked(ctx, fan, star); err != nil || ok {
		t.Errorf("after the unfollow, a request: %v %v", ok, err)
	}
	for id, want := range map[string][2]int64{fan: {0, 0}, star: {0, 0}} {
		p, _, err := accounts.Load(ctx, db, id)
		if err != nil {
			t.Fatal(err)
		}
		if got := [2]int64{p.FollowersCount, p.FollowingCount}; got != want {
			t.Errorf("%s's followers and following: %v, want %v", id, got, want)
		}
	}
}

// setLocked locks or unlocks user's account as a change of their profile
// does (media.ChangeProfile, which these tests, with no pictures' bucket,
// cannot build), and leaves the job an unlock enqueues to the test.
func setLocked(t *testing.T, db *store.DB, user string, locked bool) {
	t.Helper()
	err := db.Update(context.Background(), func(tx *store.Tx) error {
		l := tx.Lookup()
		p := accounts.ReadProfile(l, user)
		if err := l.Run(context.Background()); err != nil {
			return err
		}
		return p.Set(tx, p.Profile(), nil, &locked, time.Now().UnixMicro())
	})
	if err != nil {
		t.Fatal(err)
	}
}
