package api

import (
	"context"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"socialstream/internal/activities"
	"socialstream/internal/derrors"
	"socialstream/internal/notifications"
	"socialstream/internal/paging"
)

// commentParams are the parameters of comments.*.
type commentParams struct {
	ActivityID string `json:"activityId"`
	CommentID  string `json:"commentId"`
	Text       string `json:"text"`
	pageParams
}

func commentsFromRequest(c *gin.Context) (commentParams, error) {
	p := commentParams{ActivityID: c.Param("activityId"), CommentID: c.Param("commentId")}
	var err error
	if c.Request.Method == http.MethodPost {
		err = decodeJSON(c.Request.Body, &p)
		p.ActivityID = c.Param("activityId")
		return p, err
	}
	p.pageParams, err = pagingFromQuery(c)
	return p, err
}

func (s *Server) commentsGet(ctx context.Context, caller string, p commentParams) (any, error) {
	page, err := p.page()
	if err != nil {
		return nil, err
	}
	list, next, err := s.comments.List(ctx, caller, p.ActivityID, page)
	if err != nil {
		return nil, err
	}
	return collection{List: list, StartIndex: page.Offset, ItemsPerPage: page.Count, TotalResults: int64(page.Offset + len(list) + boolInt(next != "")), NextCursor: next}, nil
}

func (s *Server) commentsCreate(ctx context.Context, caller string, p commentParams) (any, error) {
	v, err := s.comments.Create(ctx, caller, p.ActivityID, p.Text)
	if err != nil {
		return nil, err
	}
	return entry{v}, nil
}

func (s *Server) commentsDelete(ctx context.Context, caller string, p commentParams) (any, error) {
	if p.CommentID == "" {
		return nil, derrors.New(derrors.InvalidArgument, "commentId is required")
	}
	return nil, s.comments.Delete(ctx, caller, p.ActivityID, p.CommentID)
}

// likeParams are the parameters of likes.*.
type likeParams struct {
	ActivityID string `json:"activityId"`
	pageParams
}

func likesFromRequest(c *gin.Context) (likeParams, error) {
	p := likeParams{ActivityID: c.Param("activityId")}
	var err error
	p.pageParams, err = pagingFromQuery(c)
	return p, err
}

func (s *Server) likesGet(ctx context.Context, caller string, p likeParams) (any, error) {
	return s.whoReacted(ctx, caller, p, s.likes.Likers)
}

// whoReacted answers the people a list of an activity's (its likers, its
// reposters) names, a page of ids at a time.
func (s *Server) whoReacted(ctx context.Context, caller string, p likeParams,
	list func(ctx context.Context, viewer, activity string, p paging.Request) ([]string, string, error)) (any, error) {
	page, err := p.page()
	if err != nil {
		return nil, err
	}
	ids, next, err := list(ctx, caller, p.ActivityID, page)
	if err != nil {
		return nil, err
	}
	return s.people(ctx, ids, page, next, int64(page.Offset+len(ids)+boolInt(next != "")))
}

func (s *Server) likesCreate(ctx context.Context, caller string, p likeParams) (any, error) {
	v, err := s.likes.Like(ctx, caller, p.ActivityID)
	if err != nil {
		return nil, err
	}
	return entry{v}, nil
}

func (s *Server) likesDelete(ctx context.Context, caller string, p likeParams) (any, error) {
	v, err := s.likes.Unlike(ctx, caller, p.ActivityID)
	if err != nil {
		return nil, err
	}
	return entry{v}, nil
}

// voteParams are the parameters of polls.vote: the activity whose poll
// is voted in, and the indexes of the options chosen.
type voteParams struct {
	ActivityID string `json:"activityId"`
	Choices    []int  `json:"choices"`
}

func voteFromRequest(c *gin.Context) (voteParams, error) {
	p := voteParams{ActivityID: c.Param("activityId")}
	return p, decodeJSON(c.Request.Body, &p)
}

// pollsVote votes in an activity's poll, and answers the activity with
// its poll's counts.
func (s *Server) pollsVote(ctx context.Context, caller string, p voteParams) (any, error) {
	v, err := s.activities.Vote(ctx, caller, p.ActivityID, p.Choices)
	if err != nil {
		return nil, err
	}
	return entry{v}, nil
}

// repostsGet lists who reposts an activity, newest repost first.
func (s *Server) repostsGet(ctx context.Context, caller string, p likeParams) (any, error) {
	return s.whoReacted(ctx, caller, p, s.activities.Reposters)
}

// repostsCreate makes the caller repost an activity: 201 with the repost,
// or 200 with the first one if they repost it already.
func (s *Server) repostsCreate(ctx context.Context, caller string, p likeParams) (any, error) {
	v, created, err := s.activities.Repost(ctx, caller, p.ActivityID)
	if err != nil {
		return nil, err
	}
	return made(v, created), nil
}

// repostsDelete undoes the caller's repost of an activity, and answers
// the activity.
func (s *Server) repostsDelete(ctx context.Context, caller string, p likeParams) (any, error) {
	v, err := s.activities.Unrepost(ctx, caller, p.ActivityID)
	if err != nil {
		return nil, err
	}
	return entry{v}, nil
}

// bookmarksGet lists the caller's bookmarks, newest first.
func (s *Server) bookmarksGet(ctx context.Context, caller string, p likeParams) (any, error) {
	return kept(ctx, caller, p, s.bookmarks.List)
}

// likesMine lists the activities the caller likes, newest like first.
func (s *Server) likesMine(ctx context.Context, caller string, p likeParams) (any, error) {
	return kept(ctx, caller, p, s.likes.Liked)
}

// kept answers a page of what the caller keeps, by list.
func kept(ctx context.Context, caller string, p likeParams, list func(context.Context, string, paging.Request) ([]activities.View, string, error)) (any, error) {
	page, err := p.page()
	if err != nil {
		return nil, err
	}
	vs, next, err := list(ctx, caller, page)
	if err != nil {
		return nil, err
	}
	return collection{List: vs, StartIndex: page.Offset, ItemsPerPage: page.Count,
		TotalResults: int64(page.Offset + len(vs) + boolInt(next != "")), NextCursor: next}, nil
}

// bookmarksCreate bookmarks an activity, and answers it.
func (s *Server) bookmarksCreate(ctx context.Context, caller string, p likeParams) (any, error) {
	v, err := s.bookmarks.Add(ctx, caller, p.ActivityID)
	if err != nil {
		return nil, err
	}
	return entry{v}, nil
}

// bookmarksDelete takes an activity off the caller's bookmarks, and
// answers it.
func (s *Server) bookmarksDelete(ctx context.Context, caller string, p likeParams) (any, error) {
	v, err := s.bookmarks.Remove(ctx, caller, p.ActivityID)
	if err != nil {
		return nil, err
	}
	return entry{v}, nil
}

// pinsCreate pins one of the caller's activities to the top of their
// page, and answers it.
func (s *Server) pinsCreate(ctx context.Context, caller string, p likeParams) (any, error) {
	v, err := s.activities.Pin(ctx, caller, p.ActivityID, true)
	if err != nil {
		return nil, err
	}
	return entry{v}, nil
}

// pinsDelete unpins one of the caller's activities, and answers it.
func (s *Server) pinsDelete(ctx context.Context, caller string, p likeParams) (any, error) {
	v, err := s.activities.Pin(ctx, caller, p.ActivityID, false)
	if err != nil {
		return nil, err
	}
	return entry{v}, nil
}

// notificationParams are the parameters of notifications.get and .read.
type notificationParams struct {
	UserID string   `json:"userId"`
	ID     string   `json:"-"` // one notification's, in the path
	IDs    []string `json:"ids"`
	All    bool     `json:"all"`
	// Grouped asks for the notifications in groups (Mastodon's grouped
	// notifications): the likes of one activity, its reposts, the
	// follows.
	Grouped bool `json:"grouped"`
	pageParams
}

type notificationList struct {
	collection
	UnreadCount int64 `json:"unreadCount"`
}

func notificationsFromRequest(c *gin.Context) (notificationParams, error) {
	p := notificationParams{UserID: c.Param("userId"), ID: c.Param("id")}
	var err error
	if c.Request.Method == http.MethodPost {
		err = decodeJSON(c.Request.Body, &p)
		p.UserID = c.Param("userId")
		return p, err
	}
	p.pageParams, err = pagingFromQuery(c)
	if v, ok := c.GetQuery("grouped"); ok && err == nil {
		if p.Grouped, err = strconv.ParseBool(v); err != nil {
			err = derrors.New(derrors.InvalidArgument, "grouped must be true or false")
		}
	}
	return p, err
}

func (s *Server) checkOwnNotifications(ctx context.Context, caller, userID string) error {
	if userID == "" {
		return nil
	}
	id, err := s.accounts.Resolve(ctx, caller, userID)
	if err != nil {
		return err
	}
	if id != caller {
		return derrors.New(derrors.PermissionDenied, "notifications are for their owner only")
	}
	return nil
}

func (s *Server) notificationsGet(ctx context.Context, caller string, p notificationParams) (any, error) {
	if err := s.checkOwnNotifications(ctx, caller, p.UserID); err != nil {
		return nil, err
	}
	page, err := p.page()
	if err != nil {
		return nil, err
	}
	if p.Grouped {
		// Groups span every notification kept: one read, paged by
		// startIndex alone.
		if page.Cursor != "" {
			return nil, derrors.New(derrors.InvalidArgument, "grouped notifications are paged by startIndex, not cursor")
		}
		groups, total, unread, _, err := s.notifications.Grouped(ctx, caller, notifications.GroupQuery{Offset: page.Offset, Count: page.Count})
		if err != nil {
			return nil, err
		}
		return notificationList{
			collection:  collection{List: groups, StartIndex: page.Offset, ItemsPerPage: page.Count, TotalResults: int64(total)},
			UnreadCount: int64(unread),
		}, nil
	}
	list, unread, next, err := s.notifications.List(ctx, caller, notifications.Query{Page: page})
	if err != nil {
		return nil, err
	}
	return notificationList{
		collection:  collection{List: list, StartIndex: page.Offset, ItemsPerPage: page.Count, TotalResults: int64(page.Offset + len(list) + boolInt(next != "")), NextCursor: next},
		UnreadCount: unread,
	}, nil
}

// unreadCounts is what notifications.unread answers; the groups only
// when asked (grouped), for they read the unread notifications.
type unreadCounts struct {
	UnreadCount  int64 `json:"unreadCount"`
	UnreadGroups *int  `json:"unreadGroups,omitempty"`
}

// notificationsUnread answers how many notifications are unread, by a
// count of the index, and if asked (grouped) in how many groups, reading
// the unread ones.
func (s *Server) notificationsUnread(ctx context.Context, caller string, p notificationParams) (any, error) {
	if err := s.checkOwnNotifications(ctx, caller, p.UserID); err != nil {
		return nil, err
	}
	if !p.Grouped {
		n, err := s.notifications.Unread(ctx, caller)
		if err != nil {
			return nil, err
		}
		return entry{unreadCounts{UnreadCount: n}}, nil
	}
	n, groups, err := s.notifications.UnreadGroups(ctx, caller)
	if err != nil {
		return nil, err
	}
	return entry{unreadCounts{UnreadCount: n, UnreadGroups: &groups}}, nil
}

func (s *Server) notificationsRead(ctx context.Context, caller string, p notificationParams) (any, error) {
	if err := s.checkOwnNotifications(ctx, caller, p.UserID); err != nil {
		return nil, err
	}
	return nil, s.notifications.MarkRead(ctx, caller, p.IDs, p.All)
}

// notificationsOne answers one of the caller's notifications by its id.
func (s *Server) notificationsOne(ctx context.Context, caller string, p notificationParams) (any, error) {
	if err := s.checkOwnNotifications(ctx, caller, p.UserID); err != nil {
		return nil, err
	}
	v, err := s.notifications.One(ctx, caller, p.ID)
	if err != nil {
		return nil, err
	}
	return entry{v}, nil
}

// notificationsDismiss takes one of the caller's notifications, or all
// (no id), out of every list and count.
func (s *Server) notificationsDismiss(ctx context.Context, caller string, p notificationParams) (any, error) {
	if err := s.checkOwnNotifications(ctx, caller, p.UserID); err != nil {
		return nil, err
	}
	if p.ID == "" {
		return nil, s.notifications.Clear(ctx, caller)
	}
	return nil, s.notifications.Dismiss(ctx, caller, p.ID)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
