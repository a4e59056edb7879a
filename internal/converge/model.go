package converge

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"socialstream/internal/ids"
	"socialstream/internal/push/receiver"
)

// The model is what the checker knows from the acknowledged operations:
// every operation is recorded with the interval in which it took effect
// (from its request to its answer; for one answered with an error, until a
// read showed whether it happened), and the oracle derives from it what
// each feed and count must hold once every job has run.

type user struct {
	id, name, token string
	// device is the push subscription its registration made (pushed:
	// acknowledged) with its token then (pushToken), if any.
	device    *receiver.Device
	pushToken string
	pushed    bool
	// gone is set when the account's deletion is asked for: operations of
	// others that name it may then be refused. deleted is set once it is
	// acknowledged; the oracle then expects nothing of it anywhere.
	gone, deleted bool
	// indexable: anyone's search finds their public posts (set once, at
	// registration, for every second person of each client).
	indexable bool
}

type post struct {
	id, author, title string
	mentions          []string
	tags              []string // folded, as posted (edits keep them)
	// repostOf and sharedAuthor, on a repost: the post it shares, and
	// that post's author.
	repostOf, sharedAuthor string
	// visibility is public, unlisted, followers or mentioned: for the
	// mentioned alone, its home audience is whom it mentions now, as last
	// edited. A repost's is what it shares'.
	visibility string
	// warning is its content warning, which travels with it everywhere.
	warning string
	// conversation, on a direct post (for the mentioned alone, naming
	// someone), is its people as posted: its author and whom it mentioned
	// then, sorted (conversations.go); edited tells that an edit changed
	// its text since.
	conversation []string
	edited       bool
	// A reply's: the post it answers, that post's author, and the posts
	// above it, nearest first (at most keptAncestors).
	inReplyTo, answers string
	ancestors          []string
	start, end         time.Time
	seqTime            time.Time // when the id was minted, from the id itself
	deleted            bool
	// dropped says how the model learnt it was deleted, for a violation's
	// message.
	dropped string
	// removed: a moderator took it down (it is nowhere, and nor are
	// reposts of it); removing: a removal is under way.
	removed, removing bool
	// poll: it carries a poll of pollOptions options, taking several
	// choices when multiple (polls.go).
	poll     bool
	multiple bool
	// link is the page its text links (cards.go), and cardTitle the
	// title of that page's card ("" if it makes none).
	link, cardTitle string
	// pictures are the ids of its pictures, in order, and alts their
	// alt texts.
	pictures, alts []string
	// note, on a post of the other server's (remote.go), is its Note's
	// id; its id here is known once the oracle reads its author's page.
	// taken says whether a delivery of it was taken here; deleting that
	// its Delete is on its way.
	note     string
	taken    taking
	deleting bool
	// overtaken: a Create of it landed after its Delete.
	overtaken bool
	// landings says, for a violation's details, how each delivery of
	// its Create ended and what the model made of it.
	landings []string
}

type group struct {
	id, owner, title, policy string
}

type comment struct {
	id, activity, author string
	deleted              bool
}

// event is one change of a pair: a follow or unfollow of (follower,
// followee), a join or leave of (group, member).
type event struct {
	add        bool
	start, end time.Time
	// copyLimit is what an add copies at first; -1 is the configured
	// default.
	copyLimit int
	keep      bool // an unfollow with keepHistory
}

type pair struct{ a, b string }

type model struct {
	mu       sync.Mutex
	users    []*user
	byID     map[string]*user
	posts    []*post
	postByID map[string]*post
	groups   []*group
	comments []*comment
	// follows by (follower, followee), memberships by (group, user): the
	// pair's events in order, and whether it holds now.
	follows, members map[pair][]event
	// pins are what each person pins, the last pinned first; bookmarks
	// what each keeps, the newest bookmark first.
	pins, bookmarks map[string][]string
	// votes are each poll's votes, by voter: the options chosen.
	votes map[string]map[string][]int
	// profiles are each person's, as last written.
	profiles            map[string]profile
	following, isMember map[pair]bool
	likes               map[pair]bool // (activity, user)
	// invited holds the (group, user) pairs the owner may have invited
	// and the user has not answered: an invitation whose answer was lost
	// may or may not exist, so accepting it may be refused.
	invited map[pair]bool
	// blocks holds the (blocker, blocked) pairs that hold now; everBlocked
	// the pairs (either order) that ever had one, whose likes, comments,
	// mentions and follows of each other may be refused.
	blocks, everBlocked map[pair]bool
	// mutes holds the (muter, muted) pairs that hold now; everMuted those
	// that ever held or may have.
	mutes, everMuted map[pair]bool
	// everFiltered holds the people who ever had a keyword filter.
	everFiltered map[string]bool
	// locked holds the people whose accounts are locked; requested the
	// pending follow requests (requester, target), each with the copyLimit
	// it was asked with.
	locked    map[string]bool
	requested map[pair]int
	// unlocking counts each person's unlocks under way, approving each
	// request's approvals: either may turn a pending request into a
	// follow before its operation's answer tells the model.
	unlocking map[string]int
	approving map[pair]int
	// limited holds the people a moderator limited, suspended those a
	// moderator suspended; suspending counts the changes of each one's
	// standing under way (suspensions, limits and their lifts), whose
	// outcome no answer has told yet.
	limited, suspended map[string]bool
	suspending         map[string]int
	// standings is each person's changes of standing as the checker
	// made and resolved them, for the violations that involve them.
	standings map[string][]string
	// filters holds each user's keyword filter, if they have one.
	filters map[string]keywordFilter
	// tagFollows are the (user, tag) pairs' follow events in order, and
	// tagFollowing whether each holds now.
	tagFollows   map[pair][]event
	tagFollowing map[pair]bool
	// reposts holds each (post, user)'s live repost.
	reposts map[pair]*post
	// appData is each (user, app)'s keys and values.
	appData map[pair]map[string]string
	// marks is each user's home marker as last known: the newest
	// position acknowledged (markers only move forward).
	marks map[string]string
	// rFollows and rFollowing are the follows of the other server's
	// people from here (remote.go), as follows and following are of
	// people here; rPending the follows asked, not yet accepted there.
	// rPosts are the Notes its people sent, rByNote by their ids.
	rFollows   map[pair][]event
	rFollowing map[pair]bool
	rPending   map[pair]*pendingFollow
	rPosts     []*post
	rByNote    map[string]*post
	// rOvertaken counts the Notes whose Create landed after their Delete
	// (the report's Remote.Overtaken, known as they land).
	rOvertaken int
	// farOps are the Follows of people here by the other server's people
	// and their Undos, by pair{theirs, ours}, in order (farfollowers.go).
	farOps map[pair][]farOp
	// moderated holds those whose standing a moderator changed, or began
	// to, at some time.
	moderated map[string]bool
	// later are the pictures uploaded by Mastodon's version 2 that were
	// not seen made safe while their uploader waited (pictures.go).
	later      []laterUpload
	ops        map[string]int
	failed     map[string]int
	violations []string
	lastOp     time.Time
}

func newModel() *model {
	return &model{
		byID: map[string]*user{}, postByID: map[string]*post{},
		follows: map[pair][]event{}, members: map[pair][]event{},
		following: map[pair]bool{}, isMember: map[pair]bool{}, likes: map[pair]bool{}, invited: map[pair]bool{},
		blocks: map[pair]bool{}, everBlocked: map[pair]bool{}, mutes: map[pair]bool{}, everMuted: map[pair]bool{}, everFiltered: map[string]bool{}, locked: map[string]bool{}, limited: map[string]bool{}, suspended: map[string]bool{}, suspending: map[string]int{}, standings: map[string][]string{}, filters: map[string]keywordFilter{}, requested: map[pair]int{}, unlocking: map[string]int{}, approving: map[pair]int{}, tagFollows: map[pair][]event{}, tagFollowing: map[pair]bool{}, reposts: map[pair]*post{}, appData: map[pair]map[string]string{}, marks: map[string]string{},
		rFollows: map[pair][]event{}, rFollowing: map[pair]bool{}, rPending: map[pair]*pendingFollow{}, rByNote: map[string]*post{},
		farOps: map[pair][]farOp{}, moderated: map[string]bool{},
		pins: map[string][]string{}, bookmarks: map[string][]string{}, votes: map[string]map[string][]int{}, profiles: map[string]profile{}, ops: map[string]int{}, failed: map[string]int{},
	}
}

// public reports whether p is listed: in @all, tag and group feeds.
func (p *post) public() bool { return p.visibility == "" || p.visibility == "public" }

// open reports whether anyone may see p: public or unlisted.
func (p *post) open() bool { return p.public() || p.visibility == "unlisted" }

// drop marks p deleted, with the reposts of it (the cleanup deletes them,
// and no feed shows them meanwhile). The caller holds m.mu.
func (m *model) drop(p *post, why string) {
	p.deleted = true
	p.dropped = fmt.Sprintf("%s at %s", why, time.Now().Format("15:04:05.000"))
	if p.repostOf != "" && m.reposts[pair{p.repostOf, p.author}] == p {
		delete(m.reposts, pair{p.repostOf, p.author})
	}
	for _, q := range m.posts {
		if q.repostOf == p.id && !q.deleted {
			m.drop(q, "its shared post "+p.id+" "+why)
		}
	}
}

// hidden reports whether moderation keeps p from every feed: it was
// removed, or it reposts what was. The caller holds m.mu.
func (m *model) hidden(p *post) bool {
	if p.removed {
		return true
	}
	shared := m.postByID[p.repostOf]
	return shared != nil && shared.removed
}

// between reports whether a and b block each other now, either way.
func (m *model) between(a, b string) bool { return m.blocks[pair{a, b}] || m.blocks[pair{b, a}] }

// blockedOnce reports whether a and b ever had a block between them.
func (m *model) blockedOnce(a, b string) bool {
	return m.everBlocked[pair{a, b}] || m.everBlocked[pair{b, a}]
}

// gone reports whether the account id is deleted or being deleted.
func (m *model) gone(id string) bool {
	u := m.byID[id]
	return u != nil && u.gone
}

// hiddenFrom says why the policy hides p from reader for sure ("" if it
// may not), as far as the model knows: removed, its author suspended, or limited and
// not followed by reader (nor asked to be, with an unlock or approval of
// the request under way), or a block between them, with no change of the
// author's standing under way. The caller holds m.mu, and asks before and
// after a request: what was hidden throughout may not be reacted to.
func (m *model) hiddenFrom(reader string, p *post) string {
	a := p.author
	if a == reader || m.suspending[a] > 0 {
		return ""
	}
	switch {
	case p.removed && !p.removing:
		return "removed"
	case m.suspended[a]:
		return "its author suspended"
	case m.limited[a] && !m.following[pair{reader, a}] && len(m.follows[pair{reader, a}]) == 0 && !m.mayApprove(reader, a):
		return fmt.Sprintf("its author limited (%s), never followed", strings.Join(m.standings[a], "; ")) // no follow may be in flight
	case m.blocks[pair{reader, a}]:
		return "its author blocked"
	case m.blocks[pair{a, reader}]:
		return "its author blocks the reader"
	}
	return ""
}

// mayApprove reports whether reader's pending request to follow a may be
// approved by an operation under way (a's unlock, or an approval of it),
// which tells the model only once it is answered. The caller holds m.mu.
func (m *model) mayApprove(reader, a string) bool {
	k := pair{reader, a}
	_, pending := m.requested[k]
	return pending && (m.unlocking[a] > 0 || m.approving[k] > 0)
}

// mayBeSuspended reports whether id is suspended, or may be by a
// suspension or lift under way.
func (m *model) mayBeSuspended(id string) bool { return m.suspended[id] || m.suspending[id] > 0 }

// deleted reports whether the account id's deletion was acknowledged.
func (m *model) deleted(id string) bool {
	u := m.byID[id]
	return u != nil && u.deleted
}

func (m *model) violate(format string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.violations = append(m.violations, format)
}

// done counts an operation; failed says it was answered with an error
// (whatever it then turned out to have done).
func (m *model) done(op string, failed bool, end time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ops[op]++
	if failed {
		m.failed[op]++
	}
	if end.After(m.lastOp) {
		m.lastOp = end
	}
}

// presence is what the oracle allows of one activity in one feed.
type presence uint8

const (
	mayIn  presence = 1
	mayOut presence = 2
)

func (p presence) must() bool   { return p == mayIn }
func (p presence) forbid() bool { return p == mayOut }

// window says whether an add event's first copy and backfill cover
// activity a: surely, or maybe.
type window func(ev event, a *post) (sure, maybe bool)

// presenceOf derives where activity a can be after a pair's events (the
// follow history of a's author and a reader, or the membership history of
// a's author and a group), all jobs run:
//   - at posting, a copies the pair's state: in while the pair holds, out
//     while it does not, either if a change overlaps the post;
//   - an add (follow, join) then copies a if its window covers a, surely
//     only if the add still holds at the end (a later removal may stop its
//     job half way);
//   - a removal (not keepHistory) takes a out, unless a was posted after
//     the add that came next (the removal's cutoff), or during it (maybe);
//   - keepHistory leaves a as it is.
func presenceOf(a *post, evs []event, win window) presence {
	held := false
	overlap := false
	first := len(evs)
	for i, ev := range evs {
		if ev.end.Before(a.start) {
			held = ev.add
			continue
		}
		if i < first {
			first = i
		}
		if ev.start.Before(a.end) {
			overlap = true
		}
	}
	var p presence
	switch {
	case overlap:
		p = mayIn | mayOut
	case held:
		p = mayIn
	default:
		p = mayOut
	}
	for i := first; i < len(evs); i++ {
		ev := evs[i]
		if ev.add {
			sure, maybe := win(ev, a)
			ended := slices.ContainsFunc(evs[i+1:], func(e event) bool { return !e.add })
			switch {
			case sure && !ended:
				p = mayIn
			case sure || maybe:
				p |= mayIn
			}
			continue
		}
		if ev.keep {
			continue
		}
		// The removal spares what was not surely posted before the cutoff,
		// the next add's generation, minted during it; an id tells its
		// time to the millisecond.
		next := slices.IndexFunc(evs[i+1:], func(e event) bool { return e.add })
		minted := a.seqTime.Add(time.Millisecond)
		switch {
		case next < 0 || !minted.After(evs[i+1+next].start):
			p = mayOut
		case !minted.After(evs[i+1+next].end):
			p |= mayOut
		}
	}
	return p
}

// tagPresence derives where activity a can be in a reader's home feed
// after their follow events of one of its tags, all jobs run. The tag's
// job brings a to those who followed the tag before a's id was minted and
// still do when it runs; nothing brings it later, and nothing takes it
// away:
//   - not following at posting: out (a later follow does not reach back);
//   - a change overlapping the post: either;
//   - following at posting: in, or either if an unfollow came after (the
//     job may have run before it or after).
func tagPresence(a *post, evs []event) presence {
	held, overlap, later := false, false, false
	for _, ev := range evs {
		switch {
		case ev.end.Before(a.start):
			held = ev.add
		case ev.start.Before(a.end):
			overlap = true
		case !ev.add:
			later = true
		}
	}
	switch {
	case overlap || held && later:
		return mayIn | mayOut
	case held:
		return mayIn
	}
	return mayOut
}

// both is where an activity can be that two rules each allow: in only
// if both may bring it, out if either may keep it out.
func both(p, q presence) presence {
	return p&q&mayIn | (p|q)&mayOut
}

// union is where an activity can be that either of two ways brings: in if
// either must bring it, out only if neither does.
func union(p, q presence) presence {
	return (p|q)&mayIn | p&q&mayOut
}

// seqTime is when an activity id was minted.
func seqTime(id string) time.Time {
	seq, _ := ids.Parse(id)
	return ids.Time(seq)
}
