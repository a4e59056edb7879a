package activities

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"socialstream/internal/accounts"
	"socialstream/internal/ids"
	"socialstream/internal/store"
	"socialstream/internal/viewer"
)

// Counting likes and comments.
//
// Likes (package likes) and comments (package comments) are entities of
// their own. Their counts are properties of the Activity (likesCount,
// commentsCount), changed by a server-side Increment in the same commit as
// the like, unlike, comment or deletion they count (through Reaction):
// exact as soon as the answer arrives, and exact under retries, since the
// transaction re-reads whether the like or comment is there before it
// counts. No reaction reads the Activity in its transaction: Datastore
// takes a lock on what a transaction reads, and a popular activity's
// likers would wait on each other's locks; a blind increment waits on
// nothing but the commit. The count's update also checks that the activity
// is there when the reaction commits (an update of a missing entity fails
// the commit).

// counts returns the func that counts an activity once the lookup that
// reads it has run: its own counts, never below zero.
func counts(a *Activity) func() (likes, comments int64) {
	return func() (likes, comments int64) { return max(0, a.LikesCount), max(0, a.CommentsCount) }
}

// Reaction is a reaction's (a like's, a comment's) view of the activity it
// counts in, inside the reaction's transaction.
type Reaction struct {
	id    string
	a     Activity
	read  bool
	found store.Ref
}

// ReadReaction prepares the counting of a reaction to an activity. With
// seen, the activity as read before the transaction, it reads nothing:
// Count's update checks at the commit that the activity is still there
// (the hot path: a like, a comment). With seen nil (an erasure, a
// comment's delete), it adds the activity to the transaction's lookup.
func ReadReaction(l *store.Lookup, activity string, seen *Activity) *Reaction {
	if seen != nil {
		return &Reaction{id: activity, a: *seen}
	}
	r := &Reaction{id: activity, read: true}
	r.found = l.Add(Key(l.DB(), activity), &r.a)
	return r
}

// Check returns ErrNoSuchActivity when the lookup found no activity. An
// activity not read is checked by Count at the commit.
func (r *Reaction) Check() error {
	if r.read && !r.found.Found() {
		return ErrNoSuchActivity
	}
	return nil
}

// ID returns the activity's id.
func (r *Reaction) ID() string { return r.id }

// Counts returns the activity's counts as read (a checker's view of
// what is stored).
func (r *Reaction) Counts() (likes, comments int64) { return r.a.LikesCount, r.a.CommentsCount }

// Author returns the activity's author.
func (r *Reaction) Author() string { return r.a.UserID }

// Count adds likes and comments to the activity's counts with tx's commit,
// which fails with ErrNoSuchActivity if the activity is gone by then. The
// transaction must have read the change it counts.
func (r *Reaction) Count(tx *store.Tx, likes, comments int64) error {
	return tx.Increment(Key(tx.DB(), r.id), map[string]int64{"likesCount": likes, "commentsCount": comments})
}

// Err returns the error of a reaction's transaction as its caller should
// see it: ErrNoSuchActivity if Count found the activity gone at the commit.
func (r *Reaction) Err(err error) error {
	if errors.Is(err, store.ErrGone) {
		return ErrNoSuchActivity
	}
	return err
}

// ReactionView returns the activity a committed reaction counted in, as
// viewer, the reactor, sees it: read again, with its author, its counts
// and viewer's like, in one lookup, so that the counts are those of one
// moment after the commit. The reaction's transaction asked the policy
// (ReadSeen), so what lands just after it (a block, a suspension) does
// not hide its answer: the reaction happened, and a 404 would tell the
// reactor it had not. One deleted since is ErrNoSuchActivity: its likes
// and comments go with it.
func (s *Service) ReactionView(ctx context.Context, viewer string, r *Reaction) (View, error) {
	return s.reactedView(ctx, viewer, r.id, r.a.UserID, false)
}

// ReactionViewByState is ReactionView for a reader whose state a
// reaction's transaction found holding the activity
// (viewer.Ref.KnowsActivity): the answer reads the reader's state, which
// says whether they like and repost it, in place of their like and
// their repost, in the same reading as the activity's counts.
func (s *Service) ReactionViewByState(ctx context.Context, viewer string, r *Reaction) (View, error) {
	return s.reactedView(ctx, viewer, r.id, r.a.UserID, true)
}

// reactedView is ReactionView of activity id, by author.
//
// byState reads the viewer's state for their like and repost (one read
// where the two are two), when it holds the activity; a state that no
// longer does (its likes past viewer.MaxRecent since) has the whole
// reading made again, by key.
func (s *Service) reactedView(ctx context.Context, viewerID, id, authorID string, byState bool) (View, error) {
	var a Activity
	l := s.db.Lookup()
	found := l.Add(Key(s.db, id), &a)
	author := accounts.Read(l, authorID)
	sum := counts(&a)
	var own *viewer.Ref
	var liked, reposted store.Ref
	if byState {
		own = viewer.Read(l, viewerID)
	} else {
		if s.cfg.Likes != nil {
			liked = s.cfg.Likes.Liked(l, id, viewerID)
		}
		reposted = l.Add(RepostKey(s.db, id, viewerID), &Repost{})
	}
	read := &reading{}
	l.Then(func() {
		if found.Found() {
			read.readPoll(l, &a, viewerID)
		}
	})
	if err := l.Run(ctx); err != nil {
		return View{}, fmt.Errorf("activities: view of %s: %w", id, err)
	}
	if !found.Found() {
		return View{}, ErrNoSuchActivity
	}
	if byState && !own.KnowsActivity(id) {
		return s.reactedView(ctx, viewerID, id, authorID, false)
	}
	var p *accounts.Person
	if person, ok := author.Person(); ok {
		p = &person
	}
	likes, comments := sum()
	mint, err := s.minter(ctx, &a)
	if err != nil {
		return View{}, err
	}
	v := toView(id, &a, p, likes, comments, liked.Found())
	v.RepostedByViewer = reposted.Found()
	if byState {
		v.LikedByViewer, v.RepostedByViewer = own.Likes(id), own.Reposts(id)
	}
	v.MediaItems = pictures(mint, a.Media)
	v.Card = cardView(mint, a.Card)
	if read.poll != nil {
		v.Poll = read.poll(s.now(), a.UserID == viewerID)
	}
	return v, nil
}

// Exists checks that an activity exists and returns it; a repost comes
// with what it shares (if that is still there), which decides with it
// who may see it (ReadSeen). What is shared is read here, outside any
// transaction that follows: every reaction to it writes it.
func (s *Service) Exists(ctx context.Context, id string) (*Activity, error) {
	if _, ok := ids.Parse(id); !ok {
		return nil, ErrNoSuchActivity
	}
	var a Activity
	ok, err := s.db.Get(ctx, Key(s.db, id), &a)
	if err != nil {
		return nil, fmt.Errorf("activities.Exists(%s): %w", id, err)
	}
	if !ok {
		return nil, ErrNoSuchActivity
	}
	if a.RepostOf != "" {
		var shared Activity
		ok, err := s.db.Get(ctx, Key(s.db, a.RepostOf), &shared)
		if err != nil {
			return nil, fmt.Errorf("activities.Exists(%s): what it shares: %w", id, err)
		}
		if ok {
			a.shared = &shared
		}
	}
	return &a, nil
}

// counted reports whether a is in its author's statuses count and its
// parent's replies count: all but those for the mentioned alone, as
// Mastodon counts.
func counted(a *Activity) bool { return a.Visibility != MentionedOnly }

// recounts returns by how much recount changes each author's statuses
// and each parent's replies (those not going in the same commit): by
// sign for each of acts counted, and not left out of the counts already.
func recounts(acts []*Activity, going func(id string) bool, sign int64) (authors, parents map[string]int64) {
	authors, parents = map[string]int64{}, map[string]int64{}
	for _, a := range acts {
		if !counted(a) || a.Removed != 0 && sign < 0 {
			continue // not counted, or no longer
		}
		authors[a.UserID] += sign
		if a.InReplyTo != "" && !going(a.InReplyTo) {
			parents[a.InReplyTo] += sign
		}
	}
	return authors, parents
}

// recount changes by sign (-1: they leave; 1: they come back) the counts
// that acts, deleted or taken down in tx, are in: their authors' statuses
// and their parents' replies. Each author's card and parent is read in
// tx, and left alone if it is gone or going in the same commit (going).
// A post adds itself to both blind, with its commit (posting.apply);
// what leaves is rare enough to read what it changes.
func recount(ctx context.Context, tx *store.Tx, acts []*Activity, going func(id string) bool, sign int64) error {
	authors, parents := recounts(acts, going, sign)
	if len(authors) == 0 {
		return nil
	}
	l := tx.Lookup()
	cards, found := map[string]store.Ref{}, map[string]store.Ref{}
	for u := range authors {
		cards[u] = accounts.ReadCard(l, u)
	}
	for p := range parents {
		found[p] = l.Add(Key(tx.DB(), p), &Activity{})
	}
	if err := l.Run(ctx); err != nil {
		return err
	}
	for _, p := range slices.Sorted(maps.Keys(found)) {
		if found[p].Found() {
			if err := tx.Increment(Key(tx.DB(), p), map[string]int64{"repliesCount": parents[p]}); err != nil {
				return err
			}
		}
	}
	for _, u := range slices.Sorted(maps.Keys(cards)) {
		if cards[u].Found() {
			if err := accounts.CountPost(tx, u, authors[u], 0); err != nil {
				return err
			}
		}
	}
	return nil
}
