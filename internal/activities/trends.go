package activities

import (
	"context"
	"fmt"
	"slices"
	"time"

	"socialstream/internal/accounts"
	"socialstream/internal/cards"
	"socialstream/internal/derrors"
	"socialstream/internal/ids"
	"socialstream/internal/media"
	"socialstream/internal/order"
	"socialstream/internal/policy"
	"socialstream/internal/queue"
	"socialstream/internal/store"
	"socialstream/internal/trends"
)

// What a post makes trend (package trends): its hashtags and its link,
// each a use by its author on the day it was posted, marked with its id.
// A job enqueued ahead of the post's commit and of an edit's writes
// them, in a transaction that reads the post, so a post deleted first
// marks nothing, and its delete's cleanup (trends.Records) takes the
// marks of one that did. A repost marks its author's use of what it
// shares in its own transaction, as a like does; its delete's cleanup
// takes it back the same way.

// TrendJob marks the uses of a post.
var TrendJob = queue.Job[TrendTask]{Name: "trend", Queue: queue.Notifications,
	TaskName: func(t TrendTask) string { return fmt.Sprintf("trend-%s-%d", t.ActivityID, t.Edit) }}

// TrendTask is the body of a trend job: the post, as of its Edit-th edit
// (0: as made), and when that edit was asked (µs), to wait for it.
type TrendTask struct {
	ActivityID string `json:"activityId"`
	Edit       int    `json:"edit,omitempty"`
	At         int64  `json:"at,omitempty"`
}

// Outcomes of a trend job, for its log line.
const (
	TrendMarked = "marked"
	TrendNone   = "the post is gone, or counts for nothing"
)

// trendJob is the trend job of post id as of its edit-th edit: none when
// trends are off, or the post could count for nothing.
func (s *Service) trendJob(id string, edit int, visibility string) []queue.Pending {
	if s.cfg.Trends == nil || !listed(visibility) {
		return nil
	}
	t := TrendTask{ActivityID: id, Edit: edit}
	if edit > 0 {
		t.At = s.now().UnixMicro()
	}
	return []queue.Pending{TrendJob.Pending(s.queue, t, 0)}
}

// MaxTrendingTags is how many of a post's hashtags count toward trends,
// the first ones.
const MaxTrendingTags = 10

// trendSubjects is what a post of author makes trend: nothing unless the
// policy says it counts.
func trendSubjects(a *Activity, author policy.Account) []trends.Subject {
	if !policy.Trending(a.post(), a.Sensitive || a.SpoilerText != "", author) {
		return nil
	}
	if a.RepostOf != "" {
		return nil // a repost's use is marked in its transaction
	}
	var out []trends.Subject
	for _, t := range a.Tags[:min(len(a.Tags), MaxTrendingTags)] {
		out = append(out, trends.Subject{Kind: trends.Tags, Name: t})
	}
	if a.Link != "" {
		out = append(out, trends.Subject{Kind: trends.Links, Name: a.Link})
	}
	return out
}

// errTrendEditedMeanwhile is a trend job's post edited after the job read it:
// the job runs again and reads it again.
var errTrendEditedMeanwhile = fmt.Errorf("%w: the post was edited meanwhile", derrors.Unavailable)

// ReactionTrend is what a reaction (a like) to a counts toward, and
// whether it does: the post itself, when the policy counts it, by one
// whose account counts (by). Its author's standing is the hour's
// refresh's to weigh (trendingPosts).
func ReactionTrend(a *Activity, by policy.Account) (trends.Subject, bool) {
	sub := trends.Subject{Kind: trends.Statuses, Name: ids.Format(a.Seq)}
	return sub, a.RepostOf == "" && policy.Trending(a.post(), a.Sensitive || a.SpoilerText != "", policy.Account{Exists: true}) &&
		policy.TrendingBy(by)
}

// Trend runs a trend job: it marks the uses the post makes now and takes
// its mark from those it no longer makes, then bumps the candidates of
// the new ones. It can run any number of times, in any order, with the
// same end.
func (s *Service) Trend(ctx context.Context, t TrendTask) (string, error) {
	seq, ok := ids.Parse(t.ActivityID)
	if !ok || s.cfg.Trends == nil {
		return TrendNone, nil
	}
	held, err := trends.Marked(ctx, s.db, t.ActivityID)
	if err != nil {
		return "", err
	}
	a, want, err := s.trendRead(ctx, t, seq)
	if err != nil {
		return "", err
	}
	day := trends.DayOf(ids.Time(seq))
	var fresh []trends.Subject
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		l := tx.Lookup()
		var now Activity
		still := l.Add(Key(s.db, t.ActivityID), &now)
		uses := trends.ReadPost(l, t.ActivityID, held, want, a.UserID, day)
		if err := l.Run(ctx); err != nil {
			return err
		}
		gone := !still.Found() || now.Edits != a.Edits
		var err error
		fresh, err = uses.Write(tx, gone)
		if err == nil && gone && still.Found() {
			return errTrendEditedMeanwhile
		}
		return err
	})
	if err != nil {
		return "", fmt.Errorf("activities: trend of %s: %w", t.ActivityID, err)
	}
	for _, sub := range fresh {
		if err := trends.Bump(ctx, s.db, sub, day); err != nil {
			return "", err
		}
	}
	if len(want) == 0 {
		return TrendNone, nil
	}
	return TrendMarked, nil
}

// trendRead reads a trend job's post (zero if gone) and what it makes
// trend now, or answers ErrNotYet while the change the job follows may
// yet commit: the post's, or the edit's.
func (s *Service) trendRead(ctx context.Context, t TrendTask, seq int64) (*Activity, []trends.Subject, error) {
	l := s.db.Lookup()
	r := readWithAuthor(l, t.ActivityID)
	if err := l.Run(ctx); err != nil {
		return nil, nil, err
	}
	a, found := &r.a, r.found.Found()
	switch {
	case !found && t.Edit == 0 && s.now().Sub(ids.Time(seq)) < s.cfg.GiveUpAfter,
		found && a.Edits < t.Edit && s.now().Sub(time.UnixMicro(t.At)) < s.cfg.GiveUpAfter:
		return nil, nil, ErrNotYet
	case !found:
		return a, nil, nil
	}
	return a, trendSubjects(a, r.author.Account()), nil
}

// withAuthor is an activity read by a job, with its author's record.
type withAuthor struct {
	a      Activity
	found  store.Ref
	author *accounts.Record
}

// readWithAuthor adds to l the activity id and, once it is found, its
// author's record.
func readWithAuthor(l *store.Lookup, id string) *withAuthor {
	r := &withAuthor{}
	r.found = l.Add(Key(l.DB(), id), &r.a)
	l.Then(func() {
		if r.found.Found() {
			r.author = accounts.Read(l, r.a.UserID)
		}
	})
	return r
}

// RefreshTrends ranks what trends of each kind (trends.Service.Refresh),
// the hour's work of the trends' cron.
func (s *Service) RefreshTrends(ctx context.Context) error {
	if s.cfg.Trends == nil {
		return nil
	}
	for _, k := range trends.Kinds {
		var uses trends.Counter
		var keep trends.Filter
		switch k {
		case trends.Tags:
			uses = s.tagPosts
		case trends.Statuses:
			keep = s.trendingPosts
		case trends.Links:
			keep = s.trendingLinks
		}
		if err := s.cfg.Trends.Refresh(ctx, k, uses, keep); err != nil {
			return err
		}
	}
	return nil
}

// tagPosts counts the public posts of a hashtag on a day: a count of the
// day's range of its feed.
func (s *Service) tagPosts(ctx context.Context, sub trends.Subject, d trends.Day) (int64, error) {
	from, to := ids.First(d.Start()), ids.First((d + 1).Start())
	q := s.db.Query(KindActivity).FilterField("feeds", ">=", order.Value(tagFeed(sub.Name), from)).
		FilterField("feeds", "<", order.Value(tagFeed(sub.Name), to))
	return s.db.Count(ctx, q)
}

// trendingPosts keeps, of posts' ids, those that may trend now: there,
// and counted by the policy (public, not sensitive nor removed, by
// someone neither limited nor suspended).
func (s *Service) trendingPosts(ctx context.Context, names []string) (map[string]bool, error) {
	l := s.db.Lookup()
	posts := make([]Activity, len(names))
	refs := make([]store.Ref, len(names))
	authors := make([]*accounts.Record, len(names))
	for i, id := range names {
		if _, ok := ids.Parse(id); ok {
			refs[i] = l.Add(Key(s.db, id), &posts[i])
		}
	}
	l.Then(func() {
		for i := range names {
			if refs[i].Found() {
				authors[i] = accounts.Read(l, posts[i].UserID)
			}
		}
	})
	if err := l.Run(ctx); err != nil {
		return nil, err
	}
	keep := map[string]bool{}
	for i, id := range names {
		a := &posts[i]
		keep[id] = refs[i].Found() && a.RepostOf == "" &&
			policy.Trending(a.post(), a.Sensitive || a.SpoilerText != "", authors[i].Account())
	}
	return keep, nil
}

// trendingLinks keeps, of links, those with a card.
func (s *Service) trendingLinks(ctx context.Context, names []string) (map[string]bool, error) {
	keep := map[string]bool{}
	if s.cfg.Cards == nil {
		return keep, nil
	}
	kept, err := s.cfg.Cards.Kept(ctx, names)
	if err != nil {
		return nil, err
	}
	for i, c := range kept {
		keep[names[i]] = c != nil
	}
	return keep, nil
}

// TrendingLink is a link that trends, or waits for review, with its card.
type TrendingLink struct {
	trends.Item
	Card *CardView
}

// TrendingPost is a post that trends, or waits for review, as its reader
// sees it.
type TrendingPost struct {
	trends.Item
	View View
}

// Trends is what trends of one kind, as a reader sees it.
type Trends struct {
	Tags  []trends.Item
	Links []TrendingLink
	Posts []TrendingPost
}

// TrendsRequest asks for what trends of a kind: a window of the shown
// (Offset, Count), or of those waiting for review too (Waiting, for
// staff alone: package moderation asks).
type TrendsRequest struct {
	Viewer  string
	Kind    trends.Kind
	Offset  int
	Count   int
	Waiting bool
}

// Trending returns what trends of r's kind, best first: hashtags as the
// snapshot has them, links with their cards, and posts as r.Viewer sees
// them (those hidden from them left out).
func (s *Service) Trending(ctx context.Context, r TrendsRequest) (Trends, error) {
	var out Trends
	if s.cfg.Trends == nil {
		return out, nil
	}
	shown, waiting, err := s.cfg.Trends.Trending(ctx, r.Kind)
	if err != nil {
		return out, err
	}
	items := shown
	if r.Waiting {
		items = append(shown, waiting...)
	}
	items = items[min(r.Offset, len(items)):]
	switch r.Kind {
	case trends.Tags:
		out.Tags = items[:min(len(items), r.Count)]
	case trends.Links:
		items = items[:min(len(items), r.Count)]
		out.Links, err = s.trendLinks(ctx, items)
	case trends.Statuses:
		out.Posts, err = s.trendPosts(ctx, r.Viewer, items, r.Count)
	}
	return out, err
}

func (s *Service) trendLinks(ctx context.Context, items []trends.Item) ([]TrendingLink, error) {
	if s.cfg.Cards == nil || len(items) == 0 {
		return nil, nil
	}
	names := make([]string, len(items))
	for i, it := range items {
		names[i] = it.Name
	}
	kept, err := s.cfg.Cards.Kept(ctx, names)
	if err != nil {
		return nil, err
	}
	var mint media.Minter
	if s.cfg.Links != nil && slices.ContainsFunc(kept, func(c *cards.Card) bool { return c != nil && c.Image.ID != "" }) {
		if mint, err = s.cfg.Links.Minter(ctx); err != nil {
			return nil, err
		}
	}
	var out []TrendingLink
	for i, c := range kept {
		if c != nil {
			out = append(out, TrendingLink{Item: items[i], Card: cardView(mint, c)})
		}
	}
	return out, nil
}

// trendPosts shows count of items' posts that viewer may see: a snapshot
// keeps more than a page, for those hidden from them.
func (s *Service) trendPosts(ctx context.Context, viewer string, items []trends.Item, count int) ([]TrendingPost, error) {
	names := make([]string, len(items))
	for i, it := range items {
		names[i] = it.Name
	}
	views, err := s.Shown(ctx, viewer, names)
	if err != nil {
		return nil, err
	}
	var out []TrendingPost
	for _, v := range views {
		// Counted still, as edited since the hour's refresh: the policy's
		// rule, its author's standing left to the page's decision.
		post := policy.Post{Author: v.UserID, Visibility: v.Visibility, Mentions: v.Mentions}
		counts := policy.Trending(post, v.Sensitive || v.SpoilerText != "", policy.Account{Exists: true})
		if i := slices.Index(names, v.ID); i >= 0 && len(out) < count && counts {
			out = append(out, TrendingPost{Item: items[i], View: v})
		}
	}
	return out, nil
}

// TagHistory is a hashtag's last days: its posts and its people, today
// first.
func (s *Service) TagHistory(ctx context.Context, tag string) ([]trends.Count, error) {
	if s.cfg.Trends == nil {
		return nil, nil
	}
	return s.cfg.Trends.History(ctx, trends.Subject{Kind: trends.Tags, Name: tag}, s.tagPosts)
}

// ReviewTrend records a moderator's review of what trends (package
// moderation has checked that moderator may).
func (s *Service) ReviewTrend(ctx context.Context, moderator string, k trends.Kind, id string, approve bool) (trends.Item, error) {
	if s.cfg.Trends == nil {
		return trends.Item{}, trends.ErrNoSuchTrend
	}
	return s.cfg.Trends.Review(ctx, k, id, moderator, approve)
}
