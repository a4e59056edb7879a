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
	if errors.Is(err, accounts.ErrBadLogin) {
		s.loginFailed(ctx, in.Username)
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
		token, _ := bearer(c.GetHeader("Authorization"))
		err = s.accounts.Logout(c.Request.Context(), token)
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
