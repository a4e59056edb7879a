package api

import (
	"context"

	"github.com/gin-gonic/gin"

	"socialstream/internal/derrors"
)

// peopleParams are the parameters of people.get, as OpenSocial names them.
type peopleParams struct {
	UserID  string `json:"userId"`
	GroupID string `json:"groupId"`
	paging
}

func peopleGetFromRequest(c *gin.Context) (peopleParams, error) {
	p := peopleParams{UserID: c.Param("userId"), GroupID: c.Param("selector")}
	var err error
	p.paging, err = pagingFromQuery(c)
	return p, err
}

func (s *Server) peopleGet(ctx context.Context, caller string, p peopleParams) (any, error) {
	if p.UserID == "" {
		p.UserID = "@me"
	}
	if p.GroupID == "" {
		p.GroupID = "@self"
	}
	id, err := s.accounts.Resolve(ctx, caller, p.UserID)
	if err != nil {
		return nil, err
	}
	switch p.GroupID {
	case "@self":
		person, err := s.accounts.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		return entry{person}, nil
	default:
		return nil, derrors.New(derrors.NotFound, "unknown people selector "+p.GroupID)
	}
}

