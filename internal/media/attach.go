package media

import (
	"fmt"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/derrors"
	"socialstream/internal/store"
)

// Where a picture belongs: the checks and marks of the transactions that
// attach pictures to a post (ReadLoose, SetActivity), hold them for a
// scheduled post (SetHeld) and let them go again (ReadHeld). Each runs in
// the transaction of the owner of what they go on.

// ReadLoose adds to l the items named, for a post of user's that attaches
// them; check, once l has run, says whether each may be attached (it is
// loose, or held for holder, the scheduled post being published) and
// returns what the activity keeps of them.
func ReadLoose(l *store.Lookup, idList []string, holder string) func(user string) ([]*datastore.Key, []any, []Attached, error) {
	vals := make([]*Item, len(idList))
	refs := make([]store.Ref, len(idList))
	for i, id := range idList {
		vals[i] = &Item{}
		refs[i] = l.Add(ItemKey(l.DB(), id), vals[i])
	}
	return func(user string) ([]*datastore.Key, []any, []Attached, error) {
		keys := make([]*datastore.Key, len(idList))
		puts := make([]any, len(idList))
		att := make([]Attached, len(idList))
		for i, id := range idList {
			it := vals[i]
			if !refs[i].Found() || it.UserID != user {
				return nil, nil, nil, derrors.New(derrors.NotFound, fmt.Sprintf("no such media item %s of yours", id))
			}
			if !it.loose() && (holder == "" || it.Held != holder) {
				return nil, nil, nil, derrors.New(derrors.Conflict, fmt.Sprintf("media item %s is already on an activity, in an album or held for a scheduled post", id))
			}
			if it.Processing != 0 {
				return nil, nil, nil, errProcessing(id)
			}
			if it.Broken != "" {
				return nil, nil, nil, errBroken(id, it.Broken)
			}
			it.ID = id
			keys[i], puts[i], att[i] = ItemKey(l.DB(), id), it, it.Attached
		}
		return keys, puts, att, nil
	}
}

// SetActivity marks the items read by ReadLoose (puts) as on activity.
func SetActivity(puts []any, activity string) {
	for _, p := range puts {
		p.(*Item).ActivityID, p.(*Item).Loose, p.(*Item).Held = activity, 0, ""
	}
}

// SetHeld marks the items read by ReadLoose (puts) as held for the
// scheduled post holder.
func SetHeld(puts []any, holder string) {
	for _, p := range puts {
		p.(*Item).Held, p.(*Item).Loose = holder, 0
	}
}

// ReadHeld adds to l the items named, which a scheduled post cancelled
// held; release, once l has run, returns those still held for holder,
// loose again as of now (the scheduled collection takes them a day later
// unless a post attaches them meanwhile).
func ReadHeld(l *store.Lookup, idList []string) func(holder string, now time.Time) ([]*datastore.Key, []any) {
	vals := make([]*Item, len(idList))
	refs := make([]store.Ref, len(idList))
	for i, id := range idList {
		vals[i] = &Item{}
		refs[i] = l.Add(ItemKey(l.DB(), id), vals[i])
	}
	return func(holder string, now time.Time) ([]*datastore.Key, []any) {
		var keys []*datastore.Key
		var puts []any
		for i, id := range idList {
			if it := vals[i]; refs[i].Found() && it.Held == holder {
				it.Held, it.Loose = "", now.UnixMicro()
				keys, puts = append(keys, ItemKey(l.DB(), id)), append(puts, it)
			}
		}
		return keys, puts
	}
}

// CheckIDs checks the media item ids of a post: at most MaxPerActivity,
// each once.
func CheckIDs(list []string) error {
	if len(list) > MaxPerActivity {
		return derrors.New(derrors.InvalidArgument, fmt.Sprintf("an activity carries at most %d media items", MaxPerActivity))
	}
	seen := map[string]bool{}
	for _, id := range list {
		if !ValidID(id) {
			return errBadItemID
		}
		if seen[id] {
			return derrors.New(derrors.InvalidArgument, "a media item is named twice")
		}
		seen[id] = true
	}
	return nil
}
