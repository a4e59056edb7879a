package api

import (
	"context"
	"io"
	"mime/multipart"

	"github.com/gin-gonic/gin"

	"socialstream/internal/federation"
	"socialstream/internal/mastodon"
	"socialstream/internal/media"
)

// mastoHost is what the server lends the Mastodon face (mastodon.Host):
// its guard, uploads, errors and logs.
type mastoHost struct{ s *Server }

var _ mastodon.Host = mastoHost{}

// mastoFace makes the Mastodon face of s.
func (s *Server) mastoFace() *mastodon.Server {
	return mastodon.New(mastodon.Deps{Accounts: s.accounts, Graph: s.graph, Activities: s.activities, Likes: s.likes,
		Bookmarks: s.bookmarks, OAuth: s.oauth, Notifications: s.notifications, Mutes: s.mutes, Markers: s.markers,
		Filters: s.filters, Moderation: s.moderation, Tags: s.tags, Media: s.media, Push: s.push, Cursors: s.cursors, Logger: s.log,
		Host: mastoHost{s}, Forwarded: s.guard.Forwarded, NoRoute: errNoRoute, NoMethod: errNoMethod, MaxBody: MaxBody, Federation: s.fedConfig(), Remote: s.remoteFinder()})
}

// fedConfig is where the deployment federates (the zero Config: off).
func (s *Server) fedConfig() federation.Config {
	if s.federation == nil {
		return federation.Config{}
	}
	return s.federation.Config()
}

// remoteFinder is what finds people of other servers, when federation
// is on.
func (s *Server) remoteFinder() mastodon.Remote {
	if s.federation == nil || !s.federation.Config().On() {
		return nil
	}
	return s.federation
}

func (h mastoHost) Token(c *gin.Context) (string, bool)         { return tokenOf(c) }
func (h mastoHost) RefuseToken(c *gin.Context, err error) error { return h.s.refuseToken(c, err) }
func (h mastoHost) MeterAddress(c *gin.Context)                 { h.s.meterAddress(c) }
func (h mastoHost) LoginAllowed(c *gin.Context, username string) error {
	return h.s.loginAllowed(c, username)
}
func (h mastoHost) LoginSucceeded(ctx context.Context, username string) {
	h.s.loginSucceeded(ctx, username)
}
func (h mastoHost) RegisterAllowed(c *gin.Context) error { return h.s.registerAllowed(c) }
func (h mastoHost) UploadAllowed(ctx context.Context, caller string) error {
	return h.s.uploadAllowed(ctx, caller)
}
func (h mastoHost) ReadUpload(r io.Reader) ([]byte, error)                   { return readUpload(r) }
func (h mastoHost) ReadForm(r *multipart.Reader) (*media.UploadInput, error) { return readForm(r) }
func (h mastoHost) CheckText(data []byte) error                              { return checkText(data) }
func (h mastoHost) Fail(c *gin.Context, err error)                           { h.s.fail(c, err) }
func (h mastoHost) LogFailure(c *gin.Context, status int, err error) int {
	return h.s.logFailure(c, status, err)
}

// Meter spends a unit of the caller's quota: their account's, or, for no
// one, their address's; the headers say what is left.
func (h mastoHost) Meter(c *gin.Context, caller string) error {
	if h.s.guard.Limits == nil {
		return nil
	}
	if caller != "" {
		h.s.meterWith(c, h.s.guard.Limits.Account, caller)
	} else {
		h.s.meterWith(c, h.s.guard.Limits.Address, c.ClientIP())
	}
	return charge(c.Request.Context(), costCall)
}

// Charge spends cost of the request's quota.
func (h mastoHost) Charge(ctx context.Context, cost mastodon.Cost) error {
	switch cost {
	case mastodon.CostInvite:
		return charge(ctx, costInvite)
	case mastodon.CostPassword:
		return charge(ctx, costPassword)
	}
	return charge(ctx, costCall)
}
