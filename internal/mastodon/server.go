// Package mastodon is the Mastodon face: the Mastodon 4.x client API
// (docs/mastodon.md) over the operations and the policy the REST and
// JSON-RPC faces use. Each method reads its parameters as Mastodon's
// clients send them, calls the domain, and renders Mastodon's entities
// (entities.go, which reads nothing). What it shares with the API's own
// server (its guard: metering and rate limits, sign-in's refusals,
// uploads, errors and logs) it is lent by that server (Host).
package mastodon

import (
	"context"
	"io"
	"log/slog"
	"mime/multipart"

	"github.com/gin-gonic/gin"

	"socialstream/internal/accounts"
	"socialstream/internal/activities"
	"socialstream/internal/bookmarks"
	"socialstream/internal/conversations"
	"socialstream/internal/cursor"
	"socialstream/internal/federation"
	"socialstream/internal/filters"
	"socialstream/internal/forwarded"
	"socialstream/internal/graph"
	"socialstream/internal/likes"
	"socialstream/internal/markers"
	"socialstream/internal/media"
	"socialstream/internal/moderation"
	"socialstream/internal/mutes"
	"socialstream/internal/notifications"
	"socialstream/internal/oauth"
	"socialstream/internal/push"
	"socialstream/internal/scheduled"
	"socialstream/internal/tags"
)

// Cost is what a method spends of its caller's quota beyond a call.
type Cost int

// Costs a method charges (Host.Charge).
const (
	CostCall     Cost = iota // a call
	CostInvite               // a list's add: a copying job
	CostPassword             // a sign-in or sign-up: a bcrypt hash
)

// Host is what the REST face lends this one (package api's Host).
type Host interface {
	// Token returns the request's bearer token, if it has one.
	Token(c *gin.Context) (string, bool)
	// RefuseToken answers a token that is no one's (and meters it).
	RefuseToken(c *gin.Context, err error) error
	// Meter spends a unit of the caller's quota (their account's, or
	// for no one, their address's), and sets the quota's headers.
	Meter(c *gin.Context, caller string) error
	// MeterAddress meters a request by its address (a gin handler).
	MeterAddress(c *gin.Context)
	// Charge spends what cost is of the request's quota.
	Charge(ctx context.Context, cost Cost) error
	// LoginAllowed, LoginSucceeded, RegisterAllowed and UploadAllowed are
	// the guard's checks of sign-ins, sign-ups and uploads.
	LoginAllowed(c *gin.Context, username string) error
	LoginSucceeded(ctx context.Context, username string)
	RegisterAllowed(c *gin.Context) error
	UploadAllowed(ctx context.Context, caller string) error
	// ReadUpload and ReadForm read a picture's upload, capped.
	ReadUpload(r io.Reader) ([]byte, error)
	ReadForm(r *multipart.Reader) (*media.UploadInput, error)
	// CheckText refuses a JSON body of text no JSON holds.
	CheckText(data []byte) error
	// Fail answers an error as the API's own faces do (the consent
	// page's form); LogFailure logs one, and returns the status to answer.
	Fail(c *gin.Context, err error)
	LogFailure(c *gin.Context, status int, err error) int
}

// Deps are what the face calls.
type Deps struct {
	Accounts      *accounts.Service
	Graph         *graph.Service
	Activities    *activities.Service
	Likes         *likes.Service
	Bookmarks     *bookmarks.Service
	OAuth         *oauth.Service
	Notifications *notifications.Service
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
	Host          Host
	// Forwarded are the headers of the proxy in front of the service that
	// say where a client reached it, for links (with federation off).
	Forwarded forwarded.Trust
	// NoRoute and NoMethod are the errors the API's server answers for a
	// path it serves nothing at and a method it does not serve there.
	NoRoute, NoMethod error
	// MaxBody is the largest body of a request but an upload's.
	MaxBody int64
	// Federation, when on, gives people and posts their addresses in the
	// fediverse (an account's and a status's uri), and the domain the
	// instance answers as.
	Federation federation.Config
	// Remote finds people of other servers (nil: federation is off).
	Remote Remote
}

// Remote finds a person of another server by name@domain (package
// federation's Service).
type Remote interface {
	Find(ctx context.Context, acct string) (federation.Actor, error)
}

// Server is the face.
type Server struct {
	accounts      *accounts.Service
	graph         *graph.Service
	activities    *activities.Service
	likes         *likes.Service
	bookmarks     *bookmarks.Service
	oauth         *oauth.Service
	notifications *notifications.Service
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
	log           *slog.Logger
	host          Host
	d             Deps
}

// New returns the face.
func New(d Deps) *Server {
	return &Server{accounts: d.Accounts, graph: d.Graph, activities: d.Activities, likes: d.Likes, bookmarks: d.Bookmarks,
		oauth: d.OAuth, notifications: d.Notifications, mutes: d.Mutes, markers: d.Markers, filters: d.Filters,
		moderation: d.Moderation, tags: d.Tags, media: d.Media, push: d.Push, scheduled: d.Scheduled, conversations: d.Conversations, cursors: d.Cursors, log: d.Logger, host: d.Host, d: d}
}

// Path reports whether a request's path is the face's.
func Path(path string) bool { return mastoPath(path) }

// Owns reports whether a request's path is the face's (Path).
func (s *Server) Owns(path string) bool { return Path(path) }

// CarriesPicture reports whether a request's body may be as large as an
// upload's.
func CarriesPicture(c *gin.Context) bool { return mastoCarriesPicture(c.Request) }

// Fail answers err as Mastodon does.
func (s *Server) Fail(c *gin.Context, err error) { s.mfail(c, err) }

// Routes adds the face's routes to r.
func (s *Server) Routes(r *gin.Engine) { s.mastoRoutes(r) }
