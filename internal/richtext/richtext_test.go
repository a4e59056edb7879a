package richtext

import (
	"strings"
	"testing"
)

func TestRenderHTML(t *testing.T) {
	people := map[string]string{"bob": "42"}
	for _, c := range []struct{ name, in, want string }{
		{"empty", "", ""},
		{"escaped", `<b>&"`, `<p>&lt;b&gt;&amp;&#34;</p>`},
		{"lines and paragraphs", "a\nb\n\n\nc", `<p>a<br />b</p><p>c</p>`},
		{"a mention of someone", "hi @Bob!", `<p>hi <span class="h-card" translate="no"><a href="https://x/#/people/bob" class="u-url mention" data-id="42">@<span>Bob</span></a></span>!</p>`},
		{"a mention of no one", "hi @nobody", `<p>hi @nobody</p>`},
		{"a tag", "#Go rocks", `<p><a href="https://x/tags/go" class="mention hashtag" rel="tag">#<span>Go</span></a> rocks</p>`},
		{"a number is no tag", "#1", `<p>#1</p>`},
		{"a URL, its trailing stop left out", "see https://e.com/a.", `<p>see <a href="https://e.com/a" target="_blank" rel="nofollow noopener noreferrer" translate="no"><span class="invisible">https://</span><span class="">e.com/a</span><span class="invisible"></span></a>.</p>`},
		{"a long URL", "https://e.com/0123456789012345678901234567890123456789",
			`<p><a href="https://e.com/0123456789012345678901234567890123456789" target="_blank" rel="nofollow noopener noreferrer" translate="no"><span class="invisible">https://</span><span class="ellipsis">e.com/012345678901234567890123</span><span class="invisible">4567890123456789</span></a></p>`},
		{"a mention and a tag inside a URL stay its", "https://e.com/@bob#go", `<p><a href="https://e.com/@bob#go" target="_blank" rel="nofollow noopener noreferrer" translate="no"><span class="invisible">https://</span><span class="">e.com/@bob#go</span><span class="invisible"></span></a></p>`},
		{"a URL with a quote cannot break out", `https://e.com/"onmouseover=x`, `<p><a href="https://e.com/" target="_blank" rel="nofollow noopener noreferrer" translate="no"><span class="invisible">https://</span><span class="">e.com/</span><span class="invisible"></span></a>&#34;onmouseover=x</p>`},
	} {
		if got := HTML(c.in, "https://x", people); got != c.want {
			t.Errorf("%s: HTML(%q)\n got %s\nwant %s", c.name, c.in, got, c.want)
		}
	}
}

// What HTML keeps is keyed by all it renders from: the same text
// with other people, or another origin, renders afresh; a text too long to
// keep renders as well.
func TestRenderHTMLKeepsByEveryInput(t *testing.T) {
	text := "hi @Bob and @ann, see #go"
	long := strings.Repeat("@bob ", renderedText/5+1)
	for _, c := range []struct {
		text, origin string
		people       map[string]string
	}{
		{text, "https://x", map[string]string{"bob": "42"}},
		{text, "https://x", map[string]string{"bob": "43"}},
		{text, "https://x", map[string]string{"bob": "42", "ann": "7"}},
		{text, "https://x", nil},
		{text, "https://y", map[string]string{"bob": "42"}},
		{text, "https://x", map[string]string{"bob": "42"}}, // kept
		{long, "https://x", map[string]string{"bob": "42"}},
		{"@bob", "https://x", map[string]string{"bob": "42"}},
		{"@bob3:bob2:42", "https://x", nil}, // no key of another's
	} {
		for range 2 {
			if got, want := HTML(c.text, c.origin, c.people), render(c.text, c.origin, c.people); got != want {
				t.Errorf("HTML(%.20q, %s, %v)\n got %s\nwant %s", c.text, c.origin, c.people, got, want)
			}
		}
	}
	if a, b := HTML(text, "https://x", map[string]string{"bob": "42"}), HTML(text, "https://x", map[string]string{"bob": "43"}); a == b {
		t.Errorf("two people rendered alike: %s", a)
	}
}
