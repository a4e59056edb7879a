package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"socialstream/internal/accounts"
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
	p, token, err := s.accounts.Login(c.Request.Context(), in.Username, in.Password)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, session{Token: token, Entry: p})
}

func (s *Server) logout(c *gin.Context) {
	token, _ := bearer(c.GetHeader("Authorization"))
	if err := s.accounts.Logout(c.Request.Context(), token); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
