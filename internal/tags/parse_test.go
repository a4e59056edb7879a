package tags

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"#Go and #go and #GO", []string{"go"}},
		{"#go, #rust.", []string{"go", "rust"}},
		{"(#paren) [#bracket]", []string{"paren", "bracket"}},
		{"a#b mail#c", nil},                          // inside a word
		{"https://example.com/#frag (x)#y", nil},     // a URL's fragment, after )
		{"it&#39;s", nil},                            // a character reference
		{"##x #", nil},                               // no name
		{"#2024 #1", nil},                            // numbers
		{"#2024年 #x1", []string{"2024年", "x1"}},      // digits and more
		{"こんにちは#日本 と #東京", []string{"東京"}},           // after a letter, not a tag
		{"#Straße #STRASSE", []string{"strasse"}},    // folded, not just lowercased
		{"#Café #Cafe\u0301", []string{"café"}},      // composed or not, one tag
		{"#snake_case-tail", []string{"snake_case"}}, // - ends it
		{"line\n#next", []string{"next"}},
	} {
		got, err := Parse(c.text)
		if err != nil || !cmp.Equal(got, c.want) {
			t.Errorf("Parse(%q) = %q, %v; want %q", c.text, got, err, c.want)
		}
	}
	long := "#" + strings.Repeat("x", MaxLen)
	if got, err := Parse(long); err != nil || len(got) != 1 {
		t.Errorf("a tag of %d: %v, %v", MaxLen, got, err)
	}
	if _, err := Parse(long + "y"); err == nil {
		t.Errorf("a tag of %d: no error", MaxLen+1)
	}
	var many []string
	for i := range MaxPerActivity {
		many = append(many, fmt.Sprintf("#t%d", i))
	}
	if got, err := Parse(strings.Join(append(many, many...), " ")); err != nil || len(got) != MaxPerActivity {
		t.Errorf("%d tags twice: %d, %v", MaxPerActivity, len(got), err)
	}
	if _, err := Parse(strings.Join(append(many, "#one_more"), " ")); !errors.Is(err, ErrTooMany) {
		t.Errorf("%d tags: %v, want ErrTooMany", MaxPerActivity+1, err)
	}
}

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{"Go": "go", "#Go": "go", "ÉTÉ": "été", "2024年": "2024年"} {
		if got, err := Normalize(in); err != nil || got != want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "#", "##go", "42", "two words", "a-b", strings.Repeat("x", MaxLen+1), "\xff"} {
		if got, err := Normalize(bad); !errors.Is(err, ErrBadTag) {
			t.Errorf("Normalize(%q) = %q, %v; want ErrBadTag", bad, got, err)
		}
	}
}
