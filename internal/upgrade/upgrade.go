// Package upgrade brings the people of earlier versions up to this one,
// so that a page reads what this version's accounts let it read: a chain
// of jobs pages through every User by key and, for each person,
//
//   - writes their card (accounts.Counts with their names, and the counts
//     and shards their User held), so a feed reads one entity per author;
//   - completes their own state (package viewer): every block they made
//     or received and every mute they made, listed, so a page reads no
//     block or mute by key.
//
// Then it records that it is done (Migration/people), so an instance that
// starts later enqueues nothing. Every step can run any number of times,
// in any order with the writes of the people it upgrades: a person's
// transaction reads their User, card and state, and every block and mute
// its queries found, by key, and lists those still there beside what the
// state lists already (which every block and mute since the state was made
// has kept up to date, in its own commit).
package upgrade

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/accounts"
	"socialstream/internal/blocks"
	"socialstream/internal/derrors"
	"socialstream/internal/mutes"
	"socialstream/internal/queue"
	"socialstream/internal/store"
	"socialstream/internal/viewer"
)

// Path is where the upgrade's jobs are sent.
const Path = "/_tasks/upgrade"

// batch is how many people one job upgrades, each tried up to
// personTries times.
const (
	batch       = 50
	personTries = 4
)

// Task is the body of an upgrade job.
type Task struct {
	Step   int    `json:"step"`
	Cursor string `json:"cursor,omitempty"` // where the query of Users goes on
}

// Service runs the upgrade.
type Service struct {
	db    *store.DB
	queue queue.Queue
	name  string // the queue
	now   func() time.Time
}

// New returns a Service whose jobs go to the named queue.
func New(db *store.DB, q queue.Queue, queueName string) (*Service, error) {
	if db == nil || q == nil || queueName == "" {
		return nil, errors.New("upgrade.New: nil dependency")
	}
	return &Service{db: db, queue: q, name: queueName, now: time.Now}, nil
}

type done struct {
	Done time.Time `datastore:"done,noindex"`
}

func doneKey(db *store.DB) *datastore.Key { return db.NameKey("Migration", "people", nil) }

// Start enqueues the first job, unless the upgrade is done. Every instance
// calls it as it starts: the job is named, so they enqueue it once.
func (s *Service) Start(ctx context.Context) error {
	ok, err := s.db.Get(ctx, doneKey(s.db), &done{})
	if err != nil || ok {
		return err
	}
	return s.enqueue(ctx, Task{})
}

func (s *Service) enqueue(ctx context.Context, t Task) error {
	body, _ := json.Marshal(t)
	return s.queue.Enqueue(ctx, queue.Task{Queue: s.name, Path: Path, Body: body,
		Name: fmt.Sprintf("upgrade-people-%d", t.Step)})
}

// Run runs one job: it upgrades the people of its batch and enqueues the
// next job, or records that the upgrade is done. It returns how many
// people it changed.
func (s *Service) Run(ctx context.Context, t Task) (int, error) {
	people, next, err := accounts.UserIDs(ctx, s.db, t.Cursor, batch)
	if err != nil {
		return 0, fmt.Errorf("upgrade.Run(%d): %w", t.Step, err)
	}
	changed := 0
	for _, id := range people {
		// A failed call fails the whole job, which then starts its batch
		// again: each person is tried a few times first, or a batch of
		// many calls might never get through a flaky Datastore at once.
		ok, err := s.Person(ctx, id)
		for try := 1; try < personTries && errors.Is(err, derrors.Unavailable) && ctx.Err() == nil; try++ {
			ok, err = s.Person(ctx, id)
		}
		if err != nil {
			return changed, fmt.Errorf("upgrade.Run(%d): %w", t.Step, err)
		}
		if ok {
			changed++
		}
	}
	if next != "" && len(people) == batch {
		return changed, s.enqueue(ctx, Task{Step: t.Step + 1, Cursor: next})
	}
	return changed, s.db.Put(ctx, doneKey(s.db), &done{Done: s.now().UTC()})
}

// Person upgrades one person, and reports whether anything changed.
func (s *Service) Person(ctx context.Context, user string) (bool, error) {
	// The blocks and mutes, found by query (one more than a state holds
	// is enough to know it would overflow); read again by key in the
	// transaction, which lists those still there.
	made, received, err := blocks.Involving(ctx, s.db, user, viewer.MaxPeople+1)
	if err != nil {
		return false, fmt.Errorf("upgrade.Person(%s): %w", user, err)
	}
	muted, err := mutes.MutedBy(ctx, s.db, user, viewer.MaxPeople+1)
	if err != nil {
		return false, fmt.Errorf("upgrade.Person(%s): %w", user, err)
	}
	changed := false
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		l := tx.Lookup()
		card, own := accounts.ReadCardUpgrade(l, user), viewer.Read(l, user)
		blocking := make([]*blocks.Between, len(made))
		for i, p := range made {
			blocking[i] = blocks.ReadBetween(l, user, p)
		}
		blockedBy := make([]*blocks.Between, len(received))
		for i, p := range received {
			blockedBy[i] = blocks.ReadBetween(l, p, user)
		}
		mutings := make([]*mutes.Ref, len(muted))
		for i, p := range muted {
			mutings[i] = mutes.Read(l, user, p)
		}
		if err := l.Run(ctx); err != nil {
			return err
		}
		if !card.Exists() {
			changed = false
			return nil // gone: the erasure takes the rest
		}
		named, err := card.Write(tx)
		if err != nil {
			return err
		}
		changed = named
		if own.Complete() {
			return nil
		}
		st := own.Edit(s.now())
		for i, p := range made {
			if blocking[i].First() && !slices.Contains(st.Blocks, p) {
				st.SetBlock(p, true)
			}
		}
		for i, p := range received {
			if blockedBy[i].First() && !slices.Contains(st.BlockedBy, p) {
				st.SetBlockedBy(p, true)
			}
		}
		for i, p := range muted {
			if until, ok := mutings[i].Until(); ok && !slices.Contains(st.Muted, p) {
				st.SetMute(p, until, true)
			}
		}
		st.Complete, changed = true, true
		return own.Save(tx)
	})
	if err != nil {
		return false, fmt.Errorf("upgrade.Person(%s): %w", user, err)
	}
	return changed, nil
}
