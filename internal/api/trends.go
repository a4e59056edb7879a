package api

import (
	"context"
	"fmt"

	"github.com/gin-gonic/gin"

	"socialstream/internal/activities"
	"socialstream/internal/derrors"
	"socialstream/internal/trends"
)

// trendsParams are the parameters of trends.get: the kind (tags,
// statuses or links) and a window of what trends, best first.
type trendsParams struct {
	Kind string `json:"kind"`
	pageParams
}

func trendsFromRequest(c *gin.Context) (trendsParams, error) {
	p := trendsParams{Kind: c.Param("kind")}
	var err error
	p.pageParams, err = pagingFromQuery(c)
	return p, err
}

// trendDay is a day of what trends: its people, and its uses (a
// hashtag's posts; the people, for a link).
type trendDay struct {
	Day    string `json:"day"`
	People int64  `json:"people"`
	Uses   int64  `json:"uses"`
}

// trendView is a hashtag or link that trends, with its week.
type trendView struct {
	Name    string               `json:"name,omitempty"`
	Card    *activities.CardView `json:"card,omitempty"`
	People  int64                `json:"people"`
	History []trendDay           `json:"history"`
}

func trendDays(h []trends.Count) []trendDay {
	out := make([]trendDay, 0, len(h))
	for _, c := range h {
		out = append(out, trendDay{Day: c.Day.Start().Format("2006-01-02"), People: c.People, Uses: c.Uses})
	}
	return out
}

// trendsGet answers trends.get: what most people used, reacted to or
// linked lately, as the caller may see it (a post hidden from them left
// out), approved by a moderator unless review is off.
func (s *Server) trendsGet(ctx context.Context, caller string, p trendsParams) (any, error) {
	k, err := trends.ParseKind(p.Kind)
	if err != nil {
		return nil, err
	}
	page, err := p.page()
	if err != nil {
		return nil, err
	}
	if page.Cursor != "" {
		return nil, derrors.New(derrors.InvalidArgument, "trends are paged by startIndex, not by a cursor")
	}
	if page.Offset > trends.Ranked {
		return nil, derrors.New(derrors.InvalidArgument, fmt.Sprintf("startIndex must be at most %d", trends.Ranked))
	}
	t, err := s.activities.Trending(ctx, activities.TrendsRequest{Viewer: caller, Kind: k, Offset: page.Offset, Count: page.Count})
	if err != nil {
		return nil, err
	}
	var list any
	n := 0
	switch k {
	case trends.Tags:
		views := make([]trendView, 0, len(t.Tags))
		for _, it := range t.Tags {
			views = append(views, trendView{Name: it.Name, People: it.Today + it.Yesterday, History: trendDays(it.History)})
		}
		list, n = views, len(views)
	case trends.Links:
		views := make([]trendView, 0, len(t.Links))
		for _, l := range t.Links {
			views = append(views, trendView{Card: l.Card, People: l.Today + l.Yesterday, History: trendDays(l.History)})
		}
		list, n = views, len(views)
	default:
		views := make([]activities.View, 0, len(t.Posts))
		for _, p := range t.Posts {
			views = append(views, p.View)
		}
		list, n = views, len(views)
	}
	return collection{List: list, StartIndex: page.Offset, ItemsPerPage: n}, nil
}
