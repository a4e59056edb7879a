package cards

import (
	"io"
	"net/url"
	"strings"

	"golang.org/x/net/html"

	"socialstream/internal/text"
)

// What a page says of itself, read from its head: OpenGraph's og:
// properties first, then Twitter card's, then <title> and the
// description meta.

// page is what read found.
type page struct {
	title, description, image, kind, site string
}

// metaNames maps a meta's property or name to the field it fills, by
// precedence: a field keeps the first of the highest it meets.
var metaNames = map[string]struct {
	field string
	rank  int
}{
	"og:title": {"title", 3}, "twitter:title": {"title", 2},
	"og:description": {"description", 3}, "twitter:description": {"description", 2}, "description": {"description", 1},
	"og:image": {"image", 3}, "og:image:url": {"image", 3}, "og:image:secure_url": {"image", 3}, "twitter:image": {"image", 2}, "twitter:image:src": {"image", 2},
	"og:type": {"kind", 3}, "og:site_name": {"site", 3},
}

// read reads a page's head from r (an HTML document, at most what the
// caller lets through), up to its body; <title> fills in a title none of
// the metas gave.
func read(r io.Reader) page {
	var p page
	ranks := map[string]int{}
	set := func(field, value string, rank int) {
		value = strings.TrimSpace(value)
		if value == "" || ranks[field] >= rank {
			return
		}
		ranks[field] = rank
		switch field {
		case "title":
			p.title = value
		case "description":
			p.description = value
		case "image":
			p.image = value
		case "kind":
			p.kind = value
		case "site":
			p.site = value
		}
	}
	z := html.NewTokenizer(r)
	inTitle := false
	for {
		switch z.Next() {
		case html.ErrorToken:
			return p
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			switch string(name) {
			case "body":
				return p
			case "title":
				inTitle = true
			case "meta":
				var key, content string
				for hasAttr {
					var k, v []byte
					k, v, hasAttr = z.TagAttr()
					switch string(k) {
					case "property", "name":
						if key == "" {
							key = strings.ToLower(string(v))
						}
					case "content":
						content = string(v)
					}
				}
				if m, ok := metaNames[key]; ok {
					set(m.field, content, m.rank)
				}
			}
		case html.TextToken:
			if inTitle {
				set("title", string(z.Text()), 1)
			}
		case html.EndTagToken:
			if name, _ := z.TagName(); string(name) == "title" {
				inTitle = false
			} else if string(name) == "head" {
				return p
			}
		}
	}
}

// card makes the Card of a page read from address (where its links are
// resolved), or false if it says nothing worth showing (no title).
func (p page) card(address *url.URL) (Card, bool) {
	c := Card{URL: address.String(), Type: "link",
		Title:        text.Strip(p.title, MaxTitle, false),
		Description:  text.Strip(p.description, MaxDescription, false),
		ProviderName: text.Strip(p.site, MaxTitle, false),
	}
	if c.Title == "" {
		return Card{}, false
	}
	switch strings.ToLower(strings.TrimSpace(p.kind)) {
	case "video", "video.movie", "video.episode", "video.other":
		c.Type = "video"
	}
	if c.ProviderName == "" {
		c.ProviderName = strings.TrimPrefix(address.Hostname(), "www.")
	}
	if p.image != "" {
		if img, err := address.Parse(strings.TrimSpace(p.image)); err == nil && (img.Scheme == "https" || img.Scheme == "http") &&
			len(img.String()) <= MaxURL {
			c.ImageURL = img.String()
		}
	}
	return c, true
}
