package policy

import (
	"errors"
	"testing"
)

var (
	alice     = Account{ID: "alice", Exists: true}
	limited   = Account{ID: "alice", Exists: true, Limited: true}
	suspended = Account{ID: "alice", Exists: true, Suspended: true}
	gone      = Account{ID: "alice"}
)

func post(vis string, mentions ...string) Post {
	return Post{Author: "alice", Visibility: vis, Mentions: mentions}
}

func TestSeePost(t *testing.T) {
	removed := post(Public)
	removed.Removed = true
	for _, c := range []struct {
		name   string
		reader string
		p      Post
		author Account
		ties   Ties
		want   bool
	}{
		{"public, to a stranger", "bob", post(Public), alice, Ties{}, true},
		{"unset visibility is public", "bob", post(""), alice, Ties{}, true},
		{"public, to no one signed in", "", post(Public), alice, Ties{}, true},
		{"unlisted, to a stranger", "bob", post(Unlisted), alice, Ties{}, true},
		{"unlisted, to no one signed in", "", post(Unlisted), alice, Ties{}, true},
		{"unlisted, limited author, to a stranger", "bob", post(Unlisted), limited, Ties{}, false},
		{"unlisted, across a block", "bob", post(Unlisted), alice, Ties{Blocked: true}, false},
		{"followers-only, to a follower", "bob", post(FollowersOnly), alice, Ties{Follows: true}, true},
		{"followers-only, to a stranger", "bob", post(FollowersOnly), alice, Ties{}, false},
		{"followers-only, to someone it mentions", "bob", post(FollowersOnly, "bob"), alice, Ties{}, true},
		{"followers-only, to no one signed in", "", post(FollowersOnly), alice, Ties{}, false},
		{"mentioned-only, to someone it mentions", "bob", post(MentionedOnly, "bob"), alice, Ties{}, true},
		{"mentioned-only, to a follower it does not mention", "bob", post(MentionedOnly, "carol"), alice, Ties{Follows: true}, false},
		{"mentioned-only, to its author", "alice", post(MentionedOnly), alice, Ties{}, true},
		{"removed, to a stranger", "bob", removed, alice, Ties{}, false},
		{"removed, to its author", "alice", removed, alice, Ties{}, false},
		{"suspended author, to a follower", "bob", post(Public), suspended, Ties{Follows: true}, false},
		{"suspended author, to themselves", "alice", post(Public), suspended, Ties{}, false},
		{"deleted author", "bob", post(Public), gone, Ties{}, false},
		{"limited author, to a follower", "bob", post(Public), limited, Ties{Follows: true}, true},
		{"limited author, to a stranger", "bob", post(Public), limited, Ties{}, false},
		{"limited author, to someone it mentions who does not follow", "bob", post(Public, "bob"), limited, Ties{}, false},
		{"limited author, to themselves", "alice", post(FollowersOnly), limited, Ties{}, true},
		{"a block, public", "bob", post(Public), alice, Ties{Blocked: true}, false},
		{"a block, mentioned", "bob", post(MentionedOnly, "bob"), alice, Ties{Blocked: true, Follows: true}, false},
		{"a mute hides nothing by id", "bob", post(Public), alice, Ties{Muted: true}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := SeePost(c.reader, c.p, c.author, c.ties); got != c.want {
				t.Errorf("SeePost = %v, want %v", got, c.want)
			}
		})
	}
}

func TestNeedsFollow(t *testing.T) {
	for _, c := range []struct {
		name   string
		reader string
		p      Post
		author Account
		known  bool
		want   bool
	}{
		{"public, a known author", "bob", post(Public), alice, true, false},
		{"public, an author not read", "bob", post(Public), alice, false, true},
		{"public, a limited author", "bob", post(Public), limited, true, true},
		{"unlisted, a known author", "bob", post(Unlisted), alice, true, false},
		{"followers-only", "bob", post(FollowersOnly), alice, true, true},
		{"followers-only, mentioning the reader", "bob", post(FollowersOnly, "bob"), alice, true, false},
		{"mentioned-only", "bob", post(MentionedOnly), alice, true, false},
		{"the author's own", "alice", post(FollowersOnly), limited, false, false},
		{"no one signed in", "", post(FollowersOnly), alice, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := NeedsFollow(c.reader, c.p, c.author, c.known); got != c.want {
				t.Errorf("NeedsFollow = %v, want %v", got, c.want)
			}
		})
	}
}

func TestMayAct(t *testing.T) {
	admin := Account{ID: "a", Exists: true, Role: RoleAdmin}
	mod := Account{ID: "m", Exists: true, Role: RoleModerator}
	suspendedAdmin := admin
	suspendedAdmin.Suspended = true
	for _, c := range []struct {
		name                 string
		actor                Account
		act, moderate, grant error
	}{
		{"a plain account", alice, nil, ErrNotStaff, ErrNotAdmin},
		{"a moderator", mod, nil, nil, ErrNotAdmin},
		{"an admin", admin, nil, nil, nil},
		{"a suspended admin", suspendedAdmin, ErrSuspended, ErrSuspended, ErrSuspended},
		{"a suspended account", suspended, ErrSuspended, ErrSuspended, ErrSuspended},
		{"a deleted account", gone, ErrNoActor, ErrNoActor, ErrNoActor},
		{"a deleted admin's token", Account{ID: "a", Role: RoleAdmin}, ErrNoActor, ErrNoActor, ErrNoActor},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := MayAct(c.actor); !errors.Is(err, c.act) || (c.act == nil) != (err == nil) {
				t.Errorf("MayAct = %v, want %v", err, c.act)
			}
			if err := MayModerate(c.actor); !errors.Is(err, c.moderate) || (c.moderate == nil) != (err == nil) {
				t.Errorf("MayModerate = %v, want %v", err, c.moderate)
			}
			if err := MayGrant(c.actor); !errors.Is(err, c.grant) || (c.grant == nil) != (err == nil) {
				t.Errorf("MayGrant = %v, want %v", err, c.grant)
			}
		})
	}
}

// Who may act on whose account: staff, and a moderator not on an admin.
func TestMayModerateAccount(t *testing.T) {
	admin := Account{ID: "a", Exists: true, Role: RoleAdmin}
	mod := Account{ID: "m", Exists: true, Role: RoleModerator}
	suspendedMod := mod
	suspendedMod.Suspended = true
	for _, c := range []struct {
		name           string
		staff, subject Account
		want           error
	}{
		{"a moderator on a plain account", mod, alice, nil},
		{"a moderator on another", mod, Account{ID: "n", Exists: true, Role: RoleModerator}, nil},
		{"a moderator on an admin", mod, admin, ErrOnAdmin},
		{"an admin on an admin", admin, Account{ID: "b", Exists: true, Role: RoleAdmin}, nil},
		{"a plain account", alice, suspended, ErrNotStaff},
		{"a suspended moderator", suspendedMod, alice, ErrSuspended},
		{"a deleted moderator on an admin", Account{ID: "m", Role: RoleModerator}, admin, ErrNoActor},
	} {
		if err := MayModerateAccount(c.staff, c.subject); !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

func TestSeeReport(t *testing.T) {
	mod := Account{ID: "m", Exists: true, Role: RoleModerator}
	if !SeeReport(mod, "bob") {
		t.Error("a moderator cannot see a report about someone else")
	}
	if SeeReport(mod, "m") {
		t.Error("a moderator sees a report about themselves")
	}
	if SeeReport(Account{ID: "x", Exists: true}, "bob") {
		t.Error("a plain account sees a report")
	}
	mod.Suspended = true
	if SeeReport(mod, "bob") {
		t.Error("a suspended moderator sees a report")
	}
}

func TestSeePerson(t *testing.T) {
	for _, c := range []struct {
		name   string
		reader string
		who    Account
		ties   Ties
		want   bool
	}{
		{"anyone", "bob", alice, Ties{}, true},
		{"a limited account", "bob", limited, Ties{}, true},
		{"a suspended account", "bob", suspended, Ties{Follows: true}, false},
		{"a suspended account, to themselves", "alice", suspended, Ties{}, true},
		{"a deleted account", "bob", gone, Ties{}, false},
		{"across a block", "bob", alice, Ties{Blocked: true}, false},
		{"muted", "bob", alice, Ties{Muted: true}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := SeePerson(c.reader, c.who, c.ties); got != c.want {
				t.Errorf("SeePerson = %v, want %v", got, c.want)
			}
		})
	}
}

func TestNotifies(t *testing.T) {
	for _, c := range []struct {
		name      string
		recipient string
		actor     Account
		ties      Ties
		want      bool
	}{
		{"a stranger's like", "bob", alice, Ties{}, true},
		{"one's own", "alice", alice, Ties{}, false},
		{"a limited actor, to a follower", "bob", limited, Ties{Follows: true}, true},
		{"a limited actor, to a non-follower", "bob", limited, Ties{}, false},
		{"a suspended actor", "bob", suspended, Ties{Follows: true}, false},
		{"a deleted actor", "bob", gone, Ties{Follows: true}, false},
		{"across a block", "bob", alice, Ties{Blocked: true}, false},
		{"a muted actor", "bob", alice, Ties{Muted: true}, false},
		{"no recipient", "", alice, Ties{}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Notifies(c.recipient, c.actor, c.ties); got != c.want {
				t.Errorf("Notifies = %v, want %v", got, c.want)
			}
		})
	}
}

func TestSeeNotification(t *testing.T) {
	bob := Account{ID: "bob", Exists: true}
	p := post(MentionedOnly, "carol")
	if !SeeNotification("carol", bob, Ties{}, &p, alice, Ties{}) {
		t.Error("carol cannot read a mention of her")
	}
	if SeeNotification("dave", bob, Ties{}, &p, alice, Ties{}) {
		t.Error("dave reads a notification of a post he may not see")
	}
	if SeeNotification("carol", Account{ID: "bob", Exists: true, Suspended: true}, Ties{}, nil, Account{}, Ties{}) {
		t.Error("a suspended actor's follow is shown")
	}
	if !SeeNotification("carol", bob, Ties{}, nil, Account{}, Ties{}) {
		t.Error("a follow is not shown")
	}
}

func TestSeePicture(t *testing.T) {
	onPublic, onUnlisted, onFollowers := post(Public), post(Unlisted), post(FollowersOnly)
	onRemoved := post(Public)
	onRemoved.Removed = true
	for _, c := range []struct {
		name   string
		reader string
		pic    Picture
		owner  Account
		ties   Ties
		want   bool
	}{
		{"on a public post, to a stranger", "bob", Picture{Owner: "alice", OnPost: &onPublic}, alice, Ties{}, true},
		{"on an unlisted post, to a stranger", "bob", Picture{Owner: "alice", OnPost: &onUnlisted}, alice, Ties{}, true},
		{"on a followers-only post, to a stranger", "bob", Picture{Owner: "alice", OnPost: &onFollowers}, alice, Ties{}, false},
		{"a profile picture, to a stranger", "bob", Picture{Owner: "alice", Profile: true}, alice, Ties{}, true},
		{"a profile picture, to no one signed in", "", Picture{Owner: "alice", Profile: true}, alice, Ties{}, true},
		{"a profile picture, across a block", "bob", Picture{Owner: "alice", Profile: true}, alice, Ties{Blocked: true}, false},
		{"a profile picture, its owner suspended", "", Picture{Owner: "alice", Profile: true}, suspended, Ties{}, false},
		{"on a public post, across a block", "bob", Picture{Owner: "alice", OnPost: &onPublic}, alice, Ties{Blocked: true}, false},
		{"on a removed post, to its owner", "alice", Picture{Owner: "alice", OnPost: &onRemoved}, alice, Ties{}, false},
		{"loose, to its owner", "alice", Picture{Owner: "alice"}, alice, Ties{}, true},
		{"loose, to a stranger", "bob", Picture{Owner: "alice"}, alice, Ties{}, false},
		{"loose, its owner suspended", "alice", Picture{Owner: "alice"}, suspended, Ties{}, false},
		{"on a post of a limited owner, to a stranger", "bob", Picture{Owner: "alice", OnPost: &onPublic}, limited, Ties{}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := SeePicture(c.reader, c.pic, c.owner, c.ties); got != c.want {
				t.Errorf("SeePicture = %v, want %v", got, c.want)
			}
		})
	}
}

func TestModerated(t *testing.T) {
	removed := post(Public)
	removed.Removed = true
	for _, c := range []struct {
		name    string
		reader  string
		f       Feed
		p       Post
		author  Account
		follows bool
		want    bool
	}{
		{"nothing", "bob", Personal, post(Public), alice, false, false},
		{"removed, to its author", "alice", Personal, removed, alice, false, true},
		{"a suspended author", "bob", Personal, post(Public), suspended, true, true},
		{"a deleted author", "bob", ByID, post(Public), gone, true, true},
		{"limited, followed, at home", "bob", Personal, post(Public), limited, true, false},
		{"limited, followed, in @all", "bob", PublicFeed, post(Public), limited, true, true},
		{"limited, not followed", "bob", ByID, post(Public), limited, false, true},
		{"limited, the author's own in @all", "alice", PublicFeed, post(Public), limited, false, false},
		{"visibility is not moderation's", "bob", Personal, post(MentionedOnly), alice, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Moderated(c.reader, c.f, c.p, c.author, c.follows); got != c.want {
				t.Errorf("Moderated = %v, want %v", got, c.want)
			}
		})
	}
}

func TestRepostAndListing(t *testing.T) {
	for _, c := range []struct {
		vis          string
		listed       bool
		repostAs     string
		repostRefuse bool
	}{
		{Public, true, Public, false},
		{"", true, Public, false},
		{Unlisted, false, Unlisted, false},
		{FollowersOnly, false, "", true},
		{MentionedOnly, false, "", true},
	} {
		t.Run(c.vis, func(t *testing.T) {
			p := post(c.vis)
			if got := p.Listed(); got != c.listed {
				t.Errorf("Listed = %v, want %v", got, c.listed)
			}
			got, err := Repost(p)
			if got != c.repostAs || (err != nil) != c.repostRefuse {
				t.Errorf("Repost = %q, %v; want %q, refused %v", got, err, c.repostAs, c.repostRefuse)
			}
			if err != nil && !errors.Is(err, ErrNotRepostable) {
				t.Errorf("Repost refused with %v, want ErrNotRepostable", err)
			}
		})
	}
}

func TestReplyReaches(t *testing.T) {
	for _, c := range []struct {
		name                       string
		follower, author, answered string
		followsAnswered            bool
		want                       bool
	}{
		{"no reply", "bob", "alice", "", false, true},
		{"a reply to oneself", "bob", "alice", "alice", false, true},
		{"a reply to someone the follower follows", "bob", "alice", "carol", true, true},
		{"a reply to someone the follower does not follow", "bob", "alice", "carol", false, false},
		{"a reply to the follower", "carol", "alice", "carol", false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := ReplyReaches(c.follower, c.author, c.answered, c.followsAnswered); got != c.want {
				t.Errorf("ReplyReaches = %v, want %v", got, c.want)
			}
		})
	}
}

func TestMayPin(t *testing.T) {
	for _, c := range []struct {
		name   string
		actor  string
		p      Post
		repost bool
		want   error
	}{
		{"one's own public", "alice", post(Public), false, nil},
		{"one's own unlisted", "alice", post(Unlisted), false, nil},
		{"one's own followers-only", "alice", post(FollowersOnly), false, ErrNotPinnable},
		{"one's own for the mentioned", "alice", post(MentionedOnly), false, ErrNotPinnable},
		{"one's own repost", "alice", post(Public), true, ErrNotPinnable},
		{"someone else's", "bob", post(Public), false, ErrNotYours},
		{"no one signed in", "", post(Public), false, ErrNotYours},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := MayPin(c.actor, c.p, c.repost); !errors.Is(got, c.want) || (got == nil) != (c.want == nil) {
				t.Errorf("MayPin = %v, want %v", got, c.want)
			}
		})
	}
}

// A poll's end tells its author, while their account stands, and a
// voter as anything the author did would.
func TestNotifiesOfEnd(t *testing.T) {
	author := Account{ID: "a", Exists: true}
	for _, c := range []struct {
		name      string
		recipient string
		author    Account
		t         Ties
		want      bool
	}{
		{"its author", "a", author, Ties{}, true},
		{"its author, suspended", "a", Account{ID: "a", Exists: true, Suspended: true}, Ties{}, false},
		{"its author, gone", "a", Account{ID: "a"}, Ties{}, false},
		{"a voter", "v", author, Ties{}, true},
		{"a voter who blocked the author since", "v", author, Ties{Blocked: true}, false},
		{"a voter who mutes the author", "v", author, Ties{Muted: true}, false},
		{"a voter not following a limited author", "v", Account{ID: "a", Exists: true, Limited: true}, Ties{}, false},
		{"a voter following a limited author", "v", Account{ID: "a", Exists: true, Limited: true}, Ties{Follows: true}, true},
		{"no one", "", author, Ties{}, false},
	} {
		if got := NotifiesOfEnd(c.recipient, c.author, c.t); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
