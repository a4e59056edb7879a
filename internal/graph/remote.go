package graph

import "socialstream/internal/queue"

// Remote makes the jobs that tell another server of a follow of one of
// its people, each enqueued ahead of the commit it follows.
type Remote interface {
	// Answering: target approved (or rejected) requester's request; the
	// job finds out itself whether the requester is remote.
	Answering(requester, target string, approved bool) queue.Pending
	// Asking: requester asks to follow target, who is remote (every
	// follow of a remote person is a request their server answers).
	Asking(requester, target string) queue.Pending
	// Ending: follower no longer follows (or asks to follow) followee,
	// who is remote.
	Ending(follower, followee string) queue.Pending
	// Blocking: blocker blocks blocked, who is remote (undo: no longer).
	Blocking(blocker, blocked string, undo bool) queue.Pending
}

// SetRemote sets who tells other servers.
func (s *Service) SetRemote(r Remote) { s.remote = r }
