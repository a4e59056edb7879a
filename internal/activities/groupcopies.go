package activities

import (
	"context"
	"fmt"
	"slices"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/groups"
	"socialstream/internal/ids"
	"socialstream/internal/order"
	"socialstream/internal/store"
)

// maxGroupCopies bounds the group ids one activity carries: twice a
// user's group limit, for ids a removal has not reached yet.
const maxGroupCopies = 2 * groups.MaxGroupsPerUser

// Newest returns owner's newest activities, limit at most, older than
// before unless it is zero, newest first: a range of their own page's
// places.
func Newest(ctx context.Context, db *store.DB, owner string, before int64, limit int) ([]Ref, error) {
	from := order.Place{Seq: before}
	qs := []*datastore.Query{order.Range(db.Query(KindActivity), feedsProp, selfFeed(owner, ""), 0, from).KeysOnly()}
	keys, _, _, _, err := order.Page[Activity](ctx, db, qs, true, placeOfActivity, limit, 0)
	if err != nil {
		return nil, fmt.Errorf("activities.Newest(%s): %w", owner, err)
	}
	refs := make([]Ref, 0, len(keys))
	for _, k := range keys {
		seq, _ := ids.Parse(k.Name)
		refs = append(refs, Ref{ID: k.Name, Seq: seq, Author: owner})
	}
	return refs, nil
}

// WithGroup returns the keys-only query of owner's activities that carry
// group: every copy a removal must undo, however old. Two equality
// filters, served by the built-in indexes (a merge join).
func WithGroup(db *store.DB, owner, group string) *datastore.Query {
	return db.Query(KindActivity).FilterField("userId", "=", owner).FilterField("groupIds", "=", group).KeysOnly()
}

// AddGroup adds group to the groupIds of each activity, in tx, and returns
// the ids of the activities it changed. Activities that no longer exist
// are skipped.
//
// The activities are read outside the transaction, which takes no lock on
// them: the jobs of one author's joins, and the likes of those
// activities, change them at once. Each gets the group by a server-side
// AppendMissingElements that reads nothing, and fails the commit should
// the activity be deleted meanwhile (the job retries).
func AddGroup(tx *store.Tx, refs []Ref, group string) ([]string, error) {
	keys := make([]*datastore.Key, len(refs))
	for i, r := range refs {
		keys[i] = Key(tx.DB(), r.ID)
	}
	return transformActivities(tx, keys, func(a *Activity) bool {
		return a.isPublic() && !slices.Contains(a.GroupIDs, group) && len(a.GroupIDs) < maxGroupCopies
	}, func(a *Activity) []datastore.PropertyTransform {
		return []datastore.PropertyTransform{datastore.AppendMissingElements("groupIds", group),
			datastore.AppendMissingElements(feedsProp, order.Value(groupFeed(group), a.Seq))}
	})
}

// RemoveGroup removes group, in tx, from the activities with the given
// keys (from WithGroup) that were surely posted before cutoff (all of them
// when cutoff is zero), and returns the ids of those it changed. It reads
// them outside the transaction and removes the group by a server-side
// RemoveAllFromArray, as AddGroup adds it.
func RemoveGroup(tx *store.Tx, keys []*datastore.Key, group string, cutoff time.Time) ([]string, error) {
	return transformActivities(tx, keys, func(a *Activity) bool {
		return slices.Contains(a.GroupIDs, group) && (cutoff.IsZero() || ids.MintedBefore(a.Seq, cutoff))
	}, func(a *Activity) []datastore.PropertyTransform {
		return []datastore.PropertyTransform{datastore.RemoveAllFromArray("groupIds", group),
			datastore.RemoveAllFromArray(feedsProp, order.Value(groupFeed(group), a.Seq))}
	})
}

// transformActivities reads the activities at keys outside tx and applies
// the transforms of t, in tx, to each that exists and that pick chooses;
// it returns the ids of those.
func transformActivities(tx *store.Tx, keys []*datastore.Key, pick func(*Activity) bool, t func(*Activity) []datastore.PropertyTransform) ([]string, error) {
	acts, found, err := readActivities(tx.DB().Lookup(), keys) // outside tx
	if err != nil {
		return nil, err
	}
	var changed []string
	for i, k := range keys {
		if !found[i] || !pick(&acts[i]) {
			continue
		}
		if err := tx.Transform(k, t(&acts[i])...); err != nil {
			return nil, err
		}
		changed = append(changed, k.Name)
	}
	return changed, nil
}

// readActivities reads the activities at keys with l, and which exist.
func readActivities(l *store.Lookup, keys []*datastore.Key) ([]Activity, []bool, error) {
	acts := make([]Activity, len(keys))
	refs := make([]store.Ref, len(keys))
	for i, k := range keys {
		refs[i] = l.Add(k, &acts[i])
	}
	if err := l.Run(context.Background()); err != nil {
		return nil, nil, err
	}
	found := make([]bool, len(keys))
	for i, r := range refs {
		found[i] = r.Found()
	}
	return acts, found, nil
}

// editActivities reads the activities at keys in tx, applies edit to each
// that exists, and writes those it changed, whose ids it returns.
func editActivities(tx *store.Tx, keys []*datastore.Key, edit func(*datastore.Key, *Activity) bool) ([]string, error) {
	acts, found, err := readActivities(tx.Lookup(), keys)
	if err != nil {
		return nil, err
	}
	var changed []string
	var putKeys []*datastore.Key
	var putVals []any
	for i, k := range keys {
		if found[i] && edit(k, &acts[i]) {
			putKeys, putVals = append(putKeys, k), append(putVals, &acts[i])
			changed = append(changed, k.Name)
		}
	}
	return changed, tx.PutMulti(putKeys, putVals)
}
