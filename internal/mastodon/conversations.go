package mastodon

import (
	"socialstream/internal/activities"
	"socialstream/internal/conversations"
	"socialstream/internal/derrors"
	"socialstream/internal/ids"
	"socialstream/internal/paging"
)

// mConversation is Mastodon's Conversation.
type mConversation struct {
	ID         string     `json:"id"`
	Unread     bool       `json:"unread"`
	Accounts   []mAccount `json:"accounts"`
	LastStatus *mStatus   `json:"last_status"`
}

// conversationsList is GET /api/v1/conversations: the caller's direct
// conversations, the newest post first, paged by max_id (a status id:
// the newest post of the last one of the page before).
func (s *Server) conversationsList(m *mreq) (any, error) {
	n, err := m.p.limit(20, 40)
	if err != nil {
		return nil, err
	}
	before := ""
	if v := m.p.str("max_id"); v != "" {
		if before = scattered(v); before == "" {
			return nil, derrors.New(derrors.InvalidArgument, "max_id must be a status id")
		}
	}
	var since int64
	for _, name := range []string{"since_id", "min_id"} {
		if v := m.p.str(name); v != "" {
			seq, ok := ids.Parse(scattered(v))
			if !ok {
				return nil, derrors.New(derrors.InvalidArgument, name+" must be a status id")
			}
			since = max(since, seq)
		}
	}
	list, next, err := s.conversations.List(m.ctx, m.caller, before, paging.Request{Count: n})
	if err != nil {
		return nil, err
	}
	if since > 0 { // newer than since alone: the list is newest first
		for i, c := range list {
			if seq, _ := ids.Parse(c.Last); seq <= since {
				list, next = list[:i], ""
				break
			}
		}
	}
	out, err := s.conversationViews(m, list)
	if err != nil {
		return nil, err
	}
	older, newer := "", ""
	if next != "" {
		older = mid(next)
	}
	if len(list) > 0 {
		newer = mid(list[0].Last)
	}
	m.link(s, older, newer)
	return out, nil
}

// conversationViews shows conversations as the caller sees them: the
// other people they may see, and the newest post if they may see it
// (null if not).
func (s *Server) conversationViews(m *mreq, list []conversations.Conversation) ([]mConversation, error) {
	var lasts, people []string
	for _, c := range list {
		lasts, people = append(lasts, c.Last), append(people, c.Others...)
	}
	shown, err := s.activities.ShownPage(m.ctx, m.caller, lasts)
	if err != nil {
		return nil, err
	}
	byID := map[string]activities.View{}
	for _, v := range shown {
		byID[v.ID] = v
	}
	found, err := activities.People(m.ctx, s.accounts, m.caller, people, shown)
	if err != nil {
		return nil, err
	}
	origin := s.origin(m.c)
	out := make([]mConversation, 0, len(list))
	for _, c := range list {
		mc := mConversation{ID: c.ID, Unread: c.Unread, Accounts: []mAccount{}}
		for _, p := range c.Others {
			if person, ok := found[p]; ok {
				mc.Accounts = append(mc.Accounts, s.account(origin, person))
			}
		}
		if v, ok := byID[c.Last]; ok {
			st := s.status(origin, v)
			mc.LastStatus = &st
		}
		out = append(out, mc)
	}
	return out, nil
}

// readConversation is POST /api/v1/conversations/:id/read.
func (s *Server) readConversation(m *mreq) (any, error) {
	c, err := s.conversations.MarkRead(m.ctx, m.caller, m.c.Param("id"))
	if err != nil {
		return nil, err
	}
	out, err := s.conversationViews(m, []conversations.Conversation{c})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// removeConversation is DELETE /api/v1/conversations/:id: gone from the
// caller's list until a newer post.
func (s *Server) removeConversation(m *mreq) (any, error) {
	if err := s.conversations.Remove(m.ctx, m.caller, m.c.Param("id")); err != nil {
		return nil, err
	}
	return map[string]any{}, nil
}
