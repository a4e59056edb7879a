package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"socialstream/internal/trends"
)

// Finding and talking, metered: a post's search terms and a search's
// reads, a direct post's conversation, a page of conversations and a
// profile's featured hashtags.

// billSearch meters a post's search terms, by the index entries of a
// post of 20 words against one of 10 (by an author whose public posts
// anyone's search finds), and a search's reads: of one word, of two, and
// of a Japanese word inside sentences, each finding 5 posts.
func billSearch(ctx context.Context, s *stack, _ *billWorld) ([]billRow, error) {
	u, err := s.register(ctx, "billsearched")
	if err != nil {
		return nil, err
	}
	if err := s.do(ctx, u, "PUT", "/social/rest/people/@me/@self", map[string]any{"indexable": true}, nil); err != nil {
		return nil, fmt.Errorf("billing: indexable: %w", err)
	}
	words := func(from, n int) string {
		var ws []string
		for i := range n {
			ws = append(ws, fmt.Sprintf("w%d", from+i))
		}
		return strings.Join(ws, " ")
	}
	var rows []billRow
	for _, n := range []int{10, 20} {
		b, err := s.metered(ctx, u, "POST", "/social/rest/activities/@me/@self", map[string]string{"title": words(100*n, n)}, nil)
		if err != nil {
			return rows, fmt.Errorf("billing: a post of %d words: %w", n, err)
		}
		rows = append(rows, billRow{Op: fmt.Sprintf("post of %d words, found by anyone's search", n), Bill: b})
	}
	for i := range 5 {
		if err := s.do(ctx, u, "POST", "/social/rest/activities/@me/@self", map[string]string{"title": fmt.Sprintf("needle haystack %d 昨日は東京都庁に行きました", i)}, nil); err != nil {
			return rows, err
		}
	}
	if err := s.settle(ctx); err != nil {
		return rows, err
	}
	searcher, err := s.register(ctx, "billsearcher")
	if err != nil {
		return rows, err
	}
	for _, q := range []struct{ op, q string }{{"search, one word", "needle"}, {"search, two words", "needle haystack"}, {"search, a Japanese word in sentences", "都庁"}} {
		b, err := s.metered(ctx, searcher, "GET", "/social/rest/activities/@search?q="+url.QueryEscape(q.q), nil, nil)
		if err != nil {
			return rows, fmt.Errorf("billing: %s: %w", q.op, err)
		}
		rows = append(rows, billRow{Op: q.op + ", 5 found", Bill: b, MinReads: 12,
			MinRule: "a query of each of the searcher's scopes (theirs, the public shards); the posts found, their author and the searcher's state"})
	}
	return rows, nil
}

// billTalking meters a direct post to one person, with the job that
// adds it to their conversation; a page of that person's conversations
// (2 of them); and a profile's 3 featured hashtags.
func billTalking(ctx context.Context, s *stack, _ *billWorld) ([]billRow, error) {
	var people []user
	for _, name := range []string{"billtalker", "billtalked", "billthird"} {
		u, err := s.register(ctx, name)
		if err != nil {
			return nil, err
		}
		people = append(people, u)
	}
	talker, talked, third := people[0], people[1], people[2]
	if err := s.do(ctx, third, "POST", "/social/rest/activities/@me/@self", map[string]string{"title": "first @billtalked", "visibility": "mentioned"}, nil); err != nil {
		return nil, err
	}
	b, err := s.metered(ctx, talker, "POST", "/social/rest/activities/@me/@self", map[string]string{"title": "just us @billtalked", "visibility": "mentioned"}, nil)
	if err != nil {
		return nil, fmt.Errorf("billing: a direct post: %w", err)
	}
	rows := []billRow{{Op: "direct post, its conversation", Bill: b}}
	if b, err = s.metered(ctx, talked, "GET", "/social/rest/conversations/@me", nil, nil); err != nil {
		return rows, fmt.Errorf("billing: conversations: %w", err)
	}
	rows = append(rows, billRow{Op: "conversations page, 2 of them", Bill: b, MinReads: 7,
		MinRule: "the 2 conversations; each one's newest post and its author (the other people); the reader's state"})
	for _, tag := range []string{"one", "two", "three"} {
		if err := s.do(ctx, talker, "POST", "/social/rest/activities/@me/@self", map[string]string{"title": "about #" + tag}, nil); err != nil {
			return rows, err
		}
		if err := s.do(ctx, talker, "POST", "/social/rest/featuredTags/@me", map[string]string{"name": tag}, nil); err != nil {
			return rows, err
		}
	}
	if b, err = s.metered(ctx, talked, "GET", "/social/rest/featuredTags/"+talker.id, nil, nil); err != nil {
		return rows, fmt.Errorf("billing: featured hashtags: %w", err)
	}
	return append(rows, billRow{Op: "featured hashtags of a profile, 3 of them", Bill: b, MinReads: 7,
		MinRule: "the person's card; a count and the newest of each tag's range of their posts"}), nil
}

// billTrends meters a post of 3 hashtags with the job that marks its
// author's uses of them; the hour's refresh of what trends (3 kinds, of
// the hashtags 3 people used and a post 2 people liked); a page of
// trending hashtags and one of trending posts, once approved; and a
// hashtag's page, with its week.
func billTrends(ctx context.Context, s *stack, _ *billWorld) ([]billRow, error) {
	var people []user
	for _, name := range []string{"billtrend1", "billtrend2", "billtrend3"} {
		u, err := s.register(ctx, name)
		if err != nil {
			return nil, err
		}
		people = append(people, u)
	}
	b, err := s.metered(ctx, people[0], "POST", "/social/rest/activities/@me/@self", map[string]string{"title": "about #billtrend #billtwo #billthree"}, nil)
	if err != nil {
		return nil, fmt.Errorf("billing: a post of 3 hashtags: %w", err)
	}
	rows := []billRow{{Op: "post of 3 hashtags, its trend uses", Bill: b}}
	var liked created
	if err := s.do(ctx, people[0], "POST", "/social/rest/activities/@me/@self", map[string]string{"title": "worth a like"}, &liked); err != nil {
		return rows, err
	}
	for _, u := range people[1:] {
		if err := s.do(ctx, u, "POST", "/social/rest/activities/@me/@self", map[string]string{"title": "me too #billtrend #billtwo"}, nil); err != nil {
			return rows, err
		}
		if err := s.do(ctx, u, "POST", "/social/rest/likes/"+liked.Entry.ID, nil, nil); err != nil {
			return rows, err
		}
	}
	if err := s.settle(ctx); err != nil {
		return rows, err
	}
	s.meter.Take()
	if err := s.trends.refresh(ctx); err != nil {
		return rows, fmt.Errorf("billing: the trends' refresh: %w", err)
	}
	rows = append(rows, billRow{Op: "the hour's refresh of what trends, 3 hashtags and a post", Bill: opBill{Bill: s.meter.Take()}})
	for _, k := range trends.Kinds {
		_, waiting, err := s.trends.svc.Trending(ctx, k)
		if err != nil {
			return rows, err
		}
		for _, it := range waiting {
			if _, err := s.trends.svc.Review(ctx, k, it.ID, "billing", true); err != nil {
				return rows, err
			}
		}
	}
	for _, page := range []struct {
		op, path string
		least    int
		rule     string
	}{
		{"trending hashtags, 2 of them", "/social/rest/trends/tags", 1, "the snapshot of what trends"},
		{"trending posts, 1 of them", "/social/rest/trends/statuses", 4, "the snapshot; the post and its author; the reader's state"},
		{"a hashtag's page, its week", "/api/v1/tags/billtrend", 9, "whether the reader follows it; a count of its people each of its 7 days, and of its posts each day it had people"},
	} {
		b, err := s.metered(ctx, people[2], "GET", page.path, nil, nil)
		if err != nil {
			return rows, fmt.Errorf("billing: %s: %w", page.op, err)
		}
		rows = append(rows, billRow{Op: page.op, Bill: b, MinReads: page.least, MinRule: page.rule})
	}
	return rows, nil
}
