// Package policy decides who may see what and who may do what: whether a
// reader may see an activity, a person, a picture or a notification, and
// whether an actor may act at all, moderate, or grant roles.
//
// Every decision is a pure function of what the operation has already
// read (the accounts, the activity, the ties between reader and author):
// the policy reads nothing of its own, so a page costs what its lookup
// costs, and every rule is table-tested without an emulator. Operations
// and feeds, REST, JSON-RPC and the jobs ask it; none decides for itself.
//
// The rules, from the contract:
//   - A removed activity is hidden from everyone, its author too (it is
//     kept for the record; moderators read it through their reports).
//   - Everything of a suspended or deleted account is hidden: its
//     activities, its card, its reactions.
//   - A limited account's activities reach its followers alone (and
//     itself), never a public or tag feed; its mentions and reactions
//     notify its followers alone.
//   - A block either way hides each from the other.
//   - Visibility: public to anyone, unlisted to anyone who has it but in
//     no public or tag feed, followers-only to the author's followers and
//     those it mentions, mentioned-only to those it mentions; the author
//     always sees their own. Public and unlisted posts alone may be
//     reposted, and the repost takes their visibility.
//   - A suspended actor may do nothing that writes (403); a deleted one is
//     no one (401).
package policy

import (
	"slices"

	"socialstream/internal/derrors"
)

// Visibility, after Mastodon's: who may see an activity.
const (
	// Public: anyone, in every feed that holds it.
	Public = "public"
	// Unlisted: anyone who has it (by id, on its author's page, in its
	// author's followers' homes), but in no public or tag feed.
	Unlisted = "unlisted"
	// FollowersOnly: the author's followers, the people it mentions, and
	// the author.
	FollowersOnly = "followers"
	// MentionedOnly: the people it mentions and the author alone.
	MentionedOnly = "mentioned"
)

// Roles an account may have.
const (
	RoleModerator = "moderator"
	RoleAdmin     = "admin"
)

// Account is what the policy knows of an account: whether it is there, and
// its standing.
type Account struct {
	ID        string
	Exists    bool
	Suspended bool
	Limited   bool
	Locked    bool
	Role      string
}

// Staff reports whether the account may moderate.
func (a Account) Staff() bool { return a.Role == RoleModerator || a.Role == RoleAdmin }

// Post is what the policy knows of an activity.
type Post struct {
	Author string
	// Visibility is Public, Unlisted, FollowersOnly or MentionedOnly;
	// empty is Public.
	Visibility string
	Mentions   []string
	Removed    bool
}

// Ties is what the policy knows of a reader's ties to someone (the
// author of what they read, say).
type Ties struct {
	// Follows: the reader follows them.
	Follows bool
	// Blocked: one of them blocks the other.
	Blocked bool
	// Muted: the reader mutes them now. A mute quiets feeds and
	// notifications; it hides nothing read by id.
	Muted bool
}

// Errors of the actor's standing.
var (
	// ErrSuspended refuses a suspended account's sign-in and writes.
	ErrSuspended = derrors.New(derrors.PermissionDenied, "this account is suspended")
	// ErrNoActor refuses a token whose account is gone.
	ErrNoActor = derrors.New(derrors.Unauthenticated, "missing, invalid or expired token")
	// ErrNotStaff refuses moderation to whoever is not a moderator or an
	// admin.
	ErrNotStaff = derrors.New(derrors.PermissionDenied, "only moderators and admins may do that")
	// ErrNotAdmin refuses role changes and the audit log to whoever is
	// not an admin.
	ErrNotAdmin = derrors.New(derrors.PermissionDenied, "only admins may do that")
	// ErrOnAdmin refuses a moderator's action on an admin's account.
	ErrOnAdmin = derrors.New(derrors.PermissionDenied, "a moderator cannot act on an admin")
)

// MayAct decides whether actor may do anything that writes: the account
// must exist (else ErrNoActor, whatever a token cache says) and not be
// suspended (ErrSuspended).
func MayAct(actor Account) error {
	switch {
	case !actor.Exists:
		return ErrNoActor
	case actor.Suspended:
		return ErrSuspended
	}
	return nil
}

// MayModerate decides whether actor may read reports and act on them:
// MayAct, and a moderator's or an admin's role. It is asked before
// anything about the target is read or told.
func MayModerate(actor Account) error {
	if err := MayAct(actor); err != nil {
		return err
	}
	if !actor.Staff() {
		return ErrNotStaff
	}
	return nil
}

// MayModerateAccount decides whether staff may take a moderation action
// on subject's account: MayModerate, and a moderator may not act on an
// admin (an admin may).
func MayModerateAccount(staff, subject Account) error {
	if err := MayModerate(staff); err != nil {
		return err
	}
	if subject.Role == RoleAdmin && staff.Role != RoleAdmin {
		return ErrOnAdmin
	}
	return nil
}

// MayGrant decides whether actor may change roles: MayAct, and an
// admin's role.
func MayGrant(actor Account) error {
	if err := MayAct(actor); err != nil {
		return err
	}
	if actor.Role != RoleAdmin {
		return ErrNotAdmin
	}
	return nil
}

// SeeReport decides whether a moderator may see a report about
// subject: never one about themselves.
func SeeReport(staff Account, subject string) bool {
	return MayModerate(staff) == nil && subject != staff.ID
}

// visibility returns p's visibility, Public when unset.
func (p Post) visibility() string {
	if p.Visibility == "" {
		return Public
	}
	return p.Visibility
}

// Open reports whether anyone may read p (Public or Unlisted), moderation
// and blocks aside.
func (p Post) Open() bool { return p.visibility() == Public || p.visibility() == Unlisted }

// Listed reports whether p belongs in the public and tag feeds (and
// their copies: a group's feed, a tag's followers' homes): Public alone.
func (p Post) Listed() bool { return p.visibility() == Public }

// Searchable reports whether reader may find p by a search of posts'
// words, Mastodon 4's scope: their own, one that mentions them, or a
// listed one of an author who lets anyone's search find theirs
// (indexable, as the author's account says now). Whether reader may see
// p at all is SeePost's, and the page's.
func Searchable(reader string, p Post, authorIndexable bool) bool {
	return reader != "" && (reader == p.Author || p.addressed(reader) || p.Listed() && authorIndexable)
}

// Trending reports whether p, sensitive or not, by author, counts toward
// what trends, as Mastodon counts it: a listed post, neither sensitive
// nor removed, by an account there that is neither limited nor
// suspended. A reaction to it counts when its actor's account is such
// too (TrendingBy).
func Trending(p Post, sensitive bool, author Account) bool {
	return p.Listed() && !sensitive && !p.Removed && TrendingBy(author)
}

// TrendingBy reports whether what a's account does counts toward what
// trends: it is there, neither limited nor suspended.
func TrendingBy(a Account) bool { return a.Exists && !a.Suspended && !a.Limited }

// ErrNotRepostable refuses a repost of what is neither public nor
// unlisted.
var ErrNotRepostable = derrors.New(derrors.PermissionDenied, "only a public or unlisted activity can be reposted")

// Repost decides whether p may be reposted (by one who may see it) and
// the visibility the repost takes: p's own, so that a repost of an
// unlisted post is listed nowhere either.
func Repost(p Post) (string, error) {
	if !p.Open() {
		return "", ErrNotRepostable
	}
	return p.visibility(), nil
}

// Refusals of a pin.
var (
	// ErrNotYours refuses a pin of someone else's post.
	ErrNotYours = derrors.New(derrors.PermissionDenied, "only the author may do that")
	// ErrNotPinnable refuses a pin of a post that is not public or
	// unlisted, or of a repost.
	ErrNotPinnable = derrors.New(derrors.PermissionDenied, "only one's own public or unlisted posts can be pinned, not reposts")
)

// MayPin decides whether actor may pin p (a repost if repost) to the top
// of their page: their own, public or unlisted (what anyone reading the
// page may read), and not a repost, as Mastodon has it.
func MayPin(actor string, p Post, repost bool) error {
	switch {
	case actor == "" || actor != p.Author:
		return ErrNotYours
	case !p.Open(), repost:
		return ErrNotPinnable
	}
	return nil
}

// addressed reports whether the post names reader among its mentions.
func (p Post) addressed(reader string) bool {
	return reader != "" && slices.Contains(p.Mentions, reader)
}

// Addressed reports whether the post's visibility alone lets reader see
// it, given whether they follow its author: the author, anyone for a
// public post, its followers for a followers-only one, those it mentions.
// It knows nothing of moderation or blocks (see SeePost).
func Addressed(reader string, p Post, follows bool) bool {
	switch {
	case reader != "" && reader == p.Author, p.Open(), p.addressed(reader):
		return true
	case p.visibility() == FollowersOnly:
		return follows
	}
	return false
}

// SeePost decides whether reader ("" for no one signed in) may see p, by
// author, tied to reader by t: moderation first (Moderated), then blocks,
// then visibility. Mutes do not hide a post read by id; feeds weigh them
// with the blocks they read.
func SeePost(reader string, p Post, author Account, t Ties) bool {
	switch {
	case Moderated(reader, ByID, p, author, t.Follows):
		return false
	case reader != "" && reader == p.Author:
		return true
	case t.Blocked:
		return false
	}
	return Addressed(reader, p, t.Follows)
}

// Moderated decides whether moderation keeps p from reader in a feed of
// kind f, given whether reader follows its author: a removed post (from
// its author too), anything of a gone or suspended author, and a limited
// author's posts from whoever does not follow them and from every public
// feed (but their own). Feeds whose query already answers visibility ask
// this alone, with the blocks and mutes they read.
func Moderated(reader string, f Feed, p Post, author Account, follows bool) bool {
	switch {
	case p.Removed, !author.Exists, author.Suspended:
		return true
	case reader != "" && reader == p.Author:
		return false
	case author.Limited:
		return f == PublicFeed || !follows
	}
	return false
}

// NeedsFollow reports whether SeePost's answer for reader may turn on
// whether reader follows p's author: what an operation must have read
// before it asks. author may be unread (then a limit is assumed possible)
// when known is false.
func NeedsFollow(reader string, p Post, author Account, known bool) bool {
	if reader == "" || reader == p.Author {
		return false
	}
	if !known || author.Limited {
		return true
	}
	return !Addressed(reader, p, false) && Addressed(reader, p, true)
}

// ReplyReaches decides whether a post by author that answers answered
// ("" for a post that answers no one) reaches follower, one of author's
// followers, at home, given whether follower follows answered: a reply to
// someone else reaches those who follow that person too, and that person
// (Mastodon's rule); any other post, every follower. Visibility decides
// the rest, as for any post.
func ReplyReaches(follower, author, answered string, followsAnswered bool) bool {
	return answered == "" || answered == author || follower == answered || followsAnswered
}

// Feed names the kind of feed a post is listed in, for the rules that
// differ between them.
type Feed int

const (
	// ByID: read by id, or a reaction's answer.
	ByID Feed = iota
	// Personal: home, a person's page, mentions, a group.
	Personal
	// PublicFeed: @all and tag feeds.
	PublicFeed
)

// SeePerson decides whether reader may see who's card: never a gone or
// suspended account's (but one's own), nor across a block.
func SeePerson(reader string, who Account, t Ties) bool {
	switch {
	case !who.Exists:
		return false
	case reader != "" && reader == who.ID:
		return true
	case who.Suspended, t.Blocked:
		return false
	}
	return true
}

// Notifies decides whether what actor did (a mention, a like, a comment,
// a follow) may notify recipient, tied to actor by t (t.Follows: the
// recipient follows the actor): not one's own doing, nothing of a gone or
// suspended actor, nothing across a block or from a muted actor, and a
// limited actor's reaches their followers alone.
func Notifies(recipient string, actor Account, t Ties) bool {
	switch {
	case recipient == "" || recipient == actor.ID:
		return false
	case !actor.Exists, actor.Suspended, t.Blocked, t.Muted:
		return false
	case actor.Limited && !t.Follows:
		return false
	}
	return true
}

// NotifiesOfEnd decides whether the end of author's poll may notify
// recipient: its author, while their account stands; a voter as
// Notifies decides of what author did.
func NotifiesOfEnd(recipient string, author Account, t Ties) bool {
	if recipient != "" && recipient == author.ID {
		return author.Exists && !author.Suspended
	}
	return Notifies(recipient, author, t)
}

// SeeNotification decides whether recipient may read a notification of
// what actor did about p (nil for one about no activity, a follow say):
// the actor may be shown (SeePerson), and the activity seen (SeePost).
func SeeNotification(recipient string, actor Account, actorTies Ties, p *Post, author Account, authorTies Ties) bool {
	if actor.ID != "" && !SeePerson(recipient, actor, actorTies) {
		return false
	}
	return p == nil || SeePost(recipient, *p, author, authorTies)
}

// Picture is what the policy knows of a picture: its owner, and the post
// or album that holds it, if any.
type Picture struct {
	Owner string
	// OnPost: the post it is on; nil for one in an album or loose.
	OnPost *Post
	// Profile: one of the owner's profile pictures (avatar, header).
	Profile bool
}

// SeePicture decides whether reader may see a picture: its owner's
// standing and ties as a post's, then the post it is on (SeePost), else
// its owner alone (a loose picture, or one in an album, which are the
// owner's own until a post shows them). A profile picture is seen by
// whoever may see its owner's card (SeePerson).
func SeePicture(reader string, pic Picture, owner Account, t Ties) bool {
	switch {
	case pic.OnPost != nil:
		return SeePost(reader, *pic.OnPost, owner, t)
	case pic.Profile:
		return SeePerson(reader, owner, t)
	}
	return owner.Exists && !owner.Suspended && reader != "" && reader == pic.Owner
}
