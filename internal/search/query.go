package search

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"socialstream/internal/derrors"
)

// The terms of what a post is, beside the words of its text: a search's
// operators are equalities of them too. A text's terms never hold a
// colon, so they are apart from every word.
const (
	HasMedia    = "has:media"
	HasPoll     = "has:poll"
	IsReply     = "is:reply"
	IsSensitive = "is:sensitive"
)

// FromTerm is the term of a post by author.
func FromTerm(author string) string { return "from:" + author }

// Limits of a query.
const (
	// MaxQueryTerms is the most terms a query may ask for together:
	// each is an equality of its queries.
	MaxQueryTerms = 16
	// MaxQueryLen is the longest query, in bytes.
	MaxQueryLen = 500
)

var (
	ErrTooManyTerms = derrors.New(derrors.InvalidArgument, "a search may hold at most 16 words (a word of Japanese or Chinese counts as its pairs of characters)")
	ErrQueryTooLong = derrors.New(derrors.InvalidArgument, "a search may be at most 500 bytes long")
)

// Query is a search box's words as a query of posts' terms.
type Query struct {
	// Terms are the terms a post must hold, each an equality.
	Terms []string
	// From is the person of a from: operator as written (@name or
	// @name@domain, without the first @), for the caller to find.
	From string
	// phrases are what a post's text must hold beside its terms, in
	// order: a quoted phrase, or a word of a spaceless script longer than
	// one of its terms. without are the words and phrases it must not.
	phrases, without []string
}

// Parse reads a search box's words as Mastodon reads them: words, which
// a post must all hold (in any order); "a quoted phrase", whose words it
// must hold in order; -word or -"a phrase", which it must not;
// from:name, has:media, has:poll, is:reply and is:sensitive. Other
// words with a colon are words.
func Parse(q string) (Query, error) {
	if len(q) > MaxQueryLen {
		return Query{}, ErrQueryTooLong
	}
	var out Query
	seen := map[string]bool{}
	need := func(t string) {
		if !seen[t] {
			seen[t] = true
			out.Terms = append(out.Terms, t)
		}
	}
	for _, tok := range tokens(q) {
		neg := strings.HasPrefix(tok.text, "-") && !tok.quoted && len(tok.text) > 1 || tok.negated
		word := strings.TrimPrefix(tok.text, "-")
		if tok.quoted {
			word = tok.text
		}
		if neg {
			out.without = append(out.without, word)
			continue
		}
		if !tok.quoted {
			if op, ok := operator(word); ok {
				need(op)
				continue
			}
			if name, ok := strings.CutPrefix(strings.ToLower(word), "from:"); ok && name != "" {
				out.From = strings.TrimPrefix(name, "@")
				continue
			}
		}
		ts := terms(word, MaxQueryTerms+1, false)
		for _, t := range ts {
			need(t)
		}
		if tok.quoted && len(ts) > 1 || longSpaceless(word) {
			out.phrases = append(out.phrases, word)
		}
	}
	if len(out.Terms) > MaxQueryTerms {
		return Query{}, ErrTooManyTerms
	}
	return out, nil
}

// operator returns the term of an operator of what a post is.
func operator(word string) (string, bool) {
	switch w := strings.ToLower(word); w {
	case HasMedia, HasPoll, IsReply, IsSensitive:
		return w, true
	}
	return "", false
}

// longSpaceless says whether word has a run of a spaceless script
// longer than two characters, which its bigrams alone do not place.
func longSpaceless(word string) bool {
	long := false
	eachRun(Normalize(word), func(run string, bigrams bool) bool {
		long = bigrams && utf8.RuneCountInString(run) > 2
		return !long
	})
	return long
}

// Empty says whether q asks for nothing: no term, no person.
func (q Query) Empty() bool { return len(q.Terms) == 0 && q.From == "" }

// Matches says whether a post of text, which holds q's terms, is found:
// it holds each phrase and none of the words q leaves out.
func (q Query) Matches(text string) bool {
	for _, p := range q.phrases {
		if !Contains(text, p) {
			return false
		}
	}
	for _, w := range q.without {
		if Contains(text, w) {
			return false
		}
	}
	return true
}

// token is a word of a query, or a quoted phrase.
type token struct {
	text            string
	quoted, negated bool
}

// tokens splits q at spaces, keeping "quoted phrases" (-"a phrase" is
// one left out) whole; an unclosed quote runs to the end.
func tokens(q string) []token {
	var out []token
	for q = strings.TrimSpace(q); q != ""; q = strings.TrimLeftFunc(q, unicode.IsSpace) {
		neg := strings.HasPrefix(q, `-"`)
		if neg || strings.HasPrefix(q, `"`) {
			rest := q[strings.Index(q, `"`)+1:]
			phrase, after, _ := strings.Cut(rest, `"`)
			if strings.TrimSpace(phrase) != "" {
				out = append(out, token{text: phrase, quoted: true, negated: neg})
			}
			q = after
			continue
		}
		end := strings.IndexFunc(q, unicode.IsSpace)
		if end < 0 {
			end = len(q)
		}
		out = append(out, token{text: q[:end]})
		q = q[end:]
	}
	return out
}
