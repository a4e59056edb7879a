package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"socialstream/internal/derrors"
	"socialstream/internal/graph"
)

// Lists on REST (/social/rest/lists/@me): the operations of package
// graph's lists, as the Mastodon face's.

// listParams are the parameters of the lists' routes.
type listParams struct {
	UserID        string   `json:"-"`
	ListID        string   `json:"-"`
	MemberID      string   `json:"-"`
	Title         *string  `json:"title"`
	RepliesPolicy *string  `json:"repliesPolicy"`
	Exclusive     *bool    `json:"exclusive"`
	IDs           []string `json:"ids"`
	pageParams
}

func listFromRequest(c *gin.Context) (listParams, error) {
	var p listParams
	var err error
	switch c.Request.Method {
	case http.MethodPost, http.MethodPut:
		err = decodeJSON(c.Request.Body, &p)
	case http.MethodGet:
		p.pageParams, err = pagingFromQuery(c)
	}
	p.UserID, p.ListID, p.MemberID = c.Param("userId"), c.Param("listId"), c.Param("memberId")
	return p, err
}

// ownLists checks that the path names the caller: lists are private.
func (s *Server) ownLists(ctx context.Context, caller string, p listParams) error {
	id, err := s.accounts.Resolve(ctx, caller, p.UserID)
	if err != nil {
		return err
	}
	if id != caller {
		return derrors.New(derrors.PermissionDenied, "lists are for their owner only")
	}
	return nil
}

func (p listParams) input() graph.ListInput {
	return graph.ListInput{Title: p.Title, RepliesPolicy: p.RepliesPolicy, Exclusive: p.Exclusive}
}

// listsGet answers the caller's lists, or one.
func (s *Server) listsGet(ctx context.Context, caller string, p listParams) (any, error) {
	if err := s.ownLists(ctx, caller, p); err != nil {
		return nil, err
	}
	if p.ListID != "" {
		l, err := s.graph.GetList(ctx, caller, p.ListID)
		if err != nil {
			return nil, err
		}
		return entry{l}, nil
	}
	ls, err := s.graph.Lists(ctx, caller)
	if err != nil {
		return nil, err
	}
	return collection{List: ls, ItemsPerPage: len(ls), TotalResults: int64(len(ls))}, nil
}

func (s *Server) listsCreate(ctx context.Context, caller string, p listParams) (any, error) {
	if err := s.ownLists(ctx, caller, p); err != nil {
		return nil, err
	}
	l, err := s.graph.CreateList(ctx, caller, p.input())
	if err != nil {
		return nil, err
	}
	return entry{l}, nil
}

func (s *Server) listsUpdate(ctx context.Context, caller string, p listParams) (any, error) {
	if err := s.ownLists(ctx, caller, p); err != nil {
		return nil, err
	}
	l, err := s.graph.UpdateList(ctx, caller, p.ListID, p.input())
	if err != nil {
		return nil, err
	}
	return entry{l}, nil
}

func (s *Server) listsDelete(ctx context.Context, caller string, p listParams) (any, error) {
	if err := s.ownLists(ctx, caller, p); err != nil {
		return nil, err
	}
	return nil, s.graph.DeleteList(ctx, caller, p.ListID)
}

// listMembersGet answers a list's members, newest first.
func (s *Server) listMembersGet(ctx context.Context, caller string, p listParams) (any, error) {
	if err := s.ownLists(ctx, caller, p); err != nil {
		return nil, err
	}
	page, err := p.page()
	if err != nil {
		return nil, err
	}
	idList, next, err := s.graph.Members(ctx, caller, p.ListID, page)
	if err != nil {
		return nil, err
	}
	people, err := s.accounts.Shown(ctx, caller, idList)
	if err != nil {
		return nil, err
	}
	list := []any{}
	for _, id := range idList {
		if person, ok := people[id]; ok {
			list = append(list, person)
		}
	}
	return collection{List: list, StartIndex: page.Offset, ItemsPerPage: page.Count,
		TotalResults: int64(page.Offset + len(list) + boolInt(next != "")), NextCursor: next}, nil
}

// listMembersAdd adds people the caller follows to a list.
func (s *Server) listMembersAdd(ctx context.Context, caller string, p listParams) (any, error) {
	if err := s.ownLists(ctx, caller, p); err != nil {
		return nil, err
	}
	if len(p.IDs) == 0 || len(p.IDs) > 40 {
		return nil, derrors.New(derrors.InvalidArgument, `give "ids": 1 to 40 people`)
	}
	for range p.IDs {
		if err := charge(ctx, costInvite); err != nil {
			return nil, err
		}
	}
	return nil, s.graph.AddToList(ctx, caller, p.ListID, p.IDs, nil)
}

// listMembersRemove takes one person off a list.
func (s *Server) listMembersRemove(ctx context.Context, caller string, p listParams) (any, error) {
	if err := s.ownLists(ctx, caller, p); err != nil {
		return nil, err
	}
	return nil, s.graph.RemoveFromList(ctx, caller, p.ListID, []string{p.MemberID})
}
