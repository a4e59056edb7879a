package activities

// Deleting an activity: the transaction that takes it out of every feed
// at once (and lets its external id go, or, for a post of another
// server's, keeps it as gone), and the cleanup job that removes what the
// transaction cannot reach.

import (
	"context"
	"fmt"
	"slices"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/ids"
	"socialstream/internal/queue"
	"socialstream/internal/store"
	viewerstate "socialstream/internal/viewer"
)

// Delete deletes an activity of author's, with its audience chunks,
// counts and dedupe entity, so it leaves every feed at once. A cleanup job,
// enqueued before the commit, removes what the transaction cannot reach:
// audience chunks follow jobs added, likes, comments (and, through the
// caller's hook, notifications that point at it). An activity moderation
// removed is kept for the record: to its author it is not there.
func (s *Service) Delete(ctx context.Context, author, id string) error {
	return s.delete(ctx, author, id, false)
}

// delete is Delete; removed too deletes one moderation removed (the
// reposts of a deleted activity, say).
func (s *Service) delete(ctx context.Context, author, id string, removed bool) error {
	if _, ok := ids.Parse(id); !ok {
		return ErrNoSuchActivity
	}
	key := Key(s.db, id)
	var a Activity
	if ok, err := s.db.Get(ctx, key, &a); err != nil {
		return fmt.Errorf("activities.Delete(%s): %w", id, err)
	} else if !ok || a.Removed != 0 && !removed {
		return ErrNoSuchActivity
	} else if a.UserID != author {
		return s.notAuthor(ctx, author, id)
	}
	t := CleanupTask{ActivityID: id, At: s.now().UnixMicro(), Pictures: len(a.Media) > 0, Poll: a.Poll != nil}
	if s.cfg.Publisher != nil && !fromElsewhere(a.ExternalID) && published(a.Visibility, a.RepostOf != "", a.MentionNames) {
		t.Author, t.Shared = author, a.RepostOf
	}
	cleanup := CleanupJob.Pending(s.queue, t, 0)
	var jobs queue.Ahead
	err := jobs.Commit(ctx, []queue.Pending{cleanup}, func() error {
		return s.db.Update(ctx, func(tx *store.Tx) error {
			var a Activity
			if ok, err := tx.Get(key, &a); err != nil {
				return err
			} else if !ok || a.Removed != 0 && !removed {
				return ErrNoSuchActivity
			}
			if a.UserID != author {
				return ErrNotAuthor
			}
			var shared store.Ref
			var own *viewerstate.Ref
			if a.RepostOf != "" {
				l := tx.Lookup()
				shared, own = l.Add(Key(s.db, a.RepostOf), &Activity{}), viewerstate.Read(l, author)
				if err := l.Run(ctx); err != nil {
					return err
				}
			}
			unshared, err := unshare(tx, &a, shared)
			if err != nil {
				return err
			}
			if err := recount(ctx, tx, []*Activity{&a}, func(string) bool { return false }, -1); err != nil {
				return err
			}
			if own.Found() { // the reposter's state lists the repost no more
				own.Edit().SetRepost(a.RepostOf, false)
				if err := own.Save(tx); err != nil {
					return err
				}
			}
			keys := []*datastore.Key{key}
			keys = append(keys, unshared...)
			keys = append(keys, versionKeys(s.db, id, a.Edits)...)
			gone, err := s.dropExternalID(tx, author, id, a.ExternalID)
			if err != nil {
				return err
			}
			keys = append(keys, gone...)
			for n := 0; n < a.Chunks && n < 400; n++ {
				keys = append(keys, AudienceKey(s.db, id, n))
			}
			return tx.DeleteMulti(keys)
		})
	})
	if err != nil {
		return fmt.Errorf("activities.Delete(%s): %w", id, err)
	}
	return nil
}

// dropExternalID lets a deleted activity's external id go: it returns
// its record's key to delete with it, or, for a post of another server's
// (fromElsewhere), keeps the record, as gone (Forget).
func (s *Service) dropExternalID(tx *store.Tx, author, id, ext string) ([]*datastore.Key, error) {
	switch {
	case fromElsewhere(ext):
		return nil, tx.Put(externalIDKey(s.db, author, ext), &externalID{ActivityID: id, Gone: true})
	case ext != "":
		return []*datastore.Key{externalIDKey(s.db, author, ext)}, nil
	}
	return nil, nil
}

// CleanupTask is the body of the job that removes what a deleted activity
// leaves behind.
type CleanupTask struct {
	ActivityID string `json:"activityId"`
	At         int64  `json:"at"` // when the delete was asked for, µs
	// Pictures says the activity had pictures, for Config.ForgetPictures
	// (an erasure's phase takes an erased author's, and sets it not).
	Pictures bool `json:"pictures,omitempty"`
	// Poll says the activity had a poll (or may have had: an erasure's
	// step reads none), for Config.Polls.
	Poll bool `json:"poll,omitempty"`
	// Author, when set, is told to other servers (Config.Publisher) as
	// the deleted post's author; Shared, for a repost, what it shared.
	Author string `json:"author,omitempty"`
	Shared string `json:"shared,omitempty"`
}

// CleanupJob cleans up after a deleted activity.
var CleanupJob = queue.Job[CleanupTask]{Name: "cleanup", Queue: queue.Cleanup,
	TaskName: func(t CleanupTask) string { return fmt.Sprintf("cleanup-%s-%d", t.ActivityID, t.At) }}

func (s *Service) enqueueCleanup(ctx context.Context, t CleanupTask) error {
	return CleanupJob.Enqueue(ctx, s.queue, t, 0)
}

// cleanupBatch is how many entities one cleanup commit deletes.
const cleanupBatch = 500

// Cleanup runs a cleanup job: once the activity is gone, it deletes its
// remaining audience chunks and counts, then runs Config.Forget. It
// reports whether the activity is gone (false: the delete never committed,
// and there is nothing to clean) and how many entities it deleted. It can
// run any number of times.
func (s *Service) Cleanup(ctx context.Context, t CleanupTask) (gone bool, deleted int, err error) {
	if _, ok := ids.Parse(t.ActivityID); !ok {
		return false, 0, nil
	}
	key := Key(s.db, t.ActivityID)
	ok, err := s.db.Get(ctx, key, &Activity{})
	if err != nil {
		return false, 0, fmt.Errorf("activities.Cleanup(%s): %w", t.ActivityID, err)
	}
	if ok {
		// The delete has not committed yet, or never will.
		if s.now().Sub(time.UnixMicro(t.At)) < s.cfg.GiveUpAfter {
			return false, 0, ErrNotYet
		}
		return false, 0, nil
	}
	// Nothing new can appear: follow and fan-out jobs, likes, comments and
	// notification jobs check the activity in their transactions.
	deleted, err = s.db.DeleteAll(ctx, s.db.Query(KindAudience).Ancestor(key).KeysOnly(), cleanupBatch)
	if err == nil {
		var n int
		n, err = s.dropReposts(ctx, t.ActivityID)
		deleted += n
	}
	forgets := s.cfg.Forget
	if t.Pictures && s.cfg.Pictures != nil {
		forgets = append(slices.Clip(forgets), s.cfg.Pictures)
	}
	if t.Poll && s.cfg.Polls != nil {
		forgets = append(slices.Clip(forgets), s.cfg.Polls)
	}
	for _, forget := range forgets {
		if err != nil {
			break
		}
		var n int
		n, err = forget.ForgetActivity(ctx, t.ActivityID)
		deleted += n
	}
	if err == nil && t.Author != "" && s.cfg.Publisher != nil {
		err = s.cfg.Publisher.Unpublished(ctx, t.Author, t.ActivityID, t.Shared)
	}
	if err != nil {
		return true, deleted, fmt.Errorf("activities.Cleanup(%s): %w", t.ActivityID, err)
	}
	return true, deleted, nil
}
