// Package activitypub is the ActivityPub face (docs/federation.md): what
// other servers of the fediverse read of the deployment's people and
// posts, in ActivityStreams 2.0 as Mastodon and GoToSocial read it.
// WebFinger and host-meta find a person by name@domain; their actor (a
// Person, with their public key) and its collections, and each public
// post's Note, are served at their addresses to whoever asks for
// ActivityPub's JSON, while a browser is sent to the page. It reads
// through the same operations and policy as the other faces, as someone
// signed in to nothing: what an anonymous reader may not see is not
// there. It serves nothing unless federation is on (package federation).
// It owns no entity.
package activitypub

import (
	"encoding/json"
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"socialstream/internal/accounts"
	"socialstream/internal/activities"
	"socialstream/internal/derrors"
	"socialstream/internal/federation"
)

// Host is what the REST face lends this one (package api's Host).
type Host interface {
	// MeterAddress meters a request by its address (a gin handler).
	MeterAddress(c *gin.Context)
	// LogFailure logs a failed request, and returns the status to answer.
	LogFailure(c *gin.Context, status int, err error) int
}

// Deps are what the face calls.
type Deps struct {
	Federation *federation.Service // nil: off
	Accounts   *accounts.Service
	Activities *activities.Service
	Logger     *slog.Logger
	Host       Host
}

// Server is the face.
type Server struct {
	renderer
	federation *federation.Service
	keys       *federation.Keys
	accounts   *accounts.Service
	activities *activities.Service
	log        *slog.Logger
	host       Host
}

// New returns the face, or nil when federation is off.
func New(d Deps) (*Server, error) {
	if d.Federation == nil || !d.Federation.Config().On() {
		return nil, nil
	}
	if d.Accounts == nil || d.Activities == nil || d.Logger == nil || d.Host == nil {
		return nil, errors.New("activitypub.New: nil dependency")
	}
	return &Server{renderer: renderer{fed: d.Federation.Config()}, federation: d.Federation, keys: d.Federation.Keys(), accounts: d.Accounts,
		activities: d.Activities, log: d.Logger, host: d.Host}, nil
}

// Routes adds the face's routes to r.
func (s *Server) Routes(r *gin.Engine) {
	m := s.host.MeterAddress
	r.GET("/.well-known/webfinger", m, s.webfinger)
	r.GET("/.well-known/host-meta", m, s.hostMeta)
	u := r.Group(strings.TrimSuffix(federation.PeoplePath, "/"), m)
	u.GET("/:id", s.actor)
	u.GET("/:id/outbox", s.outbox)
	u.GET("/:id/followers", s.relations(followers))
	u.GET("/:id/following", s.relations(following))
	u.GET("/:id/featured", s.featured)
	u.POST("/:id/inbox", s.inbox)
	r.POST(federation.SharedInboxPath, m, s.inbox)
	r.GET(federation.InstancePath, m, s.instanceActor)
	r.GET(federation.NotesPath+":id", m, s.note)
}

// Path reports whether a request's path is the face's, whose errors are
// its shape.
func Path(path string) bool {
	return strings.HasPrefix(path, federation.PeoplePath) || strings.HasPrefix(path, federation.NotesPath) ||
		path == federation.SharedInboxPath || path == federation.InstancePath ||
		path == "/.well-known/webfinger" || path == "/.well-known/host-meta"
}

// Owns reports whether a request's path is the face's (Path).
func (s *Server) Owns(path string) bool { return Path(path) }

// Media types.
const (
	// ActivityJSON is ActivityPub's media type, which the face answers
	// with; a request for it or for LDJSON gets JSON.
	ActivityJSON = "application/activity+json"
	LDJSON       = "application/ld+json"
	jrdJSON      = "application/jrd+json"
	xrdXML       = "application/xrd+xml"
)

// wantsActivity reports whether a request asks for ActivityPub's JSON
// rather than a page: its Accept names application/activity+json or
// application/ld+json (with any profile) at a weight above zero.
func wantsActivity(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		kind, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil || kind != ActivityJSON && kind != LDJSON {
			continue
		}
		if q, ok := params["q"]; ok && strings.Trim(q, "0.") == "" {
			continue // q=0: not acceptable
		}
		return true
	}
	return false
}

// answer writes v as ActivityPub's JSON, or, for a browser, sends it to
// page.
func (s *Server) answer(c *gin.Context, v any, page string) {
	c.Header("Vary", "Accept")
	if !wantsActivity(c.Request) {
		c.Redirect(http.StatusSeeOther, page)
		return
	}
	s.writeJSON(c, ActivityJSON+"; charset=utf-8", v)
}

// writeJSON writes v, with its HTML left as it is (no \u003c). No
// Cache-Control lets a shared cache keep it: a post hidden or removed
// is gone from the next answer.
func (s *Server) writeJSON(c *gin.Context, contentType string, v any) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		s.fail(c, err)
		return
	}
	c.Data(http.StatusOK, contentType, []byte(b.String()))
}

// Errors.
var (
	errGone = derrors.New(derrors.NotFound, "Record not found")
)

// fail writes err as {"error": "..."}; what is not there, or hidden, is
// one 404, worded alike.
func (s *Server) fail(c *gin.Context, err error) {
	status, msg := derrors.Status(err)
	if status == http.StatusNotFound {
		msg = errGone.(*derrors.Error).Message
	}
	status = s.host.LogFailure(c, status, err)
	c.AbortWithStatusJSON(status, gin.H{"error": msg})
}

// Fail answers err in the face's shape.
func (s *Server) Fail(c *gin.Context, err error) { s.fail(c, err) }
