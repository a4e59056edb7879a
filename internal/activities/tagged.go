package activities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/ids"
	"socialstream/internal/order"
	"socialstream/internal/queue"
	"socialstream/internal/store"
	"socialstream/internal/tags"
)

// An activity's tags (package tags) are stored on it, indexed, so a tag's
// feed is one equality query. Its followers get it at home through
// audience entities of their own, Audience/#{tag}:{page} under the
// activity, whose userId is "#" and the tag (whose followers they hold):
// the home feed's query finds them as it finds the author's followers',
// the delete's cleanup removes them with the rest, an erasure takes the
// erased id out of them, and a follow or unfollow of the author, which
// edits the chunks of userId = the author, never touches them.
//
// The tag jobs write them, enqueued before the post or edit commits:
//
//   - the planning job (Tag empty) waits for its post or edit, removes the
//     pages of the tags an edit took away, and enqueues a page job for each
//     tag it added (a post: each tag);
//   - a page job writes one page of a tag's followers (those who followed
//     it before the activity's id was minted: its new posts, as Mastodon
//     has it), in a transaction that sees the activity still carries the
//     tag, and enqueues the next page.
//
// A page is written whole each time, so a job run twice writes the same.

// TagJob brings a tagged activity to its tags' followers' home feeds, a
// page at a time, or takes it from those of a tag an edit dropped.
var TagJob = queue.Job[TagTask]{Name: "tags", Queue: queue.Fanout, TaskName: TagTask.name}

// maxTagPages bounds a tag's pages of followers on one activity: 1,000 of
// AudienceChunkSize, about 5 million followers.
const maxTagPages = 1000

// TagTask is the body of a tag job.
type TagTask struct {
	ActivityID string `json:"activityId"`
	// Edit is the number of edits the activity has once the change that
	// enqueued the job is committed: 0 for a post.
	Edit int `json:"edit"`
	// At is when the change was asked for (µs): a planning job that finds
	// it not committed retries until GiveUpAfter past it.
	At int64 `json:"at"`
	// Add and Remove are what the change did to the tags (planning).
	Add    []string `json:"add,omitempty"`
	Remove []string `json:"remove,omitempty"`
	// Tag, Page and Cursor name one page of a tag's followers (a page job).
	Tag    string `json:"tag,omitempty"`
	Page   int    `json:"page,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}

// TagResult says what a tag job did, for its log line.
type TagResult struct {
	Enqueued int // page jobs
	Written  int // ids written to a page
	Removed  int // pages removed
	Skipped  string
}

// TagAudience is the value of Audience.UserID on the pages of tag's
// followers.
func TagAudience(tag string) string { return "#" + tag }

func tagPageKey(db *store.DB, activity, tag string, page int) *datastore.Key {
	return db.NameKey(KindAudience, fmt.Sprintf("%s:%d", TagAudience(tag), page), Key(db, activity))
}

// enqueueTags enqueues a tag job, named after what it does so that a
// retried post or edit enqueues it once.
func (s *Service) enqueueTags(ctx context.Context, t TagTask) error {
	return TagJob.Enqueue(ctx, s.queue, t, 0)
}

// name names a tag job after what it does.
func (t TagTask) name() string {
	name := fmt.Sprintf("tags-%s-%d", t.ActivityID, t.Edit)
	if t.Tag != "" {
		sum := sha256.Sum256([]byte(t.Tag))
		name += fmt.Sprintf("-%s-%d", hex.EncodeToString(sum[:8]), t.Page)
	}
	return name
}

// TagJob runs a tag job. It can run any number of times, in any order,
// with the same end state.
func (s *Service) TagJob(ctx context.Context, t TagTask) (TagResult, error) {
	seq, ok := ids.Parse(t.ActivityID)
	if !ok || t.Edit < 0 || t.Page < 0 || t.Page >= maxTagPages {
		return TagResult{Skipped: "malformed task"}, nil
	}
	if t.Tag != "" {
		return s.tagPage(ctx, t, seq)
	}
	key := Key(s.db, t.ActivityID)
	var a Activity
	ok, err := s.db.Get(ctx, key, &a)
	if err != nil {
		return TagResult{}, err
	}
	switch {
	case !ok && t.Edit == 0 && s.now().Sub(ids.Time(seq)) < s.cfg.GiveUpAfter,
		ok && a.Edits < t.Edit && s.now().Sub(time.UnixMicro(t.At)) < s.cfg.GiveUpAfter:
		return TagResult{}, ErrNotYet
	case !ok:
		return TagResult{Skipped: "activity never committed or deleted"}, nil
	case a.Edits < t.Edit:
		return TagResult{Skipped: "edit never committed"}, nil
	}
	var res TagResult
	if len(t.Remove) > 0 {
		// Only the tags it does not carry now: a later edit may have put
		// one back, and its own job wrote its pages.
		keys, err := s.db.GetAll(ctx, s.db.Query(KindAudience).Ancestor(key).KeysOnly(), nil)
		if err != nil {
			return res, err
		}
		var gone []*datastore.Key
		for _, k := range keys {
			tag, _, ok := strings.Cut(strings.TrimPrefix(k.Name, "#"), ":")
			if strings.HasPrefix(k.Name, "#") && ok && slices.Contains(t.Remove, tag) && !slices.Contains(a.Tags, tag) {
				gone = append(gone, k)
			}
		}
		if err := s.db.DeleteMulti(ctx, gone); err != nil {
			return res, err
		}
		res.Removed = len(gone)
	}
	for _, tag := range t.Add {
		if !slices.Contains(a.Tags, tag) {
			continue // taken away again since: nothing to write
		}
		if err := s.enqueueTags(ctx, TagTask{ActivityID: t.ActivityID, Edit: t.Edit, Tag: tag}); err != nil {
			return res, err
		}
		res.Enqueued++
	}
	return res, nil
}

// decideTagPage decides whether a page of a tag's followers gets a
// copy of activity a (found, or deleted): why not (it is gone, its tag
// was edited away, it is not public, or none of the page still follows
// the tag), or "" to write it for still.
func decideTagPage(found bool, a *Activity, tag string, still []string) string {
	switch {
	case !found:
		return "activity deleted"
	case !slices.Contains(a.Tags, tag):
		return "tag edited away"
	case !a.isPublic():
		return "not public"
	case len(still) == 0:
		return "no followers"
	}
	return ""
}

// tagPage writes one page of tag's followers onto activity t.ActivityID,
// and enqueues the next.
func (s *Service) tagPage(ctx context.Context, t TagTask, seq int64) (TagResult, error) {
	if seq < s.homeEdge() {
		return TagResult{Skipped: "past the home feed's edge"}, nil
	}
	followers, next, err := tags.Followers(ctx, s.db, t.Tag, ids.Time(seq), t.Cursor, AudienceChunkSize)
	if err != nil {
		return TagResult{}, err
	}
	var res TagResult
	key := Key(s.db, t.ActivityID)
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		res = TagResult{}
		var a Activity
		l := tx.Lookup()
		found := l.Add(key, &a)
		// The follows, read again: one ended since the query (an
		// unfollow, an erasure, which then takes the id out of every
		// audience) waits for this commit or is seen here.
		held := make([]store.Ref, len(followers))
		for i, f := range followers {
			held[i] = tags.Read(l, f, t.Tag)
		}
		if err := l.Run(ctx); err != nil {
			return err
		}
		var still []string
		for i, f := range followers {
			if held[i].Found() {
				still = append(still, f)
			}
		}
		if res.Skipped = decideTagPage(found.Found(), &a, t.Tag, still); res.Skipped != "" {
			return nil
		}
		aud := &Audience{FollowerIDs: still, Seq: a.Seq, UserID: TagAudience(t.Tag)}
		if err := checkAudience(aud); err != nil {
			return err
		}
		res.Written = len(still)
		return tx.Put(tagPageKey(s.db, t.ActivityID, t.Tag, t.Page), aud)
	})
	if err != nil || res.Skipped != "" || next == "" {
		return res, err
	}
	if t.Page+1 >= maxTagPages {
		res.Skipped = "last page"
		return res, nil
	}
	err = s.enqueueTags(ctx, TagTask{ActivityID: t.ActivityID, Edit: t.Edit, Tag: t.Tag, Page: t.Page + 1, Cursor: next})
	if err == nil {
		res.Enqueued = 1
	}
	return res, err
}

// TagUse counts author's public posts that carry tag, and says when the
// newest was posted (ms since the epoch; 0: none): a count of the range
// of the author's places of the tag, and its first key.
func (s *Service) TagUse(ctx context.Context, author, tag string) (int64, int64, error) {
	q := order.Range(s.db.Query(KindActivity), feedsProp, authorTagFeed(author, tag), 0, order.Place{})
	n, err := s.db.Count(ctx, q)
	if err != nil || n == 0 {
		return 0, 0, err
	}
	keys, err := s.db.GetAll(ctx, q.KeysOnly().Limit(1), nil)
	if err != nil || len(keys) == 0 {
		return n, 0, err
	}
	seq, _ := ids.Parse(keys[0].Name)
	return n, ids.Time(seq).UnixMilli(), nil
}
