package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"socialstream/internal/accounts"
	"socialstream/internal/activities"
	"socialstream/internal/conversations"
	"socialstream/internal/derrors"
	"socialstream/internal/ids"
	"socialstream/internal/paging"
	"socialstream/internal/tags"
)

// conversationParams are the parameters of conversations.get, .update
// (read) and .delete: the caller (@me), the conversation, the page.
type conversationParams struct {
	UserID string `json:"userId"`
	ID     string `json:"id"`
	pageParams
}

func conversationsFromRequest(c *gin.Context) (conversationParams, error) {
	p := conversationParams{UserID: c.Param("userId"), ID: c.Param("id")}
	var err error
	if c.Request.Method == http.MethodGet {
		p.pageParams, err = pagingFromQuery(c)
	}
	return p, err
}

// conversationView is a conversation as REST shows it: its other people
// the caller may see, and its newest post (absent while hidden from the
// caller).
type conversationView struct {
	ID       string            `json:"id"`
	Unread   bool              `json:"unread"`
	People   []accounts.Person `json:"people"`
	Activity *activities.View  `json:"activity,omitempty"`
}

// views shows conversations to caller.
func (s *Server) conversationViews(ctx context.Context, caller string, list []conversations.Conversation) ([]conversationView, error) {
	var lasts, people []string
	for _, c := range list {
		lasts, people = append(lasts, c.Last), append(people, c.Others...)
	}
	shown, err := s.activities.Shown(ctx, caller, lasts)
	if err != nil {
		return nil, err
	}
	byID := map[string]activities.View{}
	for _, v := range shown {
		byID[v.ID] = v
	}
	found, err := activities.People(ctx, s.accounts, caller, people, shown)
	if err != nil {
		return nil, err
	}
	out := make([]conversationView, 0, len(list))
	for _, c := range list {
		v := conversationView{ID: c.ID, Unread: c.Unread, People: []accounts.Person{}}
		for _, p := range c.Others {
			if person, ok := found[p]; ok {
				v.People = append(v.People, person)
			}
		}
		if a, ok := byID[c.Last]; ok {
			v.Activity = &a
		}
		out = append(out, v)
	}
	return out, nil
}

// conversationsGet answers a page of the caller's conversations, the
// newest post first (cursor: the newest post's id of the page's last).
func (s *Server) conversationsGet(ctx context.Context, caller string, p conversationParams) (any, error) {
	if err := s.checkOwn(ctx, caller, p.UserID, "a conversation"); err != nil {
		return nil, err
	}
	count, start, err := p.limits()
	if err != nil {
		return nil, err
	}
	if start > 0 {
		return nil, derrors.New(derrors.InvalidArgument, "conversations page by cursor")
	}
	if _, ok := ids.Parse(p.Cursor); p.Cursor != "" && !ok {
		return nil, derrors.New(derrors.InvalidArgument, "cursor is not one a page of conversations gave")
	}
	list, next, err := s.conversations.List(ctx, caller, p.Cursor, paging.Request{Count: count})
	if err != nil {
		return nil, err
	}
	views, err := s.conversationViews(ctx, caller, list)
	if err != nil {
		return nil, err
	}
	return collection{List: views, ItemsPerPage: count, TotalResults: int64(len(views) + boolInt(next != "")), NextCursor: next}, nil
}

// conversationsRead marks one of the caller's conversations read.
func (s *Server) conversationsRead(ctx context.Context, caller string, p conversationParams) (any, error) {
	if err := s.checkOwn(ctx, caller, p.UserID, "a conversation"); err != nil {
		return nil, err
	}
	c, err := s.conversations.MarkRead(ctx, caller, p.ID)
	if err != nil {
		return nil, err
	}
	views, err := s.conversationViews(ctx, caller, []conversations.Conversation{c})
	if err != nil {
		return nil, err
	}
	return entry{views[0]}, nil
}

// conversationsDelete removes one from the caller's list until a newer
// post.
func (s *Server) conversationsDelete(ctx context.Context, caller string, p conversationParams) (any, error) {
	if err := s.checkOwn(ctx, caller, p.UserID, "a conversation"); err != nil {
		return nil, err
	}
	return nil, s.conversations.Remove(ctx, caller, p.ID)
}

// featuredParams are the parameters of featuredTags.get, .create and
// .delete: whose, and the tag.
type featuredParams struct {
	UserID string `json:"userId"`
	Name   string `json:"name"`
}

func featuredFromRequest(c *gin.Context) (featuredParams, error) {
	p := featuredParams{UserID: c.Param("userId"), Name: c.Param("name")}
	if c.Request.Method == http.MethodPost {
		var body struct {
			Name string `json:"name"`
		}
		err := decodeJSON(c.Request.Body, &body)
		p.Name = body.Name
		return p, err
	}
	return p, nil
}

// featuredView is a featured hashtag with its count of its person's
// public posts that carry it, and when the newest was posted.
type featuredView struct {
	Name           string `json:"name"`
	StatusesCount  int64  `json:"statusesCount"`
	LastStatusTime int64  `json:"lastStatusTime,omitempty"`
}

func (s *Server) featuredViews(ctx context.Context, person string, names []string) ([]featuredView, error) {
	out := make([]featuredView, 0, len(names))
	for _, name := range names {
		n, last, err := s.activities.TagUse(ctx, person, name)
		if err != nil {
			return nil, err
		}
		out = append(out, featuredView{Name: name, StatusesCount: n, LastStatusTime: last})
	}
	return out, nil
}

// featuredGet answers the hashtags a person the caller may see features.
func (s *Server) featuredGet(ctx context.Context, caller string, p featuredParams) (any, error) {
	user, err := s.accounts.Resolve(ctx, caller, p.UserID)
	if err != nil {
		return nil, err
	}
	person, err := s.accounts.Card(ctx, caller, user)
	if err != nil {
		return nil, err
	}
	list, err := s.featuredViews(ctx, user, person.Featured)
	if err != nil {
		return nil, err
	}
	return collection{List: list, ItemsPerPage: len(list), TotalResults: int64(len(list))}, nil
}

// featuredCreate features a hashtag of the caller's.
func (s *Server) featuredCreate(ctx context.Context, caller string, p featuredParams) (any, error) {
	if err := s.checkOwn(ctx, caller, p.UserID, "a featured hashtag"); err != nil {
		return nil, err
	}
	name, err := tags.Normalize(p.Name)
	if err != nil {
		return nil, err
	}
	if _, err := s.accounts.Feature(ctx, caller, name); err != nil {
		return nil, err
	}
	list, err := s.featuredViews(ctx, caller, []string{name})
	if err != nil {
		return nil, err
	}
	return entry{list[0]}, nil
}

// featuredDelete stops featuring one.
func (s *Server) featuredDelete(ctx context.Context, caller string, p featuredParams) (any, error) {
	if err := s.checkOwn(ctx, caller, p.UserID, "a featured hashtag"); err != nil {
		return nil, err
	}
	name, err := tags.Normalize(p.Name)
	if err != nil {
		return nil, accounts.ErrNotFeatured
	}
	return nil, s.accounts.Unfeature(ctx, caller, name)
}
