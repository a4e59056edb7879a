package activities

import (
	"encoding/json"
	"testing"
	"time"

	"socialstream/internal/filters"
	"socialstream/internal/policy"
)

// Whether a page shows an activity, decided without Datastore.
func TestDecideShown(t *testing.T) {
	raw := func(fs ...filters.Filter) []string {
		var out []string
		for _, f := range fs {
			b, _ := json.Marshal(f)
			out = append(out, string(b))
		}
		return out
	}
	now := time.Now()
	set := filters.Active(raw(
		filters.Filter{ID: "1", Title: "cats", Keywords: []filters.Keyword{{Keyword: "cat", WholeWord: true}}, Context: []string{filters.Home}, Action: filters.Hide},
		filters.Filter{ID: "2", Title: "spoilers", Keywords: []filters.Keyword{{Keyword: "ending"}}, Context: []string{filters.Home}, Action: filters.Warn},
	), filters.Home, now)
	bob := policy.Account{ID: "bob", Exists: true}
	base := shownFacts{viewer: "ann", feed: policy.Personal, post: policy.Post{Author: "bob", Visibility: Public}, author: bob,
		texts: []string{"hello", ""}}
	with := func(f func(*shownFacts)) shownFacts { c := base; f(&c); return c }
	repost := func(f func(*shownFacts)) shownFacts {
		return with(func(c *shownFacts) {
			c.repost, c.sharedFound = true, true
			c.shared, c.sharedAuthor = policy.Post{Author: "cat", Visibility: Public}, policy.Account{ID: "cat", Exists: true}
			f(c)
		})
	}
	cases := []struct {
		name  string
		facts shownFacts
		show  bool
		warn  bool
	}{
		{"a post", base, true, false},
		{"blocked or muted", with(func(f *shownFacts) { f.hidden = true }), false, false},
		{"removed", with(func(f *shownFacts) { f.post.Removed = true }), false, false},
		{"by someone suspended", with(func(f *shownFacts) { f.author.Suspended = true }), false, false},
		{"by someone gone", with(func(f *shownFacts) { f.author.Exists = false }), false, false},
		{"by someone limited, not followed", with(func(f *shownFacts) { f.author.Limited = true }), false, false},
		{"by someone limited, followed", with(func(f *shownFacts) { f.author.Limited, f.followed = true, true }), true, false},
		{"by someone limited, in a public feed", with(func(f *shownFacts) { f.author.Limited, f.followed, f.feed = true, true, policy.PublicFeed }), false, false},
		{"filtered out", with(func(f *shownFacts) { f.texts = []string{"a cat", ""} }), false, false},
		{"warned of", with(func(f *shownFacts) { f.texts = []string{"the ending", ""} }), true, true},
		{"one's own, unfiltered", with(func(f *shownFacts) { f.viewer, f.texts = "bob", []string{"a cat", ""} }), true, false},
		{"a repost", repost(func(*shownFacts) {}), true, false},
		{"a repost of what is gone", repost(func(f *shownFacts) { f.sharedFound = false }), false, false},
		{"a repost of someone blocked", repost(func(f *shownFacts) { f.sharedHidden = true }), false, false},
		{"a repost of someone suspended", repost(func(f *shownFacts) { f.sharedAuthor.Suspended = true }), false, false},
		{"a repost of someone limited, followed", repost(func(f *shownFacts) { f.sharedAuthor.Limited, f.sharedFollowed = true, true }), true, false},
		{"a repost filtered by what it shares", repost(func(f *shownFacts) { f.texts = []string{"hello", "", "my cat", ""} }), false, false},
	}
	for _, c := range cases {
		show, warn := decideShown(c.facts, set)
		if show != c.show || (len(warn) > 0) != c.warn {
			t.Errorf("%s: shown %v, warned %v; want %v, %v", c.name, show, warn, c.show, c.warn)
		}
	}
}
