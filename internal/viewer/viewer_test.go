package viewer

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"socialstream/internal/ids"
)

func id(seq int64) string { return strconv.FormatInt(seq, 10) }

// The likes a state holds stay bounded: past MaxRecent the oldest go and
// Since rises past them, taking the reposts older than it too, so every
// like and repost of an activity at or after Since is still listed.
func TestRecentLikesBoundedBySince(t *testing.T) {
	s := New()
	base := ids.First(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s.SetRepost(id(base+1), true) // older than every like below but one
	for i := int64(0); i <= MaxRecent; i++ {
		s.SetLike(id(base+2*i), true)
	}
	if len(s.Liked) != MaxRecent {
		t.Fatalf("%d likes listed, want %d", len(s.Liked), MaxRecent)
	}
	if s.Since != base+2 {
		t.Errorf("Since = %d, want %d: the oldest like dropped, no more", s.Since, base+2)
	}
	if slices.Contains(s.Liked, id(base)) || len(s.Reposted) != 0 {
		t.Errorf("older than Since still listed: liked %v, reposted %v", slices.Contains(s.Liked, id(base)), s.Reposted)
	}
	// A like of an activity older than Since is not listed (a page reads
	// it by key); its end takes nothing out either.
	s.SetLike(id(base), true)
	if slices.Contains(s.Liked, id(base)) {
		t.Error("a like older than Since listed")
	}
	s.SetLike(id(base+4), false)
	if slices.Contains(s.Liked, id(base+4)) || len(s.Liked) != MaxRecent-1 {
		t.Errorf("an unlike left %d listed", len(s.Liked))
	}
}

// A list of people that would pass MaxPeople drops every list and says
// so: a page then reads blocks and mutes by key.
func TestPeopleOverflow(t *testing.T) {
	s := New()
	for i := range MaxPeople {
		s.SetBlock(id(int64(i+1)), true)
	}
	s.SetMute("m", time.Time{}, true)
	if s.Overflow || len(s.Blocks) != MaxPeople {
		t.Fatalf("overflow %v with %d blocks", s.Overflow, len(s.Blocks))
	}
	s.SetBlock("one-more", true)
	if !s.Overflow || s.Blocks != nil || s.Muted != nil {
		t.Errorf("past MaxPeople: overflow %v, %d blocks, %d mutes listed", s.Overflow, len(s.Blocks), len(s.Muted))
	}
	s.SetBlockedBy("x", true)
	if s.BlockedBy != nil {
		t.Error("an overflowed state lists again")
	}
}

// A mute holds until its end; a block either way hides; a state that
// lists nothing hides no one.
func TestHides(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	r := &Ref{}
	r.s = *New()
	if h := r.Hidden(now); len(h) != 0 {
		t.Errorf("an empty state hides %v", h)
	}
	r.s.SetMute("brief", now.Add(time.Hour), true)
	r.s.SetMute("forever", time.Time{}, true)
	r.s.SetBlockedBy("foe", true)
	r.s.SetBlock("foe", true) // both ways: listed once
	for who, want := range map[string]bool{"brief": true, "forever": true, "foe": true, "friend": false} {
		if got := r.Hides(who, now); got != want {
			t.Errorf("Hides(%s) = %v, want %v", who, got, want)
		}
	}
	if r.Hides("brief", now.Add(2*time.Hour)) {
		t.Error("a mute past its end still hides")
	}
	if got := fmt.Sprint(r.Hidden(now)); got != "[brief foe forever]" {
		t.Errorf("Hidden = %s", got)
	}
	r.s.SetBlockedBy("foe", false)
	r.s.SetBlock("foe", false)
	r.s.SetMute("forever", time.Time{}, false)
	if len(r.Hidden(now)) != 1 || len(r.Hidden(now.Add(2*time.Hour))) != 0 {
		t.Error("Hidden does not follow the mute's end")
	}
}

// The mutes' end that changes what Hidden says is the first end of a
// mute that holds: not one without an end, not one ended.
func TestMutesEnd(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	r := &Ref{}
	r.s = *New()
	if end := r.MutesEnd(now); !end.IsZero() {
		t.Errorf("no mutes: they end at %v", end)
	}
	r.s.SetMute("forever", time.Time{}, true)
	r.s.SetMute("ended", now.Add(-time.Minute), true)
	if end := r.MutesEnd(now); !end.IsZero() {
		t.Errorf("a mute without an end and one ended: they end at %v, want never", end)
	}
	r.s.SetMute("day", now.Add(24*time.Hour), true)
	r.s.SetMute("hour", now.Add(time.Hour), true)
	if end := r.MutesEnd(now); !end.Equal(now.Add(time.Hour)) {
		t.Errorf("mutes for an hour and a day: they end at %v, want in an hour", end)
	}
	if end := r.MutesEnd(now.Add(2 * time.Hour)); !end.Equal(now.Add(24 * time.Hour)) {
		t.Errorf("two hours on: %v, want the day's end", end)
	}
	if hidden := r.Hidden(r.MutesEnd(now)); slices.Contains(hidden, "hour") || !slices.Contains(hidden, "day") {
		t.Errorf("at the first end, Hidden is %v: want the hour's mute over, the day's holding", hidden)
	}
}

// A person's domain blocks are bounded, and hide the people of the
// domain and of the domains under it, no one else.
func TestDomains(t *testing.T) {
	s := New()
	for _, d := range []string{"bad.example", "evil.test", "bad.example"} {
		if !s.SetDomain(d, true) {
			t.Fatalf("%s refused", d)
		}
	}
	if !slices.Equal(s.Domains, []string{"bad.example", "evil.test"}) {
		t.Errorf("domains %v", s.Domains)
	}
	r := &Ref{s: *s}
	for name, want := range map[string]bool{
		"eve@bad.example": true, "eve@sub.bad.example": true, "eve@BAD.example": true, "eve@notbad.example": false,
		"eve@bad.example.org": false, "eve": false, "eve@good.example": false,
	} {
		if got := r.BlocksDomainOf(name); got != want {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
	s.SetDomain("bad.example", false)
	if !slices.Equal(s.Domains, []string{"evil.test"}) {
		t.Errorf("after the unblock: %v", s.Domains)
	}
	full := New()
	for i := range MaxDomains {
		full.SetDomain(fmt.Sprintf("d%d.example", i), true)
	}
	if full.SetDomain("one.more", true) || len(full.Domains) != MaxDomains {
		t.Errorf("past the bound: %d", len(full.Domains))
	}
}
