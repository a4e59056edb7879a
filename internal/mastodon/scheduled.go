package mastodon

import (
	"strconv"
	"time"

	"socialstream/internal/activities"
	"socialstream/internal/derrors"
	"socialstream/internal/scheduled"
)

// Scheduled statuses (package scheduled): a status with scheduled_at is
// kept to be posted at that time, and answered as Mastodon's
// ScheduledStatus.

type mScheduledStatus struct {
	ID               string           `json:"id"`
	ScheduledAt      string           `json:"scheduled_at"`
	Params           mScheduledParams `json:"params"`
	MediaAttachments []mAttachment    `json:"media_attachments"`
}

type mScheduledParams struct {
	Text          string          `json:"text"`
	Poll          *mScheduledPoll `json:"poll"`
	MediaIDs      []string        `json:"media_ids"`
	Sensitive     bool            `json:"sensitive"`
	SpoilerText   *string         `json:"spoiler_text"`
	Visibility    string          `json:"visibility"`
	InReplyToID   *string         `json:"in_reply_to_id"`
	Language      *string         `json:"language"`
	ApplicationID *string         `json:"application_id"`
	ScheduledAt   *string         `json:"scheduled_at"`
	Idempotency   *string         `json:"idempotency"`
	WithRateLimit bool            `json:"with_rate_limit"`
}

// mScheduledPoll is a poll's params as the client sent them (Mastodon
// keeps expires_in as the form's string).
type mScheduledPoll struct {
	Options    []string `json:"options"`
	ExpiresIn  string   `json:"expires_in"`
	Multiple   bool     `json:"multiple"`
	HideTotals bool     `json:"hide_totals"`
}

// schedule keeps in, a status's params, to be posted at at (scheduled_at).
func (s *Server) schedule(m *mreq, at string, in activities.PostInput) (any, error) {
	when, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return nil, derrors.New(derrors.InvalidArgument, "Validation failed: scheduled_at must be a time in ISO 8601 (2030-01-01T12:00:00Z)")
	}
	v, err := s.scheduled.Schedule(m.ctx, m.caller, when, in)
	if err != nil {
		return nil, err
	}
	return s.scheduledStatus(m, v)
}

// scheduledStatus is Mastodon's ScheduledStatus of v.
func (s *Server) scheduledStatus(m *mreq, v scheduled.Scheduled) (mScheduledStatus, error) {
	in := v.Input
	p := mScheduledParams{Text: activities.View{Title: in.Title, Body: in.Body, Joined: in.Joined}.Text(),
		Sensitive: in.Sensitive, Visibility: mastoVisibility[in.Visibility]}
	if p.Visibility == "" {
		p.Visibility = "public"
	}
	for _, f := range []struct {
		val string
		dst **string
	}{{in.SpoilerText, &p.SpoilerText}, {in.Language, &p.Language}} {
		if f.val != "" {
			*f.dst = &f.val
		}
	}
	if in.InReplyTo != "" {
		r := mid(in.InReplyTo)
		p.InReplyToID = &r
	}
	if in.Poll != nil {
		p.Poll = &mScheduledPoll{Options: in.Poll.Options, ExpiresIn: strconv.FormatInt(int64(in.Poll.ExpiresIn/time.Second), 10),
			Multiple: in.Poll.Multiple, HideTotals: in.Poll.HideTotals}
	}
	out := mScheduledStatus{ID: mid(v.ID), ScheduledAt: v.At.UTC().Format("2006-01-02T15:04:05.000Z"), Params: p,
		MediaAttachments: []mAttachment{}}
	if len(in.Media) == 0 || s.media == nil {
		return out, nil
	}
	items, err := s.media.Items(m.ctx, in.Media)
	if err != nil {
		return out, err
	}
	mint, err := s.media.Links.Minter(m.ctx)
	if err != nil {
		return out, err
	}
	for _, it := range items {
		p.MediaIDs = append(p.MediaIDs, mid(it.ID))
		out.MediaAttachments = append(out.MediaAttachments, attachment(s.origin(m.c), mint.Item(it)))
	}
	out.Params = p
	return out, nil
}

// scheduledStatuses is GET /api/v1/scheduled_statuses: the caller's,
// newest made first, a page of limit (20, at most 40) below max_id,
// above since_id, or just above min_id.
func (s *Server) scheduledStatuses(m *mreq) (any, error) {
	limit, err := m.p.limit(20, 40)
	if err != nil {
		return nil, err
	}
	w := scheduled.Window{Limit: limit}
	for _, b := range []struct {
		name string
		dst  *string
	}{{"max_id", &w.Below}, {"since_id", &w.Above}, {"min_id", &w.Above}} {
		if id := m.p.str(b.name); id != "" {
			if *b.dst = scattered(id); *b.dst == "" {
				return nil, derrors.New(derrors.InvalidArgument, b.name+" is not the id of a scheduled status")
			}
		}
	}
	w.Nearest = m.p.str("min_id") != ""
	list, err := s.scheduled.List(m.ctx, m.caller, w)
	if err != nil {
		return nil, err
	}
	out := make([]mScheduledStatus, 0, len(list))
	for _, v := range list {
		st, err := s.scheduledStatus(m, v)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	if len(out) > 0 {
		next := ""
		if len(out) == limit {
			next = out[len(out)-1].ID
		}
		m.link(s, next, out[0].ID)
	}
	return out, nil
}

// ownScheduledID reads the path's id of a scheduled status.
func ownScheduledID(m *mreq) (string, error) {
	id := scattered(m.c.Param("id"))
	if id == "" {
		return "", errMGone
	}
	return id, nil
}

// getScheduledStatus is GET /api/v1/scheduled_statuses/:id.
func (s *Server) getScheduledStatus(m *mreq) (any, error) {
	id, err := ownScheduledID(m)
	if err != nil {
		return nil, err
	}
	v, err := s.scheduled.Get(m.ctx, m.caller, id)
	if err != nil {
		return nil, err
	}
	return s.scheduledStatus(m, v)
}

// rescheduleStatus is PUT /api/v1/scheduled_statuses/:id: a new
// scheduled_at.
func (s *Server) rescheduleStatus(m *mreq) (any, error) {
	id, err := ownScheduledID(m)
	if err != nil {
		return nil, err
	}
	when, err := time.Parse(time.RFC3339Nano, m.p.str("scheduled_at"))
	if err != nil {
		return nil, derrors.New(derrors.InvalidArgument, "Validation failed: scheduled_at must be a time in ISO 8601 (2030-01-01T12:00:00Z)")
	}
	v, err := s.scheduled.Reschedule(m.ctx, m.caller, id, when)
	if err != nil {
		return nil, err
	}
	return s.scheduledStatus(m, v)
}

// cancelScheduledStatus is DELETE /api/v1/scheduled_statuses/:id.
func (s *Server) cancelScheduledStatus(m *mreq) (any, error) {
	id, err := ownScheduledID(m)
	if err != nil {
		return nil, err
	}
	return struct{}{}, s.scheduled.Cancel(m.ctx, m.caller, id)
}
