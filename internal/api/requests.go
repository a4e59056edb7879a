package api

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/gin-gonic/gin"

	"socialstream/internal/accounts"
	"socialstream/internal/derrors"
	"socialstream/internal/paging"
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
func (s *Server) requests(ctx context.Context, caller, userID string, sent bool, person string, page paging.Request) (any, error) {
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
// (people.update): whether it is locked, and their profile.
type personUpdate struct {
	UserID  string `json:"userId"`
	GroupID string `json:"groupId"`
	personChange
	// Person is the same as OpenSocial's people.update sends it.
	Person *personChange `json:"person"`
}

// personChange is a change of one's account: a field left out is kept.
type personChange struct {
	DisplayName *string           `json:"displayName"`
	Locked      *bool             `json:"locked"`
	Indexable   *bool             `json:"indexable"`
	Note        *string           `json:"note"`
	Fields      *[]accounts.Field `json:"fields"`
	// Avatar and Header are ids of the person's uploads ("" takes the
	// picture away).
	Avatar *string `json:"avatar"`
	Header *string `json:"header"`
}

// merge returns c with what o gives too: a field both give differently
// is a 400.
func (c personChange) merge(o *personChange) (personChange, error) {
	if o == nil {
		return c, nil
	}
	var err error
	c.Locked, err = both("locked", c.Locked, o.Locked, func(a, b bool) bool { return a == b })
	if err == nil {
		c.Indexable, err = both("indexable", c.Indexable, o.Indexable, func(a, b bool) bool { return a == b })
	}
	if err == nil {
		c.DisplayName, err = both("displayName", c.DisplayName, o.DisplayName, func(a, b string) bool { return a == b })
	}
	if err == nil {
		c.Note, err = both("note", c.Note, o.Note, func(a, b string) bool { return a == b })
	}
	if err == nil {
		c.Fields, err = both("fields", c.Fields, o.Fields, func(a, b []accounts.Field) bool { return slices.Equal(a, b) })
	}
	if err == nil {
		c.Avatar, err = both("avatar", c.Avatar, o.Avatar, func(a, b string) bool { return a == b })
	}
	if err == nil {
		c.Header, err = both("header", c.Header, o.Header, func(a, b string) bool { return a == b })
	}
	return c, err
}

// both returns whichever of a and b is given, refusing two that differ.
func both[T any](name string, a, b *T, same func(T, T) bool) (*T, error) {
	switch {
	case a == nil:
		return b, nil
	case b != nil && !same(*a, *b):
		return nil, derrors.New(derrors.InvalidArgument, name+" and person."+name+" disagree")
	}
	return a, nil
}

func personUpdateFromRequest(c *gin.Context) (personUpdate, error) {
	var p personUpdate
	if err := decodeJSON(c.Request.Body, &p); err != nil {
		return p, err
	}
	p.UserID, p.GroupID = c.Param("userId"), c.Param("selector")
	return p, nil
}

// peopleUpdate changes the caller's account: their profile and its
// lock, in one change.
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
	c, err := p.personChange.merge(p.Person)
	if err != nil {
		return nil, err
	}
	profile := accounts.ProfileInput{DisplayName: c.DisplayName, Note: c.Note, Fields: c.Fields, Avatar: c.Avatar, Header: c.Header, Locked: c.Locked, Indexable: c.Indexable}
	if profile == (accounts.ProfileInput{}) {
		return nil, derrors.New(derrors.InvalidArgument, `give what changes: locked, indexable, displayName, note, fields, avatar or header`)
	}
	person, err := s.media.ChangeProfile(ctx, caller, profile)
	if err != nil {
		return nil, err
	}
	return entry{person}, nil
}
