package mastodon

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	"socialstream/internal/accounts"
	"socialstream/internal/activities"
	"socialstream/internal/filters"
	"socialstream/internal/media"
	"socialstream/internal/richtext"
)

// Mastodon's entities, as docs.joinmastodon.org documents them, made
// from the views the operations answer: nothing here reads the store.

type mAccount struct {
	ID             string   `json:"id"`
	Username       string   `json:"username"`
	Acct           string   `json:"acct"`
	DisplayName    string   `json:"display_name"`
	Locked         bool     `json:"locked"`
	Bot            bool     `json:"bot"`
	Discoverable   bool     `json:"discoverable"`
	Indexable      bool     `json:"indexable"`
	Group          bool     `json:"group"`
	CreatedAt      string   `json:"created_at"`
	Note           string   `json:"note"`
	URL            string   `json:"url"`
	URI            string   `json:"uri"`
	Avatar         string   `json:"avatar"`
	AvatarStatic   string   `json:"avatar_static"`
	Header         string   `json:"header"`
	HeaderStatic   string   `json:"header_static"`
	FollowersCount int64    `json:"followers_count"`
	FollowingCount int64    `json:"following_count"`
	StatusesCount  int64    `json:"statuses_count"`
	LastStatusAt   *string  `json:"last_status_at"`
	Emojis         []any    `json:"emojis"`
	Fields         []mField `json:"fields"`
	Source         *mSource `json:"source,omitempty"`
	Role           *mRole   `json:"role,omitempty"`
	Noindex        bool     `json:"noindex"`
	// MuteExpiresAt, in the caller's mutes alone: when the mute ends
	// (null: never).
	MuteExpiresAt *string `json:"mute_expires_at,omitempty"`
}

type mField struct {
	Name       string  `json:"name"`
	Value      string  `json:"value"`
	VerifiedAt *string `json:"verified_at"`
}

type mSource struct {
	Note               string   `json:"note"`
	Fields             []mField `json:"fields"`
	Privacy            string   `json:"privacy"`
	Sensitive          bool     `json:"sensitive"`
	Language           string   `json:"language"`
	FollowRequestCount int      `json:"follow_requests_count"`
}

type mRole struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Permissions string `json:"permissions"`
	Color       string `json:"color"`
	Highlighted bool   `json:"highlighted"`
}

// missingAvatar is where an account without a picture points: apps
// expect a picture at every avatar and header.
const missingAvatar = "/avatars/original/missing.png"

// account makes Mastodon's Account of a person.
func (s *Server) account(origin string, p accounts.Person) mAccount {
	a := mAccount{
		ID: p.ID, Username: p.PreferredUsername, Acct: p.PreferredUsername, DisplayName: p.DisplayName,
		Locked: p.Locked, Discoverable: true, Indexable: p.Indexable, CreatedAt: isoTime(p.Published),
		Note: richtext.HTML(p.Note, origin, nil), URL: origin + "/#/people/" + p.PreferredUsername,
		FollowersCount: p.FollowersCount, FollowingCount: p.FollowingCount, StatusesCount: p.StatusesCount,
		Avatar: origin + missingAvatar, Header: origin + missingAvatar, Emojis: []any{}, Fields: []mField{},
	}
	a.URI = a.URL
	if p.Remote() { // name@domain: Mastodon's username is the name alone
		a.Username, _, _ = strings.Cut(p.PreferredUsername, "@")
	} else if s.d.Federation.On() {
		a.URI = s.d.Federation.Actor(p.ID)
	}
	if p.LastStatusTime > 0 {
		d := time.UnixMilli(p.LastStatusTime).UTC().Format(time.DateOnly) // a date, as Mastodon's
		a.LastStatusAt = &d
	}
	if p.AvatarURL != "" {
		a.Avatar = absolute(origin, p.AvatarURL)
	}
	if p.HeaderURL != "" {
		a.Header = absolute(origin, p.HeaderURL)
	}
	a.AvatarStatic, a.HeaderStatic = a.Avatar, a.Header
	for _, f := range p.Fields {
		a.Fields = append(a.Fields, mField{Name: f.Name, Value: richtext.HTML(f.Value, origin, nil)})
	}
	return a
}

// absolute makes a link from the service's root absolute.
func absolute(origin, link string) string {
	if strings.HasPrefix(link, "/") {
		return origin + link
	}
	return link
}

// isoTime rewrites an RFC 3339 time as Mastodon's ISO 8601, with
// milliseconds.
func isoTime(t string) string {
	if p, err := time.Parse(time.RFC3339Nano, t); err == nil {
		return p.UTC().Format("2006-01-02T15:04:05.000Z")
	}
	return t
}

func millisTime(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z") }

type mStatus struct {
	ID                 string         `json:"id"`
	URI                string         `json:"uri"`
	URL                string         `json:"url"`
	CreatedAt          string         `json:"created_at"`
	Account            mAccount       `json:"account"`
	Content            string         `json:"content"`
	Visibility         string         `json:"visibility"`
	Sensitive          bool           `json:"sensitive"`
	SpoilerText        string         `json:"spoiler_text"`
	MediaAttachments   []mAttachment  `json:"media_attachments"`
	Application        *mApplication  `json:"application"`
	Mentions           []mMention     `json:"mentions"`
	Tags               []mTag         `json:"tags"`
	Emojis             []any          `json:"emojis"`
	ReblogsCount       int64          `json:"reblogs_count"`
	FavouritesCount    int64          `json:"favourites_count"`
	RepliesCount       int64          `json:"replies_count"`
	InReplyToID        *string        `json:"in_reply_to_id"`
	InReplyToAccountID *string        `json:"in_reply_to_account_id"`
	Reblog             *mStatus       `json:"reblog"`
	Poll               *mPoll         `json:"poll"`
	Card               *mCard         `json:"card"`
	Language           *string        `json:"language"`
	Text               *string        `json:"text"`
	EditedAt           *string        `json:"edited_at"`
	Favourited         bool           `json:"favourited"`
	Reblogged          bool           `json:"reblogged"`
	Muted              bool           `json:"muted"`
	Bookmarked         bool           `json:"bookmarked"`
	Pinned             bool           `json:"pinned"`
	Filtered           []mFilterMatch `json:"filtered"`
}

type mMention struct {
	ID       string `json:"id"`
	Username string `json:"username"`
	URL      string `json:"url"`
	Acct     string `json:"acct"`
}

type mTag struct {
	Name      string `json:"name"`
	URL       string `json:"url"`
	History   []any  `json:"history"`
	Following *bool  `json:"following,omitempty"`
}

type mApplication struct {
	Name    string  `json:"name"`
	Website *string `json:"website"`
}

type mAttachment struct {
	ID               string  `json:"id"`
	Type             string  `json:"type"`
	URL              *string `json:"url"`
	PreviewURL       *string `json:"preview_url"`
	RemoteURL        *string `json:"remote_url"`
	Meta             mMeta   `json:"meta"`
	Description      *string `json:"description"`
	Blurhash         *string `json:"blurhash"`
	TextURL          *string `json:"text_url,omitempty"`
	PreviewRemoteURL *string `json:"preview_remote_url,omitempty"`
}

type mMeta struct {
	Original *mSize `json:"original,omitempty"`
	Small    *mSize `json:"small,omitempty"`
}

type mSize struct {
	Width  int     `json:"width"`
	Height int     `json:"height"`
	Size   string  `json:"size"`
	Aspect float64 `json:"aspect"`
}

type mFilterMatch struct {
	Filter         mFilter  `json:"filter"`
	KeywordMatches []string `json:"keyword_matches"`
	StatusMatches  []string `json:"status_matches"`
}

// attachment makes Mastodon's MediaAttachment of a picture.
func attachment(origin string, v media.View) mAttachment {
	a := mAttachment{ID: mid(v.ID), Type: "image"}
	if v.URL != "" { // null while the upload is processing
		u, p := absolute(origin, v.URL), absolute(origin, v.ThumbnailURL)
		a.URL, a.PreviewURL = &u, &p
	}
	if v.Description != "" {
		d := v.Description
		a.Description = &d
	}
	if v.Remote != "" {
		r := v.Remote
		a.RemoteURL = &r
	}
	if v.Width > 0 && v.Height > 0 {
		a.Meta.Original = &mSize{Width: v.Width, Height: v.Height, Size: itoa(v.Width) + "x" + itoa(v.Height), Aspect: float64(v.Width) / float64(v.Height)}
	}
	return a
}

// mastoVisibility names our visibility as Mastodon does, and back.
var mastoVisibility = map[string]string{
	activities.Public: "public", activities.Unlisted: "unlisted", activities.FollowersOnly: "private", activities.MentionedOnly: "direct",
}

func ourVisibility(v string) (string, bool) {
	for ours, theirs := range mastoVisibility {
		if theirs == v {
			return ours, true
		}
	}
	return "", false
}

// statuses makes Mastodon's Statuses of views.
func (s *Server) statuses(origin string, views []activities.View) []mStatus {
	out := make([]mStatus, 0, len(views))
	for _, v := range views {
		out = append(out, s.status(origin, v))
	}
	return out
}

// status makes Mastodon's Status of a view.
func (s *Server) status(origin string, v activities.View) mStatus {
	st := mStatus{
		ID: mid(v.ID), CreatedAt: millisTime(v.PostedTime), Visibility: mastoVisibility[v.Visibility],
		Sensitive: v.Sensitive, SpoilerText: v.SpoilerText, MediaAttachments: []mAttachment{}, Mentions: []mMention{},
		Tags: []mTag{}, Emojis: []any{}, ReblogsCount: v.RepostsCount, FavouritesCount: v.LikesCount, RepliesCount: v.RepliesCount,
		Favourited: v.LikedByViewer, Reblogged: v.RepostedByViewer, Bookmarked: v.Bookmarked, Pinned: v.Pinned,
		Filtered: []mFilterMatch{},
	}
	if v.Author != nil {
		st.Account = s.account(origin, *v.Author)
	}
	st.URL = origin + "/#/activity/" + v.ID
	st.URI = st.URL
	if s.d.Federation.On() {
		st.URI = s.d.Federation.Note(st.ID)
	}
	if v.RepostOf != nil {
		inner := s.status(origin, *v.RepostOf)
		st.Reblog = &inner
		st.Visibility = inner.Visibility
		return st
	}
	people := v.Mentioned()
	st.Content = richtext.HTML(v.Text(), origin, people)
	for i, id := range v.Mentions {
		if i < len(v.MentionNames) && v.MentionNames[i] != "" {
			n := v.MentionNames[i]
			st.Mentions = append(st.Mentions, mMention{ID: id, Username: n, Acct: n, URL: origin + "/#/people/" + n})
		}
	}
	for _, t := range v.Tags {
		st.Tags = append(st.Tags, mTag{Name: t, URL: origin + "/tags/" + t, History: []any{}})
	}
	for _, m := range v.MediaItems {
		st.MediaAttachments = append(st.MediaAttachments, attachment(origin, m))
	}
	st.Poll = pollOf(v)
	st.Card = card(origin, v.Card)
	if v.InReplyTo != "" {
		r, u := mid(v.InReplyTo), v.InReplyToUserID
		st.InReplyToID, st.InReplyToAccountID = &r, &u
		if u == "" {
			st.InReplyToAccountID = nil
		}
	}
	if v.Language != "" {
		l := v.Language
		st.Language = &l
	}
	if v.EditedTime != 0 {
		e := millisTime(v.EditedTime)
		st.EditedAt = &e
	}
	for _, f := range v.Filtered {
		st.Filtered = append(st.Filtered, mFilterMatch{Filter: newFilter(f.FilterID, f.Title, filters.Warn), KeywordMatches: f.KeywordMatches})
	}
	return st
}

type mFilter struct {
	ID           string     `json:"id"`
	Title        string     `json:"title"`
	Context      []string   `json:"context"`
	ExpiresAt    *string    `json:"expires_at"`
	FilterAction string     `json:"filter_action"`
	Keywords     []mKeyword `json:"keywords"`
	Statuses     []any      `json:"statuses"`
}

// newFilter makes Mastodon's Filter of a filter's id, title and action,
// its lists empty: the one maker of the entity (filterView fills it).
func newFilter(id, title, action string) mFilter {
	return mFilter{ID: id, Title: title, FilterAction: action, Context: []string{}, Keywords: []mKeyword{}, Statuses: []any{}}
}

type mKeyword struct {
	ID        string `json:"id"`
	Keyword   string `json:"keyword"`
	WholeWord bool   `json:"whole_word"`
}

func itoa(n int) string { return strconv.Itoa(n) }

// mCard is Mastodon's PreviewCard.
type mCard struct {
	URL          string  `json:"url"`
	Title        string  `json:"title"`
	Description  string  `json:"description"`
	Type         string  `json:"type"`
	AuthorName   string  `json:"author_name"`
	AuthorURL    string  `json:"author_url"`
	ProviderName string  `json:"provider_name"`
	ProviderURL  string  `json:"provider_url"`
	HTML         string  `json:"html"`
	Width        int     `json:"width"`
	Height       int     `json:"height"`
	Image        *string `json:"image"`
	EmbedURL     string  `json:"embed_url"`
	Blurhash     *string `json:"blurhash"`
}

// card is Mastodon's PreviewCard of a status's card (nil: none yet).
func card(origin string, c *activities.CardView) *mCard {
	if c == nil {
		return nil
	}
	out := &mCard{URL: c.URL, Title: c.Title, Description: c.Description, Type: c.Type, ProviderName: c.ProviderName}
	if u, err := url.Parse(c.URL); err == nil {
		out.ProviderURL = u.Scheme + "://" + u.Host
	}
	if c.Image != nil {
		img := absolute(origin, c.Image.URL)
		out.Image, out.Width, out.Height = &img, c.Image.Width, c.Image.Height
	}
	return out
}
