package federation

import (
	"context"
	"errors"
	"time"

	"socialstream/internal/activities"
	"socialstream/internal/derrors"
)

// A remote person's Update of a Note of theirs kept here edits its post
// as its author would (activities.Edit): its text, content warning and
// sensitive are the Note's now, its mentions follow its tags and its hashtags its text,
// and the people it newly mentions here are told. Updates may come in
// any order: each edit's time is the Note's updated, by its server's
// clock, and one made before the edit the post shows is left alone. An
// Update of a Note not kept here is taken as its Create (which may come
// late, and is then one post with it).

// updated takes an Update of a Note.
func (s *Service) updated(ctx context.Context, actor Actor, a activity) (string, error) {
	n, ignored, err := readNote(actor, a)
	if ignored != "" || err != nil {
		return ignored, err
	}
	post, ok, err := s.activities.ExternalIDOf(ctx, actor.UserID, externalID(n.ID))
	if err != nil {
		return "", err
	} else if !ok { // its Create is late, or was dropped: the Note as it is now is taken as one
		return s.createdNote(ctx, actor, n)
	} else if post == "" {
		return "ignored: deleted by its server", nil
	}
	if err := s.recounted(ctx, actor, n, post); err != nil {
		return "", err
	}
	w := s.wording(n)
	in := activities.EditInput{Title: &w.parts.Title, Body: &w.parts.Body, Joined: &w.parts.Joined,
		SpoilerText: &w.spoiler, Sensitive: &n.Sensitive, At: s.now().UnixMilli()}
	if at, err := time.Parse(time.RFC3339, n.Updated); err == nil {
		in.At = at.UnixMilli()
	}
	if in.Mentions, err = s.mentionsOf(ctx, n); err != nil {
		return "", err
	}
	v, err := s.activities.Edit(ctx, actor.UserID, post, in)
	var de *derrors.Error
	switch {
	case errors.Is(err, activities.ErrOlderEdit):
		return "ignored: a later edit is kept", nil
	case errors.Is(err, activities.ErrNoSuchActivity):
		return "nothing to update: the post is gone", nil
	case errors.As(err, &de) && (errors.Is(err, derrors.InvalidArgument) || errors.Is(err, derrors.Conflict)):
		return "refused: " + de.Message, nil // an edit the service cannot keep: taken, and dropped
	case err != nil:
		return "", err
	}
	return "edited " + v.ID, nil
}
