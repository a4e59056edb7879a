package activities

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"cloud.google.com/go/datastore"

	"socialstream/internal/accounts"
	"socialstream/internal/blocks"
	"socialstream/internal/derrors"
	"socialstream/internal/ids"
	"socialstream/internal/notifications"
	"socialstream/internal/store"
	"socialstream/internal/tags"
	"socialstream/internal/text"
)

// KindVersion is the kind of the texts an edit replaced (its history):
// Activity/{id}/Version/{n}, n from 0 (as first posted), one per edit.
// Only the author reads them.
const KindVersion = "Version"

// MaxEdits is how many times an activity may be edited.
const MaxEdits = 50

var (
	ErrTooManyEdits    = derrors.New(derrors.Conflict, fmt.Sprintf("an activity can be edited at most %d times", MaxEdits))
	errEditedMeanwhile = errors.New("activities: edited meanwhile")
)

// Version is an activity's title, body and mentions as they were until an
// edit.
type Version struct {
	Title      string   `datastore:"title,noindex"`
	Body       string   `datastore:"body,noindex"`
	MentionIDs []string `datastore:"mentionIds,noindex"`
	// Time is when it was posted, or made by an edit: ms since the epoch.
	Time int64 `datastore:"time,noindex"`
}

// VersionKey returns the key of an activity's version n.
func VersionKey(db *store.DB, activity string, n int) *datastore.Key {
	return db.NameKey(KindVersion, strconv.Itoa(n), Key(db, activity))
}

func versionKeys(db *store.DB, activity string, n int) []*datastore.Key {
	keys := make([]*datastore.Key, n)
	for i := range keys {
		keys[i] = VersionKey(db, activity, i)
	}
	return keys
}

// EditInput is what an author sends to edit an activity: a nil field is
// left as it is.
type EditInput struct {
	Title *string
	Body  *string
}

// VersionView is one version of an activity, as its author sees it.
type VersionView struct {
	Title      string   `json:"title"`
	Body       string   `json:"body,omitempty"`
	Mentions   []string `json:"mentions"`
	PostedTime int64    `json:"postedTime"`
}

// Edit changes the title and body of author's activity id, and returns it
// as it is now. Its mentions follow the text: the people named in it now
// are its mentions (as for a post: none deleted, or with a block with the
// author), so the @mentions feeds follow at once, and those it newly
// mentions are notified. Its tags follow too: the tag feeds at once, and
// a job brings it to the followers of a tag it adds and takes it from
// those of a tag it drops. What it was is kept as a Version for the author.
// An edit that changes nothing writes nothing, so a retry after a commit
// that applied answers as the first did.
func (s *Service) Edit(ctx context.Context, author, id string, in EditInput) (View, error) {
	if _, ok := ids.Parse(id); !ok {
		return View{}, ErrNoSuchActivity
	}
	if in.Title == nil && in.Body == nil {
		return View{}, derrors.New(derrors.InvalidArgument, "give a title or a body to change")
	}
	for attempt := 0; ; attempt++ {
		v, err := s.edit(ctx, author, id, in)
		if errors.Is(err, errEditedMeanwhile) && attempt < 3 {
			continue
		}
		if err != nil {
			return View{}, fmt.Errorf("activities.Edit(%s): %w", id, err)
		}
		return v, nil
	}
}

func (s *Service) edit(ctx context.Context, author, id string, in EditInput) (View, error) {
	key := Key(s.db, id)
	var seen Activity
	if ok, err := s.db.Get(ctx, key, &seen); err != nil {
		return View{}, err
	} else if !ok || seen.Removed != 0 {
		return View{}, ErrNoSuchActivity // one taken down is not there
	} else if seen.UserID != author {
		return View{}, s.notAuthor(ctx, author, id)
	} else if seen.RepostOf != "" {
		return View{}, errRepostEdit
	}
	title, body := seen.Title, seen.Body
	var err error
	if in.Title != nil {
		if title, err = text.Clean("title", *in.Title, text.Rules{Max: MaxTitle, Required: true}); err != nil {
			return View{}, err
		}
	}
	if in.Body != nil {
		if body, err = text.Clean("body", *in.Body, text.Rules{Max: MaxBody, Multiline: true}); err != nil {
			return View{}, err
		}
	}
	if title == seen.Title && body == seen.Body {
		return s.viewOne(ctx, author, key, &seen)
	}
	if seen.Edits >= MaxEdits {
		return View{}, ErrTooManyEdits
	}
	tagged, err := tags.Parse(title + "\n" + body)
	if err != nil {
		return View{}, err
	}
	names := ParseMentions(title + "\n" + body)
	byName, err := s.accounts.LookupUsernames(ctx, names)
	if err != nil {
		return View{}, err
	}
	var mentions, added []string
	for _, n := range names {
		if m, ok := byName[n]; ok {
			mentions = append(mentions, m)
			if !slices.Contains(seen.MentionIDs, m) {
				added = append(added, m)
			}
		}
	}
	// The newly mentioned are told by a job enqueued before the commit,
	// named for this edit: it waits for the edit, then tells only those
	// the activity mentions.
	if len(added) > 0 {
		err := s.notes.Notify(ctx, notifications.Event{Type: notifications.Mention, ActorID: author,
			Recipients: added, ActivityID: id, ID: mentionEvent(id, seen.Edits+1), Edit: seen.Edits + 1})
		if err != nil {
			return View{}, err
		}
	}
	// So are the tag jobs: pages of tag followers for the tags it adds,
	// none left for those it takes away.
	t := TagTask{ActivityID: id, Edit: seen.Edits + 1, At: s.now().UnixMicro()}
	for _, tag := range tagged {
		if !slices.Contains(seen.Tags, tag) {
			t.Add = append(t.Add, tag)
		}
	}
	for _, tag := range seen.Tags {
		if !slices.Contains(tagged, tag) {
			t.Remove = append(t.Remove, tag)
		}
	}
	if len(t.Add)+len(t.Remove) > 0 {
		if err := s.enqueueTags(ctx, t); err != nil {
			return View{}, err
		}
	}
	var a Activity
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		l := tx.Lookup()
		found := l.Add(key, &a)
		me := accounts.Read(l, author)
		named := make([]*accounts.Record, len(mentions))
		between := make([]*blocks.Between, len(mentions))
		for i, m := range mentions {
			named[i], between[i] = accounts.Read(l, m), blocks.ReadBetween(l, m, author)
		}
		if err := l.Run(ctx); err != nil {
			return err
		}
		switch {
		case me.MayAct() != nil:
			return me.MayAct() // deleted, or suspended with a token another instance still trusts
		case !found.Found():
			return ErrNoSuchActivity
		case a.Edits != seen.Edits || a.Title != seen.Title || a.Body != seen.Body:
			return errEditedMeanwhile
		}
		was := &Version{Title: a.Title, Body: a.Body, MentionIDs: a.MentionIDs, Time: a.PostedTime}
		if a.EditedTime != 0 {
			was.Time = a.EditedTime
		}
		wasAt := mentionedAt(&a)
		a.Title, a.Body, a.MentionIDs, a.MentionedAt, a.Tags = title, body, nil, nil, tagged
		for i, m := range mentions {
			if named[i].Exists() && !between[i].Any() {
				at, ok := wasAt[m]
				if !ok {
					at = a.Edits + 1 // mentioned by this edit
				}
				a.MentionIDs, a.MentionedAt = append(a.MentionIDs, m), append(a.MentionedAt, at)
			}
		}
		a.EditedTime = max(s.now().UnixMilli(), was.Time+1)
		a.Edits++
		// Whoever the edit no longer mentions loses the notification of
		// the mention (the post's, or the edit's that named them): they
		// are no longer addressed. A mention job of an edit that runs
		// later tells only whom the activity mentions then.
		for m, at := range wasAt {
			if !slices.Contains(a.MentionIDs, m) {
				if err := notifications.Forget(tx, m, mentionEvent(id, at)); err != nil {
					return err
				}
			}
		}
		keys, vals := []*datastore.Key{VersionKey(s.db, id, a.Edits-1), key}, []any{was, &a}
		if !a.reachesFollowers() {
			// The home audience of an activity for the mentioned alone is
			// who it mentions: as it mentions them now, in this commit, so
			// that whoever it no longer names loses it at home at once
			// and whoever it newly names has it there as if posted so.
			keys, vals = append(keys, AudienceKey(s.db, id, 0)), append(vals, mentionedAudience(&a))
		}
		return tx.PutMulti(keys, vals)
	})
	if err != nil {
		return View{}, err
	}
	return s.viewOne(ctx, author, key, &a)
}

// mentionedAt returns, of each person a mentions, the edit that
// mentioned them (0: the post).
func mentionedAt(a *Activity) map[string]int {
	at := make(map[string]int, len(a.MentionIDs))
	for i, m := range a.MentionIDs {
		at[m] = 0
		if i < len(a.MentionedAt) {
			at[m] = a.MentionedAt[i]
		}
	}
	return at
}

// mentionEvent names the event of the mentions of an activity's edit
// (0: of its post).
func mentionEvent(id string, edit int) string {
	if edit == 0 {
		return "mention-" + id
	}
	return fmt.Sprintf("mention-%s-%d", id, edit)
}

// viewOne returns one activity as viewer sees it.
func (s *Service) viewOne(ctx context.Context, viewer string, key *datastore.Key, a *Activity) (View, error) {
	vs, err := s.views(ctx, viewer, []*datastore.Key{key}, []*Activity{a}, "")
	if err != nil {
		return View{}, err
	}
	if len(vs) != 1 {
		return View{}, ErrNoSuchActivity
	}
	return vs[0], nil
}

// History returns the versions of author's activity id, oldest first, the
// one it shows now last: to its author alone.
func (s *Service) History(ctx context.Context, viewer, id string) ([]VersionView, error) {
	if _, ok := ids.Parse(id); !ok {
		return nil, ErrNoSuchActivity
	}
	var a Activity
	if ok, err := s.db.Get(ctx, Key(s.db, id), &a); err != nil {
		return nil, fmt.Errorf("activities.History(%s): %w", id, err)
	} else if !ok || a.Removed != 0 {
		return nil, ErrNoSuchActivity // a removed one is kept, for the record alone
	} else if a.UserID != viewer {
		return nil, s.notAuthor(ctx, viewer, id)
	}
	vs := make([]Version, a.Edits)
	refs := make([]store.Ref, a.Edits)
	l := s.db.Lookup()
	for i, k := range versionKeys(s.db, id, a.Edits) {
		refs[i] = l.Add(k, &vs[i])
	}
	if err := l.Run(ctx); err != nil {
		return nil, fmt.Errorf("activities.History(%s): %w", id, err)
	}
	now := Version{Title: a.Title, Body: a.Body, MentionIDs: a.MentionIDs, Time: a.PostedTime}
	if a.EditedTime != 0 {
		now.Time = a.EditedTime
	}
	out := make([]VersionView, 0, len(vs)+1)
	for i, v := range append(vs, now) {
		if i < len(refs) && !refs[i].Found() {
			continue
		}
		m := v.MentionIDs
		if m == nil {
			m = []string{}
		}
		out = append(out, VersionView{Title: v.Title, Body: v.Body, Mentions: m, PostedTime: v.Time})
	}
	return out, nil
}
