package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"socialstream/internal/activities"
	"socialstream/internal/derrors"
	"socialstream/internal/ids"
	"socialstream/internal/scheduled"
)

// Scheduled posts (package scheduled): an activity posted with
// scheduledAt is kept, and posted by a job at that time.

// scheduledView is a scheduled post as its author sees it.
type scheduledView struct {
	ID          string            `json:"id"`
	ScheduledAt string            `json:"scheduledAt"`
	Activity    scheduledActivity `json:"activity"`
}

// scheduledActivity is what it will post, as a new activity is sent.
type scheduledActivity struct {
	Title       string      `json:"title"`
	Body        string      `json:"body,omitempty"`
	AppID       string      `json:"appId,omitempty"`
	Visibility  string      `json:"visibility"`
	SpoilerText string      `json:"spoilerText,omitempty"`
	Sensitive   bool        `json:"sensitive"`
	Language    string      `json:"language,omitempty"`
	InReplyTo   string      `json:"inReplyTo,omitempty"`
	MediaItems  []mediaID   `json:"mediaItems"`
	Poll        *pollFields `json:"poll,omitempty"`
}

type mediaID struct {
	ID string `json:"id"`
}

func viewScheduled(v scheduled.Scheduled) scheduledView {
	in := v.Input
	a := scheduledActivity{Title: in.Title, Body: in.Body, AppID: in.AppID, Visibility: in.Visibility, SpoilerText: in.SpoilerText,
		Sensitive: in.Sensitive, Language: in.Language, InReplyTo: in.InReplyTo, MediaItems: []mediaID{}}
	for _, id := range in.Media {
		a.MediaItems = append(a.MediaItems, mediaID{id})
	}
	if in.Poll != nil {
		a.Poll = &pollFields{Options: in.Poll.Options, ExpiresIn: int64(in.Poll.ExpiresIn / time.Second),
			Multiple: in.Poll.Multiple, HideTotals: in.Poll.HideTotals}
	}
	return scheduledView{ID: v.ID, ScheduledAt: v.At.UTC().Format(time.RFC3339Nano), Activity: a}
}

// scheduleTime reads a time a post is scheduled for.
func scheduleTime(at string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return time.Time{}, derrors.New(derrors.InvalidArgument, "scheduledAt must be an RFC 3339 time (2030-01-01T12:00:00Z)")
	}
	return t, nil
}

// schedule keeps in to post at at: 202 with the scheduled post.
func (s *Server) schedule(ctx context.Context, caller, at string, in activities.PostInput) (any, error) {
	when, err := scheduleTime(at)
	if err != nil {
		return nil, err
	}
	v, err := s.scheduled.Schedule(ctx, caller, when, in)
	if err != nil {
		return nil, err
	}
	return statusEntry{entry: entry{viewScheduled(v)}, status: http.StatusAccepted}, nil
}

// scheduledParams are the parameters of scheduled.get, .update and
// .delete: the caller (@me), the post (all of them for a get without),
// its new time.
type scheduledParams struct {
	UserID      string `json:"userId"`
	ID          string `json:"id"`
	ScheduledAt string `json:"scheduledAt"`
	pageParams
}

func scheduledFromRequest(c *gin.Context) (scheduledParams, error) {
	p := scheduledParams{UserID: c.Param("userId"), ID: c.Param("id")}
	var err error
	if c.Request.Method == http.MethodPut {
		var body struct {
			ScheduledAt string `json:"scheduledAt"`
		}
		err = decodeJSON(c.Request.Body, &body)
		p.ScheduledAt = body.ScheduledAt
		return p, err
	}
	p.pageParams, err = pagingFromQuery(c)
	return p, err
}

// scheduledGet answers one of the caller's scheduled posts, or a page
// of them, newest made first (cursor: the last id of the page before).
func (s *Server) scheduledGet(ctx context.Context, caller string, p scheduledParams) (any, error) {
	if err := s.checkOwn(ctx, caller, p.UserID, "a scheduled post"); err != nil {
		return nil, err
	}
	if p.ID != "" {
		v, err := s.scheduled.Get(ctx, caller, p.ID)
		if err != nil {
			return nil, err
		}
		return entry{viewScheduled(v)}, nil
	}
	count, start, err := p.limits()
	if err != nil {
		return nil, err
	}
	if start > 0 {
		return nil, derrors.New(derrors.InvalidArgument, "scheduled posts page by cursor")
	}
	if _, ok := ids.Parse(p.Cursor); p.Cursor != "" && !ok {
		return nil, derrors.New(derrors.InvalidArgument, "cursor is not one a page of scheduled posts gave")
	}
	list, err := s.scheduled.List(ctx, caller, scheduled.Window{Below: p.Cursor, Limit: count + 1})
	if err != nil {
		return nil, err
	}
	next := ""
	if len(list) > count {
		list = list[:count]
		next = list[count-1].ID
	}
	views := make([]scheduledView, 0, len(list))
	for _, v := range list {
		views = append(views, viewScheduled(v))
	}
	return collection{List: views, ItemsPerPage: count, TotalResults: int64(len(views) + boolInt(next != "")), NextCursor: next}, nil
}

// scheduledUpdate moves one of the caller's scheduled posts.
func (s *Server) scheduledUpdate(ctx context.Context, caller string, p scheduledParams) (any, error) {
	if err := s.checkOwn(ctx, caller, p.UserID, "a scheduled post"); err != nil {
		return nil, err
	}
	when, err := scheduleTime(p.ScheduledAt)
	if err != nil {
		return nil, err
	}
	v, err := s.scheduled.Reschedule(ctx, caller, p.ID, when)
	if err != nil {
		return nil, err
	}
	return entry{viewScheduled(v)}, nil
}

// scheduledDelete cancels one of the caller's scheduled posts.
func (s *Server) scheduledDelete(ctx context.Context, caller string, p scheduledParams) (any, error) {
	if err := s.checkOwn(ctx, caller, p.UserID, "a scheduled post"); err != nil {
		return nil, err
	}
	return nil, s.scheduled.Cancel(ctx, caller, p.ID)
}
