package api

import (
	"context"
	"strings"

	"github.com/gin-gonic/gin"

	"socialstream/internal/markers"
)

// markerParams are the parameters of a read (feeds, comma-separated) or a
// move (the body: feed name to marker) of the caller's markers.
type markerParams struct {
	UserID string
	Feeds  []string
	Move   map[string]markers.Marker
}

func markersFromRequest(c *gin.Context) (markerParams, error) {
	p := markerParams{UserID: c.Param("userId")}
	if c.Request.Method == "GET" {
		p.Feeds = []string{"home", "notifications"}
		if v, ok := c.GetQuery("feeds"); ok {
			p.Feeds = strings.Split(v, ",")
		}
		return p, nil
	}
	err := decodeJSON(c.Request.Body, &p.Move)
	return p, err
}

func (s *Server) markersGet(ctx context.Context, caller string, p markerParams) (any, error) {
	if err := s.checkOwn(ctx, caller, p.UserID, "a marker"); err != nil {
		return nil, err
	}
	m, err := s.markers.Get(ctx, caller, p.Feeds)
	if err != nil {
		return nil, err
	}
	return entry{m}, nil
}

func (s *Server) markersMove(ctx context.Context, caller string, p markerParams) (any, error) {
	if err := s.checkOwn(ctx, caller, p.UserID, "a marker"); err != nil {
		return nil, err
	}
	m, err := s.markers.Move(ctx, caller, p.Move)
	if err != nil {
		return nil, err
	}
	return entry{m}, nil
}
