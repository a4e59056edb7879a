package federation

import (
	"context"
	"encoding/json"
	"strings"

	"socialstream/internal/media"
)

// A Note's pictures are its attachment: Documents (Mastodon, GoToSocial)
// or Images, each with its address (url: a string, a Link, or a list of
// Links), its type (mediaType), its alt text (name) and its size. They
// are kept by address, as items of the Note's author (media.Remote), and
// their bytes fetched and cached here within media's limits; attachments
// of other kinds (video, audio) are not kept.

// Pictures keeps the pictures of posts from elsewhere (package media's
// Service).
type Pictures interface {
	Remote(ctx context.Context, user string, list []media.RemoteInput) ([]string, error)
}

// attachment is one of a Note's attachments.
type attachment struct {
	Type      string          `json:"type"`
	MediaType string          `json:"mediaType"`
	URL       json.RawMessage `json:"url"`
	Name      string          `json:"name"`
	Width     int             `json:"width"`
	Height    int             `json:"height"`
}

// attachments reads attachment: one object, or a list; what does not
// read as an object is left out.
type attachments []attachment

func (a *attachments) UnmarshalJSON(b []byte) error {
	var many []json.RawMessage
	if len(b) > 0 && b[0] == '{' {
		many = []json.RawMessage{b}
	} else if err := json.Unmarshal(b, &many); err != nil {
		return nil // not a list: no pictures
	}
	for _, raw := range many {
		var one attachment
		if json.Unmarshal(raw, &one) == nil {
			*a = append(*a, one)
		}
	}
	return nil
}

// link is an attachment's url as a Link.
type link struct {
	Href      string `json:"href"`
	MediaType string `json:"mediaType"`
}

// picture returns what media keeps of an attachment, and whether it is a
// picture at all: a Document or an Image whose type, when said, is an
// image's.
func (a attachment) picture() (media.RemoteInput, bool) {
	if a.Type != "Document" && a.Type != "Image" {
		return media.RemoteInput{}, false
	}
	in := media.RemoteInput{MimeType: a.MediaType, Description: a.Name, Width: a.Width, Height: a.Height}
	var one string
	var links []link
	switch {
	case json.Unmarshal(a.URL, &one) == nil:
		in.URL = one
	case len(a.URL) > 0 && a.URL[0] == '{':
		var l link
		if json.Unmarshal(a.URL, &l) == nil {
			links = []link{l}
		}
	default:
		json.Unmarshal(a.URL, &links)
	}
	for _, l := range links { // the first image among the Links
		if in.URL == "" && (l.MediaType == "" || strings.HasPrefix(l.MediaType, "image/")) {
			in.URL = l.Href
			if l.MediaType != "" {
				in.MimeType = l.MediaType
			}
		}
	}
	if in.MimeType != "" && !strings.HasPrefix(strings.ToLower(in.MimeType), "image/") {
		return in, false
	}
	return in, in.URL != ""
}

// picturesOf keeps the pictures of a Note of actor's, to be posted with
// it; none when the service keeps none.
func (s *Service) picturesOf(ctx context.Context, actor Actor, n note) ([]string, error) {
	if s.pictures == nil {
		return nil, nil
	}
	var list []media.RemoteInput
	for _, a := range n.Attachment {
		if in, ok := a.picture(); ok {
			list = append(list, in)
		}
	}
	if len(list) == 0 {
		return nil, nil
	}
	return s.pictures.Remote(ctx, actor.UserID, list)
}
