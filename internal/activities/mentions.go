package activities

import (
	"context"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"socialstream/internal/accounts"
	"socialstream/internal/derrors"
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

// mentionsOf returns the people a post mentions, in order, with the
// name each is mentioned as: for a post made here, the @names of its text
// that name someone (mentionedNames); for one of another server's
// (externalID from elsewhere), those of tagged (ids, as its Note's tags
// name them) that are here, by their names here, whatever its text says.
func (s *Service) mentionsOf(ctx context.Context, text, externalID string, tagged []string) ([]string, map[string]string, error) {
	var mentions []string
	names := map[string]string{}
	if !fromElsewhere(externalID) {
		if len(tagged) > 0 {
			return nil, nil, derrors.New(derrors.InvalidArgument, "a post made here mentions the people its text names")
		}
		said := mentionedNames(text)
		byName, err := s.accounts.LookupUsernames(ctx, said)
		if err != nil {
			return nil, nil, err
		}
		if s.findUnknown(ctx, said, byName) {
			if byName, err = s.accounts.LookupUsernames(ctx, said); err != nil {
				return nil, nil, err
			}
		}
		for _, n := range said {
			if id, ok := byName[n]; ok {
				mentions = append(mentions, id)
				names[id] = n
			}
		}
		return mentions, names, nil
	}
	tagged = tagged[:min(len(tagged), MaxMentions)]
	l := s.db.Lookup()
	rs := make([]*accounts.Record, len(tagged))
	for i, id := range tagged {
		rs[i] = accounts.Read(l, id)
	}
	if err := l.Run(ctx); err != nil {
		return nil, nil, err
	}
	for i, r := range rs {
		if r.Exists() && names[tagged[i]] == "" {
			mentions = append(mentions, tagged[i])
			names[tagged[i]] = r.Username()
		}
	}
	return mentions, names, nil
}

// The people of other servers a post made here mentions whom the
// service does not know yet are found in its read step (as Mastodon finds
// them): at most maxFound a post, in findWait, each by their server's
// WebFinger and actor. One not found is no mention (the text keeps it as
// written).
const (
	maxFound = 5
	findWait = 10 * time.Second
)

// findUnknown finds the people of other servers of said that known
// (found by name) lacks, through the Finder, and reports whether it
// tried any.
func (s *Service) findUnknown(ctx context.Context, said []string, known map[string]string) bool {
	if s.cfg.Finder == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, findWait)
	defer cancel()
	tried := 0
	for _, acct := range said {
		if _, ok := known[acct]; ok || !strings.Contains(acct, "@") || tried == maxFound {
			continue
		}
		tried++
		_ = s.cfg.Finder.Find(ctx, acct) // the Finder logs why not: no mention, then
	}
	return tried > 0
}

// mentionedNames are the names of the people a text mentions: here
// (ParseMentions), then of other servers (ParseRemoteMentions), whom
// the service knows, at most MaxMentions in all.
func mentionedNames(text string) []string {
	names := append(ParseMentions(text), ParseRemoteMentions(text)...)
	return names[:min(len(names), MaxMentions)]
}

// ParseRemoteMentions returns the distinct people of other servers
// written as @name@domain in text (federation), lowercased as name@domain
// and in order of first appearance: an @ where ParseMentions' may start,
// a name of 1 to 64 of A-Z a-z 0-9 _ . -, an @, and a host of two labels
// or more (or one with a port), a full stop after it left out. At most
// MaxMentions are returned.
func ParseRemoteMentions(text string) []string {
	var out []string
	seen := map[string]bool{}
	for i := 0; i < len(text) && len(out) < MaxMentions; i++ {
		if text[i] != '@' || (i > 0 && remoteNameByte(text[i-1])) || i > 0 && text[i-1] == '@' {
			continue
		}
		acct, next := remoteMentionAt(text, i)
		if acct != "" && !seen[acct] {
			seen[acct] = true
			out = append(out, acct)
		}
		i = next - 1
	}
	return out
}

// remoteMentionAt reads the @name@domain whose first @ is at i: its
// name@domain, lowercased ("" when none is written there), and where
// the scan goes on.
func remoteMentionAt(text string, i int) (string, int) {
	j := i + 1
	for j < len(text) && remoteNameByte(text[j]) {
		j++
	}
	name := text[i+1 : j]
	if j >= len(text) || text[j] != '@' || name == "" || len(name) > 64 {
		return "", j
	}
	k := j + 1
	for k < len(text) && (remoteNameByte(text[k]) || text[k] == ':') {
		k++
	}
	host := strings.TrimRight(text[j+1:k], ".:-")
	if !(strings.Contains(host, ".") || strings.Contains(host, ":")) || len(host) > 253 || strings.HasPrefix(host, ".") {
		return "", k
	}
	return strings.ToLower(name + "@" + host), k
}

// remoteNameByte reports whether b may be in a name or a host of another
// server's.
func remoteNameByte(b byte) bool { return nameByte(b) || b == '.' || b == '-' }
