package converge

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"socialstream/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

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

// Past the mix's duration, an operation that has not run MinEach times
// weighs more, and so does the one that makes what it needs: a decline
// needs an invitation the accepts have not taken (a run once ended with
// no decline at all).
func TestBoostedMakesWhatAWantedOneNeeds(t *testing.T) {
	r := &runner{cfg: Config{MinEach: 3}, m: &model{ops: map[string]int{"invite": 9, "accept": 9, "decline": 0, "like": 0, "comment": 5}},
		stop: time.Now().Add(-time.Second)}
	for _, c := range []struct {
		kinds []string
		want  bool
	}{
		{[]string{"decline"}, true},
		{[]string{"invite"}, true}, // what a decline needs
		{[]string{"like"}, true},
		{[]string{"accept"}, false},
		{[]string{"comment"}, false},
	} {
		if got := r.boosted(c.kinds); got != c.want {
			t.Errorf("boosted(%v) = %v, want %v", c.kinds, got, c.want)
		}
	}
	// An owner's removal needs a group with a member besides its owner.
	r.m.ops["create group"], r.m.ops["join"] = 9, 9
	if !r.boosted([]string{"join"}) || !r.boosted([]string{"create group"}) {
		t.Error("what an owner's removal needs is not boosted while none ran")
	}
	r.m.ops["decline"] = 3
	if r.boosted([]string{"invite"}) {
		t.Error("invite boosted once declines ran MinEach times")
	}
	// Past the duration, the other server's Notes are wanted until one's
	// Delete has overtaken its Create (a run once saw none), and then no
	// more.
	r.m.ops["remote post"] = 9
	if !r.wants("remote post") || r.faultsSeen() {
		t.Error("remote posts not wanted before a Delete overtook a Create")
	}
	r.m.rOvertaken = 1
	if r.wants("remote post") || !r.faultsSeen() {
		t.Error("remote posts wanted once a Delete overtook a Create")
	}
	r.stop = time.Now().Add(time.Minute) // within the duration: nothing is
	if r.boosted([]string{"like"}) {
		t.Error("like boosted within the mix's duration")
	}
}

// An owner's removal that is wanted (a slow run once ended with none)
// acts as one of the actor's people who owns a group with a member
// besides them, not one picked at random who owns none.
func TestAnOwnerHasSomeoneToRemove(t *testing.T) {
	ann, bob, cy := &user{id: "ann"}, &user{id: "bob"}, &user{id: "cy"}
	alone, joined := &group{id: "g1", owner: "bob"}, &group{id: "g2", owner: "cy"}
	r := &runner{m: &model{users: []*user{ann, bob, cy}, groups: []*group{alone, joined},
		isMember: map[pair]bool{{"g1", "bob"}: true, {"g2", "cy"}: true, {"g2", "ann"}: true}}}
	a := &actor{rng: rand.New(rand.NewPCG(1, 2)), users: []*user{ann, bob, cy}}
	if got := r.anOwner(a); got != cy {
		t.Errorf("anOwner = %s, want cy (bob's group has no one else)", got.id)
	}
}

// A limited author's post is hidden for sure from someone who never
// followed them, but not from someone whose pending request an unlock or
// an approval under way may have turned into a follow: the model learns
// of it only from the operation's answer (seed 9898, -storms 6: a like
// came between an unlock's job and the unlock's end).
func TestHiddenFromWhileARequestMayBeApproved(t *testing.T) {
	m := newModel()
	author, reader := "a", "r"
	m.limited[author] = true
	p := &post{id: "p", author: author}
	if why := m.hiddenFrom(reader, p); why == "" {
		t.Fatal("a limited author's post is not hidden from someone who never followed them")
	}
	m.requested[pair{reader, author}] = -1
	if why := m.hiddenFrom(reader, p); why == "" {
		t.Error("a request no one is deciding shows the limited author's post")
	}
	m.unlocking[author]++
	if why := m.hiddenFrom(reader, p); why != "" {
		t.Errorf("with the author's unlock under way, hidden for sure: %s", why)
	}
	m.unlocking[author]--
	m.approving[pair{reader, author}]++
	if why := m.hiddenFrom(reader, p); why != "" {
		t.Errorf("with an approval under way, hidden for sure: %s", why)
	}
	if why := m.hiddenFrom("someone else", p); why == "" {
		t.Error("another's approval under way shows the post to someone who asked nothing")
	}
}

// A direct post's conversation is a set, as the service's is: one that
// mentions its author too puts them in it once, the same conversation as
// a post between the two (a run once expected a conversation of three,
// the author twice).
func TestConversationOfASelfMention(t *testing.T) {
	for _, c := range []struct {
		visibility string
		made       []string
		want       string
	}{
		{"mentioned", []string{"b", "a"}, "[a b]"},
		{"mentioned", []string{"b"}, "[a b]"},
		{"mentioned", []string{"a"}, "[a]"},
		{"public", []string{"b"}, "[]"},
		{"mentioned", nil, "[]"},
	} {
		if got := fmt.Sprint(conversationOf(c.visibility, "a", c.made)); got != c.want {
			t.Errorf("conversationOf(%s, a, %v) = %s, want %s", c.visibility, c.made, got, c.want)
		}
	}
}
