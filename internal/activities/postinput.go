package activities

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"socialstream/internal/derrors"
	"socialstream/internal/ids"
	"socialstream/internal/media"
	"socialstream/internal/polls"
	"socialstream/internal/text"
)

// What a client sends to post an activity, and how it is checked before
// anything is read: its text, visibility, warning, language, reply,
// pictures and poll.

// PostInput is what a client sends to post an activity.
type PostInput struct {
	AppID      string
	Title      string
	Body       string
	URL        string
	ExternalID string
	// Visibility is public (the default, empty), unlisted, followers or
	// mentioned.
	Visibility string
	// SpoilerText is a content warning the post is folded behind (at most
	// MaxSpoilerText characters); Sensitive marks its pictures as such
	// (set by a warning).
	SpoilerText string
	Sensitive   bool
	// Language is the language it is written in, a BCP 47 tag (ISO 639
	// and, optionally, more: "en", "pt-BR"); empty: not said.
	Language string
	// Joined: the body goes on the title's line (Activity.Joined).
	Joined bool
	// InReplyTo makes the post a reply to that activity (what it shares,
	// for a repost), which its author must be able to see.
	InReplyTo string
	// Media are the ids of the author's uploaded pictures it carries, at
	// most media.MaxPerActivity, in the order shown.
	Media []string
	// Mentions, for a post of another server's (ExternalID from
	// elsewhere), are the ids of the people known here its Note tags:
	// its mentions, whatever its text says. A post made here mentions
	// the @names of its text, and gives none.
	Mentions []string
	// Poll, if set, is the poll the post carries (not with pictures); its
	// end is counted from the post's checking.
	Poll *polls.Input
	// PollElsewhere, for a post of another server's, is its Question's
	// poll (polls.Elsewhere), counted there.
	PollElsewhere *polls.Poll
	// poll is Poll as checked, or PollElsewhere.
	poll *polls.Poll
	// HeldBy, set by the scheduled post that publishes it (package
	// scheduled), is that post's id: the pictures held for it may be
	// attached, as loose ones may.
	HeldBy string
	// repostOf, set by Repost alone, makes the post a repost of that
	// activity, by repostOfUser; shared is that activity as Repost read it,
	// outside the transaction (see Post).
	repostOf, repostOfUser string
	shared                 *Activity
}

var appIDRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)

// ValidAppID reports whether id is a valid application id.
func ValidAppID(id string) bool { return appIDRE.MatchString(id) }

// Check checks in as Post would at now, before anything is read, and
// cleans it as Post does (its text, its visibility's default): what a
// post scheduled for later must pass when it is scheduled. What depends
// on what is stored (the pictures, the post it answers, the author's
// standing) is decided when it is posted.
func (in *PostInput) Check(now time.Time) error {
	if err := in.validate(); err != nil {
		return err
	}
	return in.checkPoll(now)
}

// checkPoll checks the poll the post asks for, as of now.
func (in *PostInput) checkPoll(now time.Time) error {
	if in.PollElsewhere != nil {
		if in.Poll != nil || !fromElsewhere(in.ExternalID) {
			return derrors.New(derrors.InvalidArgument, "a poll of another server's is a post of another server's")
		}
		in.poll = in.PollElsewhere
		return nil
	}
	if in.Poll == nil {
		return nil
	}
	if len(in.Media) > 0 {
		return derrors.New(derrors.InvalidArgument, "a post carries pictures or a poll, not both")
	}
	var err error
	in.poll, err = in.Poll.Make("", now)
	return err
}

func (in *PostInput) validate() error {
	switch in.Visibility {
	case "":
		in.Visibility = Public
	case Public, Unlisted, FollowersOnly, MentionedOnly:
	default:
		return errVisibility
	}
	var err error
	if in.SpoilerText, err = text.Clean("spoilerText", in.SpoilerText, text.Rules{Max: MaxSpoilerText}); err != nil {
		return err
	}
	if in.SpoilerText != "" {
		in.Sensitive = true // a warning folds the pictures too, as Mastodon does
	}
	if in.repostOf != "" {
		return nil // no text, and the rest is Repost's
	}
	if in.Language, err = Language(in.Language); err != nil {
		return err
	}
	if _, ok := ids.Parse(in.InReplyTo); in.InReplyTo != "" && !ok {
		return ErrNoSuchActivity
	}
	if err := media.CheckIDs(in.Media); err != nil {
		return err
	}
	// Pictures alone make a post (Mastodon's, and a Note of another
	// server's, may be pictures with no words).
	if in.Title, err = text.Clean("title", in.Title, text.Rules{Max: MaxTitle, Required: len(in.Media) == 0}); err != nil {
		return err
	}
	if in.Body, err = text.Clean("body", in.Body, text.Rules{Max: MaxBody, Multiline: true}); err != nil {
		return err
	}
	switch {
	case in.AppID != "" && !ValidAppID(in.AppID):
		return derrors.New(derrors.InvalidArgument, "appId must be 1 to 100 of A-Z a-z 0-9 . _ -")
	case len(in.ExternalID) > MaxExternalID || !utf8.ValidString(in.ExternalID):
		return derrors.New(derrors.InvalidArgument, fmt.Sprintf("externalId must be at most %d bytes of UTF-8", MaxExternalID))
	}
	if in.URL != "" {
		u, err := url.Parse(in.URL)
		if err != nil || len(in.URL) > MaxURL || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return derrors.New(derrors.InvalidArgument, fmt.Sprintf("url must be an absolute http or https URL of at most %d characters", MaxURL))
		}
	}
	return nil
}

// TextParts is a text as an activity keeps it: a title, and a body.
type TextParts struct {
	Title, Body string
	Joined      bool // the body goes on the title's line
}

// SplitText parts a text into the title (its first line with text) and
// the body (the rest). A first line longer than a title may be is cut
// where it may end (at MaxTitle characters, or before, so that neither
// part begins or ends with a space, which the activity would not keep),
// and the body goes on its line (Joined): the text comes back whole
// (View.Text).
func SplitText(text string) TextParts {
	first, rest, _ := strings.Cut(text, "\n")
	if utf8.RuneCountInString(strings.TrimSpace(first)) <= MaxTitle {
		return TextParts{Title: strings.TrimSpace(first), Body: strings.Trim(rest, "\n")}
	}
	runes := []rune(text)
	cut := MaxTitle
	for cut > 1 && (unicode.IsSpace(runes[cut-1]) || unicode.IsSpace(runes[cut])) {
		cut--
	}
	return TextParts{Title: string(runes[:cut]), Body: string(runes[cut:]), Joined: true}
}
