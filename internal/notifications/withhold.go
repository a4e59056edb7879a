package notifications

import (
	"context"
	"fmt"

	"cloud.google.com/go/datastore"

	"socialstream/internal/store"
)

// A suspension withholds what its person caused from their recipients'
// unread counts: the suspension's withholding job (package moderation)
// marks each of their notifications Withheld, and its lifting clears the
// marks; the lists hide a suspended actor's notifications by reading the
// actor, at once.

// withholdBatch is how many notifications one transaction of Withhold
// changes.
const withholdBatch = 250

// Withhold marks up to n of the notifications user caused, from cursor,
// as withheld from their recipients' unread counts when suspended says
// (in each transaction, reading the standing then) that user is
// suspended, and clears the mark when not: a suspension's withholding job
// (package moderation) runs it any number of times, and whichever run is
// last leaves the marks as the standing is. The lists hide a suspended
// actor's notifications by reading the actor. It returns the cursor of
// the rest, "" at the end.
func Withhold(ctx context.Context, db *store.DB, user, cursor string, n int, suspended func(*store.Tx) (bool, error)) (string, error) {
	q := db.Query(Kind).FilterField("actorId", "=", user).KeysOnly()
	next, err := db.UpdatePage(ctx, q, cursor, n, withholdBatch, func(tx *store.Tx, keys []*datastore.Key) error {
		want, err := suspended(tx)
		if err != nil {
			return err
		}
		l := tx.Lookup()
		ns := make([]Notification, len(keys))
		found := make([]store.Ref, len(keys))
		for i, k := range keys {
			found[i] = l.Add(k, &ns[i])
		}
		if err := l.Run(ctx); err != nil {
			return err
		}
		var put []*datastore.Key
		var vals []*Notification
		for i, k := range keys {
			if found[i].Found() && ns[i].Withheld != want {
				ns[i].Withheld = want
				put, vals = append(put, k), append(vals, &ns[i])
			}
		}
		return tx.PutMulti(put, vals)
	})
	if err != nil {
		return "", fmt.Errorf("notifications.Withhold(%s): %w", user, err)
	}
	return next, nil
}
