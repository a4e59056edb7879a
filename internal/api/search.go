package api

import (
	"context"
	"strings"

	"github.com/gin-gonic/gin"

	"socialstream/internal/activities"
	"socialstream/internal/derrors"
	"socialstream/internal/search"
)

// searchParams are the parameters of activities.search: the words of a
// search box (package search reads them as Mastodon does), the fields
// asked for, and the page.
type searchParams struct {
	Q      string `json:"q"`
	Fields list   `json:"fields"`
	pageParams
}

func searchFromRequest(c *gin.Context) (searchParams, error) {
	p := searchParams{Q: c.Query("q")}
	var err error
	if p.Fields, err = listFromQuery(c, "fields"); err != nil {
		return p, err
	}
	p.pageParams, err = pagingFromQuery(c)
	return p, err
}

var errNoQuery = derrors.New(derrors.InvalidArgument, "q, the words to search for, is required")

// activitiesSearch answers activities.search: a page of the posts the
// caller may see and search that hold q's words, newest first.
func (s *Server) activitiesSearch(ctx context.Context, caller string, p searchParams) (any, error) {
	return selecting(p.Fields, func() (any, error) {
		if strings.TrimSpace(p.Q) == "" {
			return nil, errNoQuery
		}
		q, err := search.Parse(p.Q)
		if err != nil {
			return nil, err
		}
		page, err := p.page()
		if err != nil {
			return nil, err
		}
		r := activities.SearchRequest{Viewer: caller, Query: q, Page: page}
		if q.From != "" {
			found, err := s.accounts.LookupUsernames(ctx, []string{q.From})
			if err != nil {
				return nil, err
			}
			if r.FromID = found[q.From]; r.FromID == "" {
				return collection{List: []activities.View{}, StartIndex: page.Offset, ItemsPerPage: page.Count}, nil
			}
		}
		list, next, err := s.activities.Search(ctx, r)
		if err != nil {
			return nil, err
		}
		return feedPage(list, next, page), nil
	})
}
