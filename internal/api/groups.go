package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"socialstream/internal/derrors"
	"socialstream/internal/groups"
)

// groupParams are the parameters of groups.get and groups.create.
type groupParams struct {
	UserID      string `json:"userId"`
	GroupID     string `json:"groupId"`
	Title       string `json:"title"`
	Description string `json:"description"`
	JoinPolicy  string `json:"joinPolicy"`
	pageParams
}

func groupsOfUserFromRequest(c *gin.Context) (groupParams, error) {
	p := groupParams{UserID: c.Param("userId")}
	var err error
	p.pageParams, err = pagingFromQuery(c)
	return p, err
}

func groupFromRequest(c *gin.Context) (groupParams, error) {
	return groupParams{UserID: "@all", GroupID: c.Param("groupId")}, nil
}

func groupCreateFromRequest(c *gin.Context) (groupParams, error) {
	var p groupParams
	err := decodeJSON(c.Request.Body, &p)
	p.UserID = c.Param("userId")
	return p, err
}

// groupsGet answers groups.get: one group (userId @all and a groupId), or
// the groups a user belongs to.
func (s *Server) groupsGet(ctx context.Context, caller string, p groupParams) (any, error) {
	if p.UserID == "@all" || p.GroupID != "" {
		if p.GroupID == "" {
			return nil, derrors.New(derrors.InvalidArgument, "groupId is required with @all")
		}
		g, err := s.groups.Get(ctx, caller, p.GroupID)
		if err != nil {
			return nil, err
		}
		return entry{g}, nil
	}
	if p.UserID == "" {
		p.UserID = "@me"
	}
	page, err := p.page()
	if err != nil {
		return nil, err
	}
	id, err := s.accounts.Resolve(ctx, caller, p.UserID)
	if err != nil {
		return nil, err
	}
	list, total, next, err := s.groups.OfUser(ctx, caller, id, page)
	if err != nil {
		return nil, err
	}
	return collection{List: list, StartIndex: page.Offset, ItemsPerPage: page.Count, TotalResults: total, NextCursor: next}, nil
}

func (s *Server) groupsCreate(ctx context.Context, caller string, p groupParams) (any, error) {
	if p.UserID != "" {
		id, err := s.accounts.Resolve(ctx, caller, p.UserID)
		if err != nil {
			return nil, err
		}
		if id != caller {
			return nil, derrors.New(derrors.PermissionDenied, "you can only create groups of your own")
		}
	}
	g, err := s.groups.Create(ctx, caller, p.Title, p.Description, p.JoinPolicy)
	if err != nil {
		return nil, err
	}
	return entry{g}, nil
}

// memberParams are the parameters of a join (groups.join) or a leave
// (groups.leave): whom, as userId (or id, as the REST body of a join names
// it); the caller when neither is given.
type memberParams struct {
	GroupID string `json:"groupId"`
	UserID  string `json:"userId"`
	ID      string `json:"id"`
}

var errNoGroupID = derrors.New(derrors.InvalidArgument, "groupId is required")

func (p memberParams) user() string {
	switch {
	case p.UserID != "":
		return p.UserID
	case p.ID != "":
		return p.ID
	}
	return "@me"
}

func joinFromRequest(c *gin.Context) (memberParams, error) {
	var p memberParams
	err := decodeJSON(c.Request.Body, &p)
	p.GroupID = c.Param("groupId")
	return p, err
}

func leaveFromRequest(c *gin.Context) (memberParams, error) {
	return memberParams{GroupID: c.Param("groupId"), UserID: c.Param("userId")}, nil
}

// join answers with the group: 201 when the caller joined, 200 when they
// were a member already, 202 when the caller invited someone else (who
// joins only by accepting).
func (s *Server) join(ctx context.Context, caller string, p memberParams) (any, error) {
	if p.GroupID == "" {
		return nil, errNoGroupID
	}
	user, err := s.accounts.Resolve(ctx, caller, p.user())
	if err != nil {
		return nil, err
	}
	g, out, err := s.groups.Join(ctx, caller, p.GroupID, user)
	if err != nil {
		return nil, err
	}
	status := map[groups.Outcome]int{groups.Joined: http.StatusCreated, groups.AlreadyMember: http.StatusOK, groups.Invited: http.StatusAccepted}
	return statusEntry{entry: entry{g}, status: status[out]}, nil
}

func (s *Server) leave(ctx context.Context, caller string, p memberParams) (any, error) {
	if p.GroupID == "" {
		return nil, errNoGroupID
	}
	user, err := s.accounts.Resolve(ctx, caller, p.user())
	if err != nil {
		return nil, err
	}
	return nil, s.groups.Leave(ctx, caller, p.GroupID, user)
}
