package activities

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"socialstream/internal/accounts"
	"socialstream/internal/derrors"
	"socialstream/internal/polls"
	"socialstream/internal/queue"
	"socialstream/internal/store"
)

// Vote records voter's choices (the indexes of its options) in the poll
// of activity id, and returns the activity as they see it then, with its
// poll's counts. Whoever may not see the activity may not see or vote in
// its poll (ErrNoSuchActivity, before anything of the poll is told); a
// poll that has ended takes no vote; a person votes once (the same vote
// again is a retry of what committed, and answers as it did). The vote
// reads its person and their ties in its transaction and counts itself
// by transforms (package polls): votes at once do not wait on each
// other.
//
// A vote in a poll of another server's is sent there (Config.Publisher's
// job, enqueued ahead of its commit), and shows here on top of the
// counts its server last said.
func (s *Service) Vote(ctx context.Context, voter, id string, choices []int) (View, error) {
	a, err := s.Exists(ctx, id)
	if err != nil {
		return View{}, err
	}
	var expected []queue.Pending
	if note, ok := a.Elsewhere(); ok && a.Poll != nil && s.cfg.Publisher != nil {
		expected = append(expected, s.cfg.Publisher.Voting(voter, id, a.UserID, note))
	}
	err = new(queue.Ahead).Commit(ctx, expected, func() error { return s.vote(ctx, voter, id, a, choices) })
	if errors.Is(err, store.ErrGone) {
		err = ErrNoSuchActivity // deleted since it was read
	}
	if err != nil {
		return View{}, fmt.Errorf("activities.Vote(%s, %s): %w", voter, id, err)
	}
	// Its answer, as a reaction's (ReactionView): what lands just after
	// the vote (a block, say) does not hide it, as the vote happened.
	return s.reactedView(ctx, voter, id, a.UserID, false)
}

// vote is Vote's transaction.
func (s *Service) vote(ctx context.Context, voter, id string, a *Activity, choices []int) error {
	return s.db.Update(ctx, func(tx *store.Tx) error {
		l := tx.Lookup()
		me := accounts.Read(l, voter)
		seen := ReadSeen(l, voter, a)
		var ballot *polls.Ballot
		if a.Poll != nil {
			ballot = polls.ReadBallot(l, id, a.Poll.ID, voter)
		}
		// The post again, in the transaction: not deleted meanwhile, nor
		// its poll replaced by an edit (which starts it anew).
		var now Activity
		there := l.Add(Key(s.db, id), &now)
		if err := l.Run(ctx); err != nil {
			return err
		}
		if !there.Found() {
			return ErrNoSuchActivity
		}
		picked, err := decideVote(me.MayAct(), seen.Err(), a.Poll, choices, s.now())
		if err != nil {
			return err // whoever may not see the post is told nothing of its poll
		}
		if now.Poll == nil || now.Poll.ID != a.Poll.ID {
			return errPollReplaced
		}
		return ballot.Cast(tx, picked, s.now())
	})
}

// errPollReplaced is a vote in a poll an edit replaced meanwhile.
var errPollReplaced = derrors.New(derrors.Conflict, "the poll was changed since it was read: vote in it again")

// VoteElsewhere records, for a person of another server's (voter), the
// vote their server sent: one choice, by its option's title, in the poll
// of post id of this server's (another choice of the same person, in a
// poll of several, adds to their vote). It is taken as a vote made here
// is (the policy decides whether they may see the post; a poll that has
// ended takes none), and answers whether it counted anything.
func (s *Service) VoteElsewhere(ctx context.Context, voter, id, title string) (bool, error) {
	a, err := s.Exists(ctx, id)
	if err != nil {
		return false, err
	}
	if a.Poll == nil || a.Poll.Elsewhere {
		return false, polls.ErrNoPoll
	}
	choice := a.Poll.Index(title)
	if choice < 0 {
		return false, derrors.New(derrors.InvalidArgument, "the poll has no such option")
	}
	counted := false
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		l := tx.Lookup()
		me := accounts.Read(l, voter)
		seen := ReadSeen(l, voter, a)
		ballot := polls.ReadBallot(l, id, a.Poll.ID, voter)
		if err := l.Run(ctx); err != nil {
			return err
		}
		picked, err := decideVote(me.MayAct(), seen.Err(), a.Poll, []int{choice}, s.now())
		if err != nil {
			return err
		}
		counted = !ballot.Has(picked[0])
		if err := ballot.Add(tx, a.Poll, picked[0], s.now()); err != nil {
			return err
		}
		return tx.Check(Key(s.db, id))
	})
	if errors.Is(err, store.ErrGone) {
		err = ErrNoSuchActivity
	}
	if err != nil {
		return false, fmt.Errorf("activities.VoteElsewhere(%s, %s): %w", voter, id, err)
	}
	return counted, nil
}

// Recount keeps the counts the Update of a poll of another server's says
// (by option, and its voters) on its post here, by its author there.
func (s *Service) Recount(ctx context.Context, author, id string, counts []int64, voters int64) error {
	key := Key(s.db, id)
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		var a Activity
		ok, err := tx.Get(key, &a)
		switch {
		case err != nil:
			return err
		case !ok || a.UserID != author || a.Poll == nil || !a.Poll.Elsewhere || len(counts) != len(a.Poll.Options):
			return nil
		case slices.Equal(a.Poll.Counts, counts) && a.Poll.Voters == voters:
			return nil
		}
		if err := polls.Recount(tx, a.Poll, counts, voters); err != nil {
			return err
		}
		return tx.Put(key, &a)
	})
	if err != nil {
		return fmt.Errorf("activities.Recount(%s): %w", id, err)
	}
	return nil
}

// decideVote decides whether a vote of choices in poll (nil: the post
// has none) is taken at now, from what its transaction read: the
// voter's standing (mayAct), whether they may see the post (seen), then
// the poll. It returns the choices as counted.
func decideVote(mayAct, seen error, poll *polls.Poll, choices []int, now time.Time) ([]int64, error) {
	switch {
	case mayAct != nil:
		return nil, mayAct
	case seen != nil:
		return nil, seen // nothing of the poll is told
	case poll == nil:
		return nil, polls.ErrNoPoll
	case poll.Expired(now):
		return nil, polls.ErrExpired
	}
	return poll.Choices(choices)
}

// BallotOf returns the titles of the options voter chose in the poll of
// post id (none if they did not vote, or it has no poll), for the job
// that sends their vote to the poll's server.
func (s *Service) BallotOf(ctx context.Context, voter, id string) ([]string, error) {
	a, err := s.Exists(ctx, id)
	if errors.Is(err, ErrNoSuchActivity) || err == nil && a.Poll == nil {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	l := s.db.Lookup()
	b := polls.ReadBallot(l, id, a.Poll.ID, voter)
	if err := l.Run(ctx); err != nil || !b.Found() {
		return nil, err
	}
	var out []string
	for _, c := range b.Choices() {
		if int(c) < len(a.Poll.Options) {
			out = append(out, a.Poll.Options[c])
		}
	}
	return out, nil
}
