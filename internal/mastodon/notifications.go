package mastodon

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"socialstream/internal/accounts"
	"socialstream/internal/derrors"
	"socialstream/internal/notifications"
	"socialstream/internal/paging"
)

// Notifications, as Mastodon lists, counts, shows and dismisses them.

// mastoNotice names our notification types as Mastodon does; those it
// has no name for (comments, groups, moderation's notices) are not
// shown on this face.
var mastoNotice = map[string]string{
	notifications.Mention: "mention", notifications.Reply: "mention", notifications.Like: "favourite",
	notifications.Repost: "reblog", notifications.Follow: "follow", notifications.FollowRequest: "follow_request",
	notifications.Status: "status", notifications.Poll: "poll",
}

type mNotification struct {
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	CreatedAt string    `json:"created_at"`
	Account   *mAccount `json:"account"`
	Status    *mStatus  `json:"status,omitempty"`
	GroupKey  string    `json:"group_key,omitempty"`
}

// mNotifications is GET /api/v1/notifications: the operation of
// notifications.get, paged by max_id (a notification's id) and
// since_id; types and exclude_types choose among Mastodon's names.
func (s *Server) mNotifications(m *mreq) (any, error) {
	n, err := m.p.limit(40, 80)
	if err != nil {
		return nil, err
	}
	w, err := noticeWindowOf(m)
	if err != nil {
		return nil, err
	}
	page := paging.Request{Count: n}
	if w.below > 0 {
		page.Cursor = notifications.Below(m.caller, w.below)
	}
	list, _, next, err := s.notifications.List(m.ctx, m.caller, notifications.Query{Page: page, Since: w.since, Types: w.ours(), Uncounted: true})
	if err != nil {
		return nil, err
	}
	older := ""
	if next != "" && len(list) > 0 {
		older = strconv.FormatInt(list[len(list)-1].Seq, 10)
	}
	out, err := s.notices(m, list)
	if err != nil {
		return nil, err
	}
	newer := ""
	if len(out) > 0 {
		newer = out[0].ID
	}
	if w.since > 0 {
		older = "" // since_id reads the newest above it alone
	}
	m.link(s, older, newer)
	return out, nil
}

// noticeWindow is what a page of notifications asks: below max_id,
// above since_id (or min_id), of the types asked and not excluded.
type noticeWindow struct {
	below, since    int64
	types, excluded []string
}

func noticeWindowOf(m *mreq) (noticeWindow, error) {
	w := noticeWindow{types: m.p.list("types"), excluded: m.p.list("exclude_types")}
	for _, b := range []struct {
		name string
		dst  *int64
	}{{"max_id", &w.below}, {"since_id", &w.since}, {"min_id", &w.since}} {
		if v := m.p.str(b.name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 0 {
				return w, derrors.New(derrors.InvalidArgument, b.name+" must be a notification id")
			}
			*b.dst = n
		}
	}
	return w, nil
}

// ours returns our types of the notifications shown: those Mastodon
// names, of the types asked and not excluded, in a fixed order.
func (w noticeWindow) ours() []string {
	var out []string
	for _, ours := range slices.Sorted(maps.Keys(mastoNotice)) {
		t := mastoNotice[ours]
		if (len(w.types) == 0 || slices.Contains(w.types, t)) && !slices.Contains(w.excluded, t) {
			out = append(out, ours)
		}
	}
	if out == nil {
		out = []string{"-"} // none: no type is "-"
	}
	return out
}

// notices makes Mastodon's Notifications, reading the statuses they are
// about in one call (as the caller may see them: one that is not there
// for them is left out).
func (s *Server) notices(m *mreq, list []notifications.View) ([]mNotification, error) {
	var acts []string
	for _, v := range list {
		if v.ActivityID != "" {
			acts = append(acts, v.ActivityID)
		}
	}
	views, err := s.activities.ShownPage(m.ctx, m.caller, acts)
	if err != nil {
		return nil, err
	}
	origin := s.origin(m.c)
	sts := s.statuses(origin, views)
	byID := map[string]*mStatus{}
	for i := range sts {
		byID[views[i].ID] = &sts[i]
	}
	out := make([]mNotification, 0, len(list))
	for _, v := range list {
		n := mNotification{ID: strconv.FormatInt(v.Seq, 10), Type: mastoNotice[v.Type], CreatedAt: isoTime(v.Published)}
		if v.Actor != nil {
			a := s.account(origin, *v.Actor)
			n.Account = &a
		}
		if v.ActivityID != "" {
			if n.Status = byID[v.ActivityID]; n.Status == nil {
				continue
			}
		}
		out = append(out, n)
	}
	return out, nil
}

// unreadCount is GET /api/v1/notifications/unread_count.
func (s *Server) unreadCount(m *mreq) (any, error) {
	n, err := s.notifications.Unread(m.ctx, m.caller)
	if err != nil {
		return nil, err
	}
	return gin.H{"count": n}, nil
}

// oneNotification is GET /api/v1/notifications/:id.
func (s *Server) oneNotification(m *mreq) (any, error) {
	v, err := s.notifications.One(m.ctx, m.caller, m.c.Param("id"))
	if err != nil {
		return nil, err
	}
	out, err := s.notices(m, []notifications.View{v})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errMGone // of no type this face names, or about what is gone
	}
	return out[0], nil
}

// clearNotifications is POST /api/v1/notifications/clear.
func (s *Server) clearNotifications(m *mreq) (any, error) {
	return gin.H{}, s.notifications.Clear(m.ctx, m.caller)
}

// dismissNotification is POST /api/v1/notifications/:id/dismiss.
func (s *Server) dismissNotification(m *mreq) (any, error) {
	return gin.H{}, s.notifications.Dismiss(m.ctx, m.caller, m.c.Param("id"))
}

// groupedNotifications is GET /api/v2/notifications: the operation of
// notifications.get with grouped, paged by max_id (a group's newest
// notification) and since_id.
func (s *Server) groupedNotifications(m *mreq) (any, error) {
	n, err := m.p.limit(40, 80)
	if err != nil {
		return nil, err
	}
	w, err := noticeWindowOf(m)
	if err != nil {
		return nil, err
	}
	page, _, _, more, err := s.notifications.Grouped(m.ctx, m.caller, notifications.GroupQuery{Count: n, Below: w.below, Since: w.since, Types: w.ours()})
	if err != nil {
		return nil, err
	}
	out, err := s.groupsAnswer(m, page)
	if err != nil {
		return nil, err
	}
	older, newer := "", ""
	if len(page) > 0 {
		newer = strconv.FormatInt(page[0].Newest, 10)
		if more {
			older = strconv.FormatInt(page[len(page)-1].Newest, 10)
		}
	}
	m.link(s, older, newer)
	return out, nil
}

// mGroup is Mastodon's NotificationGroup.
type mGroup struct {
	GroupKey                 string   `json:"group_key"`
	NotificationsCount       int      `json:"notifications_count"`
	Type                     string   `json:"type"`
	MostRecentNotificationID string   `json:"most_recent_notification_id"`
	PageMinID                string   `json:"page_min_id"`
	PageMaxID                string   `json:"page_max_id"`
	LatestPageNotificationAt string   `json:"latest_page_notification_at"`
	SampleAccountIDs         []string `json:"sample_account_ids"`
	StatusID                 *string  `json:"status_id,omitempty"`
}

// groupsAnswer is Mastodon's GroupedNotificationsResults of groups: the
// accounts and statuses they name, once each, beside them; a group
// about a status the caller may not see is left out.
func (s *Server) groupsAnswer(m *mreq, page []notifications.Group) (gin.H, error) {
	var acts []string
	people := map[string]accounts.Person{}
	for _, g := range page {
		if g.ActivityID != "" {
			acts = append(acts, g.ActivityID)
		}
		for _, a := range g.Actors {
			people[a.ID] = a
		}
	}
	views, err := s.activities.ShownPage(m.ctx, m.caller, acts)
	if err != nil {
		return nil, err
	}
	shown := map[string]bool{}
	for _, v := range views {
		shown[v.ID] = true
	}
	origin := s.origin(m.c)
	gs := []mGroup{}
	for _, g := range page {
		if g.ActivityID != "" && !shown[g.ActivityID] {
			continue
		}
		v := mGroup{GroupKey: g.Key, NotificationsCount: g.Count, Type: mastoNotice[g.Type], MostRecentNotificationID: strconv.FormatInt(g.Newest, 10),
			PageMinID: strconv.FormatInt(g.Oldest, 10), PageMaxID: strconv.FormatInt(g.Newest, 10), LatestPageNotificationAt: isoTime(g.Published), SampleAccountIDs: []string{}}
		for _, a := range g.Actors {
			v.SampleAccountIDs = append(v.SampleAccountIDs, a.ID)
		}
		if g.ActivityID != "" {
			id := mid(g.ActivityID)
			v.StatusID = &id
		}
		gs = append(gs, v)
	}
	accs := []mAccount{}
	for _, p := range people {
		accs = append(accs, s.account(origin, p))
	}
	slices.SortFunc(accs, func(a, b mAccount) int { return strings.Compare(a.ID, b.ID) })
	return gin.H{"accounts": accs, "statuses": s.statuses(origin, views), "notification_groups": gs}, nil
}
