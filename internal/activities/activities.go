// Package activities owns activities, their audience copies and the feeds
// read from them: the query-on-read model of the design.
//
// An Activity stores copies of its author's graph at posting time, so that
// every feed is one equality query plus one batch lookup:
//
//   - Activity/{id}: the activity, with its places in the @self,
//     {groupId}, @mentions, @tag and @all feeds (places.go; who may see
//     it, visibility.go); repostOf on a repost (repost.go); seq, the id as
//     an integer, orders every feed newest first through the places.
//
//   - Activity/{id}/Audience/{n}: relation index entities holding the ids
//     that see the activity at home: the author and the author's followers,
//     AudienceChunkSize ids at most each. Audience chunk n copies the
//     author's follower chunk n (package graph), and chunk 0 adds the
//     author. An activity for the mentioned alone has chunk 0 alone, of
//     them and the author; Audience/#{tag}:{n} hold the followers of its
//     tags (tagged.go). The home feed is a keys-only range of their home
//     places; the Activity entities stay small.
//
//   - Activity/{id}/Version/{n}: what an edited activity was (edit.go).
//
//   - Repost/{activityId}_{userId}: a user's repost of an activity.
//
//   - ExternalID/{userId}:{hash}: an author's dedupe key, naming the
//     activity first posted with it.
//
// Jobs it owns, each enqueued before the commit it follows, idempotent: the
// fan-out of a post's other audience chunks, the notifications of a post's
// mentions (package notifications), the pages of its tags' followers, and
// the cleanup after a delete (audience chunks follow jobs added, counts,
// and, through Config.Forget, what other packages keep about the activity:
// likes, comments, notifications).
//
// The rebuild jobs (package rebuild) edit the copies through the functions
// of audience.go and groupcopies.go, in their own transactions.
package activities

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/accounts"
	"socialstream/internal/cards"
	"socialstream/internal/derrors"
	"socialstream/internal/filters"
	"socialstream/internal/ids"
	"socialstream/internal/media"
	"socialstream/internal/notifications"
	"socialstream/internal/outbox"
	"socialstream/internal/policy"
	"socialstream/internal/polls"
	"socialstream/internal/queue"
	"socialstream/internal/store"
	"socialstream/internal/trends"
)

// Kinds of the entities this package owns.
const (
	KindActivity   = "Activity"
	KindAudience   = "Audience"
	KindExternalID = "ExternalID"
	KindRepost     = "Repost"
)

// MaxIndexEntries is Firestore in Datastore mode's limit of index entries
// for one entity. The emulator does not enforce it, so this package does.
const MaxIndexEntries = 20000

// AudienceChunkSize is the most ids one Audience entity holds.
//
// An Audience entity with n ids has these index entries:
//   - 2n in the built-in indexes of home (ascending and descending), one
//     value {follower}/{seq} an id (places.go),
//   - n in the composite index (userId, home) of an unfollow's query,
//   - 2 in the built-in indexes of userId, 2 in those of trim,
//
// 3n + 4 in all, under the 20,000 limit up to n = 6,665. The Firestore
// emulator in Datastore mode refuses an entity of more than 5,000 indexed
// values ("Too many indexed properties"): n ids, userId and trim make
// n + 2, so n = 4,998 is the most it takes. Entity size stays small too:
// 5,000 home values of 31 bytes are about 160 KB of the 1 MiB limit.
const AudienceChunkSize = 4998

// AudienceIndexEntries is the number of index entries of an Audience entity
// with n ids.
func AudienceIndexEntries(n int) int { return 3*n + 4 }

// Limits of the contract.
const (
	MaxTitle      = 500
	MaxBody       = 10000
	MaxURL        = 2000
	MaxExternalID = 200
	// MaxSpoilerText is the length of a content warning, in characters.
	MaxSpoilerText = 500
	MaxIDs         = 100 // ids in one get by ids
)

var (
	ErrNoSuchActivity = derrors.New(derrors.NotFound, "no such activity")
	ErrNotAuthor      = derrors.New(derrors.PermissionDenied, "only the author may do that")
)

// Activity is the stored activity.
type Activity struct {
	// Seq (the id as an integer) orders the feeds through the places
	// of places.go, not by an index of its own.
	Seq        int64    `datastore:"seq,noindex"`
	UserID     string   `datastore:"userId"` // indexed: an erasure finds the author's activities, a group removal its copies
	AppID      string   `datastore:"appId,omitempty,noindex"`
	Title      string   `datastore:"title,noindex"`
	Body       string   `datastore:"body,noindex"`
	URL        string   `datastore:"url,noindex"`
	PostedTime int64    `datastore:"postedTime,noindex"` // ms since the epoch
	ExternalID string   `datastore:"externalId,noindex"`
	MentionIDs []string `datastore:"mentionIds"`
	// MentionedAt holds, for each of MentionIDs, the edit that mentioned
	// them (0: the post; absent: all by the post), which names the one
	// notification of it an edit that drops them forgets.
	MentionedAt []int `datastore:"mentionedAt,noindex"`
	// MentionNames holds, for each of MentionIDs, the username it was
	// written as (lower case): a view links both without a read.
	MentionNames []string `datastore:"mentionNames,noindex"`
	GroupIDs     []string `datastore:"groupIds"`
	// Tags are the #tags of its title and body (package tags), as the
	// tag feeds find it.
	Tags []string `datastore:"tags,noindex"`
	// RepostOf, on a repost, is the activity it shares (indexed: a
	// deleted activity's reposts go with it), and RepostOfUser that
	// activity's author, so a feed reads both in its one batch lookup.
	RepostOf     string `datastore:"repostOf,omitempty"`
	RepostOfUser string `datastore:"repostOfUserId,noindex"`
	// RepostsCount counts its reposts, changed by server-side increments
	// in the commits of the reposts and their deletes.
	RepostsCount int64 `datastore:"repostsCount,noindex"`
	// RepliesCount counts its replies (those counted: counted), changed
	// as RepostsCount is, by the replies' posts, deletes and takedowns.
	RepliesCount int64 `datastore:"repliesCount,noindex"`
	// Visibility is who may see it (public, followers, mentioned), and
	// VisibleTo the audiences whose
	// feeds' queries find it (see visibility.go).
	Visibility string   `datastore:"visibility,noindex"`
	VisibleTo  []string `datastore:"visibleTo,noindex"`
	// Chunks is the number of follower chunks the author had at posting
	// time: audience chunks 0..Chunks-1 are written by the post and its
	// fan-out jobs.
	Chunks int `datastore:"chunks,noindex"`
	// Celebrity: its author was a celebrity when they posted it (package
	// graph), and it reaches all their followers: no audience chunk holds
	// their ids (chunk 0 holds the author alone), their homes merge it in
	// (celebrity.go), and the fan-out jobs only tell those who asked.
	Celebrity bool `datastore:"celebrity,noindex,omitempty"`
	// Committed is a time (µs) between the post's commit and its answer,
	// written just after the commit when other chunks are fanned out by
	// jobs: a fan-out job, which may run long after, copies the post to
	// the followers whose follow began before then (see FanoutTask.Before).
	// 0: not written (the write after the commit failed).
	Committed int64 `datastore:"committed,noindex"`
	// LikesCount and CommentsCount are its counts, changed by server-side
	// increments (see Reaction).
	LikesCount    int64 `datastore:"likesCount,noindex"`
	CommentsCount int64 `datastore:"commentsCount,noindex"`
	// Edits is how many times it was edited: its Versions 0..Edits-1
	// hold what it was before each. EditedTime is when it last was, ms
	// since the epoch (0: never).
	Edits      int   `datastore:"edits,noindex"`
	EditedTime int64 `datastore:"editedTime,noindex"`
	// Removed is when moderation took it down (µs; 0: it was not): it
	// is kept for the record and shown to nobody.
	Removed int64 `datastore:"removed,noindex,omitempty"`
	// Restored is when moderation last put it back (µs; 0: never).
	Restored int64 `datastore:"restored,noindex,omitempty"`
	// Poll is its poll, if it has one (its votes: package polls).
	Poll *polls.Poll `datastore:"poll,noindex,omitempty"`
	// Link is the first link of its text, which gets a preview card
	// (package cards); Card is that card, copied onto it by the card job
	// once it is made (nil until then, or if the page makes none).
	Link string      `datastore:"link,noindex,omitempty"`
	Card *cards.Card `datastore:"card,noindex,omitempty"`
	// Media are its pictures (package media), copied in the post's
	// commit so a feed shows them with no further read.
	Media []media.Attached `datastore:"media,noindex,omitempty"`
	// SpoilerText is its content warning, and Sensitive says its
	// pictures are (after Mastodon's spoiler_text and sensitive).
	SpoilerText string `datastore:"spoilerText,noindex,omitempty"`
	Sensitive   bool   `datastore:"sensitive,noindex,omitempty"`
	// Language is the BCP 47 tag its author said it is written in.
	Language string `datastore:"language,noindex,omitempty"`
	// Indexable copies its author's consent to anyone's search, as it
	// was when posted (search.go).
	Indexable bool `datastore:"indexable,noindex,omitempty"`
	// Joined: the body goes on the title's line, with nothing between
	// (the text is Title+Body): a text whose first line is longer than
	// MaxTitle, split where the title may end (Mastodon's statuses).
	Joined bool `datastore:"joined,noindex,omitempty"`
	// A reply's (thread.go): the activity it answers and that one's
	// author; its thread's root; and the ids of the activities above it,
	// nearest first, at most KeptAncestors (indexed: the descendants of an
	// activity are the equality query ancestors = its id).
	InReplyTo     string   `datastore:"inReplyTo,noindex,omitempty"`
	InReplyToUser string   `datastore:"inReplyToUserId,omitempty"` // indexed: an erasure forgets whom replies answered
	Thread        string   `datastore:"thread,noindex,omitempty"`
	Ancestors     []string `datastore:"ancestors,omitempty"`

	// shared is, on a repost read by Exists, the activity it shares
	// (nil: gone), never stored: who may see a repost, or react to it, is
	// decided by it too (Seen).
	shared *Activity
}

// Audience is one chunk of an activity's home-feed audience.
// It is stored as its home and trim places (places.go).
type Audience struct {
	FollowerIDs []string `datastore:"-"`
	Seq         int64    `datastore:"seq,noindex"`
	// UserID says whose followers the chunk holds: the activity's author
	// (so that removing a follower from an author's activities finds
	// exactly the chunks that hold it, however old: followerIds == F and
	// userId == A, served by the built-in indexes), a tag's
	// (TagAudience), or, on the chunk of an activity for the mentioned
	// alone, nobody's (MentionAudience), which no unfollow touches.
	UserID string `datastore:"userId"`
	// Answers, on the chunks of a reply to someone else, is whom it
	// answers: a follow's copy reads it with the chunk, and adds the
	// follower only if they follow that person too (replyAudience).
	Answers string `datastore:"answers,noindex,omitempty"`
	// Repost: the activity is a repost, which a follower who takes none
	// of its author's (graph's Follow.NoReposts) is not given.
	Repost bool `datastore:"repost,noindex,omitempty"`
	// Celebrity: the chunk is of a celebrity's post (Activity.Celebrity),
	// which no follow job copies to a follower.
	Celebrity bool `datastore:"celebrity,noindex,omitempty"`
}

// externalID is the post an author made with an external id. For a
// post from another server (fromElsewhere), Gone says its server deleted
// it (ActivityID names it, if it was ever kept): a Create of it that comes
// after, late or again, makes no post (Forget).
type externalID struct {
	ActivityID string `datastore:"activityId,noindex"`
	Gone       bool   `datastore:"gone,noindex,omitempty"`
}

// View is an activity as the API shows it.
type View struct {
	ID         string `json:"id"`
	UserID     string `json:"userId"`
	AppID      string `json:"appId,omitempty"`
	Title      string `json:"title"`
	Body       string `json:"body,omitempty"`
	URL        string `json:"url,omitempty"`
	Visibility string `json:"visibility"`
	// SpoilerText is the warning a client folds the activity behind;
	// Sensitive, that its pictures are to be hidden until asked for.
	SpoilerText string `json:"spoilerText,omitempty"`
	Sensitive   bool   `json:"sensitive"`
	// Language is the BCP 47 tag its author said it is written in, if any.
	Language string `json:"language,omitempty"`
	// Joined: the body goes on the title's line (Activity.Joined).
	Joined     bool     `json:"joined,omitempty"`
	PostedTime int64    `json:"postedTime"`
	ExternalID string   `json:"externalId,omitempty"`
	Mentions   []string `json:"mentions"`
	// MentionNames are the usernames of Mentions, one for each, as the
	// text wrote them (Mastodon's face links them).
	MentionNames  []string         `json:"-"`
	Tags          []string         `json:"tags"`
	Author        *accounts.Person `json:"author,omitempty"`
	LikesCount    int64            `json:"likesCount"`
	CommentsCount int64            `json:"commentsCount"`
	LikedByViewer bool             `json:"likedByViewer"`
	EditedTime    int64            `json:"editedTime,omitempty"`
	// RepostsCount and RepostedByViewer say who shares it; RepostOf, on a
	// repost, is the activity it shares, as the viewer sees it.
	RepostsCount     int64 `json:"repostsCount"`
	RepostedByViewer bool  `json:"repostedByViewer"`
	// RepliesCount counts its replies but those for the mentioned alone.
	RepliesCount int64 `json:"repliesCount"`
	RepostOf     *View `json:"repostOf,omitempty"`
	// InReplyTo and InReplyToUserID, on a reply: what it answers, and
	// whom.
	InReplyTo       string `json:"inReplyTo,omitempty"`
	InReplyToUserID string `json:"inReplyToUserId,omitempty"`
	// Pinned: its author pins it to the top of their page.
	Pinned bool `json:"pinned,omitempty"`
	// Bookmarked: the viewer keeps it in their bookmarks, as their state
	// (package viewer) says, or a read by key for what it does not know.
	Bookmarked bool `json:"bookmarked,omitempty"`
	// Filtered, in a feed, holds the viewer's keyword filters that warn
	// of it (package filters).
	Filtered []filters.Match `json:"filtered,omitempty"`
	// MediaItems are its pictures, with links that work for a while
	// (package media).
	MediaItems []media.View `json:"mediaItems,omitempty"`
	// Poll is its poll, with its counts and the viewer's vote.
	Poll *polls.View `json:"poll,omitempty"`
	// Card is the preview of its first link, once it is made.
	Card *CardView `json:"card,omitempty"`
}

// Text is the activity's text as its author wrote it: the title its
// first line, the body the rest (on the same line, when Joined).
func (v View) Text() string {
	switch {
	case v.Body == "":
		return v.Title
	case v.Joined:
		return v.Title + v.Body
	}
	return v.Title + "\n" + v.Body
}

// Mentioned maps the usernames the activity mentions to their ids, as
// it keeps them: the links of its text name both, with no read.
func (v View) Mentioned() map[string]string {
	people := make(map[string]string, len(v.Mentions))
	for i, id := range v.Mentions {
		if i < len(v.MentionNames) && v.MentionNames[i] != "" {
			people[v.MentionNames[i]] = id
		}
	}
	return people
}

// namesOf returns the names of the people mentions names, one each ("" for
// one not in names).
func namesOf(mentions []string, names map[string]string) []string {
	if len(mentions) == 0 {
		return nil
	}
	out := make([]string, len(mentions))
	for i, m := range mentions {
		out[i] = names[m]
	}
	return out
}

// dropMention takes user out of a's mentions, and out of what it keeps
// of each (when and as whom they were mentioned).
func (a *Activity) dropMention(user string) {
	for i := len(a.MentionIDs) - 1; i >= 0; i-- {
		if a.MentionIDs[i] != user {
			continue
		}
		a.MentionIDs = slices.Delete(a.MentionIDs, i, i+1)
		if i < len(a.MentionedAt) {
			a.MentionedAt = slices.Delete(a.MentionedAt, i, i+1)
		}
		if i < len(a.MentionNames) {
			a.MentionNames = slices.Delete(a.MentionNames, i, i+1)
		}
	}
}

func toView(id string, a *Activity, author *accounts.Person, likes, comments int64, liked bool) View {
	m, tags := a.MentionIDs, a.Tags
	if m == nil {
		m = []string{}
	}
	if tags == nil {
		tags = []string{}
	}
	return View{
		ID: id, UserID: a.UserID, AppID: a.AppID, Title: a.Title, Body: a.Body, URL: a.URL, Visibility: a.Visibility,
		SpoilerText: a.SpoilerText, Sensitive: a.Sensitive, Language: a.Language, Joined: a.Joined, InReplyTo: a.InReplyTo, InReplyToUserID: a.InReplyToUser,
		PostedTime: a.PostedTime, ExternalID: a.ExternalID, Mentions: m, MentionNames: a.MentionNames, Tags: tags, Author: author,
		LikesCount: likes, CommentsCount: comments, LikedByViewer: liked, EditedTime: a.EditedTime,
		RepostsCount: max(0, a.RepostsCount), RepliesCount: max(0, a.RepliesCount),
	}
}

// minter returns the maker of the links of the pictures of acts (nil
// ones skipped), if any has pictures (its own, or its card's).
func (s *Service) minter(ctx context.Context, acts ...*Activity) (media.Minter, error) {
	for _, a := range acts {
		if a != nil && (len(a.Media) > 0 || a.Card != nil && a.Card.Image.ID != "") && s.cfg.Links != nil {
			return s.cfg.Links.Minter(ctx)
		}
	}
	return media.Minter{}, nil
}

// pictures returns the views of an activity's pictures.
func pictures(m media.Minter, list []media.Attached) []media.View {
	if len(list) == 0 {
		return nil
	}
	out := make([]media.View, len(list))
	for i, a := range list {
		out[i] = m.Attached(a)
	}
	return out
}

// Describe changes, in tx, the alt text of picture item in the copy an
// activity keeps (media.Config.Describe).
func Describe(tx *store.Tx, activity, item, description string) error {
	var a Activity
	ok, err := tx.Get(Key(tx.DB(), activity), &a)
	if err != nil || !ok {
		return err // an activity gone takes its pictures with it
	}
	for i := range a.Media {
		if a.Media[i].ID == item {
			a.Media[i].Description = description
			return tx.Put(Key(tx.DB(), activity), &a)
		}
	}
	return nil
}

// Recopy replaces, in tx, the activity's copy of a picture with what
// the picture's record holds now: the size and type of a picture from
// elsewhere, once fetched.
func Recopy(tx *store.Tx, activity string, att media.Attached) error {
	var a Activity
	ok, err := tx.Get(Key(tx.DB(), activity), &a)
	if err != nil || !ok {
		return err // an activity gone takes its pictures with it
	}
	for i := range a.Media {
		if a.Media[i].ID == att.ID {
			a.Media[i] = att
			return tx.Put(Key(tx.DB(), activity), &a)
		}
	}
	return nil
}

// Config tunes a Service.
type Config struct {
	// GiveUpAfter is how long a job waits for the post or delete it is
	// about to commit; 0 means 2 minutes.
	GiveUpAfter time.Duration
	// HomeRetention is how far back a home feed reaches, and how long the
	// audience chunks that make it are kept (0: for ever); see HomeEdge.
	HomeRetention time.Duration
	// Likes, when set, say whether a viewer likes an activity, for
	// likedByViewer.
	Likes Likes
	// Bookmarks, when set, says which activities of a page the viewer
	// bookmarks (package bookmarks).
	Bookmarks Bookmarks
	// Forget are run by the cleanup job once an activity is gone (likes,
	// comments, notifications).
	Forget []Forgetter
	// Links, when set, makes the links of the activities' pictures.
	Links *media.Links
	// Cards, when set, makes the preview cards of the posts' links.
	Cards *cards.Service
	// Trends, when set, counts what posts make trend (package trends).
	Trends *trends.Service
	// Pictures, when set, is run as Forget is, for an activity that had
	// pictures (package media); Polls for one that had a poll (package
	// polls).
	Pictures Forgetter
	Polls    Forgetter
	// Publisher, when set (the deployment federates), makes the jobs
	// that tell other servers of posts, their edits and their deletion
	// (package outbox; package federation runs them).
	Publisher *outbox.Jobs
	// Finder, when set (the deployment federates), finds the people of
	// other servers a post made here mentions whom the service does not
	// know yet, in the post's read step (mentionsOf).
	Finder Finder
	// CelebrityFollowers, when above 0, is how many followers make a
	// person a celebrity at their next post (package graph): from then
	// on their posts are merged into their followers' homes as they are
	// read, not copied to them (celebrity.go).
	CelebrityFollowers int64
}

// Finder finds a person of another server by name@domain and keeps them
// here (package federation's Directory), or says why not (and logs it).
type Finder interface {
	Find(ctx context.Context, acct string) error
}

// Likes is what activities read of likes (package likes, whose Records
// implement it).
type Likes interface {
	// Liked adds viewer's like of an activity to a feed's batch lookup.
	Liked(l *store.Lookup, activity, viewer string) store.Ref
}

// Bookmarks is what activities read of bookmarks (package bookmarks,
// whose Records implement it).
type Bookmarks interface {
	// Kept adds viewer's bookmark of an activity to a feed's batch lookup.
	Kept(l *store.Lookup, viewer, activity string) store.Ref
}

// Forgetter is a package that keeps something about activities: once one
// is gone, its cleanup job has the package delete it. ForgetActivity
// returns how many entities it deleted; it must be idempotent, and no new
// entity about the activity may appear once it is gone.
type Forgetter interface {
	ForgetActivity(ctx context.Context, activity string) (int, error)
}

// Service manages activities and feeds.
type Service struct {
	db       *store.DB
	ids      *ids.Generator
	accounts *accounts.Service
	notes    *notifications.Service
	queue    queue.Queue
	cfg      Config
	now      func() time.Time
}

// New returns a Service.
func New(db *store.DB, gen *ids.Generator, acc *accounts.Service, notes *notifications.Service, q queue.Queue, cfg Config) (*Service, error) {
	if db == nil || gen == nil || acc == nil || notes == nil || q == nil {
		return nil, errors.New("activities.New: nil dependency")
	}
	if cfg.GiveUpAfter == 0 {
		cfg.GiveUpAfter = queue.GiveUpAfter
	}
	return &Service{db: db, ids: gen, accounts: acc, notes: notes, queue: q, cfg: cfg, now: time.Now}, nil
}

// Key returns an activity's key.
func Key(db *store.DB, id string) *datastore.Key { return db.NameKey(KindActivity, id, nil) }

// AudienceKey returns the key of audience chunk n of an activity.
func AudienceKey(db *store.DB, activity string, n int) *datastore.Key {
	return db.NameKey(KindAudience, fmt.Sprint(n), Key(db, activity))
}

// checkAudience refuses an Audience entity that would break the index
// entry limit.
func checkAudience(a *Audience) error {
	if n := len(a.FollowerIDs); n > AudienceChunkSize || AudienceIndexEntries(n) > MaxIndexEntries {
		return fmt.Errorf("activities: audience chunk of %d ids exceeds %d", n, AudienceChunkSize)
	}
	return nil
}

// Get returns the activities with the given ids by user (and app, unless
// appID is empty or @app), as the viewer sees them, in the order asked;
// unknown ids are left out.
func (s *Service) Get(ctx context.Context, viewer, user, appID string, idList []string) ([]View, error) {
	if len(idList) > MaxIDs {
		return nil, derrors.New(derrors.InvalidArgument, fmt.Sprintf("at most %d ids at once", MaxIDs))
	}
	var keys []*datastore.Key
	seen := map[string]bool{}
	for _, id := range idList {
		if _, ok := ids.Parse(id); !ok {
			return nil, derrors.New(derrors.InvalidArgument, fmt.Sprintf("%q is not an activity id", id))
		}
		if !seen[id] {
			seen[id] = true
			keys = append(keys, Key(s.db, id))
		}
	}
	found, list, err := s.load(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("activities.Get: %w", err)
	}
	var mine []*datastore.Key
	var theirs []*Activity
	for i, a := range list {
		if a.UserID == user && (appID == "" || appID == "@app" || a.AppID == appID) {
			mine, theirs = append(mine, found[i]), append(theirs, a)
		}
	}
	// Those the viewer may see: what they may not is as if not there.
	if mine, theirs, err = s.seen(ctx, viewer, mine, theirs); err != nil {
		return nil, err
	}
	return s.views(ctx, viewer, mine, theirs, "")
}

// Shown returns the activities of idList that viewer may see, in order,
// as they see them: those gone or hidden are left out. It reads them in
// one lookup, and what the page shows of them in the page's lookup (and,
// for followers-only ones, the viewer's follows of their authors in one
// between).
func (s *Service) Shown(ctx context.Context, viewer string, idList []string) ([]View, error) {
	return s.shown(ctx, viewer, idList, false)
}

// ShownPage is Shown for a page (the activities a page of notifications
// is about): through the instance's cache.
func (s *Service) ShownPage(ctx context.Context, viewer string, idList []string) ([]View, error) {
	return s.shown(ctx, viewer, idList, true)
}

func (s *Service) shown(ctx context.Context, viewer string, idList []string, cached bool) ([]View, error) {
	keys := make([]*datastore.Key, 0, len(idList))
	for _, id := range idList {
		if _, ok := ids.Parse(id); ok {
			keys = append(keys, Key(s.db, id))
		}
	}
	load := s.load
	if cached {
		load = s.loadPage
	}
	found, list, err := load(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("activities.Shown: %w", err)
	}
	if found, list, err = s.seen(ctx, viewer, found, list); err != nil {
		return nil, err
	}
	return s.viewsOf(ctx, viewer, found, list, look{hide: true, cached: cached})
}

// load reads the activities at keys in one lookup and returns those that
// exist, in order.
func (s *Service) load(ctx context.Context, keys []*datastore.Key) ([]*datastore.Key, []*Activity, error) {
	return s.loadFrom(ctx, s.db.Lookup(), keys)
}

// PageKinds are the kinds of this package's that feeds' pages read
// through the instance's cache (store.Cache): activities, and the newest
// posts of each celebrity.
func PageKinds() []string { return []string{KindActivity, KindCelebrityPosts} }

// loadPage is load for a feed's page: through the instance's cache.
func (s *Service) loadPage(ctx context.Context, keys []*datastore.Key) ([]*datastore.Key, []*Activity, error) {
	return s.loadFrom(ctx, s.db.PageLookup(), keys)
}

func (s *Service) loadFrom(ctx context.Context, l *store.Lookup, keys []*datastore.Key) ([]*datastore.Key, []*Activity, error) {
	acts := make([]Activity, len(keys))
	refs := make([]store.Ref, len(keys))
	for i, k := range keys {
		refs[i] = l.Add(k, &acts[i])
	}
	if err := l.Run(ctx); err != nil {
		return nil, nil, err
	}
	var found []*datastore.Key
	var list []*Activity
	for i := range acts {
		if refs[i].Found() {
			found, list = append(found, keys[i]), append(list, &acts[i])
		}
	}
	return found, list, nil
}

// notAuthor is the error of who would change an activity not theirs:
// ErrNotAuthor if they may see it, else ErrNoSuchActivity, telling nothing
// of it.
func (s *Service) notAuthor(ctx context.Context, who, id string) error {
	if _, err := s.Visible(ctx, who, id); err != nil {
		return err
	}
	return ErrNotAuthor
}

// Mentioned reads an activity outside any transaction, for jobs of other
// packages that must not write about one not committed yet, or tell
// someone of a mention the post dropped: its key (nil for an id that
// cannot be one), whether it exists, whom it mentions and how many times
// it was edited.
func Mentioned(ctx context.Context, db *store.DB, id string) (*datastore.Key, bool, []string, int, error) {
	if _, ok := ids.Parse(id); !ok {
		return nil, false, nil, 0, nil
	}
	var a Activity
	key := Key(db, id)
	ok, err := db.Get(ctx, key, &a)
	return key, ok, a.MentionIDs, a.Edits, err
}

// Records are the activities kept in DB, as the packages below this one
// read them (notifications.Activities), which cannot name its Service.
type Records struct{ DB *store.DB }

// PollOf returns the id of the poll an activity carries now ("" if it
// has none, or is gone), for the job that closes polls.
func (r Records) PollOf(ctx context.Context, id string) (string, error) {
	var a Activity
	ok, err := r.DB.Get(ctx, Key(r.DB, id), &a)
	if err != nil || !ok || a.Poll == nil {
		return "", err
	}
	return a.Poll.ID, nil
}

// Mentioned reads an activity for a notification job (Mentioned).
func (r Records) Mentioned(ctx context.Context, id string) (*datastore.Key, bool, []string, int, error) {
	return Mentioned(ctx, r.DB, id)
}

// Texts reads the texts of activities for a reader's filters (Texts).
func (r Records) Texts(ctx context.Context, reader string, idList []string) (map[string][]string, error) {
	return Texts(ctx, r.DB, reader, idList)
}

// Posts adds the activities ids to l, for what the policy knows of them
// (notifications.Activities.Posts).
func (Records) Posts(l *store.Lookup, idList []string) func() map[string]policy.Post {
	acts := make([]Activity, len(idList))
	refs := make([]store.Ref, len(idList))
	for i, id := range idList {
		if _, ok := ids.Parse(id); ok {
			refs[i] = l.Add(Key(l.DB(), id), &acts[i])
		}
	}
	return func() map[string]policy.Post {
		out := make(map[string]policy.Post, len(idList))
		for i, id := range idList {
			if refs[i] != (store.Ref{}) && refs[i].Found() {
				out[id] = acts[i].post()
			}
		}
		return out
	}
}

// Describe changes a picture's alt text in the activity's copy (Describe).
func (Records) Describe(tx *store.Tx, activity, item, description string) error {
	return Describe(tx, activity, item, description)
}

// Recopy replaces the activity's copy of a picture (Recopy).
func (Records) Recopy(tx *store.Tx, activity string, att media.Attached) error {
	return Recopy(tx, activity, att)
}
