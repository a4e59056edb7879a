package converge

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"socialstream/internal/ids"
	"socialstream/internal/search"
)

// Finding and talking: every person searches for a word that most posts
// hold, and reads their direct conversations.
//
// The search is a feed of the oracle's (feeds): what a person may search
// (their own posts, those that mention them as last edited, and the
// public posts of people who let anyone's search find them), less what
// the page's decision hides (blocks and mutes either way, a limited
// author they do not follow, a suspended one), newest first, nothing
// missed.
//
// A conversation is the direct posts among one set of people as they
// were posted: each of its people here lists it once, with its newest
// post not deleted as its last status (null when they may not see it),
// unread unless they wrote it (the mix neither reads nor removes
// conversations; the tests of package conversations and of the face do).

// searchWord is the word the oracle searches for: in every post's and
// edit's title ("post 3 by u0_1", "edit 4 by u1_2").
const searchWord = "by"

// makeIndexable lets anyone's search find u's public posts, before u
// posts anything, asking until the answer comes.
func (r *runner) makeIndexable(ctx context.Context, u *user) error {
	for try := 0; try < 20; try++ {
		if _, out := r.write(ctx, "register (indexable)", http.MethodPut, "/social/rest/people/@me/@self", u.token, map[string]any{"indexable": true}); out == acked {
			u.indexable = true
			return nil
		}
	}
	return fmt.Errorf("register %s: indexable: no answer in 20 tries", u.name)
}

// searchOp searches for a word as one of a's people, by REST or
// JSON-RPC in turn: an answer, whatever the faults (the oracle compares
// what it finds once the queues are empty).
func (r *runner) searchOp(ctx context.Context, a *actor) (bool, error) {
	u := a.pick()
	q := []string{searchWord, "post " + searchWord, `"` + searchWord + `"`, "edit -post"}[a.rng.IntN(4)]
	for try := 0; try < 10; try++ {
		var rep reply
		var err error
		if r.turns.Add(1)%2 == 0 {
			rep, err = r.c.rpcCall(ctx, "activities.search", u.token, map[string]any{"q": q, "count": 20})
		} else {
			rep, err = r.c.read(ctx, "/social/rest/activities/@search?q="+url.QueryEscape(q), u.token)
		}
		switch {
		case err == nil && rep.status == http.StatusOK:
			r.m.done("search", try > 0, time.Now())
			return true, nil
		case err == nil && rep.status != http.StatusServiceUnavailable && rep.status != http.StatusUnauthorized:
			r.m.violate(fmt.Sprintf("search %q: %d %v", q, rep.status, rep.body))
			return true, nil
		}
	}
	return true, fmt.Errorf("search %q: no answer in 10 tries", q)
}

// holds says whether a title holds word as a search reads it.
func holds(title, word string) bool { return slices.Contains(search.Terms(title, 0), word) }

// searches are the oracle's search feeds, one a person.
func (o *oracle) searches() []feed {
	m := o.m
	var feeds []feed
	for _, u := range o.people {
		feeds = append(feeds, feed{name: "search of " + u.name, path: "/social/rest/activities/@search?q=" + searchWord, token: u.token,
			want: o.reach(u.id, false, o.unblocked(u.id, exact(func(p *post) bool {
				if p.repostOf != "" || !holds(p.title, searchWord) {
					return false
				}
				author := m.byID[p.author]
				return p.author == u.id || slices.Contains(p.mentions, u.id) || p.public() && author != nil && author.indexable
			}))),
			history: func(p *post) string {
				return fmt.Sprintf("%s post by %s (indexable %v), mentions %v", p.visibility, p.author, m.byID[p.author] != nil && m.byID[p.author].indexable, p.mentions)
			}})
	}
	return feeds
}

// conversationOf is the conversation of a post of visibility by author
// that mentioned made: its people, sorted, each once, as the service's
// conversations are sets (an author who mentions themselves is in theirs
// once); none if it is not direct.
func conversationOf(visibility, author string, made []string) []string {
	if visibility != "mentioned" || len(made) == 0 {
		return nil
	}
	out := append([]string{author}, made...)
	slices.Sort(out)
	return slices.Compact(out)
}

// conversationSets are the direct posts of each set of people, newest
// first, the deleted left out.
func (m *model) conversationSets() map[string][]*post {
	sets := map[string][]*post{}
	for _, p := range m.posts {
		if len(p.conversation) > 0 && !p.deleted {
			k := strings.Join(p.conversation, ",")
			sets[k] = append(sets[k], p)
		}
	}
	for _, ps := range sets {
		slices.SortFunc(ps, func(a, b *post) int {
			if newerOrSame(a.id, b.id) {
				return -1
			}
			return 1
		})
	}
	return sets
}

// checkConversations reads each person's conversations, and compares
// them with the direct posts.
func (o *oracle) checkConversations(ctx context.Context, _ *Report) error {
	sets := o.m.conversationSets()
	for _, u := range o.people {
		got, err := o.r.mastodonPage(ctx, "/api/v1/conversations?limit=40", u.token)
		if err != nil {
			return fmt.Errorf("conversations of %s: %w", u.name, err)
		}
		if len(got) == 40 {
			return fmt.Errorf("conversations of %s: 40 or more, more than the oracle reads", u.name)
		}
		shown := o.shownConversations(u, got)
		for _, ps := range sets {
			if !slices.Contains(ps[0].conversation, u.id) || slices.ContainsFunc(ps, func(p *post) bool { return p.edited }) {
				continue // not theirs; or an edit changed whom a post names
			}
			if newest := ps[0]; !o.m.hidden(newest) && o.seesDirect(u.id, newest) && !shown[newest.id] {
				o.violate("conversations of %s: lacks the conversation of %v, whose newest post is %s (%q)", u.name, newest.conversation, newest.id, newest.title)
			}
		}
	}
	return nil
}

// shownConversations checks u's conversations as read (got), and
// returns the posts they show as newest.
func (o *oracle) shownConversations(u *user, got []map[string]any) map[string]bool {
	m := o.m
	shown := map[string]bool{}
	for _, c := range got {
		last, _ := c["last_status"].(map[string]any)
		if last == nil {
			continue
		}
		id := ""
		if n, err := strconv.ParseInt(str(last, "id"), 10, 64); err == nil {
			id = ids.Format(n)
		}
		p := m.postByID[id]
		switch {
		case p == nil || p.deleted:
			o.violate("conversations of %s: %s's last status is %s, which is not a live post", u.name, str(c, "id"), id)
		case len(p.conversation) == 0 || !slices.Contains(p.conversation, u.id):
			o.violate("conversations of %s: shows %s (%q), of no conversation of theirs", u.name, id, p.title)
		case !o.seesDirect(u.id, p):
			o.violate("conversations of %s: shows %s (%q), which they may not see", u.name, id, p.title)
		case c["unread"] != (p.author != u.id):
			o.violate("conversations of %s: %s unread %v, its last by %s", u.name, str(c, "id"), c["unread"], p.author)
		default:
			shown[id] = true
		}
	}
	return shown
}

// seesDirect says whether reader may see p, a direct post that names
// them, by its id: no moderation of it or its author, no block either
// way, and a limited author followed.
func (o *oracle) seesDirect(reader string, p *post) bool {
	return !o.m.hidden(p) && o.reach(reader, false, o.unblockedByID(reader, exact(func(*post) bool { return true })))(p).must()
}

// unblockedByID: what is read by id (a conversation's last status) is
// hidden by blocks either way, not by mutes.
func (o *oracle) unblockedByID(reader string, want rule) rule {
	return func(p *post) presence {
		if o.m.between(reader, p.author) {
			return mayOut
		}
		return want(p)
	}
}
