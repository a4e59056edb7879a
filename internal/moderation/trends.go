package moderation

import (
	"context"
	"fmt"

	"socialstream/internal/activities"
	"socialstream/internal/trends"
)

// Trends returns, for a moderator, what trends of r.Kind with what waits
// for their review (trends.Item.Review empty), best first.
func (s *Service) Trends(ctx context.Context, moderator string, r activities.TrendsRequest) (activities.Trends, error) {
	if _, err := s.staff(ctx, moderator); err != nil {
		return activities.Trends{}, err
	}
	r.Viewer, r.Waiting = moderator, true
	t, err := s.acts.Trending(ctx, r)
	if err != nil {
		return activities.Trends{}, fmt.Errorf("moderation.Trends(%s): %w", r.Kind, err)
	}
	return t, nil
}

// ReviewTrend approves (or rejects) the subject of kind k whose id is id,
// for moderator: approved, it trends (when enough people use it);
// rejected, it never does.
func (s *Service) ReviewTrend(ctx context.Context, moderator string, k trends.Kind, id string, approve bool) (trends.Item, error) {
	if _, err := s.staff(ctx, moderator); err != nil {
		return trends.Item{}, err
	}
	it, err := s.acts.ReviewTrend(ctx, moderator, k, id, approve)
	if err != nil {
		return trends.Item{}, fmt.Errorf("moderation.ReviewTrend(%s, %s): %w", k, id, err)
	}
	return it, nil
}
