package mastodon

import (
	"fmt"
	"mime"
	"mime/multipart"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"socialstream/internal/accounts"
	"socialstream/internal/derrors"
	"socialstream/internal/filters"
	"socialstream/internal/ids"
	"socialstream/internal/markers"
	"socialstream/internal/media"
	"socialstream/internal/moderation"
	"socialstream/internal/notifications"
	"socialstream/internal/tags"
)

// Markers, filters, followed tags and reports, as Mastodon names them,
// over the service's markers, filters, tags and reports.

// mastoMarkers are Mastodon's timelines a marker may name, by ours.
var mastoMarkers = map[string]string{"home": "home", "notifications": "notifications"}

// getMarkers is GET /api/v1/markers?timeline[]=.
func (s *Server) getMarkers(m *mreq) (any, error) {
	feeds := m.p.list("timeline")
	if len(feeds) == 0 {
		feeds = []string{"home", "notifications"}
	}
	for _, f := range feeds {
		if _, ok := mastoMarkers[f]; !ok {
			return nil, derrors.New(derrors.InvalidArgument, "timeline must be home or notifications")
		}
	}
	got, err := s.markers.Get(m.ctx, m.caller, feeds)
	if err != nil {
		return nil, err
	}
	return markerViews(got), nil
}

// markerViews shows markers as Mastodon does. The service keeps no
// version nor time of a marker's move: updated_at is the time of what
// it marks (the id's), and version 0.
func markerViews(got map[string]markers.Marker) gin.H {
	out := gin.H{}
	for f, mk := range got {
		seq, _ := ids.Parse(mk.LastReadID)
		out[f] = gin.H{"last_read_id": strconv.FormatInt(seq, 10), "version": 0, "updated_at": ids.Time(seq).UTC().Format("2006-01-02T15:04:05.000Z")}
	}
	return out
}

// moveMarkers is POST /api/v1/markers: home[last_read_id] (a status) and
// notifications[last_read_id] (a notification).
func (s *Server) moveMarkers(m *mreq) (any, error) {
	to := map[string]markers.Marker{}
	for f := range mastoMarkers {
		if v := m.p.str(f + "[last_read_id]"); v != "" {
			id := scattered(v)
			if id == "" {
				return nil, derrors.New(derrors.InvalidArgument, f+"[last_read_id] is not an id")
			}
			to[f] = markers.Marker{LastReadID: id}
		}
	}
	if len(to) == 0 {
		return nil, derrors.New(derrors.InvalidArgument, "give home[last_read_id] or notifications[last_read_id]")
	}
	got, err := s.markers.Move(m.ctx, m.caller, to)
	if err != nil {
		return nil, err
	}
	return markerViews(got), nil
}

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

// Followed tags.

func (s *Server) tagView(m *mreq, name string, following bool) mTag {
	return mTag{Name: name, URL: s.origin(m.c) + "/tags/" + name, History: []any{}, Following: &following}
}

func (s *Server) getTag(m *mreq) (any, error) {
	name, f, err := s.tags.Get(m.ctx, m.caller, m.c.Param("name"))
	if err != nil {
		return nil, err
	}
	return s.tagView(m, name, f != nil), nil
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

// Reports: Mastodon's categories by ours.
var reportCategories = map[string]string{"spam": "spam", "legal": "illegal", "violation": "abuse", "other": "other"}

type mReport struct {
	ID            string   `json:"id"`
	ActionTaken   bool     `json:"action_taken"`
	ActionTakenAt *string  `json:"action_taken_at"`
	Category      string   `json:"category"`
	Comment       string   `json:"comment"`
	Forwarded     bool     `json:"forwarded"`
	CreatedAt     string   `json:"created_at"`
	StatusIDs     []string `json:"status_ids"`
	RuleIDs       []string `json:"rule_ids"`
	TargetAccount mAccount `json:"target_account"`
}

// report is POST /api/v1/reports: the operation of reports.create.
func (s *Server) report(m *mreq) (any, error) {
	cat := "other"
	if c := m.p.str("category"); c != "" {
		var ok bool
		if cat, ok = reportCategories[c]; !ok {
			return nil, derrors.New(derrors.InvalidArgument, "category must be spam, legal, violation or other")
		}
	}
	forward, err := m.p.flag("forward", false)
	if err != nil {
		return nil, err
	}
	in := moderation.ReportInput{AccountID: m.p.str("account_id"), Category: cat, Comment: m.p.str("comment"), Forward: forward}
	for _, id := range m.p.list("status_ids") {
		sid := scattered(id)
		if sid == "" {
			return nil, errMGone
		}
		in.ActivityIDs = append(in.ActivityIDs, sid)
	}
	target, err := s.host.Card(m.ctx, m.caller, in.AccountID)
	if err != nil {
		return nil, err
	}
	r, err := s.moderation.File(m.ctx, m.caller, in)
	if err != nil {
		return nil, err
	}
	back := map[string]string{}
	for theirs, ours := range reportCategories {
		back[ours] = theirs
	}
	v := mReport{ID: mid(r.ID), ActionTaken: r.Resolved != "", Category: back[r.Category], Comment: r.Comment, Forwarded: r.Forwarded,
		CreatedAt: isoTime(r.Created), StatusIDs: []string{}, TargetAccount: s.account(s.origin(m.c), target)}
	for _, id := range r.ActivityIDs {
		v.StatusIDs = append(v.StatusIDs, mid(id))
	}
	return v, nil
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

// uploadMedia is POST /api/v2/media (and /api/v1/media): the upload of
// mediaItems.create, streamed from the form's file part.
func (s *Server) uploadMedia(m *mreq) (any, error) {
	_, params, _ := mime.ParseMediaType(m.c.GetHeader("Content-Type"))
	if params["boundary"] == "" {
		return nil, derrors.New(derrors.InvalidArgument, "send the picture as multipart/form-data with a file")
	}
	in, err := s.host.ReadForm(multipart.NewReader(m.c.Request.Body, params["boundary"]))
	if err != nil {
		return nil, err
	}
	if err := s.host.UploadAllowed(m.ctx, m.caller); err != nil {
		return nil, err
	}
	it, _, err := s.media.Upload(m.ctx, m.caller, *in)
	if err != nil {
		return nil, err
	}
	mint, err := s.media.Links.Minter(m.ctx)
	if err != nil {
		return nil, err
	}
	return attachment(s.origin(m.c), mint.Item(it)), nil
}

// ownMedia reads one of the caller's pictures, by the path's id.
func (s *Server) ownMedia(m *mreq) (media.View, error) {
	id := scattered(m.c.Param("id"))
	if id == "" {
		return media.View{}, errMGone
	}
	it, err := s.media.Item(m.ctx, id)
	if err != nil {
		return media.View{}, err
	}
	if it.UserID != m.caller {
		return media.View{}, errMGone
	}
	mint, err := s.media.Links.Minter(m.ctx)
	if err != nil {
		return media.View{}, err
	}
	return mint.Item(it), nil
}

func (s *Server) getMedia(m *mreq) (any, error) {
	v, err := s.ownMedia(m)
	if err != nil {
		return nil, err
	}
	return attachment(s.origin(m.c), v), nil
}

// updateMedia is PUT /api/v1/media/:id: its description (alt text).
func (s *Server) updateMedia(m *mreq) (any, error) {
	v, err := s.ownMedia(m)
	if err != nil {
		return nil, err
	}
	d := m.p.str("description")
	it, err := s.media.Update(m.ctx, m.caller, v.ID, media.ItemUpdate{Description: &d})
	if err != nil {
		return nil, err
	}
	mint, err := s.media.Links.Minter(m.ctx)
	if err != nil {
		return nil, err
	}
	return attachment(s.origin(m.c), mint.Item(it)), nil
}
