package mastodon

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"socialstream/internal/accounts"
	"socialstream/internal/derrors"
	"socialstream/internal/oauth"
)

// The sign-in of Mastodon's apps: OAuth 2's authorization code (with
// PKCE) and client credentials, over the one token store (package
// oauth).

type mApp struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	Website      *string  `json:"website"`
	Scopes       []string `json:"scopes"`
	RedirectURI  string   `json:"redirect_uri"`
	RedirectURIs []string `json:"redirect_uris"`
	ClientID     string   `json:"client_id,omitempty"`
	ClientSecret string   `json:"client_secret,omitempty"`
	// ClientSecretExpiresAt is 0: a secret never expires.
	ClientSecretExpiresAt *int   `json:"client_secret_expires_at,omitempty"`
	VapidKey              string `json:"vapid_key"`
}

func appView(a oauth.App) mApp {
	v := mApp{ID: a.ID, Name: a.Name, Scopes: a.Scopes, RedirectURI: strings.Join(a.RedirectURIs, "\n"), RedirectURIs: a.RedirectURIs}
	if a.Website != "" {
		w := a.Website
		v.Website = &w
	}
	return v
}

// createApp is POST /api/v1/apps.
func (s *Server) createApp(m *mreq) (any, error) {
	uris := m.p.list("redirect_uris")
	if len(uris) == 1 {
		uris = strings.Fields(uris[0]) // one per line, as Mastodon takes them too
	}
	r, err := s.oauth.Register(m.ctx, oauth.Registration{Name: m.p.str("client_name"), RedirectURIs: uris,
		Scopes: m.p.str("scopes"), Website: m.p.str("website")})
	if err != nil {
		return nil, err
	}
	v := appView(r.App)
	if v.VapidKey, err = s.vapidKey(m); err != nil {
		return nil, err
	}
	zero := 0
	v.ClientID, v.ClientSecret, v.ClientSecretExpiresAt = r.ClientID, r.Secret, &zero
	return v, nil
}

// verifyApp is GET /api/v1/apps/verify_credentials.
func (s *Server) verifyApp(m *mreq) (any, error) {
	if m.grant.App == "" {
		return nil, derrors.New(derrors.Unauthenticated, "The access token was not issued to an app")
	}
	a, err := s.oauth.App(m.ctx, m.grant.App)
	if err != nil {
		return nil, errMNoToken
	}
	v := appView(a)
	if v.VapidKey, err = s.vapidKey(m); err != nil {
		return nil, err
	}
	return v, nil
}

// oauthMetadata is GET /.well-known/oauth-authorization-server (RFC 8414).
func (s *Server) oauthMetadata(c *gin.Context) {
	o := s.origin(c)
	scopes := []string{oauth.Read, oauth.Write, oauth.Follow, oauth.Profile, "push"}
	c.JSON(http.StatusOK, gin.H{
		"issuer":                                o + "/",
		"authorization_endpoint":                o + "/oauth/authorize",
		"token_endpoint":                        o + "/oauth/token",
		"revocation_endpoint":                   o + "/oauth/revoke",
		"app_registration_endpoint":             o + "/api/v1/apps",
		"scopes_supported":                      append(scopes, oauth.Granular()...),
		"response_types_supported":              []string{"code"},
		"response_modes_supported":              []string{"query", "fragment"},
		"grant_types_supported":                 []string{"authorization_code", "client_credentials"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post", "none"},
		"code_challenge_methods_supported":      []string{"S256"},
		"service_documentation":                 "https://docs.joinmastodon.org/",
	})
}

// authorizeRequest reads what an app asks, from the query or the form.
func authorizeRequest(c *gin.Context) oauth.Request {
	v := func(name string) string {
		if x := c.PostForm(name); x != "" {
			return x
		}
		return c.Query(name)
	}
	return oauth.Request{ClientID: v("client_id"), RedirectURI: v("redirect_uri"), Scope: v("scope"), State: v("state"),
		Challenge: v("code_challenge"), Method: v("code_challenge_method")}
}

// authorizePage is GET /oauth/authorize: the page where a person signs
// in and approves an app. A request whose app or redirect is not known
// is told on the page, never sent anywhere.
func (s *Server) authorizePage(c *gin.Context) {
	if rt := c.Query("response_type"); rt != "code" {
		s.consentPage(c, http.StatusBadRequest, consent{Error: "This app asked for a sign-in this service does not offer (response_type must be code)."})
		return
	}
	asked, err := s.oauth.Check(c.Request.Context(), authorizeRequest(c))
	if err != nil {
		_, msg := derrors.Status(err)
		s.consentPage(c, http.StatusBadRequest, consent{Error: msg})
		return
	}
	s.consentPage(c, http.StatusOK, consentOf(asked))
}

func consentOf(a oauth.Asked) consent {
	return consent{App: a.App.Name, Website: webSite(a.App.Website), Scopes: describeScopes(a.Scopes), Request: a.Request,
		Scope: strings.Join(a.Scopes, " ")}
}

// authorize is POST /oauth/authorize: the person's answer. A right
// password and approve, or an account created there (register), send
// the app its code (or show it, out of band); deny sends it
// access_denied.
func (s *Server) authorize(c *gin.Context) {
	ctx := c.Request.Context()
	asked, err := s.oauth.Check(ctx, authorizeRequest(c))
	if err != nil {
		_, msg := derrors.Status(err)
		s.consentPage(c, http.StatusBadRequest, consent{Error: msg})
		return
	}
	page := consentOf(asked)
	if d := c.PostForm("decision"); d != "approve" && d != "register" {
		s.redirect(c, asked, url.Values{"error": {"access_denied"}, "error_description": {"The person denied the request."}})
		return
	}
	username := c.PostForm("username")
	var p accounts.Person
	if c.PostForm("decision") == "register" {
		page.NewName, page.Signup = username, true
		if p, err = s.signUp(c, username, c.PostForm("password")); err != nil {
			status, msg := derrors.Status(err)
			page.Error = msg
			s.consentPage(c, status, page)
			return
		}
	} else {
		page.Username = username
		if err := s.host.LoginAllowed(c, username); err != nil {
			_, page.Error = derrors.Status(err)
			s.consentPage(c, http.StatusTooManyRequests, page)
			return
		}
		if p, err = s.accounts.Check(ctx, username, c.PostForm("password")); err != nil {
			status, msg := derrors.Status(err)
			page.Error = msg
			s.consentPage(c, status, page)
			return
		}
		s.host.LoginSucceeded(ctx, username)
	}
	code, err := s.oauth.Approve(ctx, p.ID, asked)
	if err != nil {
		s.host.Fail(c, err)
		return
	}
	if asked.RedirectURI == oauth.OOB {
		page.Code = code
		s.consentPage(c, http.StatusOK, page)
		return
	}
	s.redirect(c, asked, url.Values{"code": {code}})
}

// redirect sends the person back to the app with q (and the state it
// gave).
func (s *Server) redirect(c *gin.Context, asked oauth.Asked, q url.Values) {
	if asked.RedirectURI == oauth.OOB {
		s.consentPage(c, http.StatusOK, consent{Error: "You denied the request. You may close this page."})
		return
	}
	if asked.State != "" {
		q.Set("state", asked.State)
	}
	u, _ := url.Parse(asked.RedirectURI) // checked when the app registered
	old := u.Query()
	for k, v := range q {
		old[k] = v
	}
	u.RawQuery = old.Encode()
	c.Redirect(http.StatusFound, u.String())
}

// token is POST /oauth/token.
func (s *Server) token(m *mreq) (any, error) {
	x := oauth.Exchange{GrantType: m.p.str("grant_type"), Code: m.p.str("code"), RedirectURI: m.p.str("redirect_uri"),
		ClientID: m.p.str("client_id"), ClientSecret: m.p.str("client_secret"), Verifier: m.p.str("code_verifier"), Scope: m.p.str("scope")}
	if id, secret, ok := m.c.Request.BasicAuth(); ok {
		x.ClientID, x.ClientSecret = id, secret
	}
	if x.GrantType == "authorization_code" || x.GrantType == "password" {
		if err := s.host.Charge(m.ctx, CostPassword); err != nil {
			return nil, err
		}
	}
	t, err := s.oauth.Token(m.ctx, x)
	if err != nil {
		return nil, err
	}
	m.c.Header("Cache-Control", "no-store")
	return gin.H{"access_token": t.Token, "token_type": "Bearer", "scope": strings.Join(t.Scopes, " "), "created_at": t.Created.Unix()}, nil
}

// revoke is POST /oauth/revoke.
func (s *Server) revoke(m *mreq) (any, error) {
	id, secret := m.p.str("client_id"), m.p.str("client_secret")
	if i, sec, ok := m.c.Request.BasicAuth(); ok {
		id, secret = i, sec
	}
	if err := s.oauth.Revoke(m.ctx, id, secret, m.p.str("token")); err != nil {
		return nil, err
	}
	return gin.H{}, nil
}

// mRegister is POST /api/v1/accounts: an app signs a person up, and
// gets a token for them with its own scopes.
func (s *Server) mRegister(m *mreq) (any, error) {
	if m.grant.App == "" || m.grant.User != "" {
		return nil, derrors.New(derrors.PermissionDenied, "This method requires an app's token of its own (client credentials)")
	}
	if err := s.host.Charge(m.ctx, CostPassword); err != nil {
		return nil, err
	}
	agreed, err := m.p.flag("agreement", false)
	if err != nil {
		return nil, err
	}
	if !agreed {
		return nil, derrors.New(derrors.InvalidArgument, "Validation failed: agreement must be accepted")
	}
	username, password := m.p.str("username"), m.p.str("password")
	if err := s.accounts.CheckRegistration(m.ctx, username, password, ""); err != nil {
		return nil, err
	}
	if err := s.host.RegisterAllowed(m.c); err != nil {
		return nil, err
	}
	_, token, err := s.accounts.RegisterFor(m.ctx, username, password, accounts.Grant{App: m.grant.App, Scopes: m.grant.Scopes})
	if err != nil {
		return nil, err
	}
	return gin.H{"access_token": token, "token_type": "Bearer", "scope": strings.Join(m.grant.Scopes, " "), "created_at": time.Now().Unix()}, nil
}

// signUp creates an account from the sign-in page, as registration
// does: its checks first (no password hashed for a name taken), then its
// quota.
func (s *Server) signUp(c *gin.Context, username, password string) (accounts.Person, error) {
	ctx := c.Request.Context()
	if err := s.accounts.CheckRegistration(ctx, username, password, ""); err != nil {
		return accounts.Person{}, err
	}
	if err := s.host.RegisterAllowed(c); err != nil {
		return accounts.Person{}, err
	}
	return s.accounts.Create(ctx, username, password)
}
