package api

import (
	"context"

	"github.com/gin-gonic/gin"

	"socialstream/internal/derrors"
	"socialstream/internal/filters"
)

// filterParams are the parameters of the filters' operations: whose
// (always the caller's), which, and the filter (the body of a create or
// an update; JSON-RPC's "filter").
type filterParams struct {
	UserID   string          `json:"userId"`
	FilterID string          `json:"filterId"`
	Filter   *filters.Filter `json:"filter"`
}

func filtersFromRequest(c *gin.Context) (filterParams, error) {
	p := filterParams{UserID: c.Param("userId"), FilterID: c.Param("filterId")}
	if c.Request.Method == "POST" || c.Request.Method == "PUT" {
		p.Filter = &filters.Filter{}
		if err := decodeJSON(c.Request.Body, p.Filter); err != nil {
			return p, err
		}
	}
	return p, nil
}

var errNoFilter = derrors.New(derrors.InvalidArgument, `give the filter: {"title", "keywords": [{"keyword", "wholeWord"}], "context": [...], "action", "expiresAt"}`)

// own checks that the filters are the caller's.
func (s *Server) ownFilters(ctx context.Context, caller string, p filterParams) error {
	if p.UserID == "" {
		p.UserID = "@me"
	}
	return s.checkOwn(ctx, caller, p.UserID, "a filter")
}

// filtersGet lists the caller's filters, or answers one.
func (s *Server) filtersGet(ctx context.Context, caller string, p filterParams) (any, error) {
	if err := s.ownFilters(ctx, caller, p); err != nil {
		return nil, err
	}
	if p.FilterID != "" {
		f, err := s.filters.Get(ctx, caller, p.FilterID)
		if err != nil {
			return nil, err
		}
		return entry{f}, nil
	}
	fs, err := s.filters.List(ctx, caller)
	if err != nil {
		return nil, err
	}
	return collection{List: fs, ItemsPerPage: len(fs), TotalResults: int64(len(fs))}, nil
}

func (s *Server) filtersCreate(ctx context.Context, caller string, p filterParams) (any, error) {
	if err := s.ownFilters(ctx, caller, p); err != nil {
		return nil, err
	}
	if p.Filter == nil {
		return nil, errNoFilter
	}
	f, err := s.filters.Create(ctx, caller, *p.Filter)
	if err != nil {
		return nil, err
	}
	return entry{f}, nil
}

func (s *Server) filtersUpdate(ctx context.Context, caller string, p filterParams) (any, error) {
	if err := s.ownFilters(ctx, caller, p); err != nil {
		return nil, err
	}
	if p.Filter == nil {
		return nil, errNoFilter
	}
	if p.FilterID == "" {
		return nil, derrors.New(derrors.InvalidArgument, "name the filter to change: filterId")
	}
	f, err := s.filters.Update(ctx, caller, p.FilterID, *p.Filter)
	if err != nil {
		return nil, err
	}
	return entry{f}, nil
}

func (s *Server) filtersDelete(ctx context.Context, caller string, p filterParams) (any, error) {
	if err := s.ownFilters(ctx, caller, p); err != nil {
		return nil, err
	}
	if p.FilterID == "" {
		return nil, derrors.New(derrors.InvalidArgument, "name the filter to delete: filterId")
	}
	return nil, s.filters.Delete(ctx, caller, p.FilterID)
}
