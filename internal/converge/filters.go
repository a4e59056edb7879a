package converge

// The keyword filter of a user: one of the three tags, hiding what names
// it in every context.

import (
	"context"
	"net/http"
	"strings"
	"time"
	"unicode"
)

// filter gives one of a's users a keyword filter that hides what names one
// of the tags (as a whole word) in every feed it applies to, or takes
// theirs away.
func (r *runner) filter(ctx context.Context, a *actor) (bool, error) {
	u := a.pick()
	r.m.mu.Lock()
	had, ok := r.m.filters[u.id]
	r.m.mu.Unlock()
	var out outcome
	if ok {
		_, out = r.write(ctx, "unfilter", http.MethodDelete, "/social/rest/filters/@me/"+had.id, u.token, nil)
	} else {
		word := tagNames[a.rng.IntN(len(tagNames))]
		var rep reply
		rep, out = r.write(ctx, "filter", http.MethodPost, "/social/rest/filters/@me", u.token, map[string]any{
			"title": "no " + word, "keywords": []map[string]any{{"keyword": strings.ToUpper(word[:1]) + word[1:], "wholeWord": true}},
			"context": []string{"home", "notifications", "public", "tags", "account"}, "action": "hide",
		})
		had = keywordFilter{id: str(entry(rep), "id"), word: word}
	}
	op := map[bool]string{true: "unfilter", false: "filter"}[ok]
	now := ok != (out == acked) // whether u has a filter now
	if out == unknown {
		items, err := r.c.list(ctx, "/social/rest/filters/@me", u.token)
		if err != nil {
			return true, err
		}
		now = len(items) > 0
		if now {
			kws, _ := items[0]["keywords"].([]any)
			if len(kws) > 0 {
				kw, _ := kws[0].(map[string]any)
				had = keywordFilter{id: str(items[0], "id"), word: strings.ToLower(str(kw, "keyword"))}
			}
		}
	}
	r.m.done(op, out != acked, time.Now())
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	r.m.everFiltered[u.id] = true
	if now {
		r.m.filters[u.id] = had
	} else {
		delete(r.m.filters, u.id)
	}
	return true, nil
}

// keywordFilter is a user's filter: its id, and the word it hides.
type keywordFilter struct{ id, word string }

// names reports whether text names word as a whole word, in any case.
func names(text, word string) bool {
	text = strings.ToLower(text)
	for i := 0; ; {
		j := strings.Index(text[i:], word)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(word)
		before := start == 0 || !wordRune(rune(text[start-1]))
		after := end == len(text) || !wordRune(rune(text[end]))
		if before && after {
			return true
		}
		i = start + 1
	}
}

func wordRune(c rune) bool { return unicode.IsLetter(c) || unicode.IsDigit(c) || c == '_' }
