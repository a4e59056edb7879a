package api

import (
	"context"
	"fmt"
	"time"

	"github.com/gin-gonic/gin"

	"socialstream/internal/accounts"
	"socialstream/internal/derrors"
	"socialstream/internal/store"
)

// requestView is a person as a list of follow requests shows them.
type requestView struct {
	accounts.Person
	RequestedAt string `json:"requestedAt"`
}

// requests lists the pending requests to follow the caller (@requests)
// or those the caller made (sent, @requested): nobody else's are shown.
// With person, it answers whether that one is pending: the person, or a
// 404.
func (s *Server) requests(ctx context.Context, caller, userID string, sent bool, person string, page store.PageRequest) (any, error) {
	if err := s.checkOwn(ctx, caller, userID, "a list of follow requests"); err != nil {
		return nil, err
	}
	if person != "" {
		other, err := s.accounts.Resolve(ctx, caller, person)
		if err != nil {
			return nil, err
		}
		requester, target := other, caller
		if sent {
			requester, target = caller, other
		}
		since, ok, err := s.graph.Asked(ctx, requester, target)
		if err != nil {
			return nil, err
		} else if !ok {
			return nil, derrors.New(derrors.NotFound, fmt.Sprintf("no pending request from %s to follow %s", requester, target))
		}
		p, err := s.accounts.Get(ctx, other)
		if err != nil {
			return nil, err
		}
		return entry{requestView{Person: p, RequestedAt: since.UTC().Format(time.RFC3339)}}, nil
	}
	rs, next, err := s.graph.Requests(ctx, caller, sent, page)
	if err != nil {
		return nil, err
	}
	idList := make([]string, len(rs))
	for i, r := range rs {
		idList[i] = r.Person
	}
	found, err := s.accounts.GetMulti(ctx, idList)
	if err != nil {
		return nil, err
	}
	list := make([]requestView, 0, len(rs))
	for _, r := range rs {
		if p, ok := found[r.Person]; ok {
			list = append(list, requestView{Person: p, RequestedAt: r.Since.UTC().Format(time.RFC3339)})
		}
	}
	return collection{List: list, StartIndex: page.Offset, ItemsPerPage: page.Count,
		TotalResults: int64(page.Offset + len(list) + boolInt(next != "")), NextCursor: next}, nil
}

// personUpdate is what a person changes of their own account
// (people.update): whether it is locked.
type personUpdate struct {
	UserID  string `json:"userId"`
	GroupID string `json:"groupId"`
	Locked  *bool  `json:"locked"`
	// Person is the same as OpenSocial's people.update sends it.
	Person *struct {
		Locked *bool `json:"locked"`
	} `json:"person"`
}

func personUpdateFromRequest(c *gin.Context) (personUpdate, error) {
	var p personUpdate
	if err := decodeJSON(c.Request.Body, &p); err != nil {
		return p, err
	}
	p.UserID, p.GroupID = c.Param("userId"), c.Param("selector")
	return p, nil
}

// peopleUpdate locks or unlocks the caller's account.
func (s *Server) peopleUpdate(ctx context.Context, caller string, p personUpdate) (any, error) {
	if p.GroupID != "" && p.GroupID != "@self" {
		return nil, derrors.New(derrors.NotFound, "a person is changed at /people/@me/@self")
	}
	if p.UserID == "" {
		p.UserID = "@me"
	}
	if err := s.checkOwn(ctx, caller, p.UserID, "an account's settings"); err != nil {
		return nil, derrors.New(derrors.PermissionDenied, "you can only change your own account")
	}
	locked := p.Locked
	if p.Person != nil && p.Person.Locked != nil {
		if locked != nil && *locked != *p.Person.Locked {
			return nil, derrors.New(derrors.InvalidArgument, "locked and person.locked disagree")
		}
		locked = p.Person.Locked
	}
	if locked == nil {
		return nil, derrors.New(derrors.InvalidArgument, `give what changes, as {"locked": true|false}`)
	}
	person, err := s.graph.SetLocked(ctx, caller, *locked)
	if err != nil {
		return nil, err
	}
	return entry{person}, nil
}
