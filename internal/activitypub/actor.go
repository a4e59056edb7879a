package activitypub

import (
	"strings"

	"github.com/gin-gonic/gin"

	"socialstream/internal/accounts"
	"socialstream/internal/activities"
	"socialstream/internal/derrors"
	"socialstream/internal/federation"
	"socialstream/internal/paging"
	"socialstream/internal/richtext"
)

// ldContext is the JSON-LD context of what the face serves: ActivityStreams,
// the security vocabulary (publicKey) and the terms of Mastodon's that
// its peers read.
var ldContext = []any{
	"https://www.w3.org/ns/activitystreams",
	"https://w3id.org/security/v1",
	map[string]any{
		"manuallyApprovesFollowers": "as:manuallyApprovesFollowers",
		"sensitive":                 "as:sensitive",
		"Hashtag":                   "as:Hashtag",
		"toot":                      "http://joinmastodon.org/ns#",
		"discoverable":              "toot:discoverable",
		"featured":                  map[string]string{"@id": "toot:featured", "@type": "@id"},
		"schema":                    "http://schema.org#",
		"PropertyValue":             "schema:PropertyValue",
		"value":                     "schema:value",
	},
}

// person is ActivityStreams' Person, as Mastodon's peers read an actor.
type person struct {
	Context                   any             `json:"@context,omitempty"`
	ID                        string          `json:"id"`
	Type                      string          `json:"type"`
	PreferredUsername         string          `json:"preferredUsername"`
	Name                      string          `json:"name"`
	Summary                   string          `json:"summary"`
	URL                       string          `json:"url"`
	Inbox                     string          `json:"inbox"`
	Outbox                    string          `json:"outbox"`
	Followers                 string          `json:"followers"`
	Following                 string          `json:"following"`
	Featured                  string          `json:"featured"`
	Endpoints                 endpoints       `json:"endpoints"`
	PublicKey                 publicKey       `json:"publicKey"`
	ManuallyApprovesFollowers bool            `json:"manuallyApprovesFollowers"`
	Discoverable              bool            `json:"discoverable"`
	Published                 string          `json:"published"`
	Icon                      *image          `json:"icon,omitempty"`
	Image                     *image          `json:"image,omitempty"`
	Attachment                []propertyValue `json:"attachment"`
}

type endpoints struct {
	SharedInbox string `json:"sharedInbox"`
}

type publicKey struct {
	ID           string `json:"id"`
	Owner        string `json:"owner"`
	PublicKeyPem string `json:"publicKeyPem"`
}

type image struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

type propertyValue struct {
	Type  string `json:"type"`
	Name  string `json:"name"`
	Value string `json:"value"`
}

// actor is GET /users/:id: the person's actor, with their public key
// (made now if they have none).
func (s *Server) actor(c *gin.Context) {
	ctx := c.Request.Context()
	p, err := s.personByID(ctx, c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	if !wantsActivity(c.Request) {
		s.answer(c, nil, s.personPage(p.PreferredUsername))
		return
	}
	key, err := s.keys.Of(ctx, p.ID)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.answer(c, renderPerson(s.fed, p, key.PublicPEM), "")
}

// RenderActor returns what makes the actor of a person here, as GET
// /users/:id serves it and the Update of a profile carries it.
func RenderActor(cfg federation.Config) federation.RenderActor {
	return func(p accounts.Person, pem string) any { return renderPerson(cfg, p, pem) }
}

// renderPerson makes p's actor.
func renderPerson(cfg federation.Config, p accounts.Person, pem string) person {
	base, id := cfg.Base(), cfg.Actor(p.ID)
	a := person{
		Context: ldContext, ID: id, Type: "Person", PreferredUsername: p.PreferredUsername, Name: p.DisplayName,
		Summary: richtext.HTML(p.Note, base, nil), URL: personPage(cfg, p.PreferredUsername),
		Inbox: id + "/inbox", Outbox: id + "/outbox", Followers: id + "/followers", Following: id + "/following",
		Featured: id + "/featured", Endpoints: endpoints{SharedInbox: base + "/inbox"},
		PublicKey:                 publicKey{ID: cfg.KeyID(p.ID), Owner: id, PublicKeyPem: pem},
		ManuallyApprovesFollowers: p.Locked, Discoverable: true, Published: p.Published, Attachment: []propertyValue{},
	}
	if p.AvatarURL != "" {
		a.Icon = &image{Type: "Image", URL: absolute(base, p.AvatarURL)}
	}
	if p.HeaderURL != "" {
		a.Image = &image{Type: "Image", URL: absolute(base, p.HeaderURL)}
	}
	for _, f := range p.Fields {
		a.Attachment = append(a.Attachment, propertyValue{Type: "PropertyValue", Name: f.Name, Value: richtext.HTML(f.Value, base, nil)})
	}
	return a
}

// absolute makes a link from the service's root absolute.
func absolute(base, link string) string {
	if strings.HasPrefix(link, "/") {
		return base + link
	}
	return link
}

// collection is an OrderedCollection, or a page of one.
type collection struct {
	Context      any    `json:"@context,omitempty"`
	ID           string `json:"id"`
	Type         string `json:"type"`
	TotalItems   *int64 `json:"totalItems,omitempty"`
	First        string `json:"first,omitempty"`
	PartOf       string `json:"partOf,omitempty"`
	Next         string `json:"next,omitempty"`
	OrderedItems []any  `json:"orderedItems,omitzero"`
}

// relation names the followers' or the following collection.
type relation int

const (
	followers relation = iota
	following
)

// relations is GET /users/:id/followers and /following: their counts.
// Who follows whom is not listed to other servers (GoToSocial's default
// too): a person's page shows the counts alone.
func (s *Server) relations(which relation) gin.HandlerFunc {
	return func(c *gin.Context) {
		p, err := s.personByID(c.Request.Context(), c.Param("id"))
		if err != nil {
			s.fail(c, err)
			return
		}
		id, n := s.fed.Actor(p.ID)+"/followers", p.FollowersCount
		if which == following {
			id, n = s.fed.Actor(p.ID)+"/following", p.FollowingCount
		}
		s.answer(c, collection{Context: ldContext[0], ID: id, Type: "OrderedCollection", TotalItems: &n}, s.personPage(p.PreferredUsername))
	}
}

// outboxPage is how many activities a page of an outbox holds.
const outboxPage = 20

// outbox is GET /users/:id/outbox: the collection of what they posted
// that anyone may see, and with ?page=true its pages, newest first
// (max_id pages on).
func (s *Server) outbox(c *gin.Context) {
	ctx := c.Request.Context()
	p, err := s.personByID(ctx, c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	id := s.fed.Actor(p.ID) + "/outbox"
	if c.Query("page") == "" {
		n := p.StatusesCount
		s.answer(c, collection{Context: ldContext[0], ID: id, Type: "OrderedCollection", TotalItems: &n, First: id + "?page=true"},
			s.personPage(p.PreferredUsername))
		return
	}
	r := activities.FeedRequest{Selector: activities.Self, UserID: p.ID, Page: paging.Request{Count: outboxPage}}
	if max := c.Query("max_id"); max != "" {
		if r.Before = federation.PostOfNumber(max); r.Before == "" {
			s.fail(c, derrors.New(derrors.InvalidArgument, "max_id must be a post's number"))
			return
		}
	}
	views, next, err := s.activities.Feed(ctx, r)
	if err != nil {
		s.fail(c, err)
		return
	}
	pg := collection{Context: ldContext, ID: id + "?page=true", Type: "OrderedCollectionPage", PartOf: id, OrderedItems: []any{}}
	if r.Before != "" {
		pg.ID += "&max_id=" + federation.Number(r.Before)
	}
	rr, err := s.withRemote(ctx, views...)
	if err != nil {
		s.fail(c, err)
		return
	}
	for _, v := range views {
		if v.Author != nil {
			pg.OrderedItems = append(pg.OrderedItems, rr.renderActivity(v))
		}
	}
	if next != "" && len(views) > 0 {
		pg.Next = id + "?page=true&max_id=" + federation.Number(views[len(views)-1].ID)
	}
	s.answer(c, pg, s.personPage(p.PreferredUsername))
}

// featured is GET /users/:id/featured: the posts they pin, as Notes.
func (s *Server) featured(c *gin.Context) {
	ctx := c.Request.Context()
	p, err := s.personByID(ctx, c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	views, _, err := s.activities.Feed(ctx, activities.FeedRequest{Selector: activities.Pinned, UserID: p.ID,
		Page: paging.Request{Count: activities.MaxPins}})
	if err != nil {
		s.fail(c, err)
		return
	}
	r, err := s.withRemote(ctx, views...)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := collection{Context: ldContext, ID: s.fed.Actor(p.ID) + "/featured", Type: "OrderedCollection", OrderedItems: []any{}}
	for _, v := range views {
		if v.RepostOf == nil && v.Author != nil {
			out.OrderedItems = append(out.OrderedItems, r.renderNote(v, false))
		}
	}
	n := int64(len(out.OrderedItems))
	out.TotalItems = &n
	s.answer(c, out, s.personPage(p.PreferredUsername))
}
