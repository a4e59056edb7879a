package federation

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"socialstream/internal/outbox"
	"socialstream/internal/queue"
)

// A person here follows a person of another server as they follow a
// locked person: the follow is a request (package graph), and its commit
// enqueues, ahead of it, the job that sends their Follow (outbox.Asking). Their
// server's Accept approves the request, its Reject rejects it (or ends
// the follow, if it had begun). An unfollow, or a request withdrawn,
// enqueues the job that sends the Undo of the Follow (outbox.Ending). The
// Follow's id is kept (a RemoteFollow, named follower_followee, as for a
// remote person's Follow of someone here): the Undo names it, and an
// Accept or a Reject must.

// followID is the id of follower's Follow of followee, named by ring.
func (s *Service) followID(follower, followee, ring string) string {
	return s.cfg.Actor(follower) + "#follows/" + followee + "/" + ring
}

// Follow runs a follow job: once the request shows (a Follow), or the
// follow and the request are gone (an Undo), it sends the activity to
// the followee's inbox.
func (s *Service) Follow(ctx context.Context, t outbox.FollowTask) (string, error) {
	actor, remote, err := s.ActorOf(ctx, t.Followee)
	if err != nil || !remote {
		return "not remote", err
	}
	_, pending, err := s.graph.Asked(ctx, t.Follower, t.Followee)
	if err != nil {
		return "", err
	}
	l := s.db.Lookup()
	follows := s.follows.Follows(l, t.Follower, t.Followee)
	var kept remoteFollow
	known := l.Add(remoteFollowKey(s.db, t.Follower, t.Followee), &kept)
	if err := l.Run(ctx); err != nil {
		return "", err
	}
	waiting := s.now().Sub(time.Unix(t.At, 0)) < queue.GiveUpOf(s.q)
	if !t.Undo {
		return s.sendFollow(ctx, t, actor, pending, waiting)
	}
	switch {
	case (pending || follows.Found()) && waiting:
		return "", queue.NotYet("the unfollow")
	case pending || follows.Found():
		return "follows again", nil
	case !known.Found():
		return "no follow sent", nil
	}
	id := kept.FollowID + "/undo"
	return "undo sent", s.Send(ctx, t.Follower, id, map[string]any{
		"@context": "https://www.w3.org/ns/activitystreams", "id": id, "type": "Undo", "actor": s.cfg.Actor(t.Follower),
		"object": map[string]any{"id": kept.FollowID, "type": "Follow", "actor": s.cfg.Actor(t.Follower), "object": actor.URI},
	}, actor.Inbox)
}

// sendFollow sends the Follow of t once its request shows (pending),
// keeping its id for an Undo; a request withdrawn, or never made past
// the wait, sends nothing.
func (s *Service) sendFollow(ctx context.Context, t outbox.FollowTask, actor Actor, pending, waiting bool) (string, error) {
	switch {
	case !pending && waiting:
		return "", queue.NotYet("the request")
	case !pending:
		return "withdrawn", nil
	}
	id := s.followID(t.Follower, t.Followee, t.Ring)
	if err := s.db.Put(ctx, remoteFollowKey(s.db, t.Follower, t.Followee), &remoteFollow{FollowID: id, Follower: t.Follower, Followee: t.Followee}); err != nil {
		return "", err
	}
	return "follow sent", s.Send(ctx, t.Follower, id, map[string]any{
		"@context": "https://www.w3.org/ns/activitystreams", "id": id, "type": "Follow",
		"actor": s.cfg.Actor(t.Follower), "object": actor.URI,
	}, actor.Inbox)
}

// answered takes another server's Accept or Reject of a Follow sent from
// here: the request is approved, or rejected (a follow begun ends).
func (s *Service) answered(ctx context.Context, actor Actor, a activity) (string, error) {
	var inner activity
	_ = json.Unmarshal(a.Object, &inner) // the Follow, or its id alone
	id := ref(a.Object)
	follower, followee, ok := s.parseFollowID(id)
	if !ok || followee != actor.UserID {
		return "", errNotOurs
	}
	var kept remoteFollow
	if found, err := s.db.Get(ctx, remoteFollowKey(s.db, follower, followee), &kept); err != nil {
		return "", err
	} else if !found || kept.FollowID != id {
		return "", errNotOurs // a Follow since replaced, or never sent
	}
	if a.Type == "Accept" {
		if _, err := s.graph.Approve(ctx, followee, follower); err != nil {
			return "", err
		}
		return "follow accepted", nil
	}
	if _, pending, err := s.graph.Asked(ctx, follower, followee); err != nil {
		return "", err
	} else if pending {
		return "follow rejected", s.graph.Reject(ctx, followee, follower)
	}
	return "follow ended", s.graph.Unfollow(ctx, follower, followee, false)
}

// parseFollowID reads the follower and followee of the id of a Follow
// sent from here.
func (s *Service) parseFollowID(id string) (follower, followee string, ok bool) {
	rest, ok := strings.CutPrefix(id, s.cfg.Base()+PeoplePath)
	if !ok {
		return "", "", false
	}
	follower, rest, ok = strings.Cut(rest, "#follows/")
	if !ok {
		return "", "", false
	}
	followee, _, ok = strings.Cut(rest, "/")
	return follower, followee, ok && follower != "" && followee != ""
}
