package activities

import (
	"context"
	"fmt"
	"slices"

	"cloud.google.com/go/datastore"

	"socialstream/internal/derrors"
	"socialstream/internal/policy"
	"socialstream/internal/store"
)

// ErrNotTheirs says an activity named by moderation is not the account's.
var ErrNotTheirs = derrors.New(derrors.NotFound, "no such activity of this person")

// Snapshot is an activity as moderation keeps it: what it said when it
// was reported, whatever becomes of it.
type Snapshot struct {
	ID          string   `json:"id"`
	Title       string   `json:"title"`
	Body        string   `json:"body,omitempty"`
	SpoilerText string   `json:"spoilerText,omitempty"`
	URL         string   `json:"url,omitempty"`
	Visibility  string   `json:"visibility"`
	PostedTime  int64    `json:"postedTime"`
	EditedTime  int64    `json:"editedTime,omitempty"`
	RepostOf    string   `json:"repostOf,omitempty"`
	Mentions    []string `json:"mentions"`
	Tags        []string `json:"tags"`
}

// Snap returns what a view shows, as moderation keeps it.
func Snap(v View) Snapshot {
	s := Snapshot{ID: v.ID, Title: v.Title, Body: v.Body, SpoilerText: v.SpoilerText, URL: v.URL, Visibility: v.Visibility,
		PostedTime: v.PostedTime, EditedTime: v.EditedTime, Mentions: v.Mentions, Tags: v.Tags}
	if v.RepostOf != nil {
		s.RepostOf = v.RepostOf.ID
	}
	return s
}

// Takedown takes author's activities idList down (down) at at (µs), or
// puts them back, in tx: one taken down is in no feed and not there by
// id for anyone, its author included, and is kept for the record. Each
// must be the author's (ErrNotTheirs otherwise). It reports the ids it
// changed.
func Takedown(ctx context.Context, tx *store.Tx, author string, idList []string, at int64, down bool) ([]string, error) {
	l := tx.Lookup()
	keys := make([]*datastore.Key, len(idList))
	acts := make([]Activity, len(idList))
	refs := make([]store.Ref, len(idList))
	for i, id := range idList {
		keys[i] = Key(tx.DB(), id)
		refs[i] = l.Add(keys[i], &acts[i])
	}
	if err := l.Run(ctx); err != nil {
		return nil, err
	}
	var changed []string
	var put []*datastore.Key
	var vals []*Activity
	for i := range acts {
		if !refs[i].Found() || acts[i].UserID != author {
			return nil, ErrNotTheirs
		}
		if (acts[i].Removed != 0) == down || slices.Contains(changed, idList[i]) {
			continue
		}
		changed, put, vals = append(changed, idList[i]), append(put, keys[i]), append(vals, &acts[i])
	}
	if len(put) == 0 {
		return nil, nil
	}
	sign := int64(1) // put back: counted again
	if down {
		sign = -1
	}
	// A parent changed in this same commit counts its reply here: one
	// commit writes an entity once.
	for _, a := range vals {
		if i := slices.Index(changed, a.InReplyTo); i >= 0 && counted(a) {
			vals[i].RepliesCount += sign
		}
	}
	if err := recount(ctx, tx, vals, func(id string) bool { return slices.Contains(changed, id) }, sign); err != nil {
		return nil, err
	}
	for _, a := range vals {
		a.takeDown(at, down)
	}
	return changed, tx.PutMulti(put, vals)
}

// takeDown marks a taken down (down) at at (µs), or put back then.
func (a *Activity) takeDown(at int64, down bool) {
	if down {
		a.Removed = at
	} else {
		a.Removed, a.Restored = 0, at
	}
}

// Texts returns the title and body of each of the activities idList that
// exists, is not reader's and may be read by them (none, for one removed
// or no longer addressed to them) (and of what a repost shares, as the
// repost's own: one more round only for reposts), in one batch lookup: for
// reader's keyword filters of what is not a feed (notifications), which
// leave one's own activities alone, as the feeds' do.
func Texts(ctx context.Context, db *store.DB, reader string, idList []string) (map[string][]string, error) {
	l := db.Lookup()
	acts := make([]Activity, len(idList))
	refs := make([]store.Ref, len(idList))
	shared := make([]*Activity, len(idList))
	for i, id := range idList {
		refs[i] = l.Add(Key(db, id), &acts[i])
	}
	l.Then(func() {
		for i := range acts {
			if refs[i].Found() && acts[i].RepostOf != "" {
				shared[i] = &Activity{}
				l.Add(Key(db, acts[i].RepostOf), shared[i])
			}
		}
	})
	if err := l.Run(ctx); err != nil {
		return nil, fmt.Errorf("activities.Texts: %w", err)
	}
	out := map[string][]string{}
	for i, id := range idList {
		if !refs[i].Found() || acts[i].UserID == reader {
			continue
		}
		// Never a text the reader may not read: a filter that matched
		// it would tell them what it says. Whom it addresses decides,
		// with the reader taken for a follower (the notification came
		// to them as one); moderation hides it whatever they follow.
		if policy.Moderated(reader, policy.ByID, acts[i].post(), policy.Account{Exists: true}, true) ||
			!policy.Addressed(reader, acts[i].post(), true) {
			out[id] = nil
			continue
		}
		out[id] = []string{acts[i].SpoilerText, acts[i].Title, acts[i].Body}
		if shared[i] != nil {
			out[id] = append(out[id], shared[i].SpoilerText, shared[i].Title, shared[i].Body)
		}
	}
	return out, nil
}

// ReadTakedown adds activity id to l; the function it returns answers,
// once l has run, whether it is there, when it was taken down (0: it is
// not) and when last put back: what a job that follows a takedown or its
// undoing waits for.
func ReadTakedown(l *store.Lookup, id string) func() (found bool, removed, restored int64) {
	var a Activity
	r := l.Add(Key(l.DB(), id), &a)
	return func() (bool, int64, int64) { return r.Found(), a.Removed, a.Restored }
}
