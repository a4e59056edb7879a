package api

import (
	"context"
	"io"
	"log/slog"
	"mime/multipart"

	"github.com/gin-gonic/gin"

	"socialstream/internal/activitypub"
	"socialstream/internal/mastodon"
	"socialstream/internal/media"
)

// Host is what the faces built beside the REST face borrow of it
// (mastodon.Host, activitypub.Host): its doors (the guard's checks, the
// reading of uploads) and its logging of failures.
type Host struct{ d doors }

var (
	_ mastodon.Host    = Host{}
	_ activitypub.Host = Host{}
)

// NewHost returns the Host of the server that guard keeps and log logs
// for: package app builds the faces beside the REST face with it.
func NewHost(guard Guard, log *slog.Logger) Host { return Host{doors{guard: guard, log: log}} }

// ErrNoRoute and ErrNoMethod are what the server answers for a path no
// route has, and a method a path does not take, in the shape of the face
// whose path it is.
var (
	ErrNoRoute  = errNoRoute
	ErrNoMethod = errNoMethod
)

func (h Host) Token(c *gin.Context) (string, bool)         { return tokenOf(c) }
func (h Host) RefuseToken(c *gin.Context, err error) error { return h.d.refuseToken(c, err) }
func (h Host) MeterAddress(c *gin.Context)                 { h.d.meterAddress(c) }
func (h Host) LoginAllowed(c *gin.Context, username string) error {
	return h.d.loginAllowed(c, username)
}
func (h Host) LoginSucceeded(ctx context.Context, username string) {
	h.d.loginSucceeded(ctx, username)
}
func (h Host) RegisterAllowed(c *gin.Context) error { return h.d.registerAllowed(c) }
func (h Host) UploadAllowed(ctx context.Context, caller string) error {
	return h.d.uploadAllowed(ctx, caller)
}
func (h Host) ReadUpload(r io.Reader) ([]byte, error)                   { return readUpload(r) }
func (h Host) ReadForm(r *multipart.Reader) (*media.UploadInput, error) { return readForm(r) }
func (h Host) CheckText(data []byte) error                              { return checkText(data) }
func (h Host) Fail(c *gin.Context, err error)                           { h.d.fail(c, err) }
func (h Host) LogFailure(c *gin.Context, status int, err error) int {
	return h.d.logFailure(c, status, err)
}

// Meter spends a unit of the caller's quota: their account's, or, for no
// one, their address's; the headers say what is left.
func (h Host) Meter(c *gin.Context, caller string) error {
	if h.d.guard.Limits == nil {
		return nil
	}
	if caller != "" {
		h.d.meterWith(c, h.d.guard.Limits.Account, caller)
	} else {
		h.d.meterWith(c, h.d.guard.Limits.Address, c.ClientIP())
	}
	return charge(c.Request.Context(), costCall)
}

// Charge spends cost of the request's quota.
func (h Host) Charge(ctx context.Context, cost mastodon.Cost) error {
	switch cost {
	case mastodon.CostInvite:
		return charge(ctx, costInvite)
	case mastodon.CostPassword:
		return charge(ctx, costPassword)
	}
	return charge(ctx, costCall)
}
