package policy

import "testing"

func TestPushes(t *testing.T) {
	alerts := []string{"mention", "follow"}
	none, follows, followedBy, both := PushTies{Actor: true}, PushTies{Actor: true, Follows: true}, PushTies{Actor: true, FollowedBy: true}, PushTies{Actor: true, Follows: true, FollowedBy: true}
	for _, c := range []struct {
		pol, typ string
		t        PushTies
		want     bool
	}{
		{PushAll, "mention", none, true},
		{PushAll, "favourite", both, false}, // not an alert it names
		{PushNone, "mention", both, false},
		{PushFollowed, "mention", follows, true},
		{PushFollowed, "mention", followedBy, false},
		{PushFollower, "mention", followedBy, true},
		{PushFollower, "mention", follows, false},
		{PushFollowed, "mention", PushTies{Follows: true}, false}, // of no one: no tie holds
		{"sometimes", "mention", both, false},                     // a policy it does not know
	} {
		if got := Pushes(c.pol, alerts, c.typ, c.t); got != c.want {
			t.Errorf("Pushes(%s, %v, %s, %+v) = %v, want %v", c.pol, alerts, c.typ, c.t, got, c.want)
		}
	}
	if !MayPush(PushFollowed, alerts, "follow") || MayPush(PushNone, alerts, "follow") || MayPush(PushAll, alerts, "poll") {
		t.Error("MayPush: a ring would leave out what a tie could let through, or ring what none could")
	}
	if NeedsTies(PushAll) || NeedsTies(PushNone) || !NeedsTies(PushFollowed) || !NeedsTies(PushFollower) {
		t.Error("NeedsTies: the follows are read for a policy that weighs none, or not for one that does")
	}
}
