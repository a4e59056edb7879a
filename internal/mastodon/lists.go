package mastodon

import (
	"github.com/gin-gonic/gin"

	"socialstream/internal/activities"
	"socialstream/internal/derrors"
	"socialstream/internal/graph"
)

// Lists, as Mastodon has them: the operations of package graph's lists.

// mList is Mastodon's List.
type mList struct {
	ID            string `json:"id"`
	Title         string `json:"title"`
	RepliesPolicy string `json:"replies_policy"`
	Exclusive     bool   `json:"exclusive"`
}

func mListOf(l graph.ListView) mList {
	return mList{ID: l.ID, Title: l.Title, RepliesPolicy: l.RepliesPolicy, Exclusive: l.Exclusive}
}

func mLists(ls []graph.ListView) []mList {
	out := make([]mList, len(ls))
	for i, l := range ls {
		out[i] = mListOf(l)
	}
	return out
}

// lists is GET /api/v1/lists.
func (s *Server) lists(m *mreq) (any, error) {
	ls, err := s.graph.Lists(m.ctx, m.caller)
	return mLists(ls), err
}

// accountLists is GET /api/v1/accounts/:id/lists: the caller's lists
// that hold the account.
func (s *Server) accountLists(m *mreq) (any, error) {
	id, err := s.theirs(m)
	if err != nil {
		return nil, err
	}
	ls, err := s.graph.ListsWith(m.ctx, m.caller, id)
	return mLists(ls), err
}

func (s *Server) getList(m *mreq) (any, error) {
	l, err := s.graph.GetList(m.ctx, m.caller, m.c.Param("id"))
	return mListOf(l), err
}

// listInput reads title, replies_policy and exclusive, those sent.
func listInput(m *mreq) (graph.ListInput, error) {
	var in graph.ListInput
	if m.p.has("title") {
		t := m.p.str("title")
		in.Title = &t
	}
	if m.p.has("replies_policy") {
		p := m.p.str("replies_policy")
		in.RepliesPolicy = &p
	}
	if m.p.has("exclusive") {
		x, err := m.p.flag("exclusive", false)
		if err != nil {
			return in, err
		}
		in.Exclusive = &x
	}
	return in, nil
}

// createList is POST /api/v1/lists.
func (s *Server) createList(m *mreq) (any, error) {
	in, err := listInput(m)
	if err != nil {
		return nil, err
	}
	l, err := s.graph.CreateList(m.ctx, m.caller, in)
	return mListOf(l), err
}

// updateList is PUT /api/v1/lists/:id.
func (s *Server) updateList(m *mreq) (any, error) {
	in, err := listInput(m)
	if err != nil {
		return nil, err
	}
	l, err := s.graph.UpdateList(m.ctx, m.caller, m.c.Param("id"), in)
	return mListOf(l), err
}

// deleteList is DELETE /api/v1/lists/:id.
func (s *Server) deleteList(m *mreq) (any, error) {
	return gin.H{}, s.graph.DeleteList(m.ctx, m.caller, m.c.Param("id"))
}

// listAccounts is GET /api/v1/lists/:id/accounts.
func (s *Server) listAccounts(m *mreq) (any, error) {
	page, err := s.cursorPage(m, 40, 80)
	if err != nil {
		return nil, err
	}
	members, next, err := s.graph.Members(m.ctx, m.caller, m.c.Param("id"), page)
	if err != nil {
		return nil, err
	}
	return s.accountList(m, members, next)
}

// accountIDs reads account_ids[]: 1 to 40.
func accountIDs(m *mreq) ([]string, error) {
	idList := m.p.list("account_ids")
	if len(idList) == 0 || len(idList) > 40 {
		return nil, derrors.New(derrors.InvalidArgument, "give 1 to 40 account_ids")
	}
	return idList, nil
}

// addToList is POST /api/v1/lists/:id/accounts: people the caller
// follows join the list, unasked and untold.
func (s *Server) addToList(m *mreq) (any, error) {
	idList, err := accountIDs(m)
	if err != nil {
		return nil, err
	}
	for range idList { // each add's copying job is an invite's work
		if err := s.host.Charge(m.ctx, CostInvite); err != nil {
			return nil, err
		}
	}
	return gin.H{}, s.graph.AddToList(m.ctx, m.caller, m.c.Param("id"), idList, nil)
}

// removeFromList is DELETE /api/v1/lists/:id/accounts.
func (s *Server) removeFromList(m *mreq) (any, error) {
	idList, err := accountIDs(m)
	if err != nil {
		return nil, err
	}
	return gin.H{}, s.graph.RemoveFromList(m.ctx, m.caller, m.c.Param("id"), idList)
}

// listTimeline is GET /api/v1/timelines/list/:id.
func (s *Server) listTimeline(m *mreq) (any, error) {
	return s.timeline(m, activities.FeedRequest{Selector: activities.ListPrefix + m.c.Param("id")})
}
