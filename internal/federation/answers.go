package federation

import (
	"context"
	"fmt"
	"time"

	"socialstream/internal/outbox"
	"socialstream/internal/queue"
	"socialstream/internal/store"
)

// A locked person decides a remote person's follow request as any other
// (package graph): the decision's commit enqueues, ahead of it, a job
// (Answering) that tells the requester's server with an Accept or a
// Reject of their Follow, once the decision has committed; for a local
// requester it does nothing.

// Answer runs an answer job: for a remote requester whose Follow the
// service kept, once the decision shows (the follow begun, or the
// request gone), it sends the Accept or the Reject.
func (s *Service) Answer(ctx context.Context, t outbox.AnswerTask) (string, error) {
	actor, remote, err := s.ActorOf(ctx, t.Requester)
	if err != nil || !remote {
		return "local", err
	}
	var rf remoteFollow
	if ok, err := s.db.Get(ctx, remoteFollowKey(s.db, t.Requester, t.Target), &rf); err != nil || !ok {
		return "no follow kept", err
	}
	shown, err := s.decided(ctx, t)
	if err != nil {
		return "", err
	}
	if !shown {
		if s.now().Sub(time.Unix(t.At, 0)) < queue.GiveUpOf(s.q) {
			return "", queue.NotYet("the decision")
		}
		return "never decided", nil
	}
	if err := s.answer(ctx, actor, t.Target, rf.FollowID, t.Approved); err != nil {
		return "", err
	}
	if t.Approved {
		return "accepted", nil
	}
	return "rejected", nil
}

// decided reports whether the decision of t shows: an approval's follow
// is there, a rejection's request is not.
func (s *Service) decided(ctx context.Context, t outbox.AnswerTask) (bool, error) {
	if t.Approved {
		l := s.db.Lookup()
		follows := s.follows.Follows(l, t.Requester, t.Target)
		if err := l.Run(ctx); err != nil {
			return false, fmt.Errorf("federation: the decision: %w", err)
		}
		return follows.Found(), nil
	}
	_, pending, err := s.graph.Asked(ctx, t.Requester, t.Target)
	return !pending, err
}

// Follows reads a follow by key (package graph's Records).
type Follows interface {
	Follows(l *store.Lookup, follower, followee string) store.Ref
	// FollowersAmong reports which of candidates follow followee, read
	// outside any transaction at the least cost.
	FollowersAmong(ctx context.Context, db *store.DB, followee string, candidates []string) (map[string]bool, error)
}
