package search

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"Straße":     "strasse",
		"CAFÉ":       "cafe",
		"Cafe\u0301": "cafe",
		"ＡＢＣ１２３":     "abc123",
		"ｶﾞｷﾞ":       "ガギ", // half-width kana, voicing kept
		"がぎ":         "がぎ", // the kana's voicing marks are not accents
		"नमस्ते":     "नमस्ते",
		"Ελληνικά":   "ελληνικα",
	} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTerms(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"Hello, WORLD! hello café", []string{"hello", "world", "cafe"}},
		{"#GoLang @bob https://example.com/a-b", []string{"golang", "bob", "https", "example", "com", "a", "b"}},
		{"猫が好き", []string{"猫", "猫が", "が好", "好", "好き"}},
		{"東京タワー", []string{"東", "東京", "京", "京タ", "タワ", "ワー"}},
		{"ok 猫", []string{"ok", "猫"}},
		{"abc日本", []string{"abc", "日", "日本", "本"}}, // a script change ends a run
		{"", nil},
	} {
		if got := Terms(c.text, 0); !cmp.Equal(got, c.want) {
			t.Errorf("Terms(%q) = %q, want %q", c.text, got, c.want)
		}
	}
	long := strings.Repeat("word", 100)
	if got := Terms(long, 0); len(got) != 1 || len(got[0]) != MaxTermLen {
		t.Errorf("a word of %d bytes: %q", len(long), got)
	}
	var many []string
	for i := range MaxTerms + 10 {
		many = append(many, fmt.Sprintf("w%d", i))
	}
	if got := Terms(strings.Join(many, " "), 0); len(got) != MaxTerms || got[0] != "w0" {
		t.Errorf("%d words: %d terms from %q", len(many), len(got), got[0])
	}
}

// A Japanese sentence is found by a word of two characters inside it,
// and by a longer one, whose bigrams it holds in order, and not by one
// whose bigrams it holds apart.
func TestJapaneseWordsInsideASentence(t *testing.T) {
	post := "昨日は東京都庁の展望台に行きました。"
	have := Terms(post, 0)
	for _, c := range []struct {
		q     string
		found bool
	}{
		{"東京", true},
		{"展望台", true},
		{"都庁", true},
		{"行き", true},
		{"京都", true}, // its bigram is in 東京都: bigrams read so
		{"大阪", false},
		{"展望", true},
		{"台展望", false}, // bigrams 台展? no: not held
		{"東京 展望台", true},
		{"東京 -都庁", false},
	} {
		q, err := Parse(c.q)
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.q, err)
		}
		found := !q.Empty()
		for _, term := range q.Terms {
			found = found && slices.Contains(have, term)
		}
		found = found && q.Matches(post)
		if found != c.found {
			t.Errorf("%q in %q: found %v, want %v (terms %q)", c.q, post, found, c.found, q.Terms)
		}
	}
	// A longer word whose bigrams are all held, but not together, is not
	// found: the post is checked for the word itself.
	apart := "東京に行った。京都タワーも見た。"
	q, _ := Parse("東京都")
	held := true
	for _, term := range q.Terms {
		held = held && slices.Contains(Terms(apart, 0), term)
	}
	if !held || q.Matches(apart) {
		t.Errorf("東京都 in %q: terms held %v, matches %v; want held and not matching", apart, held, q.Matches(apart))
	}
}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		q     string
		terms []string
		from  string
	}{
		{"Hello world", []string{"hello", "world"}, ""},
		{"from:@Bob has:MEDIA cats", []string{"has:media", "cats"}, "bob"},
		{"from:bob@far.example is:reply", []string{"is:reply"}, "bob@far.example"},
		{`"big red" dog`, []string{"big", "red", "dog"}, ""},
		{`cats -dogs -"small birds"`, []string{"cats"}, ""},
		{"東京都", []string{"東京", "京都"}, ""},
		{"猫", []string{"猫"}, ""},
		{"language:ja", []string{"language", "ja"}, ""}, // not an operator here: words
		{`"unclosed phrase`, []string{"unclosed", "phrase"}, ""},
	} {
		q, err := Parse(c.q)
		if err != nil || !cmp.Equal(q.Terms, c.terms) || q.From != c.from {
			t.Errorf("Parse(%q) = %q from %q, %v; want %q from %q", c.q, q.Terms, q.From, err, c.terms, c.from)
		}
	}
	if _, err := Parse("a b c d e f g h i j k l m n o p q"); !errors.Is(err, ErrTooManyTerms) {
		t.Errorf("17 words: %v, want ErrTooManyTerms", err)
	}
	if _, err := Parse(strings.Repeat("x", MaxQueryLen+1)); !errors.Is(err, ErrQueryTooLong) {
		t.Errorf("a query of %d bytes: %v", MaxQueryLen+1, err)
	}
	if q, _ := Parse("  !!! ... "); !q.Empty() {
		t.Errorf("punctuation alone: %+v, want empty", q)
	}
}

func TestMatches(t *testing.T) {
	q, _ := Parse(`"big red" -dog`)
	for text, want := range map[string]bool{
		"A BIG, red balloon": true, // punctuation between is no gap
		"red big balloon":    false,
		"big red dog":        false,
		"the big red Dog!":   false,
		"big red dogs":       true, // another word
	} {
		if got := q.Matches(text); got != want {
			t.Errorf("%q matches %q: %v, want %v", `"big red" -dog`, text, got, want)
		}
	}
}
