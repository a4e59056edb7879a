package notifications

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/order"
	"socialstream/internal/store"
)

// Dismissing notifications, after Mastodon's dismiss and clear: a
// dismissed notification leaves every list and every count at once. It is
// not deleted but kept as a tombstone, read and with no place in its
// reader's list, so that a late retry of the job that made it (Cloud Tasks
// delivers at least once) finds it there and does not make it again. A
// sweeping job, enqueued with the dismissal for DismissedKept later (one
// a day and reader), deletes the tombstones past it, when no retry is
// left: nothing on the path of making and reading notifications looks
// for them.
//
// Billed: a dismissal reads one key (a keys-only range) and the
// notification, and writes it; a clear reads the list's keys (a keys-only
// query, one read a thousand) and writes each.

// DismissedKept is how long a dismissed notification is kept as a
// tombstone: longer than a job is retried (queue's GiveUpAfter, a week).
const DismissedKept = 8 * 24 * time.Hour

// sweep is the type of the jobs that delete a reader's tombstones.
const sweep = "sweep"

// sweeping enqueues, before a dismissal at now commits, the job that
// sweeps user's tombstones: named by the day, and run DismissedKept after
// the day's end.
func (s *Service) sweeping(ctx context.Context, user string, now time.Time) error {
	day := now.Truncate(24 * time.Hour).Add(24 * time.Hour)
	e := Event{Type: sweep, Recipients: []string{user}, ID: fmt.Sprintf("sweep-%s-%d", user, day.Unix())}
	return Job.Enqueue(ctx, s.queue, e, day.Add(DismissedKept+time.Minute).Sub(now))
}

// tombstone is what a dismissal leaves of a notification.
func tombstone(user string, seq int64, at time.Time) *Notification {
	return &Notification{UserID: user, Seq: seq, Read: true, Dismissed: true, DismissedAt: at.UTC()}
}

// Dismiss takes user's notification id (its id or seq: find) out of
// every list and count: ErrNoSuchNotification if it is not in their list.
func (s *Service) Dismiss(ctx context.Context, user, id string) error {
	key, err := s.find(ctx, user, id)
	if err != nil {
		return err
	}
	n, err := s.dismiss(ctx, user, []*datastore.Key{key})
	if err == nil && n == 0 {
		return ErrNoSuchNotification
	}
	return err
}

// Clear dismisses every notification of user's list.
func (s *Service) Clear(ctx context.Context, user string) error {
	keys, err := s.db.GetAll(ctx, s.newest(user, 0, order.Place{})[0].KeysOnly(), nil)
	if err != nil {
		return fmt.Errorf("notifications.Clear(%s): %w", user, err)
	}
	if len(keys) == 0 {
		return s.db.CheckGuard(ctx) // nothing to clear: refused all the same
	}
	_, err = s.dismiss(ctx, user, keys)
	return err
}

// dismiss writes the tombstones of user's notifications at keys (one
// dismissed already is left), and returns how many of the keys are
// user's notifications, dismissed now or before.
func (s *Service) dismiss(ctx context.Context, user string, keys []*datastore.Key) (int, error) {
	now := s.now()
	if err := s.sweeping(ctx, user, now); err != nil {
		return 0, fmt.Errorf("notifications: dismiss %s's: %w", user, err)
	}
	n, err := s.edit(ctx, user, keys, func(n *Notification) *Notification {
		if n.Dismissed {
			return nil
		}
		return tombstone(user, n.Seq, now)
	})
	if err != nil {
		return n, fmt.Errorf("notifications: dismiss %s's: %w", user, err)
	}
	return n, nil
}

// edit reads user's notifications at keys, 250 a transaction, and writes
// what change makes of each (nil: nothing); it returns how many of the
// keys are user's notifications, as the commits found them.
func (s *Service) edit(ctx context.Context, user string, keys []*datastore.Key, change func(*Notification) *Notification) (int, error) {
	done := 0
	for start := 0; start < len(keys); start += 250 {
		part, n := keys[start:min(start+250, len(keys))], 0
		err := s.db.Update(ctx, func(tx *store.Tx) error {
			l := tx.Lookup()
			ns := make([]Notification, len(part))
			refs := make([]store.Ref, len(part))
			for i, k := range part {
				refs[i] = l.Add(k, &ns[i])
			}
			if err := l.Run(ctx); err != nil {
				return err
			}
			var put []*datastore.Key
			var vals []*Notification
			n = 0 // of the attempt that commits
			for i := range ns {
				if !refs[i].Found() || ns[i].UserID != user {
					continue
				}
				n++
				if v := change(&ns[i]); v != nil {
					put, vals = append(put, part[i]), append(vals, v)
				}
			}
			return tx.PutMulti(put, vals)
		})
		if err != nil {
			return done, err
		}
		done += n
	}
	return done, nil
}

// sweepDismissed deletes user's tombstones dismissed more than
// DismissedKept ago, for the sweeping job (a keys-only query, served by the composite index
// (userId, dismissedAt)).
func (s *Service) sweepDismissed(ctx context.Context, user string) error {
	q := s.db.Query(Kind).FilterField("userId", "=", user).FilterField("dismissedAt", "<", s.now().Add(-DismissedKept)).KeysOnly()
	_, err := s.db.DeleteAll(ctx, q, 500)
	return err
}
