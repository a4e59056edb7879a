package activities

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/order"
	"socialstream/internal/store"
)

// What the erasure of a deleted account (package lifecycle) asks of this
// package. Each function does a bounded share of the work, can run any
// number of times, and reports how much it did: none left once it
// reports less than it was allowed. Nothing new of the user appears while
// it runs: a post reads its author, and the people it mentions, in its
// transaction, and a user's follows end before their audiences are
// swept.

// eraseBatch is how many activities one transaction of an erasure edits.
const eraseBatch = 25

// EraseAuthored deletes up to n activities of a deleted author, as Delete
// does, each with its cleanup job enqueued before the commit. A job is
// timed, and named, by its enqueue, as Delete's is, not by the erasure's
// start: a step may run long after it, and a job that runs before the
// step's commit must wait for it, not give up; a retried step's jobs are
// new ones, not the earlier attempt's, which may have given up already.
// It returns how many it deleted.
func (s *Service) EraseAuthored(ctx context.Context, author string, _ int64, n int) (int, error) {
	q := s.db.Query(KindActivity).FilterField("userId", "=", author).KeysOnly()
	done, err := s.db.Drain(ctx, q, n, eraseBatch, func(keys []*datastore.Key) error {
		at := s.now().UnixMicro()
		for _, k := range keys {
			if err := s.enqueueCleanup(ctx, CleanupTask{ActivityID: k.Name, At: at, Poll: true}); err != nil {
				return err
			}
		}
		return s.db.Update(ctx, func(tx *store.Tx) error {
			var gone []*datastore.Key
			var reposts, all []*Activity
			batch := func(id string) bool {
				return slices.ContainsFunc(keys, func(k *datastore.Key) bool { return k.Name == id })
			}
			_, err := editActivities(tx, keys, func(k *datastore.Key, a *Activity) bool {
				// The other audience chunks go with the cleanup job.
				gone = append(gone, k, AudienceKey(s.db, k.Name, 0))
				gone = append(gone, versionKeys(s.db, k.Name, a.Edits)...)
				if a.ExternalID != "" {
					gone = append(gone, externalIDKey(s.db, author, a.ExternalID))
				}
				if a.RepostOf != "" {
					reposts = append(reposts, a)
				}
				all = append(all, a)
				return false
			})
			if err != nil {
				return err
			}
			// Reposts count no more on what they shared, if it is there
			// and not going in this same commit.
			l := tx.Lookup()
			shared := make([]store.Ref, len(reposts))
			for i, a := range reposts {
				if !batch(a.RepostOf) {
					shared[i] = l.Add(Key(s.db, a.RepostOf), &Activity{})
				}
			}
			if err := l.Run(ctx); err != nil {
				return err
			}
			if err := recount(ctx, tx, all, batch, -1); err != nil {
				return err
			}
			for i, a := range reposts {
				more, err := unshare(tx, a, shared[i])
				if err != nil {
					return err
				}
				gone = append(gone, more...)
			}
			return tx.DeleteMulti(gone)
		})
	})
	if err == nil && done < n {
		// What is left of the posts of another server's that its server
		// deleted (Forget): their records, by their keys' range.
		q := s.db.Query(KindExternalID).FilterField("__key__", ">=", s.db.NameKey(KindExternalID, author+":", nil)).
			FilterField("__key__", "<", s.db.NameKey(KindExternalID, author+";", nil)).KeysOnly()
		var more int
		more, err = s.db.Drain(ctx, q, n-done, eraseBatch, func(keys []*datastore.Key) error { return s.db.DeleteMulti(ctx, keys) })
		done += more
	}
	if err != nil {
		return done, fmt.Errorf("activities.EraseAuthored(%s): %w", author, err)
	}
	return done, nil
}

// EraseMentions takes a deleted user out of up to n activities that
// mention them, and returns how many it changed.
func EraseMentions(ctx context.Context, db *store.DB, user string, n int) (int, error) {
	return sweep(ctx, db, db.Query(KindActivity).FilterField("mentionIds", "=", user).KeysOnly(), n,
		func(tx *store.Tx, keys []*datastore.Key) error {
			_, err := editActivities(tx, keys, func(_ *datastore.Key, a *Activity) bool {
				a.dropMention(user)
				return true
			})
			return err
		})
}

// EraseAudience takes a deleted user out of up to n audience chunks (the
// home feed's copies), once every follow of theirs has ended, and returns
// how many it changed: by a range of their home places.
func EraseAudience(ctx context.Context, db *store.DB, user string, n int) (int, error) {
	q := order.Range(db.Query(KindAudience), homeProp, user, 0, order.Place{}).KeysOnly()
	return sweep(ctx, db, q, n, func(tx *store.Tx, keys []*datastore.Key) error {
		_, err := RemoveFollower(tx, keys, user, time.Time{})
		return err
	})
}

// EraseAnswered forgets, for a deleted user, whom up to n replies to
// their activities answered, and returns how many it changed: the replies
// lose their inReplyToUserId (what they answer, an activity id, stays:
// their threads stand), and their audience chunks the same (Answers), so
// nothing stored names the user.
func EraseAnswered(ctx context.Context, db *store.DB, user string, n int) (int, error) {
	q := db.Query(KindActivity).FilterField("inReplyToUserId", "=", user).KeysOnly()
	return sweep(ctx, db, q, n, func(tx *store.Tx, keys []*datastore.Key) error {
		for _, k := range keys {
			var a Activity
			if ok, err := tx.Get(k, &a); err != nil {
				return err
			} else if !ok || a.InReplyToUser != user {
				continue
			}
			a.InReplyToUser = ""
			if err := tx.Put(k, &a); err != nil {
				return err
			}
			chunks, err := db.GetAll(ctx, db.Query(KindAudience).Ancestor(k).KeysOnly(), nil)
			if err != nil {
				return err
			}
			for _, ck := range chunks {
				var aud Audience
				if ok, err := tx.Get(ck, &aud); err != nil {
					return err
				} else if ok && aud.Answers == user {
					aud.Answers = ""
					if err := tx.Put(ck, &aud); err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
}

// sweep edits, eraseBatch at a time in transactions, up to n entities of a
// keys-only query whose matches the edit removes, and returns how many.
func sweep(ctx context.Context, db *store.DB, q *datastore.Query, n int, edit func(*store.Tx, []*datastore.Key) error) (int, error) {
	done := 0
	for attempt := 0; ; attempt++ {
		k, err := db.Drain(ctx, q, n-done, eraseBatch, func(keys []*datastore.Key) error {
			return db.Update(ctx, func(tx *store.Tx) error { return edit(tx, keys) })
		})
		done += k
		// What the query found and a delete took since fails its
		// transform (store.ErrGone): the query, run again, no longer
		// finds it. Run again here, not by the queue's backoff.
		if errors.Is(err, store.ErrGone) && attempt < 3 && done < n {
			continue
		}
		if err != nil {
			return done, fmt.Errorf("activities: erase: %w", err)
		}
		return done, nil
	}
}
