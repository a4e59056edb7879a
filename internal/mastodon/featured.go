package mastodon

import (
	"net/url"
	"slices"
	"time"

	"socialstream/internal/activities"
	"socialstream/internal/derrors"
	"socialstream/internal/paging"
	"socialstream/internal/tags"
)

// mFeaturedTag is Mastodon's FeaturedTag: its id is the tag's name.
type mFeaturedTag struct {
	ID            string  `json:"id"`
	Name          string  `json:"name"`
	URL           string  `json:"url"`
	StatusesCount int64   `json:"statuses_count"`
	LastStatusAt  *string `json:"last_status_at"`
}

// featuredOf shows person's featured hashtags, each with the count of
// their public posts that carry it and the day of the newest.
func (s *Server) featuredOf(m *mreq, person string, names []string) ([]mFeaturedTag, error) {
	origin := s.origin(m.c)
	out := make([]mFeaturedTag, 0, len(names))
	for _, name := range names {
		n, last, err := s.activities.TagUse(m.ctx, person, name)
		if err != nil {
			return nil, err
		}
		f := mFeaturedTag{ID: name, Name: name, URL: origin + "/tags/" + url.PathEscape(name), StatusesCount: n}
		if last > 0 {
			day := time.UnixMilli(last).UTC().Format(time.DateOnly)
			f.LastStatusAt = &day
		}
		out = append(out, f)
	}
	return out, nil
}

// featuredTags is GET /api/v1/featured_tags: the caller's own.
func (s *Server) featuredTags(m *mreq) (any, error) {
	p, err := s.accounts.Get(m.ctx, m.caller)
	if err != nil {
		return nil, err
	}
	return s.featuredOf(m, m.caller, p.Featured)
}

// accountFeaturedTags is GET /api/v1/accounts/:id/featured_tags: those
// of a person the caller may see.
func (s *Server) accountFeaturedTags(m *mreq) (any, error) {
	id := m.c.Param("id")
	p, err := s.accounts.Card(m.ctx, m.caller, id)
	if err != nil {
		return nil, err
	}
	return s.featuredOf(m, id, p.Featured)
}

// featureTag is POST /api/v1/featured_tags (name).
func (s *Server) featureTag(m *mreq) (any, error) {
	name, err := tags.Normalize(m.p.str("name"))
	if err != nil {
		return nil, err
	}
	if _, err := s.accounts.Feature(m.ctx, m.caller, name); err != nil {
		return nil, err
	}
	out, err := s.featuredOf(m, m.caller, []string{name})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// unfeatureTag is DELETE /api/v1/featured_tags/:id.
func (s *Server) unfeatureTag(m *mreq) (any, error) {
	name, err := tags.Normalize(m.c.Param("id"))
	if err != nil {
		return nil, derrors.New(derrors.NotFound, "no such featured hashtag")
	}
	if err := s.accounts.Unfeature(m.ctx, m.caller, name); err != nil {
		return nil, err
	}
	return map[string]any{}, nil
}

// featuredSuggestions is GET /api/v1/featured_tags/suggestions: the
// hashtags of the caller's newest posts they do not feature yet, as
// Mastodon suggests them (at most 10).
func (s *Server) featuredSuggestions(m *mreq) (any, error) {
	p, err := s.accounts.Get(m.ctx, m.caller)
	if err != nil {
		return nil, err
	}
	views, _, err := s.activities.Feed(m.ctx, activities.FeedRequest{Viewer: m.caller, Selector: activities.Self, UserID: m.caller, Page: paging.Request{Count: 40}})
	if err != nil {
		return nil, err
	}
	out := []mTag{}
	seen := map[string]bool{}
	for _, v := range views {
		for _, t := range v.Tags {
			if !seen[t] && !slices.Contains(p.Featured, t) && len(out) < 10 {
				seen[t] = true
				out = append(out, s.tagView(m, t, false))
			}
		}
	}
	return out, nil
}
