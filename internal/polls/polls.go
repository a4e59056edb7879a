// Package polls owns the votes of polls and their counts. A poll is
// part of its post: its definition (options, whether one may choose
// several, when it ends) is kept on the activity (package activities),
// as Poll, and named by its own id, which an edit that changes its
// options renews. This package keeps, under that id, each person's vote
// (PollVote, made once, in the vote's transaction) and the poll's counts
// (PollCount: voters, votes, each option's), which a vote increments
// by transforms, reading nothing, so that votes at once never contend
// for a lock (a like storm's way). A vote counted against a poll an
// edit replaced meanwhile counts for that old poll alone.
package polls

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"cloud.google.com/go/datastore"

	"socialstream/internal/derrors"
	"socialstream/internal/store"
	"socialstream/internal/text"
)

// Kinds of the entities this package owns.
const (
	KindPollCount = "PollCount"
	KindPollVote  = "PollVote"
)

// Limits, which the Mastodon face's instance answer states.
const (
	// MaxOptions and MinOptions bound a poll's options, MaxOptionChars
	// each one's length.
	MaxOptions     = 4
	MinOptions     = 2
	MaxOptionChars = 50
	// MinExpiry and MaxExpiry bound how long a poll is open: Mastodon's
	// least, and the most Cloud Tasks schedules ahead (its closing is a
	// job at its end).
	MinExpiry = 5 * time.Minute
	MaxExpiry = 30 * 24 * time.Hour
)

// Poll is a post's poll, as the post keeps it.
//
//ownership:value
type Poll struct {
	// ID names its counts and votes.
	ID         string    `datastore:"id,noindex"`
	Options    []string  `datastore:"options,noindex"`
	Multiple   bool      `datastore:"multiple,noindex"`
	HideTotals bool      `datastore:"hideTotals,noindex"`
	Expires    time.Time `datastore:"expires,noindex"`
	// Elsewhere marks a poll of another server's post (a Question): its
	// counts are its server's, Counts by option and Voters, as its last
	// Update said; the votes of people here counted since (its Count)
	// are shown on top of them until the next.
	Elsewhere bool    `datastore:"elsewhere,noindex,omitempty"`
	Counts    []int64 `datastore:"counts,noindex,omitempty"`
	Voters    int64   `datastore:"voters,noindex,omitempty"`
}

// Limits of a poll of another server's (a Question): more options than
// here, and longer ones, as other servers allow.
const (
	MaxOptionsElsewhere     = 20
	MaxOptionCharsElsewhere = 200
)

// Elsewhere returns the poll of a Question of another server's: its
// options (titles cut to MaxOptionCharsElsewhere), whether it takes
// several choices, its end, and its counts there (by option, and its
// voters); false if it is no poll this service keeps (fewer than 2
// options, or more than MaxOptionsElsewhere, or counts that do not
// match them).
func Elsewhere(options []string, multiple bool, end time.Time, counts []int64, voters int64) (*Poll, bool) {
	if len(options) < MinOptions || len(options) > MaxOptionsElsewhere || len(counts) != len(options) || voters < 0 {
		return nil, false
	}
	p := &Poll{Multiple: multiple, Expires: end.UTC(), Elsewhere: true, Counts: slices.Clone(counts), Voters: voters}
	for i, o := range options {
		o = text.Strip(o, MaxOptionCharsElsewhere, false)
		if o == "" || slices.Contains(p.Options, o) || counts[i] < 0 {
			return nil, false
		}
		p.Options = append(p.Options, o)
	}
	return p, true
}

// Index returns the index of p's option of that title, -1 if none.
func (p *Poll) Index(title string) int { return slices.Index(p.Options, title) }

// Expired reports whether p is closed at now.
func (p *Poll) Expired(now time.Time) bool { return !now.Before(p.Expires) }

// Input is a poll asked for with a post.
type Input struct {
	Options    []string
	ExpiresIn  time.Duration
	Multiple   bool
	HideTotals bool
}

func invalid(msg string) error { return derrors.New(derrors.InvalidArgument, msg) }

// Make checks in and returns the poll it asks for, named id, as made at
// now: 2 to MaxOptions distinct options of 1 to MaxOptionChars
// characters, open MinExpiry to MaxExpiry.
func (in Input) Make(id string, now time.Time) (*Poll, error) {
	if len(in.Options) < MinOptions || len(in.Options) > MaxOptions {
		return nil, invalid(fmt.Sprintf("a poll has %d to %d options", MinOptions, MaxOptions))
	}
	opts := make([]string, len(in.Options))
	for i, o := range in.Options {
		o = strings.TrimSpace(o)
		switch n := utf8.RuneCountInString(o); {
		case !utf8.ValidString(o):
			return nil, invalid("a poll's option is not valid UTF-8")
		case n == 0 || n > MaxOptionChars:
			return nil, invalid(fmt.Sprintf("a poll's option has 1 to %d characters", MaxOptionChars))
		case slices.Contains(opts[:i], o):
			return nil, invalid("a poll's options differ from one another")
		}
		opts[i] = o
	}
	if in.ExpiresIn < MinExpiry || in.ExpiresIn > MaxExpiry {
		return nil, invalid(fmt.Sprintf("a poll is open %d to %d seconds", int(MinExpiry/time.Second), int(MaxExpiry/time.Second)))
	}
	return &Poll{ID: id, Options: opts, Multiple: in.Multiple, HideTotals: in.HideTotals,
		Expires: now.Add(in.ExpiresIn).UTC().Truncate(time.Second)}, nil
}

// Count is a poll's counts: its voters, their votes (a person may choose
// several options of a poll that allows it), and each option's.
type Count struct {
	Voters, Votes int64
	// Options are the counts by option: as many as a poll of another
	// server's may have.
	Options [MaxOptionsElsewhere]int64
}

// Load reads the counts a vote's transforms made.
func (c *Count) Load(ps []datastore.Property) error {
	for _, p := range ps {
		n, _ := p.Value.(int64)
		switch {
		case p.Name == "voters":
			c.Voters = n
		case p.Name == "votes":
			c.Votes = n
		case strings.HasPrefix(p.Name, "o"):
			if i, err := strconv.Atoi(p.Name[1:]); err == nil && i >= 0 && i < len(c.Options) {
				c.Options[i] = n
			}
		}
	}
	return nil
}

// Save writes the counts, unindexed.
func (c *Count) Save() ([]datastore.Property, error) {
	ps := []datastore.Property{{Name: "voters", Value: c.Voters, NoIndex: true}, {Name: "votes", Value: c.Votes, NoIndex: true}}
	for i, n := range c.Options {
		ps = append(ps, datastore.Property{Name: "o" + strconv.Itoa(i), Value: n, NoIndex: true})
	}
	return ps, nil
}

// Vote is a person's vote in a poll.
type Vote struct {
	PollID string `datastore:"pollId,noindex"`
	// ActivityID is its post's (indexed: the post's cleanup deletes its
	// votes).
	ActivityID string    `datastore:"activityId"`
	UserID     string    `datastore:"userId,noindex"`
	Choices    []int64   `datastore:"choices,noindex"`
	At         time.Time `datastore:"at,noindex"`
}

// CountKey is the key of a poll's counts.
func CountKey(db *store.DB, poll string) *datastore.Key { return db.NameKey(KindPollCount, poll, nil) }

// VoteKey is the key of user's vote in a poll.
func VoteKey(db *store.DB, poll, user string) *datastore.Key {
	return db.NameKey(KindPollVote, poll+"_"+user, nil)
}

// Errors of a vote.
var (
	ErrVoted   = derrors.New(derrors.InvalidArgument, "You have already voted on this poll")
	ErrExpired = derrors.New(derrors.InvalidArgument, "The poll has already ended")
)

// Choices checks choices, the indexes of options of p chosen, and
// returns them sorted: one at least, each once, one alone unless p
// allows several.
func (p *Poll) Choices(choices []int) ([]int64, error) {
	if len(choices) == 0 {
		return nil, invalid("choose an option of the poll")
	}
	if len(choices) > 1 && !p.Multiple {
		return nil, invalid("this poll takes one choice")
	}
	out := make([]int64, 0, len(choices))
	for _, c := range choices {
		if c < 0 || c >= len(p.Options) {
			return nil, invalid(fmt.Sprintf("the poll has no option %d", c))
		}
		if slices.Contains(out, int64(c)) {
			return nil, invalid("an option chosen twice")
		}
		out = append(out, int64(c))
	}
	slices.Sort(out)
	return out, nil
}

// Ballot is a person's vote as a vote's transaction read it.
type Ballot struct {
	activity, poll, user string
	vote                 Vote
	ref                  store.Ref
}

// ReadBallot adds user's vote in poll, of activity, to the lookup of a
// vote's transaction.
func ReadBallot(l *store.Lookup, activity, poll, user string) *Ballot {
	b := &Ballot{activity: activity, poll: poll, user: user}
	b.ref = l.Add(VoteKey(l.DB(), poll, user), &b.vote)
	return b
}

// Cast records, in tx, the vote of choices (checked: Poll.Choices) the
// ballot's person makes at now, and counts it; a person votes once: the
// same choices again are a retry of what committed (nil, and nothing
// more counted), others ErrVoted.
func (b *Ballot) Cast(tx *store.Tx, choices []int64, now time.Time) error {
	if b.ref.Found() {
		if slices.Equal(b.vote.Choices, choices) {
			return nil
		}
		return ErrVoted
	}
	v := &Vote{PollID: b.poll, ActivityID: b.activity, UserID: b.user, Choices: choices, At: now.UTC()}
	if err := tx.Put(VoteKey(tx.DB(), b.poll, b.user), v); err != nil {
		return err
	}
	deltas := map[string]int64{"voters": 1, "votes": int64(len(choices))}
	for _, c := range choices {
		deltas["o"+strconv.FormatInt(c, 10)] = 1
	}
	return tx.IncrementAny(CountKey(tx.DB(), b.poll), deltas)
}

// Found reports whether the ballot's person voted, and Choices what
// they chose (once the lookup ReadBallot added it to has run).
func (b *Ballot) Found() bool      { return b.ref.Found() }
func (b *Ballot) Choices() []int64 { return b.vote.Choices }

// Has reports whether the ballot's person chose choice already.
func (b *Ballot) Has(choice int64) bool {
	return b.ref.Found() && slices.Contains(b.vote.Choices, choice)
}

// Add records, in tx, one more choice of a person of another server's
// who voted already in a poll of several (their server sends a vote a
// choice), and counts it; a choice they made already, or another in a
// poll of one, counts nothing (nil). A first vote is Cast.
func (b *Ballot) Add(tx *store.Tx, poll *Poll, choice int64, now time.Time) error {
	if !b.ref.Found() {
		return b.Cast(tx, []int64{choice}, now)
	}
	if !poll.Multiple || slices.Contains(b.vote.Choices, choice) {
		return nil
	}
	v := b.vote
	v.Choices = append(slices.Clone(v.Choices), choice)
	slices.Sort(v.Choices)
	if err := tx.Put(VoteKey(tx.DB(), b.poll, b.user), &v); err != nil {
		return err
	}
	return tx.IncrementAny(CountKey(tx.DB(), b.poll), map[string]int64{"votes": 1, "o" + strconv.FormatInt(choice, 10): 1})
}

// Reset forgets, in tx, the counts of p, which an edit replaces with a
// poll of its own (its votes, named by p, no longer count; they go with
// the post).
func Reset(tx *store.Tx, p *Poll) error { return tx.Delete(CountKey(tx.DB(), p.ID)) }

// Recount keeps, in tx, the counts of a's poll of another server's that
// its server's Update says, and forgets the votes here counted since the
// last (its server counts them now, or will in its next Update).
func Recount(tx *store.Tx, p *Poll, counts []int64, voters int64) error {
	p.Counts, p.Voters = slices.Clone(counts), voters
	return tx.Delete(CountKey(tx.DB(), p.ID))
}

// View is a poll as a reader sees it.
type View struct {
	ID          string    `json:"id"`
	Expires     time.Time `json:"expiresAt"`
	Expired     bool      `json:"expired"`
	Multiple    bool      `json:"multiple"`
	VotesCount  int64     `json:"votesCount"`
	VotersCount int64     `json:"votersCount"`
	Options     []Option  `json:"options"`
	// Voted and OwnVotes: the reader's vote, if any.
	Voted    bool  `json:"voted"`
	OwnVotes []int `json:"ownVotes"`
}

// Option is one of a poll's options, with its votes: nil while the poll
// hides its totals from the reader (until it ends; never from its
// author).
type Option struct {
	Title      string `json:"title"`
	VotesCount *int64 `json:"votesCount"`
}

// Read adds p's counts and reader's vote ("" for no one) to l; the
// function it returns answers, once l has run, the view of p to reader
// at now, who is its author if own.
func Read(l *store.Lookup, p *Poll, reader string) func(now time.Time, own bool) *View {
	var c Count
	counted := l.Add(CountKey(l.DB(), p.ID), &c)
	var b *Ballot
	if reader != "" {
		b = &Ballot{poll: p.ID, user: reader}
		b.ref = l.Add(VoteKey(l.DB(), p.ID, reader), &b.vote)
	}
	return func(now time.Time, own bool) *View {
		if !counted.Found() {
			c = Count{}
		}
		v := &View{ID: p.ID, Expires: p.Expires, Expired: p.Expired(now), Multiple: p.Multiple,
			VotesCount: c.Votes, VotersCount: c.Voters, OwnVotes: []int{}}
		if p.Elsewhere {
			v.VotersCount += p.Voters
			for _, n := range p.Counts {
				v.VotesCount += n
			}
		}
		shown := !p.HideTotals || v.Expired || own
		for i, o := range p.Options {
			opt := Option{Title: o}
			if shown {
				n := c.Options[i]
				if p.Elsewhere && i < len(p.Counts) {
					n += p.Counts[i]
				}
				opt.VotesCount = &n
			}
			v.Options = append(v.Options, opt)
		}
		if b != nil && b.ref.Found() {
			v.Voted = true
			for _, ch := range b.vote.Choices {
				v.OwnVotes = append(v.OwnVotes, int(ch))
			}
		}
		return v
	}
}

// ErrNoPoll is what a vote in a post with no poll answers.
var ErrNoPoll = derrors.New(derrors.NotFound, "no such poll")

// Records are the polls' entities, for what keeps them in step with
// their posts (package activities' Forgetter).
type Records struct{ DB *store.DB }

// ForgetActivity deletes the votes in an activity's poll and its counts
// once the activity is gone, for its cleanup job, and returns how many
// votes it deleted.
func (r Records) ForgetActivity(ctx context.Context, activity string) (int, error) {
	n, err := r.DB.DeleteAll(ctx, r.DB.Query(KindPollVote).FilterField("activityId", "=", activity).KeysOnly(), 500)
	if err == nil {
		// Its poll's counts, and those of the polls edits made it
		// (named activity-N): the range of keys from its own.
		_, err = r.DB.DeleteAll(ctx, r.DB.Query(KindPollCount).FilterField("__key__", ">=", CountKey(r.DB, activity)).
			FilterField("__key__", "<", CountKey(r.DB, activity+".")).KeysOnly(), 500)
	}
	if err != nil {
		return n, fmt.Errorf("polls.ForgetActivity(%s): %w", activity, err)
	}
	return n, nil
}
