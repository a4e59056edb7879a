package federation

import (
	"context"
	"fmt"
	"time"

	"socialstream/internal/queue"
	"socialstream/internal/store"
)

// A person here who deletes their account is told to other servers: the
// erasure's key-pair phase (package lifecycle) sends the Delete of their
// actor to the servers of their remote followers, signed with their key,
// and lets go of the Follows it kept of them. The key itself outlives
// the account by KeyGrace, past the deliveries' retries (about a day),
// so that each attempt can sign; a job erases it then.

// KeyGrace is how long a deleted person's key pair is kept, for the
// Delete of their actor to be signed on every attempt of its delivery.
const KeyGrace = 26 * time.Hour

// ForgetKeyJob erases a deleted person's key pair, once their farewell
// is delivered or given up on.
var ForgetKeyJob = queue.Job[ForgetKeyTask]{Name: "forget-key", Queue: queue.Cleanup,
	TaskName: func(t ForgetKeyTask) string { return "forget-key-" + t.User }}

// ForgetKeyTask is the body of a ForgetKeyJob.
type ForgetKeyTask struct {
	User string `json:"user"`
}

// Farewell is a step of the key-pair phase of the erasure of user, a
// person here: it sends the Delete of their actor to the servers of up
// to n of their remote followers, deletes the Follows of theirs it kept,
// and reports how many; when fewer than n are left, it enqueues the
// erasure of their key pair after KeyGrace (at once, when they have no
// key: no server ever read their actor).
func (s *Service) Farewell(ctx context.Context, user string, n int) (int, error) {
	ctx = store.Unguarded(ctx)
	if _, ok, err := s.keys.Stored(ctx, user); err != nil {
		return 0, err
	} else if !ok {
		_, err := s.keys.Erase(ctx, user)
		return 0, err
	}
	var follows []remoteFollow
	keys, err := s.db.GetAll(ctx, s.db.Query(KindRemoteFollow).FilterField("followee", "=", user).Limit(n), &follows)
	if err != nil {
		return 0, fmt.Errorf("federation: the remote followers of %s: %w", user, err)
	}
	if len(follows) > 0 {
		if err := s.sayFarewell(ctx, user, follows); err != nil {
			return 0, err
		}
		if err := s.db.DeleteMulti(ctx, keys); err != nil {
			return 0, fmt.Errorf("federation: the remote followers of %s: %w", user, err)
		}
	}
	if len(follows) < n {
		if err := ForgetKeyJob.Enqueue(ctx, s.q, ForgetKeyTask{User: user}, KeyGrace); err != nil {
			return 0, err
		}
	}
	return len(follows), nil
}

// sayFarewell sends the Delete of user's actor to the servers of the
// remote followers follows name, each server's inbox once.
func (s *Service) sayFarewell(ctx context.Context, user string, follows []remoteFollow) error {
	l := s.db.Lookup()
	actors := make([]remoteActor, len(follows))
	refs := make([]store.Ref, len(follows))
	for i, f := range follows {
		refs[i] = l.Add(remoteActorKey(s.db, f.Follower), &actors[i])
	}
	if err := l.Run(ctx); err != nil {
		return err
	}
	inboxes, err := s.deliveryInboxes(ctx, actors, func(i int) bool { return refs[i].Found() })
	if err != nil {
		return err
	}
	if len(inboxes) == 0 {
		return nil
	}
	actor := s.cfg.Actor(user)
	return s.Send(ctx, user, actor+"#delete", map[string]any{
		"@context": "https://www.w3.org/ns/activitystreams", "id": actor + "#delete", "type": "Delete",
		"actor": actor, "object": actor, "to": []string{PublicCollection},
	}, inboxes...)
}

// ForgetKey runs a ForgetKeyJob.
func (s *Service) ForgetKey(ctx context.Context, t ForgetKeyTask) error {
	_, err := s.keys.Erase(ctx, t.User)
	return err
}
