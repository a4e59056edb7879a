// Package api is the HTTP face of socialstream: the gin engine, the REST
// routes of the contract, JSON-RPC, and the one place where errors become
// HTTP answers. Handlers parse and check the request, make one call to a
// domain operation with the request's context (which owns every side
// effect: jobs, notifications), and write JSON. It owns no entity.
package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"socialstream/internal/accounts"
	"socialstream/internal/activities"
	"socialstream/internal/appdata"
	"socialstream/internal/bookmarks"
	"socialstream/internal/comments"
	"socialstream/internal/conversations"
	"socialstream/internal/cursor"
	"socialstream/internal/derrors"
	"socialstream/internal/filters"
	"socialstream/internal/graph"
	"socialstream/internal/groups"
	"socialstream/internal/jobs"
	"socialstream/internal/lifecycle"
	"socialstream/internal/likes"
	"socialstream/internal/logging"
	"socialstream/internal/markers"
	"socialstream/internal/mastodon"
	"socialstream/internal/media"
	"socialstream/internal/moderation"
	"socialstream/internal/mutes"
	"socialstream/internal/notifications"
	"socialstream/internal/oauth"
	"socialstream/internal/paging"
	"socialstream/internal/push"
	"socialstream/internal/rebuild"
	"socialstream/internal/scheduled"
	"socialstream/internal/tags"
	"socialstream/internal/tracing"
	"socialstream/internal/web"
)

// MaxBody is the largest request body accepted, but for an upload's.
const MaxBody = 1 << 20

// MaxUpload is the largest body of an upload (a POST under uploadPath):
// the largest image, and room for a multipart form's parts around it.
const MaxUpload = media.MaxBytes + 64<<10

const uploadPath = "/social/rest/mediaItems/"

// isUpload reports whether a body of this Content-Type is an image's
// bytes (raw, or in a multipart form): JSON keeps MaxBody.
func isUpload(contentType string) bool {
	kind, _, _ := mime.ParseMediaType(contentType)
	return strings.HasPrefix(kind, "image/") || kind == "application/octet-stream" || kind == "multipart/form-data"
}

// Deps are what the Server needs.
type Deps struct {
	Accounts      *accounts.Service
	Graph         *graph.Service
	Groups        *groups.Service
	Activities    *activities.Service
	Rebuild       *rebuild.Service
	Comments      *comments.Service
	Likes         *likes.Service
	Bookmarks     *bookmarks.Service
	OAuth         *oauth.Service
	Notifications *notifications.Service
	Lifecycle     *lifecycle.Service
	AppData       *appdata.Service
	Mutes         *mutes.Service
	Markers       *markers.Service
	Filters       *filters.Service
	Moderation    *moderation.Service
	Tags          *tags.Service
	Media         *media.Service
	Push          *push.Service
	Scheduled     *scheduled.Service
	Conversations *conversations.Service
	Cursors       *cursor.Sealer
	Logger        *slog.Logger
	Guard         Guard
	// Faces are the others served beside this one (package app builds
	// them, with NewHost), and Jobs the handlers of the jobs.
	Faces []Face
	Jobs  *jobs.Router
}

// Server serves the API.
type Server struct {
	accounts      *accounts.Service
	graph         *graph.Service
	groups        *groups.Service
	activities    *activities.Service
	rebuild       *rebuild.Service
	comments      *comments.Service
	likes         *likes.Service
	bookmarks     *bookmarks.Service
	oauth         *oauth.Service
	notifications *notifications.Service
	lifecycle     *lifecycle.Service
	appData       *appdata.Service
	mutes         *mutes.Service
	markers       *markers.Service
	filters       *filters.Service
	moderation    *moderation.Service
	tags          *tags.Service
	media         *media.Service
	push          *push.Service
	scheduled     *scheduled.Service
	conversations *conversations.Service
	cursors       *cursor.Sealer
	doors
	// faces are the others served beside this one (Mastodon's, and
	// ActivityPub's when the deployment federates), built by package app.
	faces   []Face
	jobs    *jobs.Router
	rpc     map[string]rpcFunc
	openapi []byte
}

// doors are what every face shares of the server: its guard (rate
// limits, the checks of sign-ins, sign-ups and uploads, the task
// sender's proof, the transport's headers) and how a failed request is
// logged and answered. The REST face is built on them; the faces built
// beside it borrow them (NewHost).
type doors struct {
	guard Guard
	log   *slog.Logger
}

// Face is another face of the service, served beside the REST face: its
// routes, and its answer to an error on a path it owns (a route no face
// has, say).
type Face interface {
	Routes(r *gin.Engine)
	Owns(path string) bool
	Fail(c *gin.Context, err error)
}

// missing reports whether a dependency is nil.
func (d Deps) missing() bool {
	services := []bool{d.Accounts == nil, d.Graph == nil, d.Groups == nil, d.Activities == nil, d.Rebuild == nil,
		d.Comments == nil, d.Likes == nil, d.Bookmarks == nil, d.OAuth == nil, d.Notifications == nil, d.Lifecycle == nil,
		d.AppData == nil, d.Mutes == nil, d.Markers == nil, d.Filters == nil, d.Moderation == nil, d.Tags == nil,
		d.Media == nil, d.Push == nil, d.Scheduled == nil, d.Conversations == nil, d.Cursors == nil, d.Logger == nil, d.Jobs == nil}
	return slices.Contains(services, true) || slices.Contains(d.Faces, nil)
}

// New returns a Server; every dependency is required.
func New(d Deps) (*Server, error) {
	if d.missing() {
		return nil, errors.New("api.New: nil dependency")
	}
	s := &Server{accounts: d.Accounts, graph: d.Graph, groups: d.Groups, activities: d.Activities, rebuild: d.Rebuild,
		comments: d.Comments, likes: d.Likes, bookmarks: d.Bookmarks, oauth: d.OAuth, notifications: d.Notifications, lifecycle: d.Lifecycle, appData: d.AppData, mutes: d.Mutes, markers: d.Markers, filters: d.Filters, moderation: d.Moderation, tags: d.Tags, media: d.Media, push: d.Push, scheduled: d.Scheduled, conversations: d.Conversations, cursors: d.Cursors,
		doors: doors{guard: d.Guard, log: d.Logger}, faces: d.Faces, jobs: d.Jobs}
	s.rpc = s.rpcMethods()
	var err error
	if s.openapi, err = OpenAPI(); err != nil {
		return nil, err
	}
	return s, nil
}

// Routes builds the gin engine.
func (s *Server) Routes() *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.HandleMethodNotAllowed = true
	r.ContextWithFallback = true
	// The client address: on App Engine, what its front end says in
	// X-AppEngine-User-IP (which it sets on every request and strips from
	// the client's); elsewhere the connection's, never a header anyone
	// can send.
	r.ForwardedByClientIP = false
	if s.guard.OnAppEngine {
		r.TrustedPlatform = UserIPHeader
	}
	// The task guard runs on every request, not just matched routes, so an
	// unknown /_tasks path is a 403 too.
	r.Use(s.trace, s.begun, s.recover, s.hsts, s.tasksOnly, s.limitBody)
	r.NoRoute(func(c *gin.Context) { s.failAt(c, errNoRoute) })
	r.NoMethod(func(c *gin.Context) { s.failAt(c, errNoMethod) })

	page := gin.WrapH(web.Handler())
	for _, path := range []string{"/", "/static/*file"} {
		r.GET(path, page)
		r.HEAD(path, page)
	}
	r.GET("/healthz", func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"status": "ok"}) })
	// App Engine's warmup request (app.yaml's inbound_services) reaches an
	// instance before any traffic does. The start-up work (the cursor
	// key) ran before the instance listened, so it
	// is warm once it answers.
	r.GET("/_ah/warmup", func(c *gin.Context) { c.Status(http.StatusNoContent) })
	r.GET("/openapi.json", func(c *gin.Context) { c.Data(http.StatusOK, "application/json; charset=utf-8", s.openapi) })

	auth := r.Group("/auth")
	auth.POST("/register", s.meterAddress, s.register)
	auth.POST("/login", s.meterAddress, s.login)
	auth.POST("/logout", s.authn, s.meterAccount, s.logout)
	auth.DELETE("/account", s.authn, s.meterAccount, s.deleteAccount)
	auth.GET("/account/export", s.authn, s.meterAccount, s.export)

	social := r.Group("/social", s.authn, s.meterAccount)
	social.POST(strings.TrimPrefix(RPCPath, "/social"), s.serveRPC)

	people := social.Group("/rest/people")
	people.GET("/:userId/:selector", rest(s, http.StatusOK, s.peopleGet, peopleGetFromRequest))
	people.GET("/:userId/:selector/:target", rest(s, http.StatusOK, s.peopleGet, peopleGetFromRequest))
	people.POST("/:userId/:selector", rest(s, http.StatusCreated, s.follow, followFromRequest))
	people.PUT("/:userId/:selector", rest(s, http.StatusOK, s.peopleUpdate, personUpdateFromRequest))
	people.DELETE("/:userId/:selector/:target", rest(s, http.StatusNoContent, s.unfollow, unfollowFromRequest))

	ls := social.Group("/rest/lists")
	ls.GET("/:userId", rest(s, http.StatusOK, s.listsGet, listFromRequest))
	ls.POST("/:userId", rest(s, http.StatusCreated, s.listsCreate, listFromRequest))
	ls.GET("/:userId/:listId", rest(s, http.StatusOK, s.listsGet, listFromRequest))
	ls.PUT("/:userId/:listId", rest(s, http.StatusOK, s.listsUpdate, listFromRequest))
	ls.DELETE("/:userId/:listId", rest(s, http.StatusNoContent, s.listsDelete, listFromRequest))
	ls.GET("/:userId/:listId/members", rest(s, http.StatusOK, s.listMembersGet, listFromRequest))
	ls.POST("/:userId/:listId/members", rest(s, http.StatusNoContent, s.listMembersAdd, listFromRequest))
	ls.DELETE("/:userId/:listId/members/:memberId", rest(s, http.StatusNoContent, s.listMembersRemove, listFromRequest))

	grp := social.Group("/rest/groups")
	grp.GET("/:userId", rest(s, http.StatusOK, s.groupsGet, groupsOfUserFromRequest))
	grp.POST("/:userId", rest(s, http.StatusCreated, s.groupsCreate, groupCreateFromRequest))
	grp.GET("/@all/:groupId", rest(s, http.StatusOK, s.groupsGet, groupFromRequest))
	grp.POST("/@all/:groupId/members", rest(s, http.StatusCreated, s.join, joinFromRequest))
	grp.DELETE("/@all/:groupId/members/:userId", rest(s, http.StatusNoContent, s.leave, leaveFromRequest))

	act := social.Group("/rest/activities")
	act.GET("/@search", rest(s, http.StatusOK, s.activitiesSearch, searchFromRequest))
	act.GET("/:userId/:selector", rest(s, http.StatusOK, s.activitiesGet, activitiesGetFromRequest))
	act.GET("/:userId/:selector/:appId", rest(s, http.StatusOK, s.activitiesGet, activitiesGetFromRequest))
	act.GET("/:userId/:selector/:appId/:ids", rest(s, http.StatusOK, s.activitiesGet, activitiesGetFromRequest))
	act.POST("/:userId/:selector", rest(s, http.StatusCreated, s.activitiesCreate, activitiesCreateFromRequest))
	act.POST("/:userId/:selector/:appId", rest(s, http.StatusCreated, s.activitiesCreate, activitiesCreateFromRequest))
	act.PUT("/:userId/:selector/:appId/:ids", rest(s, http.StatusOK, s.activitiesUpdate, activitiesUpdateFromRequest))
	act.GET("/:userId/:selector/:appId/:ids/history", rest(s, http.StatusOK, s.activitiesHistory, activitiesDeleteFromRequest))
	act.GET("/:userId/:selector/:appId/:ids/context", rest(s, http.StatusOK, s.activitiesContext, activitiesDeleteFromRequest))
	act.DELETE("/:userId/:selector/:appId/:ids", rest(s, http.StatusNoContent, s.activitiesDelete, activitiesDeleteFromRequest))

	com := social.Group("/rest/comments")
	com.GET("/:activityId", rest(s, http.StatusOK, s.commentsGet, commentsFromRequest))
	com.POST("/:activityId", rest(s, http.StatusCreated, s.commentsCreate, commentsFromRequest))
	com.DELETE("/:activityId/:commentId", rest(s, http.StatusNoContent, s.commentsDelete, commentsFromRequest))

	lk := social.Group("/rest/likes")
	lk.GET("", rest(s, http.StatusOK, s.likesMine, likesFromRequest))
	lk.GET("/:activityId", rest(s, http.StatusOK, s.likesGet, likesFromRequest))
	lk.POST("/:activityId", rest(s, http.StatusOK, s.likesCreate, likesFromRequest))
	lk.DELETE("/:activityId", rest(s, http.StatusOK, s.likesDelete, likesFromRequest))

	social.POST("/rest/polls/:activityId/votes", rest(s, http.StatusOK, s.pollsVote, voteFromRequest))

	conv := social.Group("/rest/conversations")
	conv.GET("/:userId", rest(s, http.StatusOK, s.conversationsGet, conversationsFromRequest))
	conv.POST("/:userId/:id/read", rest(s, http.StatusOK, s.conversationsRead, conversationsFromRequest))
	conv.DELETE("/:userId/:id", rest(s, http.StatusNoContent, s.conversationsDelete, conversationsFromRequest))
	social.GET("/rest/trends/:kind", rest(s, http.StatusOK, s.trendsGet, trendsFromRequest))
	feat := social.Group("/rest/featuredTags")
	feat.GET("/:userId", rest(s, http.StatusOK, s.featuredGet, featuredFromRequest))
	feat.POST("/:userId", rest(s, http.StatusOK, s.featuredCreate, featuredFromRequest))
	feat.DELETE("/:userId/:name", rest(s, http.StatusNoContent, s.featuredDelete, featuredFromRequest))
	sch := social.Group("/rest/scheduled")
	sch.GET("/:userId", rest(s, http.StatusOK, s.scheduledGet, scheduledFromRequest))
	sch.GET("/:userId/:id", rest(s, http.StatusOK, s.scheduledGet, scheduledFromRequest))
	sch.PUT("/:userId/:id", rest(s, http.StatusOK, s.scheduledUpdate, scheduledFromRequest))
	sch.DELETE("/:userId/:id", rest(s, http.StatusNoContent, s.scheduledDelete, scheduledFromRequest))

	nt := social.Group("/rest/notifications")
	nt.GET("/:userId", rest(s, http.StatusOK, s.notificationsGet, notificationsFromRequest))
	nt.GET("/:userId/unread", rest(s, http.StatusOK, s.notificationsUnread, notificationsFromRequest))
	nt.POST("/:userId/read", rest(s, http.StatusNoContent, s.notificationsRead, notificationsFromRequest))
	nt.GET("/:userId/:id", rest(s, http.StatusOK, s.notificationsOne, notificationsFromRequest))
	nt.DELETE("/:userId", rest(s, http.StatusNoContent, s.notificationsDismiss, notificationsFromRequest))
	nt.DELETE("/:userId/:id", rest(s, http.StatusNoContent, s.notificationsDismiss, notificationsFromRequest))

	mk := social.Group("/rest/markers")
	mk.GET("/:userId", rest(s, http.StatusOK, s.markersGet, markersFromRequest))
	mk.POST("/:userId", rest(s, http.StatusOK, s.markersMove, markersFromRequest))

	rp := social.Group("/rest/reposts")
	rp.GET("/:activityId", rest(s, http.StatusOK, s.repostsGet, likesFromRequest))
	rp.POST("/:activityId", rest(s, http.StatusCreated, s.repostsCreate, likesFromRequest))
	rp.DELETE("/:activityId", rest(s, http.StatusOK, s.repostsDelete, likesFromRequest))

	bm := social.Group("/rest/bookmarks")
	bm.GET("", rest(s, http.StatusOK, s.bookmarksGet, likesFromRequest))
	bm.POST("/:activityId", rest(s, http.StatusOK, s.bookmarksCreate, likesFromRequest))
	bm.DELETE("/:activityId", rest(s, http.StatusOK, s.bookmarksDelete, likesFromRequest))

	pin := social.Group("/rest/pins")
	pin.POST("/:activityId", rest(s, http.StatusOK, s.pinsCreate, likesFromRequest))
	pin.DELETE("/:activityId", rest(s, http.StatusOK, s.pinsDelete, likesFromRequest))

	fl := social.Group("/rest/filters")
	fl.GET("/:userId", rest(s, http.StatusOK, s.filtersGet, filtersFromRequest))
	fl.GET("/:userId/:filterId", rest(s, http.StatusOK, s.filtersGet, filtersFromRequest))
	fl.POST("/:userId", rest(s, http.StatusCreated, s.filtersCreate, filtersFromRequest))
	fl.PUT("/:userId/:filterId", rest(s, http.StatusOK, s.filtersUpdate, filtersFromRequest))
	fl.DELETE("/:userId/:filterId", rest(s, http.StatusNoContent, s.filtersDelete, filtersFromRequest))

	rep := social.Group("/rest/reports")
	rep.GET("/:userId", rest(s, http.StatusOK, s.reportsGet, reportsFromRequest))
	rep.GET("/:userId/:reportId", rest(s, http.StatusOK, s.reportsGet, reportsFromRequest))
	rep.POST("/:userId", rest(s, http.StatusCreated, s.reportsCreate, reportsFromRequest))

	mod := social.Group("/rest/moderation")
	mod.GET("/reports", rest(s, http.StatusOK, s.moderationReports, moderationFromRequest))
	mod.GET("/reports/:reportId", rest(s, http.StatusOK, s.moderationReports, moderationFromRequest))
	mod.POST("/actions", rest(s, http.StatusCreated, s.moderationAct, moderationFromRequest))
	mod.GET("/actions", rest(s, http.StatusOK, s.moderationLog, moderationFromRequest))
	mod.PUT("/roles/:userId", rest(s, http.StatusOK, s.moderationGrant, moderationFromRequest))
	mod.GET("/notices/:userId", rest(s, http.StatusOK, s.moderationNotices, moderationFromRequest))

	tg := social.Group("/rest/tags")
	tg.GET("/:userId", rest(s, http.StatusOK, s.tagsGet, tagsFromRequest))
	tg.GET("/:userId/:tag", rest(s, http.StatusOK, s.tagsGet, tagsFromRequest))
	tg.POST("/:userId", rest(s, http.StatusCreated, s.tagsFollow, tagsFromRequest))
	tg.DELETE("/:userId/:tag", rest(s, http.StatusNoContent, s.tagsUnfollow, tagsFromRequest))

	ad := social.Group("/rest/appdata")
	ad.GET("/:userId/:selector/:appId", rest(s, http.StatusOK, s.appDataGet, appDataFromRequest))
	ad.PUT("/:userId/:selector/:appId", rest(s, http.StatusNoContent, s.appDataUpdate, appDataFromRequest))
	ad.POST("/:userId/:selector/:appId", rest(s, http.StatusNoContent, s.appDataUpdate, appDataFromRequest))
	ad.DELETE("/:userId/:selector/:appId", rest(s, http.StatusNoContent, s.appDataDelete, appDataFromRequest))

	al := social.Group("/rest/albums")
	al.GET("/@supportedFields", rest(s, http.StatusOK, supportedFields(albumFields), noParams))
	al.GET("/:userId/:groupId", rest(s, http.StatusOK, s.albumsGet, albumsFromRequest))
	al.GET("/:userId/:groupId/:albumId", rest(s, http.StatusOK, s.albumsGet, albumsFromRequest))
	al.POST("/:userId/:groupId", rest(s, http.StatusCreated, s.albumsCreate, albumsFromRequest))
	al.PUT("/:userId/:groupId/:albumId", rest(s, http.StatusOK, s.albumsUpdate, albumsFromRequest))
	al.DELETE("/:userId/:groupId/:albumId", rest(s, http.StatusNoContent, s.albumsDelete, albumsFromRequest))

	mi := social.Group("/rest/mediaItems")
	mi.GET("/@supportedFields", rest(s, http.StatusOK, supportedFields(mediaItemFields), noParams))
	mi.GET("/:userId/:groupId", rest(s, http.StatusOK, s.mediaItemsGet, mediaFromRequest))
	mi.GET("/:userId/:groupId/:albumId", rest(s, http.StatusOK, s.mediaItemsGet, mediaFromRequest))
	mi.GET("/:userId/:groupId/:albumId/:mediaItemId", rest(s, http.StatusOK, s.mediaItemsGet, mediaFromRequest))
	mi.POST("/:userId/:groupId", rest(s, http.StatusCreated, s.mediaItemsCreate, mediaFromRequest))
	mi.POST("/:userId/:groupId/:albumId", rest(s, http.StatusCreated, s.mediaItemsCreate, mediaFromRequest))
	mi.PUT("/:userId/:groupId/:albumId/:mediaItemId", rest(s, http.StatusOK, s.mediaItemsUpdate, mediaFromRequest))
	mi.DELETE("/:userId/:groupId/:albumId/:mediaItemId", rest(s, http.StatusNoContent, s.mediaItemsDelete, mediaFromRequest))

	r.GET("/media/:id/:variant", s.servePicture)
	r.HEAD("/media/:id/:variant", s.servePicture)
	r.GET("/media/people/:userId/:which/:variant", s.serveProfilePicture)
	r.HEAD("/media/people/:userId/:which/:variant", s.serveProfilePicture)

	for _, f := range s.faces {
		f.Routes(r)
	}

	// Each job's handler, at the path its definition names.
	for _, rt := range s.jobs.Routes() {
		r.POST(rt.Path, rt.Handler)
	}
	// The scheduled work of cron.yaml, guarded by tasksOnly too.
	r.GET(CronTrimPath, s.cronTrim)
	r.GET(CronCollectPath, s.cronCollect)
	r.GET(CronTrendsPath, s.cronTrends)

	return r
}

// failAt is fail in the shape of the face the path belongs to.
func (s *Server) failAt(c *gin.Context, err error) {
	for _, f := range s.faces {
		if f.Owns(c.Request.URL.Path) {
			f.Fail(c, err)
			return
		}
	}
	s.fail(c, err)
}

// begun puts the request's start into its context: the pages it reads
// through the instance's cache show what changed before it
// (paging.WithBegun), however many lookups they make.
func (s *Server) begun(c *gin.Context) {
	c.Request = c.Request.WithContext(paging.WithBegun(c.Request.Context(), time.Now()))
}

// trace names the request's span (package tracing) by its route, and
// puts the Cloud Trace id of its X-Cloud-Trace-Context into its context
// for logs, should it have no span.
func (s *Server) trace(c *gin.Context) {
	tracing.Route(c.Request.Context(), c.Request.Method, c.FullPath())
	if h := c.GetHeader("X-Cloud-Trace-Context"); h != "" {
		c.Request = c.Request.WithContext(logging.WithTrace(c.Request.Context(), h))
	}
	start := time.Now()
	c.Next()
	s.log.DebugContext(c.Request.Context(), "request",
		"method", c.Request.Method, "path", c.FullPath(), "status", c.Writer.Status(), "elapsed", time.Since(start))
}

// UserIPHeader is where App Engine's front end gives the client's
// address.
const UserIPHeader = "X-AppEngine-User-IP"

// reportedErrorEvent is the @type of a log entry that Error Reporting
// takes for an error, stack or not.
const reportedErrorEvent = "type.googleapis.com/google.devtools.clouderrorreporting.v1beta1.ReportedErrorEvent"

func (s *Server) recover(c *gin.Context) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			// The message is a Go panic's own text with its stack, which
			// Error Reporting recognises and groups by where it happened;
			// the @type makes it an error report whatever the text.
			s.log.ErrorContext(c.Request.Context(), fmt.Sprintf("panic: %v\n\n%s", v, debug.Stack()),
				"@type", reportedErrorEvent, "path", c.Request.URL.Path)
			s.fail(c, errors.New("panic"))
		}
	}()
	c.Next()
}

// drainMax is the most of a refused body read to its end before the
// answer, App Engine's own limit on a request: the client, still sending,
// would otherwise find the connection reset and never read the 413.
const drainMax = 32 << 20

// limitBody refuses bodies over MaxBody (413), and malformed query
// strings, whose parameters would otherwise be silently dropped. The rest
// of a body refused as too large, up to drainMax, is read and dropped
// before the answer goes, and the connection then closes.
func (s *Server) limitBody(c *gin.Context) {
	body := c.Request.Body
	limit, tooLarge := int64(MaxBody), errTooLarge
	if (c.Request.Method == http.MethodPost && strings.HasPrefix(c.Request.URL.Path, uploadPath) || mastodon.CarriesPicture(c)) && isUpload(c.GetHeader("Content-Type")) {
		limit, tooLarge = MaxUpload, errTooLargeUpload
	}
	if c.Request.ContentLength > limit {
		drain(c, body)
		s.fail(c, tooLarge)
		return
	}
	if _, err := url.ParseQuery(c.Request.URL.RawQuery); err != nil {
		s.fail(c, errBadQuery)
		return
	}
	c.Request.Body = http.MaxBytesReader(c.Writer, body, limit)
	c.Next()
	if c.Writer.Status() == http.StatusRequestEntityTooLarge {
		drain(c, body) // the answer is not sent until the handler returns
	}
}

func drain(c *gin.Context, body io.Reader) {
	c.Header("Connection", "close")
	_, _ = io.CopyN(io.Discard, body, drainMax)
}

const callerKey = "caller"

// authn requires a valid token and records the caller's id. A request
// without a valid token is unauthenticated: it spends a unit of its
// address's quota, and once that is spent it is a 429.
func (s *Server) authn(c *gin.Context) {
	token, ok := tokenOf(c)
	var g accounts.Grant
	err := accounts.ErrBadToken
	if ok {
		g, err = s.accounts.Grant(c.Request.Context(), token)
	}
	if err == nil && g.User == "" {
		err = accounts.ErrBadToken // an app's token of its own speaks for no one
	}
	if errors.Is(err, accounts.ErrBadToken) {
		err = s.refuseToken(c, err)
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	writes := c.Request.Method != http.MethodGet && c.Request.Method != http.MethodHead
	rpc := c.Request.URL.Path == RPCPath
	if err := permits(g, writes && !rpc); err != nil {
		s.fail(c, err)
		return
	}
	c.Set(callerKey, g.User)
	// Every transaction the request runs reads the caller's account and
	// refuses a suspended or deleted one, whatever the token cache says.
	ctx := s.accounts.Guarded(c.Request.Context(), g.User, token)
	ctx = context.WithValue(ctx, grantKey{}, g)
	if writes && !rpc {
		ctx = accounts.Writing(ctx) // JSON-RPC decides call by call
	}
	c.Request = c.Request.WithContext(ctx)
	c.Next()
}

// refuseToken is the error of a request with no good token, err: it
// spends a unit of its address's quota, and once that is spent it is a
// 429.
func (s doors) refuseToken(c *gin.Context, err error) error {
	if s.guard.Limits != nil {
		d := s.guard.Limits.Address.Take(c.ClientIP(), costCall)
		d.SetHeaders(c.Writer.Header())
		if !d.Allowed {
			return d.Err()
		}
	}
	return err
}

// grantKey keys the caller's grant in a request's context.
type grantKey struct{}

// errScope is a token's asking for what its app was not granted.
var errScope = derrors.New(derrors.PermissionDenied, "This action is outside the authorized scopes")

// permits checks that a grant allows a read, or a write, of the
// service's own API: OAuth's coarse scopes read and write (the granular
// ones are the Mastodon face's), by the policy.
func permits(g accounts.Grant, write bool) error {
	need := oauth.Read
	if write {
		need = oauth.Write
	}
	if !g.Allows(need) {
		return errScope
	}
	return nil
}

// permitsCall is permits for one JSON-RPC call, in the context authn
// made.
func permitsCall(ctx context.Context, write bool) error {
	g, _ := ctx.Value(grantKey{}).(accounts.Grant)
	return permits(g, write)
}

// RPCPath is the JSON-RPC endpoint.
const RPCPath = "/social/rpc"

// tokenOf finds a request's token: in its Authorization header, as
// "Bearer <token>" or as osapi's "OAuth2 <token>"; and on the JSON-RPC
// URL only, where osapi puts it by itself, as st= or oauth_token= (no
// log line carries a query string).
func tokenOf(c *gin.Context) (string, bool) {
	if h := c.GetHeader("Authorization"); h != "" {
		scheme, token, ok := strings.Cut(h, " ")
		token = strings.TrimSpace(token)
		if !ok || token == "" || !strings.EqualFold(scheme, "Bearer") && !strings.EqualFold(scheme, "OAuth2") {
			return "", false
		}
		return token, true
	}
	if c.Request.URL.Path != RPCPath {
		return "", false
	}
	for _, name := range []string{"st", "oauth_token"} {
		if token := strings.TrimSpace(c.Query(name)); token != "" {
			return token, true
		}
	}
	return "", false
}

func caller(c *gin.Context) string { return c.GetString(callerKey) }
