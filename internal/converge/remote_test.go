package converge

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"socialstream/internal/ids"
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

// A celebrity of the other server's Notes are in the home of whoever here
// follows them while they do, all of them at once, whatever the copy
// window, as a local celebrity's posts are; an ordinary author's past
// the window are not. The suite's checker once reported a celebrity's
// Note older than the window as shown "though it must not".
func TestRemoteCelebrityNotesAreHomeWhileFollowed(t *testing.T) {
	at := time.Now()
	tick := func(n int) time.Time { return at.Add(time.Duration(n) * time.Second) }
	m := newModel()
	r := &runner{m: m, cfg: Config{CopyLimit: 1}}
	o := &oracle{r: r, m: m, celebrity: map[string]bool{}, remoteByID: map[string]*post{}}
	var notes []*post
	for i := range 3 { // taken before the follow, oldest first
		q := &post{author: "far", id: ids.Format(int64(1000 + i)), start: tick(i), end: tick(i)}
		q.taken.sure = true
		o.remoteByID[q.id] = q
		notes = append(notes, q)
	}
	m.rPosts = notes
	key := pair{"reader", "far"}
	m.rFollows[key] = []event{{add: true, start: tick(10), end: tick(11), copyLimit: -1}}
	home := o.remoteHome(&user{id: "reader"})
	if got := home(notes[0]); !got.forbid() {
		t.Errorf("an ordinary author's Note past the copy window: %v, want out", got)
	}
	if got := home(notes[2]); !got.must() {
		t.Errorf("an ordinary author's newest Note: %v, want in", got)
	}
	for _, q := range notes {
		o.celebrity[q.id] = true
	}
	if got := home(notes[0]); !got.must() {
		t.Errorf("a celebrity's Note past the copy window, followed: %v, want in", got)
	}
	m.rFollows[key] = append(m.rFollows[key], event{start: tick(20), end: tick(21)})
	if got := home(notes[2]); !got.forbid() {
		t.Errorf("a celebrity's Note, unfollowed: %v, want out", got)
	}
}
