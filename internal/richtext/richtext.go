// Package richtext renders the text the service keeps as the HTML the
// fediverse shows: Mastodon's apps read it as a status's content, and
// ActivityPub's peers as a Note's. It escapes all of the text, and adds
// paragraphs at blank lines, <br> at a line's end, and links, with the
// classes Mastodon's apps style, for @mentions (to the person), #tags (to
// the tag's feed) and http(s) URLs. Nothing a writer types becomes
// markup. It owns no entity.
package richtext

import (
	"html"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	lru "github.com/hashicorp/golang-lru/v2"

	"socialstream/internal/activities"
	"socialstream/internal/tags"
)

// span is a stretch of text rendered as a link.
type span struct {
	start, end int
	html       string
}

// urlPattern finds a URL: http or https, up to a space; what trails it
// and cannot end a URL (.,;:!? and closing quotes or brackets) is left
// out.
var urlPattern = regexp.MustCompile(`https?://[^\s<>"]+`)

// blankLines part paragraphs.
var blankLines = regexp.MustCompile(`\n{2,}`)

// urlDisplay is how much of a URL's rest is shown before an ellipsis.
const urlDisplay = 30

// rendered keeps what HTML made of its latest inputs, for texts of
// at most renderedText bytes: a page renders the same posts and the same
// authors' notes as the pages before it. HTML is a function of its
// inputs alone, so what is kept is never stale.
var rendered, _ = lru.New[string, string](renderedEntries) // only a size below 1 fails

const (
	renderedEntries = 2048
	renderedText    = 2000
)

// HTML renders text as content, its links under origin. people maps the
// lowercased usernames mentioned to their accounts' ids, for the links
// of those who exist (others stay text).
func HTML(text, origin string, people map[string]string) string {
	if text == "" {
		return ""
	}
	if len(text) > renderedText {
		return render(text, origin, people)
	}
	key := renderKey(text, origin, people)
	if out, ok := rendered.Get(key); ok {
		return out
	}
	out := render(text, origin, people)
	rendered.Add(key, out)
	return out
}

// renderKey names HTML's inputs: the origin, the text and the
// people (in the order of their names), each string after its length, so
// that no two inputs share a name.
func renderKey(text, origin string, people map[string]string) string {
	var b strings.Builder
	put := func(s string) {
		b.WriteString(strconv.Itoa(len(s)))
		b.WriteByte(':')
		b.WriteString(s)
	}
	put(origin)
	put(text)
	for _, name := range slices.Sorted(maps.Keys(people)) {
		put(name)
		put(people[name])
	}
	return b.String()
}

// render is HTML, rendering.
func render(text, origin string, people map[string]string) string {
	var paras []string
	for _, para := range blankLines.Split(text, -1) {
		para = strings.Trim(para, "\n")
		if para == "" {
			continue
		}
		lines := strings.Split(para, "\n")
		for i, l := range lines {
			lines[i] = linked(l, origin, people)
		}
		paras = append(paras, "<p>"+strings.Join(lines, "<br />")+"</p>")
	}
	return strings.Join(paras, "")
}

// linked renders one line: escaped, with its links.
func linked(line, origin string, people map[string]string) string {
	var spans []span
	for _, m := range urlPattern.FindAllStringIndex(line, -1) {
		end := m[1]
		for end > m[0] && strings.ContainsRune(".,;:!?'\")]}", rune(line[end-1])) {
			end--
		}
		if u, err := url.Parse(line[m[0]:end]); err == nil && u.Host != "" {
			spans = append(spans, span{m[0], end, urlLink(line[m[0]:end])})
		}
	}
	inURL := func(i int) bool {
		return slices.ContainsFunc(spans, func(s span) bool { return i >= s.start && i < s.end })
	}
	activities.EachMention(line, func(start, end int, name string) bool {
		if id, ok := people[name]; ok && !inURL(start) {
			href := html.EscapeString(origin + "/#/people/" + name)
			spans = append(spans, span{start, end, `<span class="h-card" translate="no"><a href="` + href +
				`" class="u-url mention" data-id="` + html.EscapeString(id) + `">@<span>` + html.EscapeString(line[start+1:end]) + `</span></a></span>`})
		}
		return true
	})
	tags.EachIn(line, func(start, end int, name string) bool {
		if !inURL(start) {
			href := html.EscapeString(origin + "/tags/" + url.PathEscape(name))
			spans = append(spans, span{start, end, `<a href="` + href + `" class="mention hashtag" rel="tag">#<span>` +
				html.EscapeString(line[start+1:end]) + `</span></a>`})
		}
		return true
	})
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	var b strings.Builder
	at := 0
	for _, s := range spans {
		if s.start < at {
			continue
		}
		b.WriteString(html.EscapeString(line[at:s.start]))
		b.WriteString(s.html)
		at = s.end
	}
	b.WriteString(html.EscapeString(line[at:]))
	return b.String()
}

// urlLink is Mastodon's rendering of a URL: the scheme hidden, the rest
// cut with an ellipsis past urlDisplay characters.
func urlLink(raw string) string {
	scheme, rest, _ := strings.Cut(raw, "://")
	shown, hidden, class := rest, "", ""
	if utf8.RuneCountInString(rest) > urlDisplay {
		r := []rune(rest)
		shown, hidden, class = string(r[:urlDisplay]), string(r[urlDisplay:]), "ellipsis"
	}
	return `<a href="` + html.EscapeString(raw) + `" target="_blank" rel="nofollow noopener noreferrer" translate="no">` +
		`<span class="invisible">` + html.EscapeString(scheme) + `://</span><span class="` + class + `">` + html.EscapeString(shown) +
		`</span><span class="invisible">` + html.EscapeString(hidden) + `</span></a>`
}
