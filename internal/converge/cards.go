package converge

// Link previews: a sixth of the posts link a page of the checker's own
// site, a third of those one that never answers well. Once the jobs are
// done, a post shows the card of the page it links now (none for a page
// that failed, or once an edit took the link away), whatever the faults
// did to the card jobs and the claims of the fetches.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
)

// site serves the pages posts link, on loopback.
type site struct{ srv *httptest.Server }

func newSite() *site {
	return &site{srv: httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n, ok := strings.CutPrefix(r.URL.Path, "/card/"); ok {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<html><head><meta property="og:title" content="Card %s"></head><body>`, n)
			return
		}
		http.Error(w, "down", http.StatusInternalServerError)
	}))}
}

func (s *site) Close() { s.srv.Close() }

// link picks a page for a post to link: its address, and the title its
// card shows ("" for a page that makes none).
func (s *site) link(rng *rand.Rand) (string, string) {
	n := rng.IntN(5)
	if rng.IntN(3) == 0 {
		return fmt.Sprintf("%s/broken/%d", s.srv.URL, n), ""
	}
	return fmt.Sprintf("%s/card/%d", s.srv.URL, n), fmt.Sprintf("Card %d", n)
}

// someLink is the page a post links, one in six, and its card's title
// ("" and "" for none).
func (r *runner) someLink(rng *rand.Rand) (string, string) {
	if rng.IntN(6) != 0 {
		return "", ""
	}
	return r.site.link(rng)
}

// checkCards: each post that links a page, as its author reads it, shows
// that page's card, or none for a page that makes none.
func (o *oracle) checkCards(ctx context.Context, rep *Report) error {
	for _, p := range o.live {
		if p.link == "" {
			continue
		}
		entry, ok, err := o.byItsAuthor(ctx, rep, p)
		if err != nil {
			return err
		} else if !ok {
			continue
		}
		card, _ := entry["card"].(map[string]any)
		if got := str(card, "title"); got != p.cardTitle || card != nil && str(card, "url") != p.link {
			rep.Violations = append(rep.Violations, fmt.Sprintf("the post %s links %s and shows the card %v, want %q", p.id, p.link, card, p.cardTitle))
		}
	}
	return nil
}

// byItsAuthor reads p as its author does: false when its author is gone
// or suspended (nothing to read), or when the read is a violation,
// recorded in rep.
func (o *oracle) byItsAuthor(ctx context.Context, rep *Report, p *post) (map[string]any, bool, error) {
	m := o.m
	author := m.byID[p.author]
	if m.deleted(p.author) || m.suspended[p.author] || author == nil || author.gone {
		return nil, false, nil
	}
	rp, err := o.r.c.read(ctx, "/social/rest/activities/@me/@self/@app/"+p.id, author.token)
	if err != nil {
		return nil, false, err
	}
	rep.Checked++
	list, _ := rp.body["list"].([]any)
	if rp.status != 200 || len(list) != 1 {
		rep.Violations = append(rep.Violations, fmt.Sprintf("the post %s, read by its author: %d %v", p.id, rp.status, rp.body))
		return nil, false, nil
	}
	entry, _ := list[0].(map[string]any)
	return entry, true, nil
}
