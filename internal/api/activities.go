package api

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/gin-gonic/gin"

	"socialstream/internal/activities"
	"socialstream/internal/derrors"
	"socialstream/internal/paging"
	"socialstream/internal/polls"
)

// activityParams are the parameters of activities.get, .create and .delete.
type activityParams struct {
	UserID      string          `json:"userId"`
	GroupID     string          `json:"groupId"`
	AppID       string          `json:"appId"`
	ActivityIDs list            `json:"activityIds"`
	Activity    *activityFields `json:"activity"`
	Fields      list            `json:"fields"`
	// Since asks a feed for what is newer than this activity id.
	Since string `json:"since"`
	pageParams
}

// activityFields is an activity as a client posts it; other fields
// (postedTime, id, ...) are set by the server and ignored.
type activityFields struct {
	Title      string `json:"title"`
	Body       string `json:"body"`
	URL        string `json:"url"`
	ExternalID string `json:"externalId"`
	AppID      string `json:"appId"`
	Visibility string `json:"visibility"`
	// SpoilerText is a content warning; Sensitive marks the pictures.
	SpoilerText string `json:"spoilerText"`
	Sensitive   bool   `json:"sensitive"`
	// Language is a BCP 47 tag of the language it is written in.
	Language string `json:"language"`
	// InReplyTo makes it a reply to that activity.
	InReplyTo string `json:"inReplyTo"`
	// MediaItems are the uploaded pictures it carries.
	MediaItems mediaRefs `json:"mediaItems"`
	// Poll is the poll it carries, if any.
	Poll *pollFields `json:"poll"`
	// ScheduledAt, an RFC 3339 time, keeps it to be posted then.
	ScheduledAt string `json:"scheduledAt"`
}

// pollFields is a poll as a client posts it: its options, how many
// seconds it is open, whether one may choose several, whether its
// totals are hidden until it ends.
type pollFields struct {
	Options    []string `json:"options"`
	ExpiresIn  int64    `json:"expiresIn"`
	Multiple   bool     `json:"multiple"`
	HideTotals bool     `json:"hideTotals"`
}

// input is the poll asked for (nil: none).
func (f *pollFields) input() *polls.Input {
	if f == nil {
		return nil
	}
	secs := min(max(f.ExpiresIn, 0), int64(polls.MaxExpiry/time.Second)+1)
	return &polls.Input{Options: f.Options, ExpiresIn: time.Duration(secs) * time.Second, Multiple: f.Multiple, HideTotals: f.HideTotals}
}

func activitiesGetFromRequest(c *gin.Context) (activityParams, error) {
	p := activityParams{UserID: c.Param("userId"), GroupID: c.Param("selector"), AppID: c.Param("appId")}
	var err error
	if p.ActivityIDs, err = splitList([]string{c.Param("ids")}); err != nil {
		return p, err
	}
	if p.Fields, err = listFromQuery(c, "fields"); err != nil {
		return p, err
	}
	p.Since = c.Query("since")
	p.pageParams, err = pagingFromQuery(c)
	return p, err
}

func activitiesCreateFromRequest(c *gin.Context) (activityParams, error) {
	p := activityParams{UserID: c.Param("userId"), GroupID: c.Param("selector"), AppID: c.Param("appId")}
	var f activityFields
	if err := decodeJSON(c.Request.Body, &f); err != nil {
		return p, err
	}
	p.Activity = &f
	return p, nil
}

// activityEdit is an edit as a client sends it: a field left out is kept.
type activityEdit struct {
	Title       *string `json:"title"`
	Body        *string `json:"body"`
	SpoilerText *string `json:"spoilerText"`
	Sensitive   *bool   `json:"sensitive"`
}

// activityUpdateParams are the parameters of activities.update.
type activityUpdateParams struct {
	UserID      string        `json:"userId"`
	GroupID     string        `json:"groupId"`
	AppID       string        `json:"appId"`
	ActivityIDs list          `json:"activityIds"`
	Activity    *activityEdit `json:"activity"`
}

func activitiesUpdateFromRequest(c *gin.Context) (activityUpdateParams, error) {
	p := activityUpdateParams{UserID: c.Param("userId"), GroupID: c.Param("selector"), AppID: c.Param("appId")}
	var err error
	if p.ActivityIDs, err = splitList([]string{c.Param("ids")}); err != nil {
		return p, err
	}
	var f activityEdit
	if err := decodeJSON(c.Request.Body, &f); err != nil {
		return p, err
	}
	p.Activity = &f
	return p, nil
}

// activitiesUpdate edits one of the caller's activities: its title, its
// body or both.
func (s *Server) activitiesUpdate(ctx context.Context, caller string, p activityUpdateParams) (any, error) {
	if err := s.checkOwnSelf(ctx, caller, activityParams{UserID: p.UserID, GroupID: p.GroupID}); err != nil {
		return nil, err
	}
	if len(p.ActivityIDs) != 1 {
		return nil, derrors.New(derrors.InvalidArgument, "give the id of one activity to edit")
	}
	if p.Activity == nil {
		return nil, derrors.New(derrors.InvalidArgument, "activity is required")
	}
	v, err := s.activities.Edit(ctx, caller, p.ActivityIDs[0], activities.EditInput{
		Title: p.Activity.Title, Body: p.Activity.Body, SpoilerText: p.Activity.SpoilerText, Sensitive: p.Activity.Sensitive,
	})
	if err != nil {
		return nil, err
	}
	return entry{v}, nil
}

// activitiesHistory lists the versions of one of the caller's activities.
func (s *Server) activitiesHistory(ctx context.Context, caller string, p activityParams) (any, error) {
	if err := s.checkOwnSelf(ctx, caller, p); err != nil {
		return nil, err
	}
	if len(p.ActivityIDs) != 1 {
		return nil, derrors.New(derrors.InvalidArgument, "give the id of one activity")
	}
	list, err := s.activities.History(ctx, caller, p.ActivityIDs[0])
	if err != nil {
		return nil, err
	}
	return collection{List: list, ItemsPerPage: len(list), TotalResults: int64(len(list))}, nil
}

// activitiesContext answers an activity's place in its thread: what is
// above it and what answers it, as the caller may see them.
func (s *Server) activitiesContext(ctx context.Context, caller string, p activityParams) (any, error) {
	if p.GroupID != "" && p.GroupID != activities.Self {
		return nil, derrors.New(derrors.InvalidArgument, "activities are read by id under @self")
	}
	if len(p.ActivityIDs) != 1 {
		return nil, derrors.New(derrors.InvalidArgument, "give the id of one activity")
	}
	user, err := s.accounts.Resolve(ctx, caller, cmp.Or(p.UserID, "@me"))
	if err != nil {
		return nil, err
	}
	return s.activities.Context(ctx, caller, user, p.ActivityIDs[0])
}

func activitiesDeleteFromRequest(c *gin.Context) (activityParams, error) {
	p := activityParams{UserID: c.Param("userId"), GroupID: c.Param("selector"), AppID: c.Param("appId")}
	var err error
	p.ActivityIDs, err = splitList([]string{c.Param("ids")})
	return p, err
}

// activitiesGet answers activities.get, with only the fields asked for.
func (s *Server) activitiesGet(ctx context.Context, caller string, p activityParams) (any, error) {
	return selecting(p.Fields, func() (any, error) { return s.findActivities(ctx, caller, p) })
}

func (s *Server) findActivities(ctx context.Context, caller string, p activityParams) (any, error) {
	if p.UserID == "" {
		p.UserID = "@me"
	}
	if p.GroupID == "" {
		p.GroupID = activities.Self
	}
	page, err := p.page()
	if err != nil {
		return nil, err
	}
	if len(p.ActivityIDs) > 0 {
		if p.Since != "" {
			return nil, derrors.New(derrors.InvalidArgument, "since applies to feeds, not to activities by id")
		}
		if p.GroupID != activities.Self {
			return nil, derrors.New(derrors.InvalidArgument, "activities are fetched by id under @self")
		}
		user, err := s.accounts.Resolve(ctx, caller, p.UserID)
		if err != nil {
			return nil, err
		}
		list, err := s.activities.Get(ctx, caller, user, p.AppID, p.ActivityIDs)
		if err != nil {
			return nil, err
		}
		if len(p.ActivityIDs) == 1 && len(list) == 0 {
			return nil, activities.ErrNoSuchActivity
		}
		return collection{List: list, ItemsPerPage: len(list), TotalResults: int64(len(list))}, nil
	}
	req := activities.FeedRequest{Viewer: caller, Selector: p.GroupID, AppID: p.AppID, Since: p.Since, Page: page}
	switch p.GroupID {
	case activities.Self, activities.Friends, activities.Mentions, activities.Pinned:
		if req.UserID, err = s.accounts.Resolve(ctx, caller, p.UserID); err != nil {
			return nil, err
		}
	}
	list, next, err := s.activities.Feed(ctx, req)
	if err != nil {
		return nil, err
	}
	return feedPage(list, next, page), nil
}

// feedPage is a page of a feed or a search. Counting one would cost a
// query per read; totalResults counts what is known: the items up to
// this page, and one more if there is a next.
func feedPage(list []activities.View, next string, page paging.Request) collection {
	total := int64(page.Offset + len(list))
	if next != "" {
		total++
	}
	return collection{List: list, StartIndex: page.Offset, ItemsPerPage: page.Count, TotalResults: total, NextCursor: next}
}

// checkOwnSelf checks that a write addresses the caller's own @self.
func (s *Server) checkOwnSelf(ctx context.Context, caller string, p activityParams) error {
	if p.UserID == "" {
		p.UserID = "@me"
	}
	if p.GroupID != "" && p.GroupID != activities.Self {
		return derrors.New(derrors.InvalidArgument, "activities are written under @self")
	}
	id, err := s.accounts.Resolve(ctx, caller, p.UserID)
	if err != nil {
		return err
	}
	if id != caller {
		return derrors.New(derrors.PermissionDenied, "you can only write your own activities")
	}
	return nil
}

func (s *Server) activitiesCreate(ctx context.Context, caller string, p activityParams) (any, error) {
	if err := s.checkOwnSelf(ctx, caller, p); err != nil {
		return nil, err
	}
	if p.Activity == nil {
		return nil, derrors.New(derrors.InvalidArgument, "activity is required")
	}
	app := p.AppID
	if app == "" || app == "@app" {
		app = p.Activity.AppID
	}
	in := activities.PostInput{
		AppID: app, Title: p.Activity.Title, Body: p.Activity.Body, URL: p.Activity.URL, ExternalID: p.Activity.ExternalID,
		Visibility: p.Activity.Visibility, SpoilerText: p.Activity.SpoilerText, Sensitive: p.Activity.Sensitive,
		Language: p.Activity.Language, InReplyTo: p.Activity.InReplyTo, Media: p.Activity.MediaItems, Poll: p.Activity.Poll.input(),
	}
	if p.Activity.ScheduledAt != "" {
		return s.schedule(ctx, caller, p.Activity.ScheduledAt, in)
	}
	v, created, err := s.activities.Post(ctx, caller, in)
	if err != nil {
		return nil, err
	}
	return made(v, created), nil
}

// made answers an activity a post made (201), or the one it had made
// before (200).
func made(v activities.View, created bool) statusEntry {
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return statusEntry{entry: entry{v}, status: status}
}

func (s *Server) activitiesDelete(ctx context.Context, caller string, p activityParams) (any, error) {
	if err := s.checkOwnSelf(ctx, caller, p); err != nil {
		return nil, err
	}
	ids := slices.Compact(slices.Sorted(slices.Values(p.ActivityIDs)))
	switch {
	case len(ids) == 0:
		return nil, derrors.New(derrors.InvalidArgument, "give the id of the activity to delete")
	case len(ids) > 1:
		// Several: all must be the caller's before any goes.
		found, err := s.activities.Get(ctx, caller, caller, "", ids)
		if err != nil {
			return nil, err
		}
		if len(found) != len(ids) {
			return nil, derrors.New(derrors.NotFound, "not all of those activities exist and are yours; none was deleted")
		}
	}
	for _, id := range ids {
		if err := s.activities.Delete(ctx, caller, id); err != nil {
			return nil, err
		}
	}
	return nil, nil
}
