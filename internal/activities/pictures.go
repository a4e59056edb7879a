package activities

import (
	"context"

	"socialstream/internal/media"
	"socialstream/internal/policy"
)

// PicturesSeen says which of user's pictures items reader may see
// (policy.SeePicture): one on an activity, if reader may see it (Get,
// which reads the activities, their author's standing and the ties in
// one batch, and hides a removed one from its author too); one on none,
// if it is the reader's own (whose standing their token vouches for).
func (s *Service) PicturesSeen(ctx context.Context, reader, user string, items []*media.Item) ([]bool, error) {
	var acts []string
	seen := map[string]bool{}
	for _, it := range items {
		if it.ActivityID != "" && !seen[it.ActivityID] {
			seen[it.ActivityID] = true
			acts = append(acts, it.ActivityID)
		}
	}
	visible := map[string]bool{}
	if len(acts) > 0 {
		vs, err := s.Get(ctx, reader, user, "", acts)
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			visible[v.ID] = true
		}
	}
	owner := policy.Account{ID: user, Exists: true}
	out := make([]bool, len(items))
	for i, it := range items {
		out[i] = visible[it.ActivityID] || it.ActivityID == "" && policy.SeePicture(reader, policy.Picture{Owner: user}, owner, policy.Ties{})
	}
	return out, nil
}
