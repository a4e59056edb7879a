package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"socialstream/internal/accounts"
	"socialstream/internal/polls"
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
func (s *Service) Vote(ctx context.Context, voter, id string, choices []int) (View, error) {
	a, err := s.Exists(ctx, id)
	if err != nil {
		return View{}, err
	}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		l := tx.Lookup()
		me := accounts.Read(l, voter)
		seen := ReadSeen(l, voter, a)
		var ballot *polls.Ballot
		if a.Poll != nil {
			ballot = polls.ReadBallot(l, id, a.Poll.ID, voter)
		}
		if err := l.Run(ctx); err != nil {
			return err
		}
		picked, err := decideVote(me.MayAct(), seen.Err(), a.Poll, choices, s.now())
		if err != nil {
			return err
		}
		if err := ballot.Cast(tx, picked, s.now()); err != nil {
			return err
		}
		return tx.Check(Key(s.db, id)) // not deleted meanwhile
	})
	if errors.Is(err, store.ErrGone) {
		err = ErrNoSuchActivity // deleted since it was read
	}
	if err != nil {
		return View{}, fmt.Errorf("activities.Vote(%s, %s): %w", voter, id, err)
	}
	// Its answer, as a reaction's (ReactionView): what lands just after
	// the vote (a block, say) does not hide it, as the vote happened.
	return s.reactedView(ctx, voter, id, a.UserID)
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
