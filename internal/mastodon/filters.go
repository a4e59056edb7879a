package mastodon

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"socialstream/internal/derrors"
	"socialstream/internal/filters"
)

// Filters: Mastodon's contexts by ours. Its public is our public and
// tags' feeds; its thread has no feed of ours (a thread is read by its
// context, unfiltered) and is kept nowhere.
var filterContexts = map[string][]string{
	"home": {filters.Home}, "notifications": {filters.Notifications}, "public": {filters.Public, filters.Tags},
	"account": {filters.Account}, "thread": nil,
}

// filterView shows one of ours as Mastodon's Filter v2.
func filterView(f filters.Filter) mFilter {
	v := newFilter(f.ID, f.Title, f.Action)
	for _, name := range []string{"home", "notifications", "public", "account"} {
		if slices.Contains(f.Context, filterContexts[name][0]) {
			v.Context = append(v.Context, name)
		}
	}
	if f.ExpiresAt != "" {
		e := isoTime(f.ExpiresAt)
		v.ExpiresAt = &e
	}
	for _, k := range f.Keywords {
		v.Keywords = append(v.Keywords, mKeyword{ID: keywordID(f.ID, k.ID), Keyword: k.Keyword, WholeWord: k.WholeWord})
	}
	return v
}

// keywordID names a filter's keyword as Mastodon's are named, apart from
// every other filter's: its filter's id and its own (filters.Keyword.ID,
// kept across edits), two digits at least.
func keywordID(filter, keyword string) string {
	n, _ := strconv.Atoi(keyword)
	return filter + fmt.Sprintf("%02d", n)
}

// filterInput reads a filter from the parameters over was (a new one's
// zero value): what is not sent is kept.
func filterInput(m *mreq, was filters.Filter) (filters.Filter, error) {
	f := was
	if m.p.has("title") {
		f.Title = m.p.str("title")
	}
	if ctxs := m.p.list("context"); len(ctxs) > 0 {
		f.Context = nil
		for _, c := range ctxs {
			ours, ok := filterContexts[c]
			if !ok {
				return f, derrors.New(derrors.InvalidArgument, "context must be home, notifications, public, thread or account")
			}
			f.Context = append(f.Context, ours...)
		}
	}
	if m.p.has("filter_action") {
		switch a := m.p.str("filter_action"); a {
		case filters.Warn, filters.Hide:
			f.Action = a
		default:
			return f, derrors.New(derrors.InvalidArgument, "filter_action must be warn or hide")
		}
	}
	if m.p.has("expires_in") {
		f.ExpiresAt = ""
		if v := m.p.str("expires_in"); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 0 || n > 10*365*24*3600 {
				return f, derrors.New(derrors.InvalidArgument, "expires_in must be a positive number of seconds")
			}
			f.ExpiresAt = time.Now().Add(time.Duration(n) * time.Second).UTC().Format(time.RFC3339)
		}
	}
	kept := slices.Clone(f.Keywords)
	drop := map[string]bool{}
	for i := 0; i < 2*filters.MaxKeywords; i++ {
		k := "keywords_attributes[" + strconv.Itoa(i) + "]"
		if !m.p.has(k+"[keyword]") && !m.p.has(k+"[id]") {
			continue
		}
		whole, err := m.p.flag(k+"[whole_word]", true)
		if err != nil {
			return f, err
		}
		destroy, err := m.p.flag(k+"[_destroy]", false)
		if err != nil {
			return f, err
		}
		kw := filters.Keyword{Keyword: m.p.str(k + "[keyword]"), WholeWord: whole}
		id := m.p.str(k + "[id]")
		if id == "" {
			kept = append(kept, kw)
			continue
		}
		at := slices.IndexFunc(kept, func(k filters.Keyword) bool { return k.ID != "" && keywordID(was.ID, k.ID) == id })
		if at < 0 {
			return f, derrors.New(derrors.InvalidArgument, "keywords_attributes names a keyword this filter does not have")
		}
		if destroy {
			drop[kept[at].ID] = true
			continue
		}
		if kw.Keyword == "" {
			kw.Keyword = kept[at].Keyword
		}
		kw.ID = kept[at].ID
		kept[at] = kw
	}
	f.Keywords = slices.DeleteFunc(kept, func(k filters.Keyword) bool { return k.ID != "" && drop[k.ID] })
	return f, nil
}

func (s *Server) listFilters(m *mreq) (any, error) {
	list, err := s.filters.List(m.ctx, m.caller)
	if err != nil {
		return nil, err
	}
	out := make([]mFilter, 0, len(list))
	for _, f := range list {
		out = append(out, filterView(f))
	}
	return out, nil
}

func (s *Server) getFilter(m *mreq) (any, error) {
	f, err := s.filters.Get(m.ctx, m.caller, m.c.Param("id"))
	if err != nil {
		return nil, err
	}
	return filterView(f), nil
}

func (s *Server) createFilter(m *mreq) (any, error) {
	in, err := filterInput(m, filters.Filter{Action: filters.Warn})
	if err != nil {
		return nil, err
	}
	f, err := s.filters.Create(m.ctx, m.caller, in)
	if err != nil {
		return nil, err
	}
	return filterView(f), nil
}

func (s *Server) updateFilter(m *mreq) (any, error) {
	was, err := s.filters.Get(m.ctx, m.caller, m.c.Param("id"))
	if err != nil {
		return nil, err
	}
	in, err := filterInput(m, was)
	if err != nil {
		return nil, err
	}
	f, err := s.filters.Update(m.ctx, m.caller, was.ID, in)
	if err != nil {
		return nil, err
	}
	return filterView(f), nil
}

func (s *Server) deleteFilter(m *mreq) (any, error) {
	return gin.H{}, s.filters.Delete(m.ctx, m.caller, m.c.Param("id"))
}
