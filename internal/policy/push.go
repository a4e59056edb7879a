package policy

import "slices"

// Push policies of a subscription: whose notifications it is sent, by
// how its reader and the notification's actor are tied.
const (
	PushAll      = "all"
	PushFollowed = "followed" // those the reader follows
	PushFollower = "follower" // those who follow the reader
	PushNone     = "none"
)

// MayPush decides whether a subscription of policy pol, alerting on
// alerts, may take a notification of type typ at all, whoever did it:
// what a ring asks before it reads any tie.
func MayPush(pol string, alerts []string, typ string) bool {
	return pol != PushNone && slices.Contains(alerts, typ)
}

// PushTies are how a push's reader and the notification's actor are
// tied: whether there is an actor, whether the reader follows them, and
// whether they follow the reader.
type PushTies struct {
	Actor, Follows, FollowedBy bool
}

// NeedsTies reports whether Pushes weighs the ties for policy pol: the
// follows are read only then.
func NeedsTies(pol string) bool { return pol == PushFollowed || pol == PushFollower }

// Pushes decides whether a subscription of policy pol, alerting on
// alerts, takes a notification of type typ whose actor is tied to its
// reader by t. Whether the reader may see the notification at all is
// SeeNotification's, asked of the notification before.
func Pushes(pol string, alerts []string, typ string, t PushTies) bool {
	if !MayPush(pol, alerts, typ) {
		return false
	}
	switch pol {
	case PushAll:
		return true
	case PushFollowed:
		return t.Actor && t.Follows
	case PushFollower:
		return t.Actor && t.FollowedBy
	}
	return false
}
