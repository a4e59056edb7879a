package api

import (
	"context"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"socialstream/internal/derrors"
	"socialstream/internal/notifications"
)

// groupParams are the parameters of groups.get and groups.create.
type groupParams struct {
	UserID      string `json:"userId"`
	GroupID     string `json:"groupId"`
	Title       string `json:"title"`
	Description string `json:"description"`
	JoinPolicy  string `json:"joinPolicy"`
	paging
}

func groupsOfUserFromRequest(c *gin.Context) (groupParams, error) {
	p := groupParams{UserID: c.Param("userId")}
	var err error
	p.paging, err = pagingFromQuery(c)
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
		g, err := s.groups.Get(ctx, p.GroupID)
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
	list, next, err := s.groups.OfUser(ctx, id, page)
	if err != nil {
		return nil, err
	}
	total := int64(len(list))
	if next != "" || page.Offset > 0 {
		ids, err := s.groups.GroupIDs(ctx, id)
		if err != nil {
			return nil, err
		}
		total = int64(len(ids))
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

// memberParams are the parameters of a join or a removal.
type memberParams struct {
	GroupID string `json:"groupId"`
	ID      string `json:"id"`
}

func (s *Server) join(c *gin.Context) {
	var p memberParams
	if err := decodeJSON(c.Request.Body, &p); err != nil {
		s.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	if p.ID == "" {
		p.ID = "@me"
	}
	user, err := s.accounts.Resolve(ctx, caller(c), p.ID)
	if err == nil {
		_, err = s.accounts.Get(ctx, user) // before the job is enqueued
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	group := c.Param("groupId")
	added, err := s.rebuild.Join(ctx, caller(c), group, user)
	if err != nil {
		s.fail(c, err)
		return
	}
	g, err := s.groups.Get(ctx, group)
	if err != nil {
		s.fail(c, err)
		return
	}
	status := http.StatusOK
	if added {
		status = http.StatusCreated
		s.notify(ctx, notifications.Event{Type: notifications.GroupJoin, ActorID: user, Recipients: []string{g.OwnerID},
			GroupID: group, ID: fmt.Sprintf("join-%s-%s-%d", group, user, eventSecond())})
	}
	c.JSON(status, entry{g})
}

func (s *Server) leave(c *gin.Context) {
	ctx := c.Request.Context()
	user, err := s.accounts.Resolve(ctx, caller(c), c.Param("userId"))
	if err != nil {
		s.fail(c, err)
		return
	}
	if _, err := s.rebuild.Leave(ctx, caller(c), c.Param("groupId"), user); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
