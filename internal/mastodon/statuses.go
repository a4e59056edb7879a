package mastodon

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"socialstream/internal/activities"
	"socialstream/internal/derrors"
	"socialstream/internal/paging"
	"socialstream/internal/richtext"
)

// Statuses and timelines: Mastodon's names for activities and feeds.

// maxStatus is the most characters a status may hold, as the instance
// tells apps: every status of that many posts, whatever its lines.
const maxStatus = 5000

// splitStatus parts a status's text as an activity keeps it
// (activities.SplitText), after Mastodon's limit.
func splitStatus(text string) (activities.TextParts, error) {
	text = strings.ReplaceAll(strings.TrimSpace(text), "\r\n", "\n")
	if utf8.RuneCountInString(text) > maxStatus {
		return activities.TextParts{}, derrors.New(derrors.InvalidArgument, "Validation failed: Text character limit of 5000 exceeded")
	}
	return activities.SplitText(text), nil
}

// statusID reads the id of a status in the path.
func statusID(m *mreq) (string, error) {
	id := scattered(m.c.Param("id"))
	if id == "" {
		return "", errMGone
	}
	return id, nil
}

// postStatus is POST /api/v1/statuses: the operation of activities.create.
func (s *Server) postStatus(m *mreq) (any, error) {
	text, err := splitStatus(m.p.str("status"))
	if err != nil {
		return nil, err
	}
	visibility := ""
	if v := m.p.str("visibility"); v != "" {
		var ok bool
		if visibility, ok = ourVisibility(v); !ok {
			return nil, derrors.New(derrors.InvalidArgument, "visibility must be public, unlisted, private or direct")
		}
	}
	sensitive, err := m.p.flag("sensitive", false)
	if err != nil {
		return nil, err
	}
	pollIn, err := pollInput(m)
	if err != nil {
		return nil, err
	}
	key, err := idempotency(m)
	if err != nil {
		return nil, err
	}
	in := activities.PostInput{Title: text.Title, Body: text.Body, Joined: text.Joined, Visibility: visibility, SpoilerText: m.p.str("spoiler_text"),
		Sensitive: sensitive, ExternalID: key, Language: m.p.str("language"), Poll: pollIn}
	if r := m.p.str("in_reply_to_id"); r != "" {
		if in.InReplyTo = scattered(r); in.InReplyTo == "" {
			return nil, errMGone
		}
	}
	for _, id := range m.p.list("media_ids") {
		sid := scattered(id)
		if sid == "" {
			return nil, derrors.New(derrors.InvalidArgument, "media_ids holds an id that is no picture's")
		}
		in.Media = append(in.Media, sid)
	}
	if at := m.p.str("scheduled_at"); at != "" {
		return s.schedule(m, at, in)
	}
	v, _, err := s.activities.Post(m.ctx, m.caller, in)
	if err != nil {
		return nil, err
	}
	return s.status(s.origin(m.c), v), nil
}

// idempotency makes the Idempotency-Key header an external id: a post
// repeating it answers the status it made (activities' dedupe, which
// lasts as the activity does; Mastodon's, an hour).
func idempotency(m *mreq) (string, error) {
	k := m.c.GetHeader("Idempotency-Key")
	if k == "" {
		return "", nil
	}
	if len(k) > maxIdempotencyKey {
		return "", derrors.New(derrors.InvalidArgument, fmt.Sprintf("Idempotency-Key must be at most %d bytes", maxIdempotencyKey))
	}
	return "idem:" + k, nil
}

// maxIdempotencyKey leaves room in an external id for the prefix that
// keeps keys apart from the ids gadgets give.
const maxIdempotencyKey = activities.MaxExternalID - len("idem:")

// getStatus is GET /api/v1/statuses/:id.
func (s *Server) getStatus(m *mreq) (any, error) {
	_, v, err := s.seenStatus(m)
	if err != nil {
		return nil, err
	}
	return s.status(s.origin(m.c), v), nil
}

// seenStatus reads the status of the path as the caller may see it, or
// 404.
func (s *Server) seenStatus(m *mreq) (string, activities.View, error) {
	id, err := statusID(m)
	if err != nil {
		return "", activities.View{}, err
	}
	list, err := s.activities.Shown(m.ctx, m.caller, []string{id})
	if err != nil {
		return "", activities.View{}, err
	}
	if len(list) == 0 {
		return "", activities.View{}, errMGone
	}
	return id, list[0], nil
}

// deleteStatus is DELETE /api/v1/statuses/:id: it answers the status
// with its text, for a redraft.
func (s *Server) deleteStatus(m *mreq) (any, error) {
	id, v, err := s.ownStatus(m)
	if err != nil {
		return nil, err
	}
	if err := s.activities.Delete(m.ctx, m.caller, id); err != nil {
		return nil, err
	}
	st := s.status(s.origin(m.c), v)
	text := v.Text()
	st.Text = &text
	return st, nil
}

// editStatus is PUT /api/v1/statuses/:id: the operation of
// activities.update.
func (s *Server) editStatus(m *mreq) (any, error) {
	id, err := statusID(m)
	if err != nil {
		return nil, err
	}
	text, err := splitStatus(m.p.str("status"))
	if err != nil {
		return nil, err
	}
	pollIn, err := pollInput(m)
	if err != nil {
		return nil, err
	}
	in := activities.EditInput{Title: &text.Title, Body: &text.Body, Joined: &text.Joined, Poll: pollIn}
	if m.p.has("spoiler_text") {
		w := m.p.str("spoiler_text")
		in.SpoilerText = &w
	}
	if m.p.has("sensitive") {
		b, err := m.p.flag("sensitive", false)
		if err != nil {
			return nil, err
		}
		in.Sensitive = &b
	}
	v, err := s.activities.Edit(m.ctx, m.caller, id, in)
	if err != nil {
		return nil, err
	}
	return s.status(s.origin(m.c), v), nil
}

// statusSource is GET /api/v1/statuses/:id/source.
func (s *Server) statusSource(m *mreq) (any, error) {
	id, v, err := s.ownStatus(m)
	if err != nil {
		return nil, err
	}
	return map[string]string{"id": mid(id), "text": v.Text(), "spoiler_text": v.SpoilerText}, nil
}

// ownStatus reads the caller's own status of the path: another's, or
// one not there, is a 404.
func (s *Server) ownStatus(m *mreq) (string, activities.View, error) {
	id, err := statusID(m)
	if err != nil {
		return "", activities.View{}, err
	}
	list, err := s.activities.Get(m.ctx, m.caller, m.caller, "", []string{id})
	if err != nil {
		return "", activities.View{}, err
	}
	if len(list) == 0 {
		return "", activities.View{}, errMGone
	}
	return id, list[0], nil
}

// statusHistory is GET /api/v1/statuses/:id/history: the versions,
// oldest first, the current last.
func (s *Server) statusHistory(m *mreq) (any, error) {
	id, v, err := s.seenStatus(m)
	if err != nil {
		return nil, err
	}
	st := s.status(s.origin(m.c), v)
	versions, err := s.activities.History(m.ctx, m.caller, id)
	if err != nil {
		return nil, err
	}
	type edit struct {
		Content          string        `json:"content"`
		SpoilerText      string        `json:"spoiler_text"`
		Sensitive        bool          `json:"sensitive"`
		CreatedAt        string        `json:"created_at"`
		Account          mAccount      `json:"account"`
		MediaAttachments []mAttachment `json:"media_attachments"`
		Emojis           []any         `json:"emojis"`
	}
	origin := s.origin(m.c)
	people := v.Mentioned() // the names it keeps now link in every version
	out := make([]edit, 0, len(versions))
	for _, ver := range versions { // oldest first, as History answers
		text := activities.View{Title: ver.Title, Body: ver.Body, Joined: ver.Joined}
		out = append(out, edit{Content: richtext.HTML(text.Text(), origin, people), SpoilerText: ver.SpoilerText, Sensitive: ver.Sensitive,
			CreatedAt: millisTime(ver.PostedTime), Account: st.Account, MediaAttachments: st.MediaAttachments, Emojis: []any{}})
	}
	return out, nil
}

// react is a toggle on a status (favourite, reblog, bookmark, pin):
// the operation its REST route calls, answering the status after it.
func (s *Server) react(op func(m *mreq, id string) (activities.View, error)) mhandler {
	return func(m *mreq) (any, error) {
		id, err := statusID(m)
		if err != nil {
			return nil, err
		}
		v, err := op(m, id)
		if err != nil {
			return nil, err
		}
		return s.status(s.origin(m.c), v), nil
	}
}

func (s *Server) favourite(m *mreq, id string) (activities.View, error) {
	return s.likes.Like(m.ctx, m.caller, id)
}

func (s *Server) unfavourite(m *mreq, id string) (activities.View, error) {
	return s.likes.Unlike(m.ctx, m.caller, id)
}

// reblog answers the repost, whose reblog is the status shared.
func (s *Server) reblog(m *mreq, id string) (activities.View, error) {
	v, _, err := s.activities.Repost(m.ctx, m.caller, id)
	return v, err
}

func (s *Server) unreblog(m *mreq, id string) (activities.View, error) {
	return s.activities.Unrepost(m.ctx, m.caller, id)
}

func (s *Server) bookmark(m *mreq, id string) (activities.View, error) {
	return s.bookmarks.Add(m.ctx, m.caller, id)
}

func (s *Server) unbookmark(m *mreq, id string) (activities.View, error) {
	return s.bookmarks.Remove(m.ctx, m.caller, id)
}

func (s *Server) pin(m *mreq, id string) (activities.View, error) {
	return s.activities.Pin(m.ctx, m.caller, id, true)
}

func (s *Server) unpin(m *mreq, id string) (activities.View, error) {
	return s.activities.Pin(m.ctx, m.caller, id, false)
}

// statusContext is GET /api/v1/statuses/:id/context.
func (s *Server) statusContext(m *mreq) (any, error) {
	id, v, err := s.seenStatus(m)
	if err != nil {
		return nil, err
	}
	c, err := s.activities.Context(m.ctx, m.caller, v.UserID, id)
	if err != nil {
		return nil, err
	}
	origin := s.origin(m.c)
	up := s.statuses(origin, c.Ancestors)
	down := s.statuses(origin, c.Descendants)
	return map[string][]mStatus{"ancestors": up, "descendants": down}, nil
}

// reactors lists who favourited or reblogged a status, by cursor.
func (s *Server) reactors(list func(m *mreq, id string, p paging.Request) ([]string, string, error)) mhandler {
	return func(m *mreq) (any, error) {
		id, err := statusID(m)
		if err != nil {
			return nil, err
		}
		page, err := s.cursorPage(m, 40, 80)
		if err != nil {
			return nil, err
		}
		idList, next, err := list(m, id, page)
		if err != nil {
			return nil, err
		}
		return s.accountList(m, idList, next)
	}
}

func (s *Server) favouritedBy(m *mreq, id string, p paging.Request) ([]string, string, error) {
	return s.likes.Likers(m.ctx, m.caller, id, p)
}

func (s *Server) rebloggedBy(m *mreq, id string, p paging.Request) ([]string, string, error) {
	return s.activities.Reposters(m.ctx, m.caller, id, p)
}

// timeline answers a feed as statuses, paged by max_id, since_id (the
// newest page above it) and min_id (the page just above it), with its
// Link; only_media keeps those with pictures (the feed's own decision).
func (s *Server) timeline(m *mreq, r activities.FeedRequest) (any, error) {
	var err error
	if r.Only.WithMedia, err = m.p.flag("only_media", false); err != nil {
		return nil, err
	}
	n, err := m.p.limit(20, 40)
	if err != nil {
		return nil, err
	}
	r.Viewer, r.Page = m.caller, paging.Request{Count: n}
	for _, b := range []struct {
		name string
		dst  *string
	}{{"max_id", &r.Before}, {"since_id", &r.Since}, {"min_id", &r.After}} {
		if v := m.p.str(b.name); v != "" {
			if *b.dst = scattered(v); *b.dst == "" {
				return nil, derrors.New(derrors.InvalidArgument, b.name+" must be a status id")
			}
		}
	}
	views, next, err := s.activities.Feed(m.ctx, r)
	if err != nil {
		return nil, err
	}
	older := ""
	if next != "" && len(views) > 0 {
		older = mid(views[len(views)-1].ID)
	}
	out := s.statuses(s.origin(m.c), views)
	newer := ""
	if len(out) > 0 {
		newer = out[0].ID
	}
	m.link(s, older, newer)
	return out, nil
}

func (s *Server) homeTimeline(m *mreq) (any, error) {
	return s.timeline(m, activities.FeedRequest{Selector: activities.Friends, UserID: m.caller})
}

func (s *Server) publicTimeline(m *mreq) (any, error) {
	if remote, _ := m.p.flag("remote", false); remote {
		return []mStatus{}, nil // no other servers
	}
	return s.timeline(m, activities.FeedRequest{Selector: activities.All})
}

func (s *Server) tagTimeline(m *mreq) (any, error) {
	return s.timeline(m, activities.FeedRequest{Selector: activities.TagPrefix + m.c.Param("tag")})
}

// accountStatuses is GET /api/v1/accounts/:id/statuses.
func (s *Server) accountStatuses(m *mreq) (any, error) {
	id := m.c.Param("id")
	if _, err := s.accounts.Card(m.ctx, m.caller, id); err != nil {
		return nil, err
	}
	if pinned, err := m.p.flag("pinned", false); err != nil || pinned {
		if err != nil {
			return nil, err
		}
		return s.timeline(m, activities.FeedRequest{Selector: activities.Pinned, UserID: id})
	}
	r := activities.FeedRequest{Selector: activities.Self, UserID: id}
	var err error
	if r.Only.NoReplies, err = m.p.flag("exclude_replies", false); err != nil {
		return nil, err
	}
	if r.Only.NoReposts, err = m.p.flag("exclude_reblogs", false); err != nil {
		return nil, err
	}
	return s.timeline(m, r)
}
