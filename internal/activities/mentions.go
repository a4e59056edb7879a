package activities

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxMentions is the most users one activity mentions; later names are
// plain text.
const MaxMentions = 50

// ParseMentions returns the distinct usernames, lowercased and in order of
// first appearance, written as @name in text: an @ at the start or after a
// character that cannot be part of a name (so mail@example.com is not a
// mention, while こんにちは@hana is), then 3 to 30 of A-Z a-z 0-9 _, then
// the end or a character that cannot continue a Latin word: not @, a
// Latin-script letter (é, ß), a combining mark or a digit. So @bobé
// mentions nobody rather than bob, and @hanaさん mentions hana, as people
// write it in Japanese. At most MaxMentions are returned.
func ParseMentions(text string) []string {
	var out []string
	seen := map[string]bool{}
	EachMention(text, func(_, _ int, name string) bool {
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
		return len(out) < MaxMentions
	})
	return out
}

// EachMention calls f with each @name of text, by ParseMentions' rules,
// in order: where its @ starts and its name ends, and the name in lower
// case, until f returns false.
func EachMention(text string, f func(start, end int, name string) bool) {
	for i := 0; i < len(text); i++ {
		if text[i] != '@' || (i > 0 && (nameByte(text[i-1]) || text[i-1] == '@')) {
			continue
		}
		j := i + 1
		for j < len(text) && nameByte(text[j]) {
			j++
		}
		n := j - (i + 1)
		after, _ := utf8.DecodeRuneInString(text[j:])
		if n >= 3 && n <= 30 && (j == len(text) || !continues(after)) {
			if !f(i, j, strings.ToLower(text[i+1:j])) {
				return
			}
		}
		i = j - 1
	}
}

// continues reports whether c, right after a name, makes it the prefix of
// a longer word.
func continues(c rune) bool {
	return c == '@' || unicode.Is(unicode.Latin, c) || unicode.IsDigit(c) || unicode.Is(unicode.Mn, c)
}

func nameByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_'
}
