package activitypub

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"socialstream/internal/activities"
	"socialstream/internal/federation"
	"socialstream/internal/media"
	"socialstream/internal/polls"
	"socialstream/internal/richtext"
)

// note is ActivityStreams' Note, as Mastodon's peers read a post.
type note struct {
	Context      any               `json:"@context,omitempty"`
	ID           string            `json:"id"`
	Type         string            `json:"type"`
	AttributedTo string            `json:"attributedTo"`
	Content      string            `json:"content"`
	ContentMap   map[string]string `json:"contentMap,omitempty"`
	Summary      *string           `json:"summary"`
	Sensitive    bool              `json:"sensitive"`
	Published    string            `json:"published"`
	Updated      string            `json:"updated,omitempty"`
	URL          string            `json:"url"`
	To           []string          `json:"to"`
	Cc           []string          `json:"cc"`
	InReplyTo    *string           `json:"inReplyTo"`
	Tag          []tag             `json:"tag"`
	Attachment   []document        `json:"attachment"`
	// A Question's: its options (oneOf for one choice, anyOf for
	// several), its end, when it closed, its voters.
	OneOf       []pollOption `json:"oneOf,omitempty"`
	AnyOf       []pollOption `json:"anyOf,omitempty"`
	EndTime     string       `json:"endTime,omitempty"`
	Closed      string       `json:"closed,omitempty"`
	VotersCount *int64       `json:"votersCount,omitempty"`
}

// pollOption is an option of a Question: a Note named by its title, its
// votes the count of its replies.
type pollOption struct {
	Type    string `json:"type"`
	Name    string `json:"name"`
	Replies struct {
		Type       string `json:"type"`
		TotalItems int64  `json:"totalItems"`
	} `json:"replies"`
}

// question makes n, of a post with poll p, a Question; hidden totals
// are told as none until it ends, as the API shows them to anyone.
func question(n *note, p *polls.View) {
	n.Type = "Question"
	opts := make([]pollOption, len(p.Options))
	for i, o := range p.Options {
		opts[i] = pollOption{Type: "Note", Name: o.Title}
		opts[i].Replies.Type = "Collection"
		if o.VotesCount != nil {
			opts[i].Replies.TotalItems = *o.VotesCount
		}
	}
	if p.Multiple {
		n.AnyOf = opts
	} else {
		n.OneOf = opts
	}
	n.EndTime = p.Expires.UTC().Format(time.RFC3339)
	if p.Expired {
		n.Closed = n.EndTime
	}
	voters := p.VotersCount
	n.VotersCount = &voters
}

// tag is a Note's Mention or Hashtag.
type tag struct {
	Type string `json:"type"`
	Href string `json:"href"`
	Name string `json:"name"`
}

// document is a picture of a Note.
type document struct {
	Type      string `json:"type"`
	MediaType string `json:"mediaType"`
	URL       string `json:"url"`
	Name      string `json:"name,omitempty"`
	Width     int    `json:"width,omitempty"`
	Height    int    `json:"height,omitempty"`
}

// activity is what an outbox lists: a Create of a Note, or an Announce
// of another's.
type activity struct {
	Context   any      `json:"@context,omitempty"`
	ID        string   `json:"id"`
	Type      string   `json:"type"`
	Actor     string   `json:"actor"`
	Published string   `json:"published"`
	To        []string `json:"to"`
	Cc        []string `json:"cc"`
	Object    any      `json:"object"`
}

// renderer writes posts as ActivityStreams, with the addresses of the
// deployment's domain, and those of other servers posts name.
type renderer struct {
	fed federation.Config
	at  federation.Addresses
}

// Render returns how package federation writes the Create of a post
// (its Note; a repost's Announce) it sends to other servers, given what
// it names of theirs; for an edit, the Update of its Note.
func Render(cfg federation.Config) federation.Render {
	return func(v activities.View, at federation.Addresses, edit int) any {
		a := renderer{fed: cfg, at: at}.renderActivity(v)
		a.Context = ldContext
		if edit > 0 && v.RepostOf == nil {
			a.ID, a.Type = fmt.Sprintf("%s#updates/%d", cfg.Note(federation.Number(v.ID)), edit), "Update"
			a.Published = millis(v.EditedTime)
		}
		return a
	}
}

// mentioned returns the actor's address and the tag's name of a person
// a post mentions ("" for someone of another server not known).
func (s renderer) mentioned(id, name string) (href, tagName string) {
	if strings.Contains(name, "@") {
		return s.at.Actors[id], "@" + name
	}
	return s.fed.Actor(id), "@" + s.fed.Acct(name)
}

// withRemote is the renderer of views, with what they name of other
// servers.
func (s *Server) withRemote(ctx context.Context, views ...activities.View) (renderer, error) {
	r := s.renderer
	var err error
	r.at, err = s.federation.AddressesOf(ctx, views...)
	return r, err
}

// note is GET /statuses/:id: a post anyone may see, as a Note (a
// repost, as its Announce).
func (s *Server) note(c *gin.Context) {
	id := federation.PostOfNumber(c.Param("id"))
	if id == "" {
		s.fail(c, errGone)
		return
	}
	list, err := s.activities.Shown(c.Request.Context(), "", []string{id})
	if err != nil {
		s.fail(c, err)
		return
	}
	if len(list) == 0 || list[0].Author == nil { // who may see it is the policy's (Shown's) to say
		s.fail(c, errGone)
		return
	}
	v := list[0]
	r, err := s.withRemote(c.Request.Context(), v)
	if err != nil {
		s.fail(c, err)
		return
	}
	if v.RepostOf != nil {
		a := r.renderActivity(v)
		a.Context = ldContext
		s.answer(c, a, s.postPage(v.ID))
		return
	}
	s.answer(c, r.renderNote(v, true), s.postPage(v.ID))
}

// addressed returns whom a post of this visibility is addressed to and
// copied to, besides the people it mentions: public to everyone (its
// author's followers copied), unlisted to the followers (everyone
// copied), followers-only to the followers, to the mentioned alone.
func (s renderer) addressed(v activities.View, followers string) (to, cc []string) {
	var mentioned []string
	for id, name := range mentions(v) {
		if href, _ := s.mentioned(id, name); href != "" {
			mentioned = append(mentioned, href)
		}
	}
	switch v.Visibility {
	case activities.Public:
		return []string{federation.PublicCollection}, append([]string{followers}, mentioned...)
	case activities.Unlisted:
		return []string{followers}, append([]string{federation.PublicCollection}, mentioned...)
	case activities.FollowersOnly:
		return []string{followers}, append([]string{}, mentioned...)
	}
	return append([]string{}, mentioned...), []string{}
}

// mentions yields the ids and names of the people v mentions, in its
// order, those whose names it keeps.
func mentions(v activities.View) iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for i, id := range v.Mentions {
			if i < len(v.MentionNames) && v.MentionNames[i] != "" && !yield(id, v.MentionNames[i]) {
				return
			}
		}
	}
}

// renderNote makes v's Note (v is no repost, and has its author).
func (s renderer) renderNote(v activities.View, withContext bool) note {
	base, author := s.fed.Base(), s.fed.Actor(v.Author.ID)
	n := note{
		ID: s.fed.Note(federation.Number(v.ID)), Type: "Note", AttributedTo: author, Sensitive: v.Sensitive,
		Content: richtext.HTML(v.Text(), base, v.Mentioned()), Published: millis(v.PostedTime),
		Tag: []tag{}, Attachment: []document{},
	}
	if withContext {
		n.Context = ldContext
	}
	n.URL = n.ID
	n.To, n.Cc = s.addressed(v, author+"/followers")
	if v.SpoilerText != "" {
		w := v.SpoilerText
		n.Summary = &w
	}
	if v.Language != "" {
		n.ContentMap = map[string]string{v.Language: n.Content}
	}
	if v.EditedTime != 0 {
		n.Updated = millis(v.EditedTime)
	}
	if v.InReplyTo != "" {
		r, elsewhere := s.at.Notes[v.InReplyTo]
		if !elsewhere {
			r = s.fed.Note(federation.Number(v.InReplyTo))
		}
		n.InReplyTo = &r
	}
	for id, name := range mentions(v) {
		if href, tagName := s.mentioned(id, name); href != "" {
			n.Tag = append(n.Tag, tag{Type: "Mention", Href: href, Name: tagName})
		}
	}
	for _, t := range v.Tags {
		n.Tag = append(n.Tag, tag{Type: "Hashtag", Href: base + "/tags/" + t, Name: "#" + t})
	}
	for _, m := range v.MediaItems {
		n.Attachment = append(n.Attachment, s.renderPicture(m))
	}
	if v.Poll != nil {
		question(&n, v.Poll)
	}
	return n
}

func (s renderer) renderPicture(m media.View) document {
	return document{Type: "Document", MediaType: m.MimeType, URL: absolute(s.fed.Base(), m.URL), Name: m.Description, Width: m.Width, Height: m.Height}
}

// renderActivity makes what an outbox lists of v: the Create of its
// Note, or, for a repost, the Announce of what it shares.
func (s renderer) renderActivity(v activities.View) activity {
	author := s.fed.Actor(v.Author.ID)
	a := activity{ID: s.fed.Note(federation.Number(v.ID)) + "/activity", Actor: author, Published: millis(v.PostedTime)}
	if v.RepostOf != nil {
		a.ID, a.Type = s.fed.Note(federation.Number(v.ID)), "Announce"
		a.To, a.Cc = s.addressed(activities.View{Visibility: v.Visibility}, author+"/followers")
		a.Object = s.noteOf(*v.RepostOf)
		return a
	}
	a.Type = "Create"
	n := s.renderNote(v, false)
	a.To, a.Cc, a.Object = n.To, n.Cc, n
	return a
}

// noteOf is the address of a post's Note: at its server, for a post of
// another server's; else here.
func (s renderer) noteOf(v activities.View) string {
	if note, ok := v.Elsewhere(); ok {
		return note
	}
	return s.fed.Note(federation.Number(v.ID))
}

// millis writes a time of ms since the epoch as ActivityStreams does.
func millis(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339) }
