package activities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"unicode/utf8"

	"cloud.google.com/go/datastore"

	"socialstream/internal/accounts"
	"socialstream/internal/blocks"
	"socialstream/internal/derrors"
	"socialstream/internal/graph"
	"socialstream/internal/groups"
	"socialstream/internal/ids"
	"socialstream/internal/media"
	"socialstream/internal/notifications"
	"socialstream/internal/queue"
	"socialstream/internal/store"
	"socialstream/internal/tags"
	"socialstream/internal/text"
	viewerstate "socialstream/internal/viewer"
)

// PostInput is what a client sends to post an activity.
type PostInput struct {
	AppID      string
	Title      string
	Body       string
	URL        string
	ExternalID string
	// Visibility is public (the default, empty), followers or mentioned.
	Visibility string
	// Media are the ids of the author's uploaded pictures it carries, at
	// most media.MaxPerActivity, in the order shown.
	Media []string
	// repostOf, set by Repost alone, makes the post a repost of that
	// activity, by repostOfUser; shared is that activity as Repost read it,
	// outside the transaction (see Post).
	repostOf, repostOfUser string
	shared                 *Activity
}

var appIDRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)

// ValidAppID reports whether id is a valid application id.
func ValidAppID(id string) bool { return appIDRE.MatchString(id) }

func (in *PostInput) validate() error {
	switch in.Visibility {
	case "":
		in.Visibility = Public
	case Public, FollowersOnly, MentionedOnly:
	default:
		return errVisibility
	}
	if in.repostOf != "" {
		return nil // no text, and the rest is Repost's
	}
	if err := media.CheckIDs(in.Media); err != nil {
		return err
	}
	var err error
	if in.Title, err = text.Clean("title", in.Title, text.Rules{Max: MaxTitle, Required: true}); err != nil {
		return err
	}
	if in.Body, err = text.Clean("body", in.Body, text.Rules{Max: MaxBody, Multiline: true}); err != nil {
		return err
	}
	switch {
	case in.AppID != "" && !ValidAppID(in.AppID):
		return derrors.New(derrors.InvalidArgument, "appId must be 1 to 100 of A-Z a-z 0-9 . _ -")
	case len(in.ExternalID) > MaxExternalID || !utf8.ValidString(in.ExternalID):
		return derrors.New(derrors.InvalidArgument, fmt.Sprintf("externalId must be at most %d bytes of UTF-8", MaxExternalID))
	}
	if in.URL != "" {
		u, err := url.Parse(in.URL)
		if err != nil || len(in.URL) > MaxURL || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return derrors.New(derrors.InvalidArgument, fmt.Sprintf("url must be an absolute http or https URL of at most %d characters", MaxURL))
		}
	}
	return nil
}

func externalIDKey(db *store.DB, user, ext string) *datastore.Key {
	sum := sha256.Sum256([]byte(ext))
	return db.NameKey(KindExternalID, user+":"+hex.EncodeToString(sum[:16]), nil)
}

// FanoutTask is the body of a fan-out job: write audience chunk Chunk of
// the activity, or, with Chunk 0, plan the jobs of every other chunk.
type FanoutTask struct {
	ActivityID string `json:"activityId"`
	Chunk      int    `json:"chunk"`
	// Before, set by the planning job on the jobs of the other chunks, is
	// when the post committed, as near as known: the chunk's followers
	// whose follow began before it get the post. A follow that began
	// after it has a job of its own, which copies the post or not by its
	// copyLimit; one that began before may have run its job before the
	// post committed, and so relies on this one. 0: everyone in the chunk.
	Before int64 `json:"before,omitempty"`
}

// FanoutJob copies a post to one more chunk of its author's followers.
var FanoutJob = queue.Job[FanoutTask]{Name: "fanout", Queue: queue.Fanout,
	TaskName: func(t FanoutTask) string { return fmt.Sprintf("fanout-%s-%d", t.ActivityID, t.Chunk) }}

var (
	errIDTaken   = errors.New("activities: id collision")
	errUnplanned = errors.New("activities: the author has more than one follower chunk and no fan-out job is enqueued")
)

// Post stores a new activity by author and returns it. If in.ExternalID was
// used before by the same author, it returns that first activity and false.
//
// The Activity and its first audience chunk (the author and up to
// graph.ChunkCap followers) are written in one commit, so they see it at
// once. An author with more followers gets the other chunks from fan-out
// jobs; the planning job is enqueued before the commit, so a post can never
// commit without it (a job whose activity never appears gives up). So is
// the job that notifies the people it mentions, and the one that brings it
// to the followers of its tags.
func (s *Service) Post(ctx context.Context, author string, in PostInput) (View, bool, error) {
	if err := in.validate(); err != nil {
		return View{}, false, err
	}
	tagged, err := tags.Parse(in.Title + "\n" + in.Body)
	if err != nil {
		return View{}, false, err
	}
	names := ParseMentions(in.Title + "\n" + in.Body)
	byName, err := s.accounts.LookupUsernames(ctx, names)
	if err != nil {
		return View{}, false, err
	}
	var mentions []string
	for _, n := range names {
		if id, ok := byName[n]; ok {
			mentions = append(mentions, id)
		}
	}

	// planned says the fan-out planning job of this id is enqueued. It
	// must be before the commit of an activity with more than one chunk,
	// so the transaction refuses to commit one without it; the author may
	// pass from one chunk to two between this read and the commit.
	chunks, err := graph.ChunkCount(ctx, s.db, author)
	if err != nil {
		return View{}, false, err
	}
	// A repost tells the author of what it shares, in its transaction.
	var shareNote notifications.Event
	if in.repostOf != "" {
		shareNote = notifications.Event{Type: notifications.Repost, ActorID: author, Recipients: []string{in.repostOfUser},
			ActivityID: in.repostOf, ID: fmt.Sprintf("repost-%s-%s", in.repostOf, author)}
		if err := s.notes.Expect(ctx, shareNote); err != nil {
			return View{}, false, err
		}
	}
	var (
		a        *Activity
		id       string
		existing string
		planned  bool
		told     string // the id whose mention job is enqueued
		filed    string // the id whose tag job is enqueued
	)
	seq := s.ids.Next()
	for attempt := 0; ; attempt++ {
		id = ids.Format(seq)
		if chunks > 1 && !planned {
			if err := s.enqueueFanout(ctx, id, 0, 0); err != nil {
				return View{}, false, err
			}
			planned = true
		}
		if len(mentions) > 0 && told != id {
			err := s.notes.Notify(ctx, notifications.Event{Type: notifications.Mention, ActorID: author,
				Recipients: mentions, ActivityID: id, ID: mentionEvent(id, 0)})
			if err != nil {
				return View{}, false, err
			}
			told = id
		}
		if len(tagged) > 0 && filed != id && in.Visibility == Public {
			if err := s.enqueueTags(ctx, TagTask{ActivityID: id, Add: tagged}); err != nil {
				return View{}, false, err
			}
			filed = id
		}
		existing = ""
		mine := &Activity{
			Seq: seq, UserID: author, AppID: in.AppID, Title: in.Title, Body: in.Body, URL: in.URL,
			PostedTime: s.now().UnixMilli(), ExternalID: in.ExternalID, MentionIDs: mentions, Tags: tagged,
		}
		err = s.db.Update(ctx, func(tx *store.Tx) error {
			var (
				ext      externalID
				prior    Activity
				l        = tx.Lookup()
				taken    = l.Add(Key(s.db, id), &prior)
				follows  = graph.ReadFollowers(l, author)
				inGroups = groups.ReadGroupsOf(l, author)
				extKey   = externalIDKey(s.db, author, in.ExternalID)
				used     store.Ref
				me       = accounts.Read(l, author)
				named    = make([]*accounts.Record, len(mentions))
				between  = make([]*blocks.Between, len(mentions))
				seen     *Seen // what the policy asks of a repost's shared activity
				note     *notifications.Pending
				prev     Repost
				reposted store.Ref
				own      *viewerstate.Ref
				pictures func(string) ([]*datastore.Key, []any, []media.Attached, error)
			)
			if len(in.Media) > 0 {
				pictures = media.ReadLoose(l, in.Media)
			}
			if in.repostOf != "" {
				reposted = l.Add(RepostKey(s.db, in.repostOf, author), &prev)
				own = viewerstate.Read(l, author) // lists the repost
				// The shared activity itself is not read: every reaction to
				// it writes it, so a read would queue each repost behind
				// them all. What decides whether the reposter may see it
				// (its author's standing, blocks, a follow) is read here;
				// that it is still there is checked by the count's
				// transform at the commit.
				seen = ReadSeen(l, author, in.shared)
				note = s.notes.PrepareChecked(l, shareNote, me)
			}
			if in.ExternalID != "" {
				used = l.Add(extKey, &ext)
			}
			// The people mentioned, read again here: one deleted or
			// blocking since the names were looked up is not mentioned.
			for i, m := range mentions {
				named[i], between[i] = accounts.Read(l, m), blocks.ReadBetween(l, m, author)
			}
			if err := l.Run(ctx); err != nil {
				return err
			}
			if err := me.MayAct(); err != nil {
				return err // deleted, or suspended with a token another instance still trusts
			}
			if taken.Found() {
				if prior.UserID == author && prior.PostedTime == mine.PostedTime {
					// This very post: the transaction is retried after a
					// commit that applied but answered an error.
					a = &prior
					return nil
				}
				return errIDTaken
			}
			if used.Found() {
				existing = ext.ActivityID
				return nil
			}
			if reposted.Found() {
				existing = prev.RepostID // reposting again: the first repost
				return nil
			}
			if seen != nil {
				if err := seen.Err(); err != nil {
					return err // hidden from the reposter since Repost read it
				}
			}
			reach := in.Visibility != MentionedOnly
			if reach && follows.Chunks() > 1 && !planned {
				return errUnplanned
			}
			a = mine
			a.Visibility, a.VisibleTo = in.Visibility, visibleTo(in.Visibility)
			a.Chunks = 1
			if reach {
				a.Chunks = max(1, follows.Chunks())
			}
			if in.Visibility == Public {
				a.GroupIDs = inGroups.IDs() // group feeds hold public activities alone
			}
			a.MentionIDs = nil
			for i, m := range mentions {
				if named[i].Exists() && !between[i].Any() {
					a.MentionIDs = append(a.MentionIDs, m)
				}
			}
			puts := []*datastore.Key{Key(s.db, id)}
			vals := []any{a}
			// Audience chunk 0, and its overflows should the followers'
			// chunk have filled past ChunkCap; for the mentioned alone,
			// they and the author.
			var rest []string
			if reach {
				rest = append([]string{author}, follows.First()...)
			} else {
				puts, vals = append(puts, AudienceKey(s.db, id, 0)), append(vals, mentionedAudience(a))
			}
			for j := 0; len(rest) > 0 && j <= maxOverflow; j++ {
				aud := &Audience{FollowerIDs: rest[:min(len(rest), AudienceChunkSize)], Seq: seq, UserID: author}
				rest = rest[len(aud.FollowerIDs):]
				if err := checkAudience(aud); err != nil {
					return err
				}
				puts, vals = append(puts, overflowKey(s.db, id, 0, j)), append(vals, aud)
			}
			if in.ExternalID != "" {
				puts, vals = append(puts, extKey), append(vals, &externalID{ActivityID: id})
			}
			if pictures != nil {
				keys, items, attached, err := pictures(author)
				if err != nil {
					return err
				}
				media.SetActivity(items, id)
				a.Media = attached
				puts, vals = append(puts, keys...), append(vals, items...)
			}
			if in.repostOf != "" {
				a.RepostOf, a.RepostOfUser = in.repostOf, in.repostOfUser
				puts = append(puts, RepostKey(s.db, in.repostOf, author))
				vals = append(vals, &Repost{ActivityID: in.repostOf, UserID: author, RepostID: id, Created: s.now().UTC()})
				if err := tx.Increment(Key(s.db, in.repostOf), map[string]int64{"repostsCount": 1}); err != nil {
					return err
				}
				if _, err := note.Write(tx); err != nil {
					return err
				}
				own.Edit().SetRepost(in.repostOf, true)
				if err := own.Save(tx); err != nil {
					return err
				}
			}
			return tx.PutMulti(puts, vals)
		})
		switch {
		case errors.Is(err, errUnplanned) && attempt < 3:
			chunks = 2 // enqueue the planning job, then commit
			continue
		case errors.Is(err, errIDTaken) && attempt < 3:
			seq, planned = s.ids.Next(), false // a new id needs a job of its own
			continue
		}
		break
	}
	if planned {
		// Even after an error: a commit may have applied all the same.
		s.stampCommitted(ctx, id)
	}
	if in.repostOf != "" && errors.Is(err, store.ErrGone) {
		err = ErrNoSuchActivity // the shared activity was deleted since Repost read it
	}
	if err != nil {
		return View{}, false, fmt.Errorf("activities.Post(%s): %w", author, err)
	}
	if existing != "" {
		vs, err := s.Get(ctx, author, author, "", []string{existing})
		if err != nil {
			return View{}, false, err
		}
		if len(vs) == 0 {
			if in.repostOf != "" {
				return View{}, false, ErrNoSuchActivity // the shared activity was taken down since
			}
			return View{}, false, fmt.Errorf("activities.Post(%s): externalId names missing activity %s", author, existing)
		}
		return vs[0], false, nil
	}
	vs, err := s.views(ctx, author, []*datastore.Key{Key(s.db, id)}, []*Activity{a}, "")
	if err == nil && len(vs) == 0 && in.repostOf != "" {
		return View{}, false, ErrNoSuchActivity // the shared activity was taken down just after
	}
	if err != nil || len(vs) != 1 {
		return View{}, false, fmt.Errorf("activities.Post(%s): view: %w", author, err)
	}
	return vs[0], true, nil
}

// stampCommitted records on a post that has just committed, and has not
// answered yet, the time (Activity.Committed) that tells its fan-out jobs
// whose follows came before it. Best effort: without it, the planning job
// waits for it, then (GiveUpAfter past the post) takes the time it first
// found the post, a later one.
func (s *Service) stampCommitted(ctx context.Context, id string) {
	now := s.now().UnixMicro()
	for range 3 { // a failed call is retried: the planning job waits for it
		err := s.db.Update(ctx, func(tx *store.Tx) error {
			var a Activity
			if ok, err := tx.Get(Key(s.db, id), &a); err != nil || !ok || a.Committed != 0 {
				return err // deleted meanwhile, or stamped by an earlier try
			}
			a.Committed = now
			return tx.Put(Key(s.db, id), &a)
		})
		if err == nil {
			return
		}
	}
}

func (s *Service) enqueueFanout(ctx context.Context, id string, chunk int, before int64) error {
	return FanoutJob.Enqueue(ctx, s.queue, FanoutTask{ActivityID: id, Chunk: chunk, Before: before}, 0)
}
