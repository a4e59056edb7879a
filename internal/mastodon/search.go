package mastodon

import (
	"errors"
	"net/url"
	"strconv"
	"strings"

	"socialstream/internal/activities"
	"socialstream/internal/derrors"
	"socialstream/internal/federation"
	"socialstream/internal/paging"
	"socialstream/internal/search"
	"socialstream/internal/tags"
)

// maxSearchOffset bounds offset, Mastodon's paging of a search: past
// it, max_id pages on.
const maxSearchOffset = 200

// search is GET /api/v2/search: accounts by username, hashtags by name,
// and statuses by their words (package search), each when type asks for
// it or none is given.
func (s *Server) search(m *mreq) (any, error) {
	q := strings.TrimSpace(m.p.str("q"))
	kind := m.p.str("type")
	switch kind {
	case "", "accounts", "hashtags", "statuses":
	default:
		return nil, derrors.New(derrors.InvalidArgument, "type must be accounts, hashtags or statuses")
	}
	out := map[string]any{"accounts": []mAccount{}, "statuses": []mStatus{}, "hashtags": []mTag{}}
	if q == "" {
		return out, nil
	}
	origin := s.origin(m.c)
	if kind == "" || kind == "accounts" {
		resolve, err := m.p.flag("resolve", false)
		if err != nil {
			return nil, err
		}
		id, err := s.findAccount(m, q, resolve)
		if err != nil && !errors.Is(err, errMGone) {
			return nil, err
		}
		if id != "" {
			if p, err := s.accounts.Card(m.ctx, m.caller, id); err == nil {
				out["accounts"] = []mAccount{s.account(origin, p)}
			}
		}
	}
	if kind == "" || kind == "hashtags" {
		if t, err := tags.Normalize(q); err == nil {
			out["hashtags"] = []mTag{{Name: t, URL: origin + "/tags/" + t, History: []any{}}}
		}
	}
	if kind == "" || kind == "statuses" {
		search := s.searchStatuses
		if id := s.statusAt(m, q); id != "" { // a status's address: that status
			search = func(m *mreq, _ string) ([]activities.View, error) {
				return s.activities.ShownPage(m.ctx, m.caller, []string{id})
			}
		}
		views, err := search(m, q)
		if err != nil {
			return nil, err
		}
		out["statuses"] = s.statuses(origin, views)
	}
	return out, nil
}

// statusAt returns the id of the status here that q, an address, names:
// its page's (url) or, federating, its Note's (uri); "" for any other q.
func (s *Server) statusAt(m *mreq, q string) string {
	u, err := url.Parse(q)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return ""
	}
	if o, err := url.Parse(s.origin(m.c)); err == nil && strings.EqualFold(u.Host, o.Host) {
		if id, ok := strings.CutPrefix(u.Fragment, "/activity/"); ok && (u.Path == "/" || u.Path == "") {
			return scattered(id)
		}
	}
	if f := s.d.Federation; f.On() {
		if number, ok := strings.CutPrefix(q, f.Base()+federation.NotesPath); ok {
			return federation.PostOfNumber(number)
		}
	}
	return ""
}

// searchStatuses finds the statuses of a search: q's words, from:
// (and account_id, which names the author too), paged by limit and
// offset or max_id.
func (s *Server) searchStatuses(m *mreq, q string) ([]activities.View, error) {
	query, err := search.Parse(q)
	if err != nil {
		return nil, err
	}
	n, err := m.p.limit(20, 40)
	if err != nil {
		return nil, err
	}
	r := activities.SearchRequest{Viewer: m.caller, Query: query, Page: paging.Request{Count: n}}
	if v := m.p.str("offset"); v != "" {
		if r.Page.Offset, err = strconv.Atoi(v); err != nil || r.Page.Offset < 0 || r.Page.Offset > maxSearchOffset {
			return nil, derrors.New(derrors.InvalidArgument, "offset must be an integer from 0 to "+strconv.Itoa(maxSearchOffset))
		}
	}
	if v := m.p.str("max_id"); v != "" {
		if r.Before = scattered(v); r.Before == "" {
			return nil, derrors.New(derrors.InvalidArgument, "max_id must be a status id")
		}
	}
	var found bool
	if r.FromID, found, err = s.searchAuthor(m, query.From); err != nil || !found {
		return nil, err // a from: of no one finds nothing of theirs
	}
	if query.Empty() && r.FromID == "" {
		return nil, nil
	}
	views, _, err := s.activities.Search(m.ctx, r)
	return views, err
}

// searchAuthor finds the author a search names, by from: (name) and
// account_id: the same one if both, "" if neither; found is false when
// they name no one, or two.
func (s *Server) searchAuthor(m *mreq, name string) (string, bool, error) {
	byName := ""
	if name != "" {
		id, err := s.findAccount(m, name, false)
		if errors.Is(err, errMGone) {
			return "", false, nil
		} else if err != nil {
			return "", false, err
		}
		byName = id
	}
	byID := m.p.str("account_id")
	if byName != "" && byID != "" && byName != byID {
		return "", false, nil
	}
	if byName != "" {
		return byName, true, nil
	}
	return byID, true, nil
}
