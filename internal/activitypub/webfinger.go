package activitypub

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"socialstream/internal/accounts"
	"socialstream/internal/derrors"
	"socialstream/internal/federation"
	"socialstream/internal/ids"
)

// maxResource bounds WebFinger's resource.
const maxResource = 512

// jrd is WebFinger's JSON Resource Descriptor (RFC 7033).
type jrd struct {
	Subject string    `json:"subject"`
	Aliases []string  `json:"aliases"`
	Links   []jrdLink `json:"links"`
}

type jrdLink struct {
	Rel  string `json:"rel"`
	Type string `json:"type,omitempty"`
	Href string `json:"href"`
}

// profilePage is WebFinger's relation of a person's page.
const profilePage = "http://webfinger.net/rel/profile-page"

// webfinger is GET /.well-known/webfinger?resource=: a person found by
// acct:name@domain, or by their actor's address (RFC 7033, as Mastodon
// asks it).
func (s *Server) webfinger(c *gin.Context) {
	c.Header("Access-Control-Allow-Origin", "*") // RFC 7033, 5: anyone's page may ask
	name, id, err := s.resource(c.Query("resource"))
	if err != nil {
		s.fail(c, err)
		return
	}
	if name == federation.InstanceName || id == federation.InstanceKey {
		s.writeJSON(c, jrdJSON+"; charset=utf-8", jrd{ // the deployment's own actor
			Subject: "acct:" + s.fed.Acct(federation.InstanceName), Aliases: []string{s.fed.InstanceActor()},
			Links: []jrdLink{{Rel: "self", Type: ActivityJSON, Href: s.fed.InstanceActor()}},
		})
		return
	}
	var p accounts.Person
	if id != "" {
		p, err = s.personByID(c.Request.Context(), id)
	} else {
		p, err = s.person(c.Request.Context(), name)
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	actor := s.fed.Actor(p.ID)
	s.writeJSON(c, jrdJSON+"; charset=utf-8", jrd{
		Subject: "acct:" + s.fed.Acct(p.PreferredUsername),
		Aliases: []string{actor},
		Links: []jrdLink{
			{Rel: "self", Type: ActivityJSON, Href: actor},
			{Rel: profilePage, Type: "text/html", Href: s.personPage(p.PreferredUsername)},
		},
	})
}

// resource reads whom WebFinger's resource names: acct:name@domain
// (the acct: may be left out, as some servers do), a name; or the
// actor's address, an id; of this deployment's domain alone.
func (s *Server) resource(resource string) (name, id string, err error) {
	switch {
	case resource == "":
		return "", "", derrors.New(derrors.InvalidArgument, "resource is required: acct:name@domain")
	case len(resource) > maxResource:
		return "", "", derrors.New(derrors.InvalidArgument, "resource is too long")
	}
	if strings.HasPrefix(resource, "https://") || strings.HasPrefix(resource, "http://") {
		id, err := s.actorOf(resource)
		return "", id, err
	}
	acct := resource
	if len(acct) >= 5 && strings.EqualFold(acct[:5], "acct:") {
		acct = acct[5:]
	}
	name, domain, ok := strings.Cut(strings.TrimPrefix(acct, "@"), "@")
	if !ok || name == "" || domain == "" {
		return "", "", derrors.New(derrors.InvalidArgument, "resource is not acct:name@domain")
	}
	if !strings.EqualFold(domain, s.fed.Domain) {
		return "", "", errGone // another server's person: not ours to answer
	}
	return name, "", nil
}

// actorOf reads the id of the actor whose address is resource, of this
// deployment alone: a person's, or the instance's own (InstanceKey).
func (s *Server) actorOf(resource string) (string, error) {
	u, err := url.Parse(resource)
	if err != nil {
		return "", derrors.New(derrors.InvalidArgument, "resource is not a URL")
	}
	base, _ := url.Parse(s.fed.Base())
	if u.Scheme != base.Scheme || !strings.EqualFold(u.Host, base.Host) {
		return "", errGone
	}
	if u.Path == federation.InstancePath {
		return federation.InstanceKey, nil
	}
	id, ok := strings.CutPrefix(u.Path, federation.PeoplePath)
	if !ok {
		return "", errGone
	}
	return id, nil
}

// person reads the person named name, as someone signed in to nothing
// may see them; errGone if there is none, or they are hidden.
func (s *Server) person(ctx context.Context, name string) (accounts.Person, error) {
	if accounts.ValidateUsername(name) != nil {
		return accounts.Person{}, errGone
	}
	lower := strings.ToLower(name)
	found, err := s.accounts.LookupUsernames(ctx, []string{lower})
	if err != nil {
		return accounts.Person{}, err
	}
	id, ok := found[lower]
	if !ok {
		return accounts.Person{}, errGone
	}
	return s.personByID(ctx, id)
}

// personByID reads the person whose id is id, as someone signed in to
// nothing may see them; errGone if there is none, or they are hidden.
func (s *Server) personByID(ctx context.Context, id string) (accounts.Person, error) {
	if n, ok := ids.Parse(id); !ok || strconv.FormatInt(n, 10) != id {
		return accounts.Person{}, errGone
	}
	p, err := s.accounts.Card(ctx, "", id)
	switch {
	case errors.Is(err, accounts.ErrNoSuchPerson):
		return accounts.Person{}, errGone
	case err != nil:
		return accounts.Person{}, err
	}
	return p, nil
}

// hostMeta is GET /.well-known/host-meta: where WebFinger is (RFC 6415),
// for the servers that ask it first.
func (s *Server) hostMeta(c *gin.Context) {
	c.Header("Access-Control-Allow-Origin", "*")
	c.Data(http.StatusOK, xrdXML+"; charset=utf-8", []byte(`<?xml version="1.0" encoding="UTF-8"?>
<XRD xmlns="http://docs.oasis-open.org/ns/xri/xrd-1.0">
  <Link rel="lrdd" type="`+jrdJSON+`" template="`+s.fed.Base()+`/.well-known/webfinger?resource={uri}"/>
</XRD>
`))
}

// personPage and postPage are the web page's addresses of a person and
// of a post, where a browser is sent.
func (s *Server) personPage(name string) string { return personPage(s.fed, name) }

// personPage is the address of the page of the person named name.
func personPage(cfg federation.Config, name string) string {
	return cfg.Base() + "/#/people/" + url.PathEscape(name)
}
func (s *Server) postPage(id string) string {
	return s.fed.Base() + "/#/activity/" + url.PathEscape(id)
}
