package federation

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"socialstream/internal/activities"
	"socialstream/internal/outbox"
	"socialstream/internal/queue"
	"socialstream/internal/store"
)

// A remote person's Like of a post here is their like of it, counted and
// told as any (package likes); their Announce of a post here is their
// repost of it (activities.Repost), which reaches their followers here;
// the Undo of either takes it back. One of a post of another server is
// left alone for now.

// Likes is what an inbox does to likes (package likes' Service).
type Likes interface {
	Like(ctx context.Context, user, activity string) (activities.View, error)
	Unlike(ctx context.Context, user, activity string) (activities.View, error)
}

// Reposts is what an inbox does to reposts (package activities'
// Service).
type Reposts interface {
	Repost(ctx context.Context, user, id string) (activities.View, bool, error)
	Unrepost(ctx context.Context, user, id string) (activities.View, error)
}

// reacted takes a Like or an Announce of a post here (undo: its Undo).
func (s *Service) reacted(ctx context.Context, actor Actor, kind string, object json.RawMessage, undo bool) (string, error) {
	post := s.localNote(ref(object))
	if post == "" {
		return "ignored " + kind + " of a post elsewhere", nil
	}
	var err error
	switch {
	case kind == "Like" && !undo:
		_, err = s.likes.Like(ctx, actor.UserID, post)
	case kind == "Like":
		_, err = s.likes.Unlike(ctx, actor.UserID, post)
	case !undo:
		_, _, err = s.reposts.Repost(ctx, actor.UserID, post)
	default:
		_, err = s.reposts.Unrepost(ctx, actor.UserID, post)
	}
	if errors.Is(err, activities.ErrNoSuchActivity) {
		return "", errNotOurs // not there, or hidden from them
	}
	if err != nil {
		return "", err
	}
	if undo {
		return "undid " + kind, nil
	}
	return kind + " taken", nil
}

// A person here favourites a post of another server's: the like's
// commit enqueues, ahead of it, the job (Liking) that sends their Like
// of its Note to the author's server once the like shows, or the Undo
// of it once an unlike shows. The Like's id names the person and the
// post, so the Undo names it again.

// Liked reads a like by key (package likes' Records).
type Liked interface {
	Liked(l *store.Lookup, activity, viewer string) store.Ref
}

// Like runs a like job.
func (s *Service) Like(ctx context.Context, t outbox.LikeTask) (string, error) {
	actor, remote, err := s.ActorOf(ctx, t.Author)
	if err != nil || !remote {
		return "not another server's", err
	}
	l := s.db.Lookup()
	liked := s.liked.Liked(l, t.Activity, t.User)
	if err := l.Run(ctx); err != nil {
		return "", err
	}
	if liked.Found() == t.Undo {
		if s.now().Sub(time.Unix(t.At, 0)) < queue.GiveUpOf(s.q) {
			return "", queue.NotYet("the like")
		}
		return "never done", nil
	}
	id := s.cfg.Actor(t.User) + "#likes/" + t.Activity
	like := map[string]any{"@context": "https://www.w3.org/ns/activitystreams", "id": id, "type": "Like",
		"actor": s.cfg.Actor(t.User), "object": t.Note}
	if !t.Undo {
		return "like sent", s.Send(ctx, t.User, id+"/"+t.Ring, like, actor.DeliveryInbox())
	}
	delete(like, "@context")
	return "undo sent", s.Send(ctx, t.User, id+"/undo/"+t.Ring, map[string]any{"@context": "https://www.w3.org/ns/activitystreams",
		"id": id + "/undo", "type": "Undo", "actor": s.cfg.Actor(t.User), "object": like}, actor.DeliveryInbox())
}
