package federation

import (
	"context"
	"encoding/json"
	"errors"

	"socialstream/internal/activities"
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

// SetReactions gives the service the likes and reposts an inbox acts on.
func (s *Service) SetReactions(l Likes, r Reposts) { s.likes, s.reposts = l, r }

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
