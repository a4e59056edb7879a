package api

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"socialstream/internal/accounts"
	"socialstream/internal/derrors"
)

type credentials struct {
	Username    string `json:"username"`
	Password    string `json:"password"`
	DisplayName string `json:"displayName"`
}

type session struct {
	Token string          `json:"token"`
	Entry accounts.Person `json:"entry"`
}

func (s *Server) register(c *gin.Context) {
	var in credentials
	if err := decodeJSON(c.Request.Body, &in); err != nil {
		s.fail(c, err)
		return
	}
	if err := charge(c.Request.Context(), costPassword); err != nil {
		s.fail(c, err)
		return
	}
	if err := s.accounts.CheckRegistration(c.Request.Context(), in.Username, in.Password, in.DisplayName); err != nil {
		s.fail(c, err)
		return
	}
	if err := s.registerAllowed(c); err != nil {
		s.fail(c, err)
		return
	}
	p, token, err := s.accounts.Register(c.Request.Context(), in.Username, in.Password, in.DisplayName)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, session{Token: token, Entry: p})
}

func (s *Server) login(c *gin.Context) {
	var in credentials
	if err := decodeJSON(c.Request.Body, &in); err != nil {
		s.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	if err := s.loginAllowed(c, in.Username); err != nil {
		s.fail(c, err)
		return
	}
	p, token, err := s.accounts.Login(ctx, in.Username, in.Password)
	if err == nil || errors.Is(err, accounts.ErrSuspended) {
		s.loginSucceeded(ctx, in.Username) // the password was right
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, session{Token: token, Entry: p})
}

// logout ends the caller's session, or with all=true every one of their
// sessions.
func (s *Server) logout(c *gin.Context) {
	all := false
	if v, ok := c.GetQuery("all"); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			s.fail(c, derrors.New(derrors.InvalidArgument, "all must be true or false"))
			return
		}
		all = b
	}
	if err := charge(c.Request.Context(), costCall); err != nil {
		s.fail(c, err)
		return
	}
	var err error
	if all {
		_, err = s.accounts.LogoutAll(c.Request.Context(), caller(c))
	} else {
		token, _ := tokenOf(c)
		err = s.accounts.Logout(c.Request.Context(), token)
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// deleteAccount deletes the caller's account, once the password in the
// body proves it theirs: 202, every token stops at once, and jobs erase
// the rest.
func (s *Server) deleteAccount(c *gin.Context) {
	var in credentials
	if err := decodeJSON(c.Request.Body, &in); err != nil {
		s.fail(c, err)
		return
	}
	if in.Password == "" {
		s.fail(c, derrors.New(derrors.InvalidArgument, `give your password as {"password": ...}`))
		return
	}
	if err := charge(c.Request.Context(), costPassword); err != nil {
		s.fail(c, err)
		return
	}
	if err := s.lifecycle.Delete(c.Request.Context(), caller(c), in.Password); err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusAccepted, gin.H{"id": caller(c), "status": "deleted",
		"message": "the account is deleted and its sessions ended; everything it left is being erased"})
}

// export streams the caller's data as one JSON document.
func (s *Server) export(c *gin.Context) {
	if err := charge(c.Request.Context(), costExport); err != nil {
		s.fail(c, err)
		return
	}
	w := &startWriter{ResponseWriter: c.Writer, start: func() {
		h := c.Writer.Header()
		h.Set("Content-Type", "application/json; charset=utf-8")
		h.Set("Content-Disposition", `attachment; filename="socialstream-export.json"`)
		h.Set("Cache-Control", "no-store")
		c.Writer.WriteHeader(http.StatusOK)
	}}
	err := s.lifecycle.Export(c.Request.Context(), caller(c), w, c.Writer.Flush)
	switch {
	case err == nil:
	case !w.started:
		s.fail(c, err)
	default:
		// Part of the document is sent: end the response abruptly, so
		// the client sees a failed download, never a short document.
		s.log.ErrorContext(c.Request.Context(), "export failed", "err", err)
		panic(http.ErrAbortHandler)
	}
}

// startWriter calls start before the first byte it writes.
type startWriter struct {
	gin.ResponseWriter
	start   func()
	started bool
}

func (w *startWriter) Write(b []byte) (int, error) {
	if !w.started {
		w.started = true
		w.start()
	}
	return w.ResponseWriter.Write(b)
}
