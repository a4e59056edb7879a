package mastodon

import (
	"cmp"
	"strconv"

	"socialstream/internal/activities"
	"socialstream/internal/derrors"
	"socialstream/internal/tags"
	"socialstream/internal/trends"
)

// mHistory is a day of Mastodon's history of a hashtag or link: its
// start (a Unix time), its uses and its people, as strings.
type mHistory struct {
	Day      string `json:"day"`
	Uses     string `json:"uses"`
	Accounts string `json:"accounts"`
}

func history(h []trends.Count) []any {
	out := make([]any, 0, len(h))
	for _, c := range h {
		out = append(out, mHistory{Day: strconv.FormatInt(c.Day.Start().Unix(), 10),
			Uses: strconv.FormatInt(c.Uses, 10), Accounts: strconv.FormatInt(c.People, 10)})
	}
	return out
}

// mTrendsLink is Mastodon's TrendsLink: a card with its history.
type mTrendsLink struct {
	*mCard
	History []any `json:"history"`
	// ID and RequiresReview are the admin API's.
	ID             string `json:"id,omitempty"`
	RequiresReview *bool  `json:"requires_review,omitempty"`
}

// mAdminTag is the admin API's Tag.
type mAdminTag struct {
	ID string `json:"id"`
	mTag
	Trendable      bool `json:"trendable"`
	Usable         bool `json:"usable"`
	RequiresReview bool `json:"requires_review"`
}

// trendWindow reads a trends page's limit (def, at most most) and offset.
func trendWindow(m *mreq, def, most int) (activities.TrendsRequest, error) {
	n, err := m.p.limit(def, most)
	if err != nil {
		return activities.TrendsRequest{}, err
	}
	r := activities.TrendsRequest{Viewer: m.caller, Count: n}
	if v := m.p.str("offset"); v != "" {
		if r.Offset, err = strconv.Atoi(v); err != nil || r.Offset < 0 || r.Offset > trends.Ranked {
			return r, derrors.New(derrors.InvalidArgument, "offset must be an integer from 0 to "+strconv.Itoa(trends.Ranked))
		}
	}
	return r, nil
}

// trending reads what trends of kind k for a page of limit def, at most
// most.
func (s *Server) trending(m *mreq, k trends.Kind, def, most int) (activities.Trends, error) {
	r, err := trendWindow(m, def, most)
	if err != nil {
		return activities.Trends{}, err
	}
	r.Kind = k
	return s.activities.Trending(m.ctx, r)
}

// trendingTags is GET /api/v1/trends/tags (and /api/v1/trends).
func (s *Server) trendingTags(m *mreq) (any, error) {
	t, err := s.trending(m, trends.Tags, 10, 20)
	if err != nil {
		return nil, err
	}
	out := make([]mTag, 0, len(t.Tags))
	for _, it := range t.Tags {
		out = append(out, s.trendTag(m, it))
	}
	return out, nil
}

func (s *Server) trendTag(m *mreq, it trends.Item) mTag {
	v := s.tagView(m, it.Name, false)
	v.Following, v.History = nil, history(it.History)
	return v
}

// trendingStatuses is GET /api/v1/trends/statuses.
func (s *Server) trendingStatuses(m *mreq) (any, error) {
	t, err := s.trending(m, trends.Statuses, 20, 40)
	if err != nil {
		return nil, err
	}
	return s.trendStatuses(m, t), nil
}

func (s *Server) trendStatuses(m *mreq, t activities.Trends) []mStatus {
	views := make([]activities.View, 0, len(t.Posts))
	for _, p := range t.Posts {
		views = append(views, p.View)
	}
	return s.statuses(s.origin(m.c), views)
}

// trendingLinks is GET /api/v1/trends/links.
func (s *Server) trendingLinks(m *mreq) (any, error) {
	t, err := s.trending(m, trends.Links, 10, 20)
	if err != nil {
		return nil, err
	}
	return s.trendLinks(m, t, false), nil
}

func (s *Server) trendLinks(m *mreq, t activities.Trends, admin bool) []mTrendsLink {
	out := make([]mTrendsLink, 0, len(t.Links))
	for _, l := range t.Links {
		v := mTrendsLink{mCard: card(s.origin(m.c), l.Card), History: history(l.History)}
		if admin {
			waits := l.Review == ""
			v.ID, v.RequiresReview = l.ID, &waits
		}
		out = append(out, v)
	}
	return out
}

// adminTrends is GET /api/v1/admin/trends/{tags,statuses,links}: what
// trends, with what waits for review, for a moderator.
func (s *Server) adminTrends(k trends.Kind) mhandler {
	return func(m *mreq) (any, error) {
		r, err := trendWindow(m, trends.Ranked, trends.Ranked)
		if err != nil {
			return nil, err
		}
		r.Kind = k
		t, err := s.moderation.Trends(m.ctx, m.caller, r)
		if err != nil {
			return nil, err
		}
		switch k {
		case trends.Tags:
			out := make([]mAdminTag, 0, len(t.Tags))
			for _, it := range t.Tags {
				out = append(out, s.adminTag(m, it))
			}
			return out, nil
		case trends.Links:
			return s.trendLinks(m, t, true), nil
		}
		return s.trendStatuses(m, t), nil
	}
}

func (s *Server) adminTag(m *mreq, it trends.Item) mAdminTag {
	return mAdminTag{ID: it.ID, mTag: s.trendTag(m, it), Trendable: it.Review == trends.Approved, Usable: true,
		RequiresReview: it.Review == ""}
}

// reviewTrend is POST /api/v1/admin/trends/{kind}/:id/approve and
// /reject: it answers the subject reviewed as the admin API shows it.
func (s *Server) reviewTrend(k trends.Kind, approve bool) mhandler {
	return func(m *mreq) (any, error) {
		id := m.c.Param("id")
		switch k {
		case trends.Tags:
			name, err := tags.Normalize(id)
			if err != nil {
				return nil, errMGone
			}
			id = name
		case trends.Statuses:
			if id = scattered(id); id == "" {
				return nil, errMGone
			}
			if views, err := s.activities.Shown(m.ctx, m.caller, []string{id}); err != nil || len(views) == 0 {
				return nil, cmp.Or(err, errMGone)
			}
		}
		it, err := s.moderation.ReviewTrend(m.ctx, m.caller, k, id, approve)
		if err != nil {
			return nil, err
		}
		switch k {
		case trends.Tags:
			return s.adminTag(m, it), nil
		case trends.Links:
			t, err := s.moderation.Trends(m.ctx, m.caller, activities.TrendsRequest{Kind: k, Count: trends.Ranked})
			if err != nil {
				return nil, err
			}
			for _, l := range s.trendLinks(m, t, true) {
				if l.ID == it.ID {
					return l, nil
				}
			}
			waits := false
			return mTrendsLink{ID: it.ID, History: history(it.History), RequiresReview: &waits}, nil
		}
		views, err := s.activities.Shown(m.ctx, m.caller, []string{id})
		if err != nil {
			return nil, err
		}
		if len(views) == 0 {
			return nil, errMGone
		}
		return s.status(s.origin(m.c), views[0]), nil
	}
}
