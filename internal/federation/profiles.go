package federation

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"socialstream/internal/accounts"
	"socialstream/internal/outbox"
	"socialstream/internal/queue"
	"socialstream/internal/store"
)

// A person here who changes what they show of themselves (their name,
// note, fields, avatar, header, lock) is told to other servers, as
// Mastodon and GoToSocial do: the change enqueues, ahead of its commit,
// outbox.ProfileJob, which sends the Update of their actor, as GET
// /users/:id serves it now, to the servers of their remote followers and
// of the people of other servers they follow, each inbox once. A job
// runs any number of times: each sends the actor as it is then.

// SendProfile runs an outbox.ProfileJob, and reports how it ended.
func (s *Service) SendProfile(ctx context.Context, t outbox.ProfileTask) (string, error) {
	l := s.db.Lookup()
	r := accounts.Read(l, t.User)
	if err := l.Run(ctx); err != nil {
		return "", err
	}
	switch changed := r.Changed(); {
	case !r.Exists():
		return "the account is gone", nil
	case r.Remote():
		return "not a person here", nil
	case changed > t.At:
		return "changed again since: that change's job sends it", nil
	case changed < t.At && s.now().Sub(time.UnixMicro(t.At)) < queue.GiveUpOf(s.q):
		return "", queue.NotYet("the change of the profile")
	case changed < t.At:
		return "never changed", nil
	}
	p, ok := r.Person()
	if !ok || !r.SeenBy("") {
		return "hidden (suspended): not sent", nil
	}
	inboxes, err := s.profileInboxes(ctx, t.User)
	if err != nil {
		return "", err
	}
	if len(inboxes) == 0 {
		return "no one elsewhere", nil
	}
	if s.render.Actor == nil {
		return "", fmt.Errorf("federation: nothing renders actors")
	}
	key, err := s.keys.Of(ctx, t.User)
	if err != nil {
		return "", err
	}
	actor := s.cfg.Actor(t.User)
	id := fmt.Sprintf("%s#updates/%d", actor, t.At)
	update := map[string]any{"@context": "https://www.w3.org/ns/activitystreams", "id": id, "type": "Update", "actor": actor,
		"to": []string{PublicCollection}, "object": s.render.Actor(p, key.PublicPEM)}
	return fmt.Sprintf("sent to %d inboxes", len(inboxes)), s.Send(ctx, t.User, id, update, inboxes...)
}

// followedInboxes returns the inboxes of the people of other servers user
// follows (a server's shared inbox once for all its people), at most
// MaxRemoteFollowers of them: those whose Follow was sent from here (a
// RemoteFollow named user_followee, found by its key's range) and who
// are still followed.
func (s *Service) followedInboxes(ctx context.Context, user string) ([]string, error) {
	q := s.db.Query(KindRemoteFollow).
		FilterField("__key__", ">=", remoteFollowKey(s.db, user, "")).
		FilterField("__key__", "<", s.db.NameKey(KindRemoteFollow, user+"`", nil)). // "`" is "_" + 1
		KeysOnly().Limit(MaxRemoteFollowers)
	keys, err := s.db.GetAll(ctx, q, nil)
	if err != nil {
		return nil, fmt.Errorf("federation: the people elsewhere %s follows: %w", user, err)
	}
	var followees []string
	for _, k := range keys {
		if followee, ok := strings.CutPrefix(k.Name, user+"_"); ok && followee != "" {
			followees = append(followees, followee)
		}
	}
	l := s.db.Lookup()
	actors := make([]remoteActor, len(followees))
	still, known := make([]store.Ref, len(followees)), make([]store.Ref, len(followees))
	for i, f := range followees {
		still[i], known[i] = s.follows.Follows(l, user, f), l.Add(remoteActorKey(s.db, f), &actors[i])
	}
	if err := l.Run(ctx); err != nil {
		return nil, fmt.Errorf("federation: the people elsewhere %s follows: %w", user, err)
	}
	return s.deliveryInboxes(ctx, actors, func(i int) bool { return still[i].Found() && known[i].Found() })
}

// profileInboxes are the inboxes a change of user's profile goes to,
// each once: those of the servers of their followers, and of the people
// they follow.
func (s *Service) profileInboxes(ctx context.Context, user string) ([]string, error) {
	inboxes, err := s.remoteAudience(ctx, user)
	if err != nil {
		return nil, err
	}
	followed, err := s.followedInboxes(ctx, user)
	if err != nil {
		return nil, err
	}
	for _, inbox := range followed {
		if !slices.Contains(inboxes, inbox) {
			inboxes = append(inboxes, inbox)
		}
	}
	return inboxes, nil
}
