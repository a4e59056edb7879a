package text

import (
	"errors"
	"strings"
	"testing"

	"socialstream/internal/derrors"
)

func TestClean(t *testing.T) {
	line := Rules{Max: 10, Required: true}
	lines := Rules{Max: 10, Multiline: true}
	for _, c := range []struct {
		in   string
		r    Rules
		want string // "" with ok false: refused
		ok   bool
	}{
		{"  hello  ", line, "hello", true},
		{"a\nb\tc", lines, "a\nb\tc", true},
		{"a\nb", line, "", false},
		{"a\tb", line, "", false},
		{"nul\x00", lines, "", false},
		{"esc\x1b[2J", lines, "", false},
		{"del\x7f", lines, "", false},
		{"c1\u0085x", lines, "", false},
		{"gpj.\u202Eexe", lines, "", false},
		{"\u2066iso\u2069", line, "", false},
		{"mark\u200F", line, "mark\u200F", true},
		{"日本語テキスト", line, "日本語テキスト", true},
		{"", line, "", false},
		{"   ", lines, "", true},
		{strings.Repeat("é", 10), line, strings.Repeat("é", 10), true},
		{strings.Repeat("é", 11), line, "", false},
		{"bad\xff", lines, "", false},
	} {
		got, err := Clean("title", c.in, c.r)
		if c.ok != (err == nil) || got != c.want {
			t.Errorf("Clean(%q, %+v) = %q, %v; want %q, ok %v", c.in, c.r, got, err, c.want, c.ok)
		}
		if err != nil && !errors.Is(err, derrors.InvalidArgument) {
			t.Errorf("Clean(%q): error %v is not InvalidArgument", c.in, err)
		}
	}
}

func TestCleanNamesTheCharacter(t *testing.T) {
	_, err := Clean("displayName", "evil\u202Egnp", Rules{Max: 64})
	if err == nil || !strings.Contains(err.Error(), "U+202E") || !strings.Contains(err.Error(), "bidirectional") {
		t.Errorf("error %v does not name U+202E as bidirectional", err)
	}
}

// Strip takes another server's text: what Clean refuses is dropped, not
// refused, and the rest cut to its length.
func TestStrip(t *testing.T) {
	for _, c := range []struct {
		in        string
		max       int
		multiline bool
		want      string
	}{
		{"  ann  ", 10, false, "ann"},
		{"a\u202Eb\x00c", 10, false, "abc"},
		{"a\nb", 10, false, "ab"},
		{"a\nb", 10, true, "a\nb"},
		{"héllo wörld", 5, false, "héllo"},
		{"ok\xffok", 10, false, "okok"},
	} {
		if got := Strip(c.in, c.max, c.multiline); got != c.want {
			t.Errorf("Strip(%q, %d, %v) = %q, want %q", c.in, c.max, c.multiline, got, c.want)
		}
	}
}
