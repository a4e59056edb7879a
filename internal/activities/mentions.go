package activities

import "strings"

// MaxMentions is the most users one activity mentions; later names are
// plain text.
const MaxMentions = 50

// ParseMentions returns the distinct usernames, lowercased and in order of
// first appearance, written as @name in text: an @ at the start or after a
// character that cannot be part of a name (so mail@example.com is not a
// mention), then 3 to 30 of A-Z a-z 0-9 _, then the end or such a
// character. At most MaxMentions are returned.
func ParseMentions(text string) []string {
	var out []string
	seen := map[string]bool{}
	for i := 0; i < len(text) && len(out) < MaxMentions; i++ {
		if text[i] != '@' || (i > 0 && (nameByte(text[i-1]) || text[i-1] == '@')) {
			continue
		}
		j := i + 1
		for j < len(text) && nameByte(text[j]) {
			j++
		}
		n := j - (i + 1)
		if n >= 3 && n <= 30 && (j == len(text) || text[j] != '@') {
			name := strings.ToLower(text[i+1 : j])
			if !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
		i = j - 1
	}
	return out
}

func nameByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_'
}
