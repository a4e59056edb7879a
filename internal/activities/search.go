package activities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"cloud.google.com/go/datastore"

	"socialstream/internal/derrors"
	"socialstream/internal/ids"
	"socialstream/internal/order"
	"socialstream/internal/policy"
	"socialstream/internal/search"
	"socialstream/internal/store"
)

// Post search, the query-on-read way (package search). An activity with
// words holds, as copies of its own written with it in every commit:
//
//   - terms: its search terms (its text's words, Japanese and Chinese by
//     character bigrams, and what it is: search.FromTerm of its author,
//     search.HasMedia, HasPoll, IsReply, IsSensitive), at most
//     search.MaxTerms;
//   - found: a place (package order) for each scope whose searches may
//     find it: f:{person} for its author and each person it mentions, and,
//     when it is public and its author lets anyone's search find their
//     posts (accounts.Profile.Indexable, as it was when posted), s:{shard}
//     of everyone's, split in PublicShards by the seq as @all is, so that
//     no range grows at one end faster than @all's.
//
// A search is a query of each scope a searcher has (their own f: and the
// public shards): an equality of terms for each term it asks for and the
// range of the scope's found places, newest first. Datastore answers
// several equalities of one property by merging the one composite index
// (terms, found desc), whatever their number. The page reads the authors
// as every page does, which decides the rest: the one policy (a
// suspended or limited author, a block, a mute), and whether an author
// still lets strangers find them (turning it off hides their posts from
// strangers' searches at once). Mastodon 4's scope, less what the
// searcher only favourited, bookmarked or replied to (docs/mastodon.md).
//
// Edits change the terms in their own commit (Save writes them from what
// the activity says); a delete takes them with the activity.

const (
	termsProp = "terms"
	foundProp = "found"
)

// searchPublic is the prefix of the public scope's shard n.
func searchPublic(n int) string { return "s:" + strconv.Itoa(n) }

// searchOwn is the prefix of person's own scope: what they wrote and
// what mentions them.
func searchOwn(person string) string { return "f:" + person }

// searchText is the text an activity's words are read from: a link
// counts as its host's name alone (a search for example finds a link to
// https://example.com/a/b?c, and no link makes terms of http, www or
// its path's pieces).
func searchText(title, body, spoiler string, options []string) string {
	text := strings.Join(append([]string{spoiler, title, body}, options...), "\n")
	return linkPattern.ReplaceAllStringFunc(text, func(link string) string {
		if u, err := url.Parse(link); err == nil {
			return strings.TrimPrefix(u.Hostname(), "www.")
		}
		return ""
	})
}

// linkPattern finds the links of a text.
var linkPattern = regexp.MustCompile(`(?i)\bhttps?://[^\s<>"]+`)

// searchTerms returns a's search terms: what it is first (never cut),
// then its words. A post of pictures alone is found by what it is
// (from:, has:media).
func (a *Activity) searchTerms() []string {
	var options []string
	if a.Poll != nil {
		options = a.Poll.Options
	}
	words := search.Terms(searchText(a.Title, a.Body, a.SpoilerText, options), 0)
	if a.RepostOf != "" || len(words) == 0 && len(a.Media) == 0 {
		return nil // a repost is found as what it shares; nothing else is found by nothing
	}
	out := []string{search.FromTerm(a.UserID)}
	if len(a.Media) > 0 {
		out = append(out, search.HasMedia)
	}
	if a.Poll != nil {
		out = append(out, search.HasPoll)
	}
	if a.InReplyTo != "" {
		out = append(out, search.IsReply)
	}
	if a.Sensitive {
		out = append(out, search.IsSensitive)
	}
	return append(out, words[:min(len(words), search.MaxTerms-len(out))]...)
}

// foundPlaces returns the values of a's found property, given that it
// has terms.
func (a *Activity) foundPlaces() []string {
	out := []string{order.Value(searchOwn(a.UserID), a.Seq)}
	for _, m := range a.MentionIDs {
		if m != a.UserID {
			out = append(out, order.Value(searchOwn(m), a.Seq))
		}
	}
	if a.isPublic() && a.Indexable {
		out = append(out, order.Value(searchPublic(order.Shard(a.Seq, PublicShards)), a.Seq))
	}
	return out
}

// searchProperties returns a's terms and found properties (none for an
// activity with no words).
func (a *Activity) searchProperties() []datastore.Property {
	terms := a.searchTerms()
	if len(terms) == 0 {
		return nil
	}
	return []datastore.Property{{Name: termsProp, Value: list(terms)}, {Name: foundProp, Value: list(a.foundPlaces())}}
}

// SearchRequest asks for a page of a search of posts.
type SearchRequest struct {
	Viewer string
	Query  search.Query
	// FromID is the person a from: operator names, found by the caller
	// ("" for none). A from: that names no one finds nothing: the caller
	// answers so.
	FromID string
	// Before, if set, is an activity id: the page starts below it
	// (Mastodon's max_id). A cursor, if given, wins.
	Before string
	Page   store.PageRequest
}

var errSearchSignedIn = derrors.New(derrors.Unauthenticated, "a search of posts is for someone signed in")

// Search returns a page of the posts viewer may see that hold what the
// query asks, newest first, and the cursor of the next page. A page
// reads one query of the viewer's own scope and one of each public
// shard, keys only, and one batch lookup of the page's activities and
// authors; what the page then leaves out, it reads on for, up to
// maxOnlyRounds ranges.
func (s *Service) Search(ctx context.Context, r SearchRequest) ([]View, string, error) {
	if r.Viewer == "" {
		return nil, "", errSearchSignedIn
	}
	terms := slices.Clone(r.Query.Terms)
	if r.FromID != "" {
		terms = append(terms, search.FromTerm(r.FromID))
	}
	if len(terms) == 0 {
		return []View{}, "", nil
	}
	w := window{}
	if r.Before != "" {
		seq, ok := ids.Parse(r.Before)
		if !ok {
			return nil, "", derrors.New(derrors.InvalidArgument, "max_id must be an activity id")
		}
		w.before = seq
	}
	tag := searchTag(r.Viewer, terms)
	want := r.Page.Count
	var out []View
	for round := 0; ; round++ {
		r.Page.Count = want - len(out)
		vs, next, err := s.searchRange(ctx, r.Viewer, terms, w, tag, r.Page)
		if err != nil {
			return nil, "", err
		}
		for _, v := range vs {
			if s.found(r, v) {
				out = append(out, v)
			}
		}
		if len(out) >= want || next == "" || round+1 == maxOnlyRounds {
			if out == nil {
				out = []View{}
			}
			return out, next, nil
		}
		r.Page.Cursor, r.Page.Offset = next, 0
	}
}

// found decides whether a search shows v, which its queries found and
// the page's decision showed: its author still lets strangers find it
// (or the viewer is its author or mentioned), and its text holds the
// query's phrases and none of the words it leaves out.
func (s *Service) found(r SearchRequest, v View) bool {
	post := policy.Post{Author: v.UserID, Visibility: v.Visibility, Mentions: v.Mentions}
	if !policy.Searchable(r.Viewer, post, v.Author != nil && v.Author.Indexable) {
		return false
	}
	var options []string
	if v.Poll != nil {
		for _, o := range v.Poll.Options {
			options = append(options, o.Title)
		}
	}
	return r.Query.Matches(searchText(v.Title, v.Body, v.SpoilerText, options))
}

// searchTag names a search's cursors: a cursor of one search is refused
// by another.
func searchTag(viewer string, terms []string) string {
	sorted := slices.Clone(terms)
	slices.Sort(sorted)
	sum := sha256.Sum256([]byte(viewer + "\x00" + strings.Join(sorted, "\x00")))
	return "search:" + hex.EncodeToString(sum[:8])
}

// searchRange reads one range of a search: its scopes' queries, keys
// only and merged, and one batch lookup of what they found.
func (s *Service) searchRange(ctx context.Context, viewer string, terms []string, w window, tag string, p store.PageRequest) ([]View, string, error) {
	from, err := w.from(tag, p.Cursor)
	if err != nil {
		return nil, "", err
	}
	prefixes := []string{searchOwn(viewer)}
	for n := range PublicShards {
		prefixes = append(prefixes, searchPublic(n))
	}
	qs := s.feedQueries(KindActivity, foundProp, prefixes, w, from)
	for i := range qs {
		for _, t := range terms {
			qs[i] = qs[i].FilterField(termsProp, "=", t)
		}
		qs[i] = qs[i].KeysOnly()
	}
	keys, _, last, more, err := order.Page[Activity](ctx, s.db, qs, true, placeOfActivity, p.Count, p.Offset)
	if err != nil {
		return nil, "", fmt.Errorf("activities: search: %w", err)
	}
	keys, acts, err := s.loadPage(ctx, keys)
	if err != nil {
		return nil, "", fmt.Errorf("activities: search: %w", err)
	}
	views, err := s.viewsOf(ctx, viewer, keys, acts, look{hide: true, quiet: true, cached: true})
	if err != nil {
		return nil, "", err
	}
	next := ""
	if more {
		next = order.EncodeCursor(tag, last)
	}
	return views, next, nil
}

// Reindex writes up to n activities again from cursor (empty: the
// first), each in a transaction of a batch, so that what Save derives
// (their search terms and places, their author's tag places) is what
// this version derives: for activities stored by a version before those
// existed. It returns how many it wrote and the cursor of the rest ("":
// none). A run beside the service is safe: each batch reads and writes
// in one transaction.
func Reindex(ctx context.Context, db *store.DB, cursor string, n int) (int, string, error) {
	done, next, err := store.Rewrite[Activity](ctx, db, KindActivity, cursor, n)
	if err != nil {
		return done, "", fmt.Errorf("activities.Reindex: %w", err)
	}
	return done, next, nil
}
