package activities

import (
	"encoding/json"
	"errors"
	"math"
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

// What a fan-out's planning job and chunk jobs do, decided without
// Datastore.
func TestDecideFanout(t *testing.T) {
	for _, c := range []struct {
		name    string
		facts   planFacts
		before  int64
		skipped bool
		notYet  bool
	}{
		{"not committed yet", planFacts{}, 0, false, true},
		{"never committed", planFacts{late: true}, 0, true, false},
		{"deleted since found", planFacts{found: true, deleted: true}, 0, true, false},
		{"stamped", planFacts{found: true, chunks: 3, committed: 50, foundAt: 70}, 50, false, false},
		{"one chunk needs no stamp", planFacts{found: true, chunks: 1, foundAt: 70}, 0, false, false},
		{"stamp awaited", planFacts{found: true, chunks: 3, foundAt: 70}, 0, false, true},
		{"stamp never written", planFacts{found: true, chunks: 3, foundAt: 70, late: true}, 70, false, false},
	} {
		before, skipped, err := decidePlan(c.facts)
		if before != c.before || (skipped != "") != c.skipped || errors.Is(err, ErrNotYet) != c.notYet {
			t.Errorf("plan, %s: before %d, skipped %q, %v", c.name, before, skipped, err)
		}
	}
	for _, c := range []struct {
		name       string
		found      bool
		a          Activity
		taskBefore int64
		before     int64
		skipped    bool
	}{
		{"deleted", false, Activity{}, 0, 0, true},
		{"for the mentioned alone", true, Activity{Visibility: MentionedOnly}, 5, 0, true},
		{"the plan's time", true, Activity{Visibility: Public, Committed: 9}, 5, 5, false},
		{"the stamp", true, Activity{Visibility: FollowersOnly, Committed: 9}, 0, 9, false},
		{"no stamp: everyone", true, Activity{Visibility: Public}, 0, math.MaxInt64, false},
	} {
		before, skipped := decideChunk(c.found, &c.a, c.taskBefore)
		if before != c.before || (skipped != "") != c.skipped {
			t.Errorf("chunk, %s: before %d, skipped %q", c.name, before, skipped)
		}
	}
}
