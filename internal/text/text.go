// Package text checks the free text people write (titles, bodies,
// comments, display names, group titles and descriptions) before it is
// stored and shown to others: valid UTF-8, a bounded length, no control
// characters (newline and tab only where text may span lines), and none of
// the bidirectional formatting characters that make text display in
// another order than it is stored (U+202A to U+202E, U+2066 to U+2069), the
// classic way to disguise a link or a name.
package text

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"socialstream/internal/derrors"
)

// Rules say what one field accepts.
type Rules struct {
	Max       int  // at most this many characters (runes)
	Required  bool // not empty once trimmed
	Multiline bool // newline and tab allowed
}

// Clean trims s and checks it against r; field names it in the error,
// which is a derrors.InvalidArgument with a message for the client.
func Clean(field, s string, r Rules) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case !utf8.ValidString(s):
		return "", derrors.New(derrors.InvalidArgument, field+" must be UTF-8")
	case r.Required && s == "":
		return "", derrors.New(derrors.InvalidArgument, field+" is required")
	case utf8.RuneCountInString(s) > r.Max:
		return "", derrors.New(derrors.InvalidArgument, fmt.Sprintf("%s must be at most %d characters", field, r.Max))
	}
	if i := strings.IndexFunc(s, func(c rune) bool { return refused(c, r.Multiline) }); i >= 0 {
		c, _ := utf8.DecodeRuneInString(s[i:])
		what := "control characters"
		if Bidi(c) {
			what = "bidirectional override characters"
		}
		return "", derrors.New(derrors.InvalidArgument, fmt.Sprintf("%s must not contain %s (found U+%04X)", field, what, c))
	}
	return s, nil
}

func refused(c rune, multiline bool) bool {
	if multiline && (c == '\n' || c == '\t') {
		return false
	}
	return unicode.IsControl(c) || Bidi(c)
}

// Bidi reports whether c is a bidirectional embedding, override or isolate
// character. The marks (U+200E, U+200F) are allowed: they change no order
// of their own.
func Bidi(c rune) bool {
	return c >= '\u202A' && c <= '\u202E' || c >= '\u2066' && c <= '\u2069'
}

// Strip is Clean for text another server wrote, which is taken rather
// than refused: invalid UTF-8 and what Clean refuses are dropped, and
// what is left is trimmed and cut to max characters.
func Strip(s string, max int, multiline bool) string {
	s = strings.ToValidUTF8(s, "")
	s = strings.Map(func(c rune) rune {
		if refused(c, multiline) {
			return -1
		}
		return c
	}, s)
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) > max {
		s = strings.TrimSpace(string([]rune(s)[:max]))
	}
	return s
}
