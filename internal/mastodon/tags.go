package mastodon

import (
	"socialstream/internal/tags"
)

// Followed tags.

func (s *Server) tagView(m *mreq, name string, following bool) mTag {
	return mTag{Name: name, URL: s.origin(m.c) + "/tags/" + name, History: []any{}, Following: &following}
}

func (s *Server) getTag(m *mreq) (any, error) {
	name, f, err := s.tags.Get(m.ctx, m.caller, m.c.Param("name"))
	if err != nil {
		return nil, err
	}
	h, err := s.activities.TagHistory(m.ctx, name)
	if err != nil {
		return nil, err
	}
	v := s.tagView(m, name, f != nil)
	v.History = history(h)
	return v, nil
}

func (s *Server) followTag(m *mreq) (any, error) {
	f, err := s.tags.Follow(m.ctx, m.caller, m.c.Param("name"))
	if err != nil {
		return nil, err
	}
	return s.tagView(m, f.Tag, true), nil
}

func (s *Server) unfollowTag(m *mreq) (any, error) {
	name, err := tags.Normalize(m.c.Param("name"))
	if err != nil {
		return nil, err
	}
	if err := s.tags.Unfollow(m.ctx, m.caller, name); err != nil {
		return nil, err
	}
	return s.tagView(m, name, false), nil
}

func (s *Server) followedTags(m *mreq) (any, error) {
	page, err := s.cursorPage(m, 100, 200)
	if err != nil {
		return nil, err
	}
	list, next, err := s.tags.List(m.ctx, m.caller, page)
	if err != nil {
		return nil, err
	}
	out := make([]mTag, 0, len(list))
	for _, f := range list {
		out = append(out, s.tagView(m, f.Tag, true))
	}
	return out, s.nextCursor(m, next)
}
