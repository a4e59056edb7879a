package federation

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"socialstream/internal/accounts"
	"socialstream/internal/activities"
	"socialstream/internal/derrors"
	"socialstream/internal/ids"
	"socialstream/internal/policy"
	"socialstream/internal/store"
	"socialstream/internal/text"
)

// A remote person's post is a post of theirs here: the Create of a Note
// (by the activity's actor, of their server) posts it as they would
// (activities.Post), so that it reaches their followers' homes here
// through the same audience copies as a local post, and notifies the
// people here it mentions; the Delete of it deletes it. A post is taken
// only when someone here follows its author or it mentions someone
// here; a Note taken twice is one post (its id, hashed, is the post's
// external id). What is kept of it: its text (from its HTML: lines kept,
// tags dropped, a mention of someone of another server written
// @name@domain, of someone here @name), its content warning,
// sensitive, language and visibility (from to and cc, as Mastodon
// addresses), and what it answers when that is a post here.
// A reply to a post kept here, of this server or another, is a reply
// to it; its pictures are kept by their address (pictures.go).

// Activities is what an inbox does to posts (package activities'
// Service).
type Activities interface {
	PostOnly(ctx context.Context, author string, in activities.PostInput) (string, bool, error)
	Delete(ctx context.Context, author, id string) error
	Edit(ctx context.Context, author, id string, in activities.EditInput) (activities.View, error)
	ExternalIDOf(ctx context.Context, author, ext string) (string, bool, error)
	Forget(ctx context.Context, author, ext string) (string, bool, error)
	Shown(ctx context.Context, viewer string, idList []string) ([]activities.View, error)
	// Polls (polls.go).
	VoteElsewhere(ctx context.Context, voter, id, title string) (bool, error)
	Recount(ctx context.Context, author, id string, counts []int64, voters int64) error
	BallotOf(ctx context.Context, voter, id string) ([]string, error)
}

// MaxNoteText is the most characters of a Note's text kept.
const MaxNoteText = 5000

// note is what an inbox reads of a Note.
type note struct {
	ID           string            `json:"id"`
	Type         string            `json:"type"`
	AttributedTo json.RawMessage   `json:"attributedTo"`
	Content      string            `json:"content"`
	ContentMap   map[string]string `json:"contentMap"`
	Summary      string            `json:"summary"`
	Sensitive    bool              `json:"sensitive"`
	Updated      string            `json:"updated"`
	InReplyTo    json.RawMessage   `json:"inReplyTo"`
	To           addresses         `json:"to"`
	Cc           addresses         `json:"cc"`
	Tag          noteTags          `json:"tag"`
	Attachment   attachments       `json:"attachment"`
	// A Question's (polls.go): its options, one of which is chosen
	// (oneOf) or any (anyOf), its end, whether it closed, its voters.
	// Name is a vote's (a Note named by the option it chooses).
	OneOf       []pollOption `json:"oneOf"`
	AnyOf       []pollOption `json:"anyOf"`
	EndTime     string       `json:"endTime"`
	Closed      string       `json:"closed"`
	VotersCount *int64       `json:"votersCount"`
	Name        string       `json:"name"`
}

// noteTag is a Note's Mention or Hashtag.
type noteTag struct {
	Type string `json:"type"`
	Href string `json:"href"`
	Name string `json:"name"`
}

// noteTags reads tag: one object, or a list (ActivityStreams allows
// both, and servers write both).
type noteTags []noteTag

func (t *noteTags) UnmarshalJSON(b []byte) error {
	var one noteTag
	if len(b) > 0 && b[0] == '{' {
		if err := json.Unmarshal(b, &one); err != nil {
			return err
		}
		*t = noteTags{one}
		return nil
	}
	var many []noteTag
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*t = many
	return nil
}

// addresses reads to and cc: one address, or a list.
type addresses []string

func (a *addresses) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*a = addresses{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*a = many
	return nil
}

// externalID is the external id of a Note's post: its id, hashed (ids
// may be longer than an external id).
func externalID(noteID string) string {
	sum := sha256.Sum256([]byte(noteID))
	return activities.ElsewherePrefix + hex.EncodeToString(sum[:20])
}

// created takes a Create of a Note.
func (s *Service) created(ctx context.Context, actor Actor, a activity) (string, error) {
	n, ignored, err := readNote(actor, a)
	if ignored != "" || err != nil {
		return ignored, err
	}
	return s.createdNote(ctx, actor, n)
}

// createdNote posts a Note of actor's, read and checked.
func (s *Service) createdNote(ctx context.Context, actor Actor, n note) (string, error) {
	if post, ok := s.voteFor(n); ok {
		return s.voted(ctx, actor, n, post)
	}
	if outcome, err := s.takesNote(ctx, actor, n); outcome != "" || err != nil {
		return outcome, err
	}
	w := s.wording(n)
	var err error
	in := activities.PostInput{ExternalID: externalID(n.ID), Visibility: s.visibility(actor, n), Sensitive: n.Sensitive,
		URL: noteURL(n.ID), SpoilerText: w.spoiler, Language: w.language,
		Title: w.parts.Title, Body: w.parts.Body, Joined: w.parts.Joined}
	if in.Mentions, err = s.mentionsOf(ctx, n); err != nil {
		return "", err
	}
	if n.Type == "Question" {
		if in.PollElsewhere = questionPoll(n); in.PollElsewhere == nil {
			return "refused: a Question whose poll the service cannot keep", nil
		}
	}
	if in.InReplyTo, err = s.parentOf(ctx, actor, n); err != nil {
		return "", err
	}
	// Its pictures are kept just before it is made: should it not be, they
	// are collected a day later.
	if in.Media, err = s.picturesOf(ctx, actor, n); err != nil {
		return "", err
	}
	id, made, err := s.activities.PostOnly(ctx, actor.UserID, in)
	if errors.Is(err, activities.ErrNoSuchActivity) && in.InReplyTo != "" {
		in.InReplyTo = "" // what it answers is gone, or hidden from its author
		id, made, err = s.activities.PostOnly(ctx, actor.UserID, in)
	}
	if errors.Is(err, activities.ErrForgotten) {
		return "ignored: deleted by its server meanwhile", nil // its Delete overtook it
	}
	if err != nil {
		var de *derrors.Error
		if errors.As(err, &de) && errors.Is(err, derrors.InvalidArgument) {
			return "refused: " + de.Message, nil // a Note the service cannot keep: taken, and dropped
		}
		return "", err
	}
	if !made {
		return "posted before as " + id, nil
	}
	return "posted " + id, nil
}

// takesNote decides whether a Note of actor's is taken, before anything
// is planned for it: not one sent before (a server's retry; a post's jobs
// go ahead of its commit), and one that someone here follows its author
// or is mentioned in. It returns what comes of one not taken, "" to take
// it.
func (s *Service) takesNote(ctx context.Context, actor Actor, n note) (string, error) {
	if post, ok, err := s.activities.ExternalIDOf(ctx, actor.UserID, externalID(n.ID)); err != nil || ok {
		if ok && post == "" {
			return "ignored: deleted by its server before", err
		}
		return "posted before as " + post, err
	}
	if len(s.mentionedHere(n)) > 0 {
		return "", nil
	}
	followed, err := s.followedHere(ctx, actor.UserID)
	if err != nil || followed {
		return "", err
	}
	return "ignored: no one here follows its author or is mentioned", nil
}

// readNote reads the Note a Create or an Update carries, and checks it
// is the actor's: a reason it is left alone (not a Note, or by its id
// alone), or an error when it is not the actor's or not a Note.
func readNote(actor Actor, a activity) (note, string, error) {
	var n note
	if ref(a.Object) != "" && len(a.Object) > 0 && a.Object[0] == '"' {
		return n, "ignored " + a.Type + " of a reference", nil // an object by id alone: not fetched yet
	}
	if err := json.Unmarshal(a.Object, &n); err != nil || n.ID == "" {
		return n, "", fmt.Errorf("%w: its object does not read as a Note", errMalformed)
	}
	if n.Type != "Note" && n.Type != "Question" {
		return n, "ignored " + a.Type + " of a " + n.Type, nil
	}
	if ref(n.AttributedTo) != actor.URI {
		return n, "", errNotTheActor
	}
	if !sameHost(n.ID, actor.URI) {
		return n, "", fmt.Errorf("%w: the Note's id is not of its author's server", errMalformed)
	}
	return n, "", nil
}

// noteWording is what a post keeps of a Note's words.
type noteWording struct {
	parts             activities.TextParts
	spoiler, language string
}

// wording reads a Note's words: its text from its HTML (its content, or
// its contentMap's one language's), its content warning, its language.
func (s *Service) wording(n note) noteWording {
	w := noteWording{spoiler: text.Strip(n.Summary, activities.MaxSpoilerText, false)}
	content := n.Content
	if len(n.ContentMap) == 1 {
		for lang, c := range n.ContentMap {
			w.language = lang
			if content == "" {
				content = c
			}
		}
	}
	body := text.Strip(s.noteText(content, n), MaxNoteText, true)
	if body == "" {
		body = "(no text)"
	}
	w.parts = activities.SplitText(body)
	return w
}

// deleted takes a Delete: of a Note of the actor's, its post goes; of
// the actor, their account here goes, erased as a local account is
// (their posts, follows, favourites and the rest).
func (s *Service) deleted(ctx context.Context, actor Actor, a activity) (string, error) {
	id := ref(a.Object)
	if id == actor.URI {
		if s.accounts == nil {
			return "", errors.New("federation: no accounts")
		}
		if err := s.removeRemote(ctx, actor.UserID); err != nil {
			return "", err
		}
		return "person deleted", nil
	}
	if !sameHost(id, actor.URI) {
		return "", errNotTheActor
	}
	// A Delete may overtake its Note's Create, and a Create come again
	// after it: a Note deleted is forgotten, so that neither makes a post.
	post, ok, err := s.activities.ExternalIDOf(ctx, actor.UserID, externalID(id))
	if err != nil {
		return "", err
	}
	if !ok {
		if post, ok, err = s.activities.Forget(ctx, actor.UserID, externalID(id)); err != nil || !ok {
			return "forgotten, never kept", err
		}
	}
	if post == "" {
		return "deleted before", nil
	}
	if err := s.activities.Delete(ctx, actor.UserID, post); err != nil && !errors.Is(err, activities.ErrNoSuchActivity) {
		return "", err
	}
	return "deleted " + post, nil
}

// followedHere reports whether someone here follows the remote person
// user (every follower of a remote person is here).
func (s *Service) followedHere(ctx context.Context, user string) (bool, error) {
	p, ok, err := accounts.Load(ctx, s.db, user)
	if err != nil || !ok {
		return false, err
	}
	return p.FollowersCount > 0, nil
}

// visibility reads a Note's from its addresses: everyone in to, public;
// in cc, unlisted; the author's followers, followers; else the
// mentioned alone.
func (s *Service) visibility(actor Actor, n note) string {
	switch {
	case slices.ContainsFunc(n.To, isPublic):
		return policy.Public
	case slices.ContainsFunc(n.Cc, isPublic):
		return policy.Unlisted
	case actor.Followers != "" && (slices.Contains(n.To, actor.Followers) || slices.Contains(n.Cc, actor.Followers)):
		return policy.FollowersOnly
	}
	return policy.MentionedOnly
}

// isPublic reports whether an address is everyone, as servers write it.
func isPublic(a string) bool {
	return a == PublicCollection || a == "as:Public" || a == "Public"
}

// mentionedHere returns the ids of the people here a Note's tags
// mention.
func (s *Service) mentionedHere(n note) []string {
	var out []string
	for _, t := range n.Tag {
		if t.Type == "Mention" {
			if id := s.local(t.Href); id != "" && !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	return out
}

// mentionsOf returns the ids of the people known here a Note's tags
// mention, in their order: a person here, or one of another server's
// kept here (found in one lookup, nothing fetched), at most
// activities.MaxMentions. A Note's mentions are its tags, as Mastodon
// reads them: an @name in its text with no tag mentions no one.
func (s *Service) mentionsOf(ctx context.Context, n note) ([]string, error) {
	var hrefs []string
	for _, t := range n.Tag {
		if t.Type == "Mention" && t.Href != "" && !slices.Contains(hrefs, t.Href) && len(hrefs) < activities.MaxMentions {
			hrefs = append(hrefs, t.Href)
		}
	}
	out := make([]string, len(hrefs))
	l := s.db.Lookup()
	links := make([]actorURI, len(hrefs))
	refs := make([]store.Ref, len(hrefs))
	for i, h := range hrefs {
		if out[i] = s.local(h); out[i] == "" {
			refs[i] = l.Add(actorURIKey(s.db, h), &links[i])
		}
	}
	if err := l.Run(ctx); err != nil {
		return nil, err
	}
	for i, h := range hrefs {
		if out[i] == "" && refs[i].Found() && links[i].URI == h {
			out[i] = links[i].UserID
		}
	}
	return slices.DeleteFunc(out, func(id string) bool { return id == "" }), nil
}

// parentOf returns the id of the post here a Note answers, "" for none:
// a post of this deployment's, or one of another server's kept here,
// found through its author, the Note's own author (a thread) or someone
// its tags mention (as servers name the author of what a reply
// answers), as the service knows them, with nothing fetched.
func (s *Service) parentOf(ctx context.Context, actor Actor, n note) (string, error) {
	parent := ref(n.InReplyTo)
	if parent == "" {
		return "", nil
	}
	if id := s.localNote(parent); id != "" {
		return id, nil
	}
	authors := []string{actor.UserID}
	for _, t := range n.Tag {
		if t.Type != "Mention" || !sameHost(t.Href, parent) || len(authors) > maxParentAuthors {
			continue
		}
		if a, ok, err := s.byURI(ctx, t.Href); err != nil {
			return "", err
		} else if ok && !slices.Contains(authors, a.UserID) {
			authors = append(authors, a.UserID)
		}
	}
	for _, author := range authors {
		if post, ok, err := s.activities.ExternalIDOf(ctx, author, externalID(parent)); err != nil || ok {
			return post, err
		}
	}
	return "", nil
}

// maxParentAuthors bounds the people a reply's parent is looked for
// among.
const maxParentAuthors = 4

// localNote returns the id of the post here a Note's address names, ""
// if it names none.
func (s *Service) localNote(uri string) string {
	rest, ok := strings.CutPrefix(uri, s.cfg.Base()+NotesPath)
	if !ok {
		return ""
	}
	return PostOfNumber(rest)
}

// noteText is the text of a Note's HTML, each mention written so that
// the service's own reading of mentions (activities.EachMention) finds
// the people here it names, and no one here it does not: @name for
// someone here, @name@domain for someone of another server.
func (s *Service) noteText(content string, n note) string {
	t := plainText(content)
	for _, tag := range n.Tag {
		if tag.Type != "Mention" || !strings.HasPrefix(tag.Name, "@") {
			continue
		}
		name, host, _ := strings.Cut(tag.Name[1:], "@")
		if !remoteName.MatchString(name) {
			continue
		}
		if s.local(tag.Href) != "" {
			if host != "" {
				t = strings.ReplaceAll(t, tag.Name, "@"+name)
			}
			continue
		}
		if host == "" {
			if u := hostOf(tag.Href); u != "" {
				host = u
			} else {
				continue
			}
		}
		t = widenMention(t, name, "@"+name+"@"+host)
	}
	return t
}

// widenMention writes full in place of each @name of t written alone:
// not part of @name@domain, of a longer name, or of an address.
func widenMention(t, name, full string) string {
	short := "@" + name
	var b strings.Builder
	for {
		i := strings.Index(t, short)
		if i < 0 {
			b.WriteString(t)
			return b.String()
		}
		end := i + len(short)
		before := i > 0 && (nameChar(t[i-1]) || strings.ContainsRune("@/.", rune(t[i-1])))
		after := end < len(t) && (nameChar(t[end]) || t[end] == '@')
		b.WriteString(t[:i])
		if before || after {
			b.WriteString(short)
		} else {
			b.WriteString(full)
		}
		t = t[end:]
	}
}

func nameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// PostOfNumber reads a post's number, as its Note's address writes it,
// as the post's id; "" if it is none.
func PostOfNumber(s string) string {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return ""
	}
	return ids.Format(n)
}

func hostOf(uri string) string {
	if i := strings.Index(uri, "://"); i >= 0 {
		rest := uri[i+3:]
		host, _, _ := strings.Cut(rest, "/")
		if utf8.ValidString(host) {
			return strings.ToLower(host)
		}
	}
	return ""
}

// noteURL is a Note's id as its post's url (the address of the post at
// its server, which a favourite from here names), "" when it is longer
// than a url may be.
func noteURL(id string) string {
	if len(id) > activities.MaxURL {
		return ""
	}
	return id
}

// removeRemote deletes the account of a person of another server whose
// server told of their deletion, and has it erased as a local account is
// (accounts.EraseJob, which package lifecycle runs).
func (s *Service) removeRemote(ctx context.Context, user string) error {
	e := accounts.EraseTask{UserID: user, At: s.now().UnixMicro()}
	return s.accounts.Remove(ctx, user, func(ctx context.Context) error { return accounts.EraseJob.Enqueue(ctx, s.q, e, 0) })
}
