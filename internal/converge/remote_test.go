package converge

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// The other server's Accept of a follow is taken here before its sender
// hears so, and a Note of the followee's may come in between: a Note
// delivered while a follow of its author is asked for may be taken,
// and one delivered after that ask was withdrawn may have been taken
// too (the Accept's follow begun, and then ended by the withdrawal).
// The suite's checker once reported such a Note as come "when no one
// here followed its author".
func TestNoteMayBeTakenWhileAFollowOfItsAuthorIsAsked(t *testing.T) {
	at := time.Now()
	tick := func(n int) time.Time { return at.Add(time.Duration(n) * time.Second) }
	key := pair{"reader", "far"}
	deliver := func(m *model) taking {
		r := &runner{m: m}
		q := &post{author: "far", note: "https://far.example/notes/1"}
		r.delivered(q, tick(2), tick(3), http.StatusAccepted)
		return q.taken
	}

	asked := newModel()
	asked.rPending[key] = &pendingFollow{start: tick(1)}
	if got := deliver(asked); got.sure || !got.maybe {
		t.Errorf("a Note delivered while a follow of its author is asked for: %+v, want maybe taken", got)
	}

	withdrawn := newModel()
	r := &runner{m: withdrawn}
	withdrawn.rPending[key] = &pendingFollow{start: tick(1)}
	withdrawn.endRemoteFollow(key, tick(4), tick(5))
	if got := deliver(withdrawn); got.sure || !got.maybe {
		t.Errorf("a Note delivered before the ask was withdrawn: %+v, want maybe taken", got)
	}
	if withdrawn.rFollowing[key] || withdrawn.rPending[key] != nil {
		t.Errorf("after the withdrawal: following %v, pending %v", withdrawn.rFollowing[key], withdrawn.rPending[key])
	}
	// After the withdrawal, surely none: a Note delivered then is not.
	later := &post{author: "far", note: "https://far.example/notes/2"}
	r.delivered(later, tick(6), tick(7), http.StatusAccepted)
	if later.taken.sure || later.taken.maybe {
		t.Errorf("a Note delivered after the withdrawal: %+v, want not taken", later.taken)
	}

	none := newModel()
	if got := deliver(none); got.sure || got.maybe {
		t.Errorf("a Note delivered with no follow had or asked for: %+v, want not taken", got)
	}
}

// A job run while the queues settle sends the other server a Follow,
// and its Accept comes back later: the run compares only once that
// delivery has landed and the queues have settled again. The suite's
// checker once compared while such an Accept was under way.
func TestDrainWaitsForADeliveryBegunWhileSettling(t *testing.T) {
	var f flights
	release := make(chan struct{})
	var landed atomic.Bool
	settled := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		drain(&f, func() {
			settled++
			if settled == 1 { // a job sends a Follow: the Accept is on its way
				f.begin()
				go func() {
					<-release
					landed.Store(true)
					f.land()
				}()
			}
		})
	}()
	select {
	case <-done:
		t.Fatal("drain returned while a delivery begun during the settling was under way")
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	<-done
	if !landed.Load() {
		t.Error("drain returned before the delivery landed")
	}
	if settled != 2 {
		t.Errorf("the queues settled %d times, want 2 (again after the delivery)", settled)
	}
}
