// Package search reads text into search terms, and a search box's words
// into a query of them: the query-on-read way of finding posts. A post
// stores its terms as a copy of its own (package activities), so that a
// word is one equality of an index and several words one query with an
// equality each, which Datastore answers by merging its indexes.
//
// A term is a normalized word: case folded (Straße, STRASSE and strasse
// are one), compatibility forms made plain (full-width ＡＢＣ and ｶﾀｶﾅ are
// ABC and カタカナ), accents dropped (café is cafe). Text written without
// spaces (Japanese, Chinese) has no words to split, so its runs of those
// scripts are read as character bigrams, every pair of neighbours, and
// each Han character alone too: a word of two characters is a term of its
// own wherever it stands in a sentence, and a longer one is its bigrams,
// all of which a post must hold (its place among them is checked on the
// post itself, see Query.Matches).
package search

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// MaxTerms is the most terms one post stores: the first MaxTerms of its
// text, in the order they come. With a post's scopes (its author, the
// people it mentions and, when public, a shard of everyone's: at most 52)
// each term costs an index entry a scope, 8,320 at most, well inside
// Firestore's 20,000 a post with everything else it indexes.
const MaxTerms = 160

// MaxTermLen is the longest term, in bytes; a longer word is cut there
// (at a character's end), in posts and queries alike.
const MaxTermLen = 100

// Normalize folds s as terms are folded: compatibility forms made plain,
// case folded, accents dropped.
func Normalize(s string) string {
	// A transform.Chain and a cases.Caser keep state: each call makes its own.
	t := transform.Chain(norm.NFKD, runes.Remove(runes.Predicate(accent)), cases.Fold(), norm.NFKC)
	out, _, err := transform.String(t, s)
	if err != nil {
		return strings.ToLower(s) // not valid UTF-8: as well as can be
	}
	return out
}

// accent says whether r is one of the combining marks Latin, Greek and
// Cyrillic letters decompose into (U+0300 to U+036F): other scripts' marks
// are letters' parts, as are the kana's voicing marks, and stay.
func accent(r rune) bool { return r >= 0x300 && r <= 0x36f }

// spaceless says whether r is of a script written without spaces, read
// as bigrams.
func spaceless(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) || r == 'ー' // the long vowel mark, of both kana
}

// wordRune says whether r is part of a word.
func wordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r)
}

// Terms returns the distinct terms of text, in the order they first
// come, at most max (MaxTerms if max is 0).
func Terms(text string, max int) []string { return terms(text, max, true) }

// terms is Terms, with the Han characters of a longer run alone too
// (a post's) or not (a query's, whose bigrams say more).
func terms(text string, max int, unigrams bool) []string {
	if max <= 0 {
		max = MaxTerms
	}
	var out []string
	seen := map[string]bool{}
	add := func(t string) bool {
		if len(t) > MaxTermLen {
			t = cut(t, MaxTermLen)
		}
		if t != "" && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
		return len(out) < max
	}
	eachRun(Normalize(text), func(run string, bigrams bool) bool {
		if !bigrams {
			return add(run)
		}
		return eachGram(run, unigrams, add)
	})
	return out
}

// eachRun calls f with each run of word characters of s (already
// normalized), and whether it is of a spaceless script, until f says stop.
func eachRun(s string, f func(run string, spaceless bool) bool) {
	start, kind := -1, false
	flush := func(end int) bool {
		if start < 0 {
			return true
		}
		run := s[start:end]
		start = -1
		return f(run, kind)
	}
	for i, r := range s {
		if !wordRune(r) {
			if !flush(i) {
				return
			}
			continue
		}
		k := spaceless(r)
		if start >= 0 && k != kind {
			if !flush(i) {
				return
			}
		}
		if start < 0 {
			start, kind = i, k
		}
	}
	flush(len(s))
}

// eachGram calls add with the bigrams of a spaceless run, and each Han
// character alone if unigrams; a run of one character is that character.
func eachGram(run string, unigrams bool, add func(string) bool) bool {
	rs := []rune(run)
	if len(rs) == 1 {
		return add(run)
	}
	for i := range rs {
		if unigrams && unicode.Is(unicode.Han, rs[i]) && !add(string(rs[i])) {
			return false
		}
		if i+1 < len(rs) && !add(string(rs[i:i+2])) {
			return false
		}
	}
	return true
}

// cut returns s cut to at most n bytes, at a character's end.
func cut(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Contains says whether text holds phrase as a query reads it: the
// normalized phrase's words, in order, each next to the last (spaceless
// scripts: within one another's run, as written).
func Contains(text, phrase string) bool {
	var want []string
	eachRun(Normalize(phrase), func(run string, _ bool) bool { want = append(want, run); return true })
	if len(want) == 0 {
		return true
	}
	var have []string
	eachRun(Normalize(text), func(run string, _ bool) bool { have = append(have, run); return true })
	for i := range have {
		if matchAt(have[i:], want) {
			return true
		}
	}
	return false
}

// matchAt says whether want's runs begin have: whole words, except that
// the first may end a run and the last begin one when they are spaceless
// (a word inside a sentence), and a lone run may sit anywhere in one.
func matchAt(have, want []string) bool {
	if len(want) > len(have) {
		return false
	}
	if len(want) == 1 {
		r, _ := utf8.DecodeRuneInString(want[0])
		return have[0] == want[0] || spaceless(r) && strings.Contains(have[0], want[0])
	}
	for i, w := range want {
		r, _ := utf8.DecodeRuneInString(w)
		ok := have[i] == w
		switch {
		case ok:
		case i == 0 && spaceless(r):
			ok = strings.HasSuffix(have[i], w)
		case i == len(want)-1 && spaceless(r):
			ok = strings.HasPrefix(have[i], w)
		}
		if !ok {
			return false
		}
	}
	return true
}
