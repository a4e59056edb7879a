package activities

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"cloud.google.com/go/datastore"

	"socialstream/internal/accounts"
	"socialstream/internal/blocks"
	"socialstream/internal/derrors"
	"socialstream/internal/ids"
	"socialstream/internal/notifications"
	"socialstream/internal/polls"
	"socialstream/internal/queue"
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
	// ErrOlderEdit refuses an edit of another server's made before the
	// one the activity shows (EditInput.At): it came late.
	ErrOlderEdit = derrors.New(derrors.Conflict, "a later edit is kept")
)

// Version is an activity's text (title, body, content warning) and
// mentions as they were until an edit.
type Version struct {
	Title       string   `datastore:"title,noindex"`
	Body        string   `datastore:"body,noindex"`
	SpoilerText string   `datastore:"spoilerText,noindex,omitempty"`
	Sensitive   bool     `datastore:"sensitive,noindex,omitempty"`
	Joined      bool     `datastore:"joined,noindex,omitempty"` // as Activity.Joined
	MentionIDs  []string `datastore:"mentionIds,noindex"`
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
	// Joined, if set, says whether the body goes on the title's line
	// (Activity.Joined).
	Joined      *bool
	SpoilerText *string
	Sensitive   *bool
	// Mentions, for a post of another server's, are the people known
	// here its Note tags now (PostInput.Mentions).
	Mentions []string
	// Poll, if set, is the poll the post carries from now: one of other
	// options (or of one choice where it took several, or the reverse)
	// starts anew, its votes no longer counted (Mastodon's); the same
	// options keep it as it is.
	Poll *polls.Input
	// At, for an edit another server made (package federation), is when
	// it was made by that server's clock (ms since the epoch): it is the
	// activity's edit time, and an edit made before the one it shows is
	// refused (ErrOlderEdit), for edits may come in any order.
	At int64
}

// VersionView is one version of an activity, as its author sees it.
type VersionView struct {
	Title       string   `json:"title"`
	Body        string   `json:"body,omitempty"`
	SpoilerText string   `json:"spoilerText,omitempty"`
	Sensitive   bool     `json:"sensitive"`
	Joined      bool     `json:"joined,omitempty"`
	Mentions    []string `json:"mentions"`
	PostedTime  int64    `json:"postedTime"`
}

// wording is what an edit may change of an activity: its title, body and
// content warning.
type wording struct {
	title, body, spoiler string
	sensitive, joined    bool
}

// textOf returns a's text.
func textOf(a *Activity) wording {
	return wording{title: a.Title, body: a.Body, spoiler: a.SpoilerText, sensitive: a.Sensitive, joined: a.Joined}
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
	if in.Title == nil && in.Body == nil && in.SpoilerText == nil && in.Sensitive == nil && in.Poll == nil {
		return View{}, derrors.New(derrors.InvalidArgument, "give a title, a body, a spoilerText, sensitive or a poll to change")
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
	e := &editing{s: s, author: author, id: id, key: Key(s.db, id), at: in.At}
	if ok, err := s.db.Get(ctx, e.key, &e.seen); err != nil {
		return View{}, err
	} else if !ok || e.seen.Removed != 0 {
		return View{}, ErrNoSuchActivity // one taken down is not there
	} else if e.seen.UserID != author {
		return View{}, s.notAuthor(ctx, author, id)
	} else if e.seen.RepostOf != "" {
		return View{}, errRepostEdit
	}
	var err error
	if e.text, err = editedText(&e.seen, in); err != nil {
		return View{}, err
	}
	if e.poll, err = s.editedPoll(id, &e.seen, in.Poll); err != nil {
		return View{}, err
	}
	if e.text == textOf(&e.seen) && e.poll == nil {
		return s.viewOne(ctx, author, e.key, &e.seen)
	}
	if e.seen.Edits >= MaxEdits {
		return View{}, ErrTooManyEdits
	}
	words := e.text.title + "\n" + e.text.body
	if e.tagged, err = tags.Parse(words); err != nil {
		return View{}, err
	}
	if e.mentions, e.mentionNames, err = s.mentionsOf(ctx, words, e.seen.ExternalID, in.Mentions); err != nil {
		return View{}, err
	}
	e.link = s.linkOf(e.text.title, e.text.body)
	var a *Activity
	var jobs queue.Ahead
	err = jobs.Commit(ctx, e.jobs(), func() error {
		return s.db.Update(ctx, func(tx *store.Tx) (err error) {
			a, err = e.commit(ctx, tx)
			return err
		})
	})
	if err != nil {
		return View{}, err
	}
	return s.viewOne(ctx, author, e.key, a)
}

// editing is one edit under way: what it read and made of its input
// before its transaction.
type editing struct {
	s                *Service
	author, id       string
	key              *datastore.Key
	seen             Activity // the activity as read before
	text             wording
	poll             *polls.Poll // the poll that starts anew, if any
	tagged, mentions []string
	mentionNames     map[string]string
	link             string // the text's first link, for its card
	at               int64  // EditInput.At
}

// jobs are the edit's jobs, to enqueue before its commit.
func (e *editing) jobs() []queue.Pending {
	expected := e.s.editedJobs(e.author, e.id, &e.seen, e.mentions, e.tagged, namesOf(e.mentions, e.mentionNames))
	if e.link != "" && e.link != e.seen.Link {
		expected = append(expected, e.s.cardJob(e.id, e.link, e.seen.Edits+1))
	}
	if e.poll != nil {
		expected = append(expected, polls.Closing(e.s.queue, e.id, e.author, e.poll, e.s.now()))
	}
	if e.changesTrends() {
		expected = append(expected, e.s.trendJob(e.id, e.seen.Edits+1, e.seen.Visibility)...)
	}
	return expected
}

// changesTrends says whether the edit may change what the post makes
// trend: its hashtags or its link, or whether it is sensitive, where it
// has either.
func (e *editing) changesTrends() bool {
	if len(e.tagged)+len(e.seen.Tags) == 0 && e.link == "" && e.seen.Link == "" {
		return false
	}
	return !slices.Equal(e.tagged, e.seen.Tags) || e.link != e.seen.Link ||
		e.text.spoiler != e.seen.SpoilerText || e.text.sensitive != e.seen.Sensitive
}

// commit reads the facts of the edit in tx, decides it (decideEdit) and
// writes what it decided; it returns the activity as edited.
func (e *editing) commit(ctx context.Context, tx *store.Tx) (*Activity, error) {
	s := e.s
	f := editFacts{id: e.id, seen: &e.seen, text: e.text, tags: e.tagged, now: s.now().UnixMilli(), at: e.at, names: e.mentionNames, poll: e.poll}
	l := tx.Lookup()
	found := l.Add(e.key, &f.current)
	me := accounts.Read(l, e.author)
	named := make([]*accounts.Record, len(e.mentions))
	between := make([]*blocks.Between, len(e.mentions))
	for i, m := range e.mentions {
		named[i], between[i] = accounts.Read(l, m), blocks.ReadBetween(l, m, e.author)
	}
	if err := l.Run(ctx); err != nil {
		return nil, err
	}
	f.mayAct, f.found = me.MayAct(), found.Found()
	for i, m := range e.mentions {
		if named[i].Exists() && !between[i].Any() {
			f.mentionable = append(f.mentionable, m)
		}
	}
	plan, err := decideEdit(f)
	if err != nil {
		return nil, err
	}
	for _, fg := range plan.forget {
		if err := notifications.Forget(tx, fg.user, fg.event); err != nil {
			return nil, err
		}
	}
	a := plan.activity
	if e.poll != nil && f.current.Poll != nil {
		if err := polls.Reset(tx, f.current.Poll); err != nil { // its votes count no more
			return nil, err
		}
	}
	if a.Link != e.link { // its card goes with it; the job brings the new link's
		a.Link, a.Card = e.link, nil
	}
	keys, vals := []*datastore.Key{VersionKey(s.db, e.id, a.Edits-1), e.key}, []any{plan.was, a}
	if plan.audience {
		keys, vals = append(keys, AudienceKey(s.db, e.id, 0)), append(vals, mentionedAudience(a))
	}
	return a, tx.PutMulti(keys, vals)
}

// editedPoll is the poll an edit of seen (as it asks, in) starts anew,
// named for the edit: nil when it asks for none, or for the poll seen
// has (the same options, the same choices); a post with pictures takes
// none. The new poll's votes are its own: the old one's no longer count.
func (s *Service) editedPoll(id string, seen *Activity, in *polls.Input) (*polls.Poll, error) {
	if in == nil {
		return nil, nil
	}
	if len(seen.Media) > 0 {
		return nil, derrors.New(derrors.InvalidArgument, "a post carries pictures or a poll, not both")
	}
	if fromElsewhere(seen.ExternalID) {
		return nil, derrors.New(derrors.InvalidArgument, "a post of another server's poll is changed by its server")
	}
	p, err := in.Make(fmt.Sprintf("%s-%d", id, seen.Edits+1), s.now())
	if err != nil {
		return nil, err
	}
	if old := seen.Poll; old != nil && slices.Equal(old.Options, p.Options) && old.Multiple == p.Multiple {
		return nil, nil
	}
	return p, nil
}

// pollID is a poll's id, "" for none.
func pollID(p *polls.Poll) string {
	if p == nil {
		return ""
	}
	return p.ID
}

// editedText is the text an edit of seen makes. A content warning
// marks the pictures sensitive, as a post's does.
func editedText(seen *Activity, in EditInput) (wording, error) {
	t := textOf(seen)
	var err error
	for _, f := range []struct {
		name  string
		in    *string
		to    *string
		rules text.Rules
	}{
		{"title", in.Title, &t.title, text.Rules{Max: MaxTitle, Required: true}},
		{"body", in.Body, &t.body, text.Rules{Max: MaxBody, Multiline: true}},
		{"spoilerText", in.SpoilerText, &t.spoiler, text.Rules{Max: MaxSpoilerText}},
	} {
		if f.in != nil {
			if *f.to, err = text.Clean(f.name, *f.in, f.rules); err != nil {
				return wording{}, err
			}
		}
	}
	if in.Sensitive != nil {
		t.sensitive = *in.Sensitive
	}
	if in.Joined != nil {
		t.joined = *in.Joined
	}
	if t.spoiler != "" {
		t.sensitive = true
	}
	return t, nil
}

// editedJobs are the jobs of an edit of seen, to enqueue before its
// commit. The newly mentioned are told by a job named for this edit: it
// waits for the edit, then tells only those the activity mentions. The
// tag jobs bring pages of tag followers for the tags it adds, and none
// left for those it takes away.
func (s *Service) editedJobs(author, id string, seen *Activity, mentions, tagged, names []string) []queue.Pending {
	var jobs []queue.Pending
	edit := seen.Edits + 1
	if added := missing(mentions, seen.MentionIDs); len(added) > 0 {
		e := notifications.Event{Type: notifications.Mention, ActorID: author,
			Recipients: added, ActivityID: id, ID: mentionEvent(id, edit), Edit: edit}
		jobs = append(jobs, s.notes.Notifying(e))
	}
	t := TagTask{ActivityID: id, Edit: edit, At: s.now().UnixMicro(), Add: missing(tagged, seen.Tags), Remove: missing(seen.Tags, tagged)}
	if len(t.Add)+len(t.Remove) > 0 {
		jobs = append(jobs, TagJob.Pending(s.queue, t, 0))
	}
	// Other servers that were sent the post, or are named by the edit,
	// are sent it again.
	if all := append(slices.Clone(seen.MentionNames), names...); s.cfg.Publisher != nil && !fromElsewhere(seen.ExternalID) && published(seen.Visibility, false, all) {
		named := mentionsElsewhere(all) || seen.InReplyTo != "" // what it answers may be elsewhere: not read here
		jobs = append(jobs, s.cfg.Publisher.Republishing(author, id, edit, named))
	}
	return jobs
}

// missing is what of these is not in those, in order.
func missing(these, those []string) []string {
	var out []string
	for _, x := range these {
		if !slices.Contains(those, x) {
			out = append(out, x)
		}
	}
	return out
}

// editFacts is what an edit's transaction decides on.
type editFacts struct {
	id          string
	mayAct      error // the author's standing
	found       bool
	current     Activity          // as the transaction read it
	seen        *Activity         // as the edit read it before
	text        wording           // the new text
	tags        []string          // its tags
	mentionable []string          // those it names who exist and block no one of the two
	names       map[string]string // their usernames, by id
	now         int64             // Unix milliseconds
	at          int64             // EditInput.At
	poll        *polls.Poll       // the poll that starts anew, if any
}

// editPlan is what an edit writes.
type editPlan struct {
	activity *Activity
	was      *Version
	// forget are the mention notifications of those no longer mentioned.
	forget []struct{ user, event string }
	// audience: the activity is for the mentioned alone, whose home
	// audience is who it mentions, written as it mentions them now.
	audience bool
}

// decideEdit decides what an edit writes.
func decideEdit(f editFacts) (editPlan, error) {
	switch {
	case f.mayAct != nil:
		return editPlan{}, f.mayAct // deleted, or suspended with a token another instance still trusts
	case !f.found:
		return editPlan{}, ErrNoSuchActivity
	case f.current.Edits != f.seen.Edits || textOf(&f.current) != textOf(f.seen) || pollID(f.current.Poll) != pollID(f.seen.Poll):
		return editPlan{}, errEditedMeanwhile
	case f.at != 0 && f.current.EditedTime != 0 && f.at <= f.current.EditedTime:
		return editPlan{}, ErrOlderEdit
	}
	a := f.current
	was := &Version{Title: a.Title, Body: a.Body, SpoilerText: a.SpoilerText, Sensitive: a.Sensitive, Joined: a.Joined, MentionIDs: a.MentionIDs, Time: a.PostedTime}
	if a.EditedTime != 0 {
		was.Time = a.EditedTime
	}
	wasAt := mentionedAt(&a)
	a.Title, a.Body, a.SpoilerText, a.Sensitive, a.Joined = f.text.title, f.text.body, f.text.spoiler, f.text.sensitive, f.text.joined
	a.MentionIDs, a.MentionedAt, a.Tags = nil, nil, f.tags
	for _, m := range f.mentionable {
		at, ok := wasAt[m]
		if !ok {
			at = a.Edits + 1 // mentioned by this edit
		}
		a.MentionIDs, a.MentionedAt = append(a.MentionIDs, m), append(a.MentionedAt, at)
	}
	a.MentionNames = namesOf(a.MentionIDs, f.names)
	a.EditedTime = max(f.now, was.Time+1)
	if f.at != 0 { // by the clock of the server that made it, which orders its edits
		a.EditedTime = f.at
	}
	a.Edits++
	if f.poll != nil {
		a.Poll = f.poll
	}
	plan := editPlan{activity: &a, was: was, audience: !a.reachesFollowers()}
	// Whoever the edit no longer mentions loses the notification of the
	// mention (the post's, or the edit's that named them): they are no
	// longer addressed. A mention job of an edit that runs later tells
	// only whom the activity mentions then.
	for _, m := range slices.Sorted(maps.Keys(wasAt)) {
		if !slices.Contains(a.MentionIDs, m) {
			plan.forget = append(plan.forget, struct{ user, event string }{m, mentionEvent(f.id, wasAt[m])})
		}
	}
	return plan, nil
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
	now := Version{Title: a.Title, Body: a.Body, SpoilerText: a.SpoilerText, Sensitive: a.Sensitive, Joined: a.Joined, MentionIDs: a.MentionIDs, Time: a.PostedTime}
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
		out = append(out, VersionView{Title: v.Title, Body: v.Body, SpoilerText: v.SpoilerText, Sensitive: v.Sensitive, Joined: v.Joined, Mentions: m, PostedTime: v.Time})
	}
	return out, nil
}
