package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"socialstream/internal/derrors"
	"socialstream/internal/tags"
)

// tagParams are the parameters of the calls on the tags a person follows:
// the tag of the path, or of the body of a follow.
type tagParams struct {
	UserID string
	Tag    string
	pageParams
}

// tagView is a tag as a person sees it: whether they follow it, since when
// (ms since the epoch).
type tagView struct {
	Name         string `json:"name"`
	Following    bool   `json:"following"`
	FollowedTime int64  `json:"followedTime,omitempty"`
}

func followedView(f tags.Followed) tagView {
	return tagView{Name: f.Tag, Following: true, FollowedTime: f.Created.UnixMilli()}
}

func tagsFromRequest(c *gin.Context) (tagParams, error) {
	p := tagParams{UserID: c.Param("userId"), Tag: c.Param("tag")}
	var err error
	switch c.Request.Method {
	case http.MethodGet:
		p.pageParams, err = pagingFromQuery(c)
	case http.MethodPost:
		var body struct {
			Name *string `json:"name"`
		}
		if err = decodeJSON(c.Request.Body, &body); err == nil {
			if body.Name == nil {
				return p, derrors.New(derrors.InvalidArgument, "name is required: the tag to follow")
			}
			p.Tag = *body.Name
		}
	}
	return p, err
}

// tagsGet lists the tags the caller follows, or, with a tag, says whether
// the caller follows it.
func (s *Server) tagsGet(ctx context.Context, caller string, p tagParams) (any, error) {
	if err := s.checkOwn(ctx, caller, p.UserID, "a list of followed tags"); err != nil {
		return nil, err
	}
	if p.Tag != "" {
		tag, f, err := s.tags.Get(ctx, caller, p.Tag)
		if err != nil {
			return nil, err
		}
		if f == nil {
			return entry{tagView{Name: tag}}, nil
		}
		return entry{followedView(*f)}, nil
	}
	page, err := p.page()
	if err != nil {
		return nil, err
	}
	fs, next, err := s.tags.List(ctx, caller, page)
	if err != nil {
		return nil, err
	}
	list := make([]tagView, len(fs))
	for i, f := range fs {
		list[i] = followedView(f)
	}
	return collection{List: list, StartIndex: page.Offset, ItemsPerPage: page.Count,
		TotalResults: int64(page.Offset + len(list) + boolInt(next != "")), NextCursor: next}, nil
}

// tagsFollow makes the caller follow a tag: its new posts come to their
// home feed.
func (s *Server) tagsFollow(ctx context.Context, caller string, p tagParams) (any, error) {
	if err := s.checkOwn(ctx, caller, p.UserID, "a list of followed tags"); err != nil {
		return nil, err
	}
	f, err := s.tags.Follow(ctx, caller, p.Tag)
	if err != nil {
		return nil, err
	}
	return entry{followedView(f)}, nil
}

// tagsUnfollow ends the caller's follow of a tag; what it brought stays.
func (s *Server) tagsUnfollow(ctx context.Context, caller string, p tagParams) (any, error) {
	if err := s.checkOwn(ctx, caller, p.UserID, "a list of followed tags"); err != nil {
		return nil, err
	}
	return nil, s.tags.Unfollow(ctx, caller, p.Tag)
}
