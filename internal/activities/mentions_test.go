package activities

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseMentions(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
	}{
		{"simple", "hi @alice", []string{"alice"}},
		{"start and punctuation", "@Bob, and @carol!", []string{"bob", "carol"}},
		{"dedupe ignoring case", "@dave @DAVE @Dave", []string{"dave"}},
		{"email is not a mention", "mail me at erin@example.com", nil},
		{"too short", "@ab", nil},
		{"too long", "@" + strings.Repeat("a", 31), nil},
		{"exactly 30", "@" + strings.Repeat("a", 30), []string{strings.Repeat("a", 30)}},
		{"double at", "@@frank", nil},
		{"at after name", "@gina@host", nil},
		{"unicode around", "こんにちは@hana。", []string{"hana"}},
		{"newline", "line\n@ivan", []string{"ivan"}},
		{"accented letter continues the word", "hi @bobé and @bob\u0301x", nil},
		{"latin letters beyond ascii", "@zoeß @zoeĳ", nil},
		{"japanese honorific ends it", "@hanaさん、@taro君", []string{"hana", "taro"}},
		{"other digits continue it", "@jack٣", nil},
		{"empty", "", nil},
		{"lone at", "@", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ParseMentions(tt.text)); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseMentionsCapped(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 80; i++ {
		fmt.Fprintf(&b, "@user%03d ", i)
	}
	got := ParseMentions(b.String())
	if len(got) != MaxMentions || got[0] != "user000" || got[49] != "user049" {
		t.Errorf("got %d mentions (%v...), want the first %d", len(got), got[:3], MaxMentions)
	}
}

var validName = regexp.MustCompile(`^[a-z0-9_]{3,30}$`)

func FuzzParseMentions(f *testing.F) {
	for _, s := range []string{"hi @alice", "@@x", "a@b.c @dd_d", "@" + strings.Repeat("z", 40), "\xff@abc\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got := ParseMentions(text)
		if len(got) > MaxMentions {
			t.Fatalf("%d mentions", len(got))
		}
		lower := strings.ToLower(text)
		seen := map[string]bool{}
		for _, name := range got {
			if !validName.MatchString(name) {
				t.Fatalf("invalid name %q", name)
			}
			if seen[name] {
				t.Fatalf("duplicate %q", name)
			}
			seen[name] = true
			if !strings.Contains(lower, "@"+name) {
				t.Fatalf("%q not in text", name)
			}
		}
	})
}

// ParseRemoteMentions finds @name@domain, and nothing ParseMentions
// finds.
func TestParseRemoteMentions(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       []string
	}{
		{"one", "hi @Bob@Social.Example.", []string{"bob@social.example"}},
		{"with a port, deduped", "@eve@127.0.0.1:8091 and @EVE@127.0.0.1:8091", []string{"eve@127.0.0.1:8091"}},
		{"names with dots", "cc @first.last@a.example, @x-y@b.example", []string{"first.last@a.example", "x-y@b.example"}},
		{"a local mention is none", "@bob and @carol", nil},
		{"a mail address is none", "write to mail@example.com", nil},
		{"a host of one label is none", "@bob@localhost", nil},
		{"inside a word is none", "x@bob@a.example", nil},
	} {
		if got := ParseRemoteMentions(c.text); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q → %q, want %q", c.name, c.text, got, c.want)
		}
	}
}
