package graph

import (
	"context"
	"fmt"
	"socialstream/internal/accounts"
	"socialstream/internal/blocks"
	"socialstream/internal/queue"
	"socialstream/internal/store"
	"socialstream/internal/viewer"
)

// Blocks, as the graph keeps them: a block ends the follows both ways
// (and each one's lists of the other), and no follow is made across one.

// Block makes blocker block blocked and returns the blocked person. The
// same transaction ends the follows between them both ways, each with the
// job that removes its copies, enqueued before the commit (as an
// unfollow's, by queue.Ahead), so neither sees the other's activities at
// home; from then on neither can follow the other. Blocking again changes
// nothing.
func (s *Service) Block(ctx context.Context, blocker, blocked string) (accounts.Person, error) {
	if blocker == blocked {
		return accounts.Person{}, blocks.ErrSelfBlock
	}
	removal := s.now().UnixMicro()
	removing := func(f *Follow) queue.Pending { return s.removing(f.Follower, f.Followee, removal) }
	// The follows seen before the transaction have their jobs enqueued
	// before it; one begun since is found needing its job there.
	l := s.db.Lookup()
	var fab, fba Follow
	ab, ba := l.Add(FollowKey(s.db, blocker, blocked), &fab), l.Add(FollowKey(s.db, blocked, blocker), &fba)
	to := accounts.Read(l, blocked)
	if err := l.Run(ctx); err != nil {
		return accounts.Person{}, fmt.Errorf("graph.Block(%s, %s): %w", blocker, blocked, err)
	}
	if !to.SeenBy(blocker) {
		return accounts.Person{}, accounts.ErrNoSuchPerson
	}
	// Each leaves the other's lists first, as the follows end.
	for _, p := range [][2]string{{blocker, blocked}, {blocked, blocker}} {
		if err := s.leaveLists(ctx, p[0], p[1]); err != nil {
			return accounts.Person{}, fmt.Errorf("graph.Block(%s, %s): %w", blocker, blocked, err)
		}
	}
	var expected []queue.Pending
	if s.remote != nil && to.Remote() {
		expected = append(expected, s.remote.Blocking(blocker, blocked, false))
	}
	for _, f := range []struct {
		ref    store.Ref
		follow *Follow
	}{{ab, &fab}, {ba, &fba}} {
		if f.ref.Found() {
			expected = append(expected, removing(f.follow))
		}
	}
	var person accounts.Person
	var jobs queue.Ahead
	err := jobs.Commit(ctx, expected, func() error {
		return s.db.Update(ctx, func(tx *store.Tx) error {
			var p accounts.Person
			var err error
			p, err = s.block(ctx, tx, blocker, blocked, removal, func(ending []*Follow) error {
				need := make([]queue.Pending, len(ending))
				for i, f := range ending {
					need[i] = removing(f)
				}
				return jobs.Need(need...)
			})
			person = p
			return err
		})
	})
	if err != nil {
		return accounts.Person{}, fmt.Errorf("graph.Block(%s, %s): %w", blocker, blocked, err)
	}
	if person.ID != "" {
		return s.load(ctx, blocked) // with their counts as the block left them
	}
	return person, nil
}

// block is Block's transaction; need answers an error unless the jobs
// that remove the copies of the follows ending are enqueued.
func (s *Service) block(ctx context.Context, tx *store.Tx, blocker, blocked string, removal int64, need func([]*Follow) error) (accounts.Person, error) {
	var fab, fba Follow
	l := tx.Lookup()
	ab, ba := l.Add(FollowKey(s.db, blocker, blocked), &fab), l.Add(FollowKey(s.db, blocked, blocker), &fba)
	people := map[string]*accounts.Record{blocker: accounts.Read(l, blocker), blocked: accounts.Read(l, blocked)}
	already := blocks.ReadBetween(l, blocker, blocked)
	states := []*viewer.Ref{viewer.Read(l, blocker), viewer.Read(l, blocked)}
	if err := l.Run(ctx); err != nil {
		return accounts.Person{}, err
	}
	ending, err := decideBlock(blockFacts{mayAct: people[blocker].MayAct(), seen: people[blocked].SeenBy(blocker), already: already.First(),
		ab: found(ab, &fab), ba: found(ba, &fba)})
	if err != nil {
		return accounts.Person{}, err
	}
	person, _ := people[blocked].Person()
	if ending == nil {
		return person, nil // blocking again
	}
	if err := need(ending); err != nil {
		return accounts.Person{}, err
	}
	if len(ending) > 0 {
		if err := s.end(ctx, tx, ending, removal, false, people); err != nil {
			return accounts.Person{}, err
		}
		person, _ = people[blocked].Person()
	}
	// Requests either way end with the follows.
	if err := endRequest(tx, blocker, blocked); err != nil {
		return accounts.Person{}, err
	}
	if err := endRequest(tx, blocked, blocker); err != nil {
		return accounts.Person{}, err
	}
	// Both states list it: the feeds of each leave the other out.
	states[0].Edit().SetBlock(blocked, true)
	states[1].Edit().SetBlockedBy(blocker, true)
	for _, st := range states {
		if err := st.Save(tx); err != nil {
			return accounts.Person{}, err
		}
	}
	return person, blocks.Set(tx, blocker, blocked, s.now())
}

func found(r store.Ref, f *Follow) *Follow {
	if r.Found() {
		return f
	}
	return nil
}

// blockFacts is what a block's transaction decides on.
type blockFacts struct {
	mayAct  error // the blocker's standing
	seen    bool  // the blocker may see the blocked (not suspended)
	already bool  // the blocker blocks them already
	ab, ba  *Follow
}

// decideBlock decides which follows a block ends: nil if it changes
// nothing, or else an empty or non-empty list.
func decideBlock(f blockFacts) ([]*Follow, error) {
	switch {
	case f.mayAct != nil:
		return nil, f.mayAct // deleted, or suspended
	case !f.seen:
		return nil, accounts.ErrNoSuchPerson
	case f.already:
		return nil, nil
	}
	ending := []*Follow{}
	for _, fw := range []*Follow{f.ab, f.ba} {
		if fw != nil {
			ending = append(ending, fw)
		}
	}
	return ending, nil
}

// Unblock ends blocker's block of blocked, if any. It restores no follow:
// either may follow the other again.
func (s *Service) Unblock(ctx context.Context, blocker, blocked string) error {
	// With federation on, the card of the blocked says whether they are
	// of another server, whose Undo is sent (off, it is not read).
	var expected []queue.Pending
	if s.remote != nil {
		l := s.db.Lookup()
		to := accounts.Read(l, blocked)
		if err := l.Run(ctx); err != nil {
			return fmt.Errorf("graph.Unblock(%s, %s): %w", blocker, blocked, err)
		}
		if to.Remote() {
			expected = append(expected, s.remote.Blocking(blocker, blocked, true))
		}
	}
	var jobs queue.Ahead
	err := jobs.Commit(ctx, expected, func() error { return s.unblock(ctx, blocker, blocked) })
	if err != nil {
		return fmt.Errorf("graph.Unblock(%s, %s): %w", blocker, blocked, err)
	}
	return nil
}

// unblock is Unblock's transaction.
func (s *Service) unblock(ctx context.Context, blocker, blocked string) error {
	return s.db.Update(ctx, func(tx *store.Tx) error {
		l := tx.Lookup()
		states := []*viewer.Ref{viewer.Read(l, blocker), viewer.Read(l, blocked)}
		if err := l.Run(ctx); err != nil {
			return err
		}
		// A state not there has nothing to take out (and the person may
		// be gone).
		if states[0].Found() {
			states[0].Edit().SetBlock(blocked, false)
		}
		if states[1].Found() {
			states[1].Edit().SetBlockedBy(blocker, false)
		}
		for _, st := range states {
			if err := st.Save(tx); err != nil {
				return err
			}
		}
		return blocks.Clear(tx, blocker, blocked)
	})
}

// Blocks reports whether blocker blocks blocked.
func (s *Service) Blocks(ctx context.Context, blocker, blocked string) (bool, error) {
	l := s.db.Lookup()
	b := blocks.ReadBetween(l, blocker, blocked)
	if err := l.Run(ctx); err != nil {
		return false, fmt.Errorf("graph.Blocks: %w", err)
	}
	return b.First(), nil
}

// Blocked lists the people user blocks, newest block first, as ids.
func (s *Service) Blocked(ctx context.Context, user string, p store.PageRequest) ([]string, string, error) {
	return blocks.List(ctx, s.db, user, p)
}

// eraseBatch is how many follows one transaction of an erasure ends.
const eraseBatch = 25
