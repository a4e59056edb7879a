package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"socialstream/internal/accounts"
	"socialstream/internal/order"
	"socialstream/internal/queue"
	"socialstream/internal/store"
)

// The move to places (package order). Activities, audience chunks and
// notifications of earlier versions are ordered by an indexed seq, and
// found by the earlier queries, which every feed runs beside its own while
// the move is under way. A chain of jobs rewrites them in this version's
// form: each job reads a batch of each kind from the built-in index of
// seq, which holds only entities of an earlier version (this version keeps
// seq out of every index), and writes each again in a transaction. When a
// job finds none left, and the move began long enough ago that no request
// of an earlier version can still be writing (an instance of one serves a
// request for 10 minutes at most), it records the move over, and the feeds
// run their own queries alone.

// ReorderPath is where the move's jobs are sent.
const ReorderPath = "/_tasks/reorder"

// reorderBatch is how many entities of each kind one job moves.
const reorderBatch = 100

// ReorderGrace is how long after the move begins a job may find none left
// and still not record it over: the longest request of an earlier
// version's instance still serving.
const ReorderGrace = 10 * time.Minute

// ReorderTask is the body of a job of the move.
type ReorderTask struct {
	Step int `json:"step"`
}

// StartReorder begins the move, unless it is over, as every instance does
// when it starts: it records the move begun (over at once in a database
// with no people, which no earlier version has written) and enqueues the
// first job, which is named, so many instances enqueue one.
func (s *Service) StartReorder(ctx context.Context) error {
	key := order.RecordKey(s.db)
	var r order.Record
	ok, err := s.db.Get(ctx, key, &r)
	if err != nil {
		return fmt.Errorf("activities.StartReorder: %w", err)
	}
	if !ok {
		nobody, err := accounts.Nobody(ctx, s.db)
		if err != nil {
			return fmt.Errorf("activities.StartReorder: %w", err)
		}
		now := s.now().UTC()
		r = order.Record{Started: now}
		if nobody {
			r.Done = now
		}
		err = s.db.Update(ctx, func(tx *store.Tx) error {
			var cur order.Record
			if ok, err := tx.Get(key, &cur); err != nil || ok {
				r = cur
				return err
			}
			return tx.Put(key, &r)
		})
		if err != nil {
			return fmt.Errorf("activities.StartReorder: %w", err)
		}
	}
	over := !r.Done.IsZero()
	s.cfg.Upgrade.Set(over)
	if over {
		return nil
	}
	return s.enqueueReorder(ctx, ReorderTask{}, 0)
}

func (s *Service) enqueueReorder(ctx context.Context, t ReorderTask, delay time.Duration) error {
	body, _ := json.Marshal(t)
	return s.queue.Enqueue(ctx, queue.Task{Queue: s.cfg.CleanupQueue, Path: ReorderPath, Body: body,
		Name: fmt.Sprintf("reorder-%d", t.Step), Delay: delay})
}

// Reorder runs one job of the move: it moves a batch of each kind (and,
// through Config.Reorder, of notifications), then enqueues the next job,
// at once if it moved any, else when the grace is over; or records the
// move over. It returns how many it moved, and can run any number of
// times.
func (s *Service) Reorder(ctx context.Context, t ReorderTask) (int, error) {
	moved := 0
	for _, kind := range []string{KindActivity, KindAudience} {
		n, err := s.reorderKind(ctx, kind)
		moved += n
		if err != nil {
			return moved, fmt.Errorf("activities.Reorder(%d): %w", t.Step, err)
		}
	}
	if s.cfg.Reorder != nil {
		n, err := s.cfg.Reorder(ctx, reorderBatch)
		moved += n
		if err != nil {
			return moved, fmt.Errorf("activities.Reorder(%d): %w", t.Step, err)
		}
	}
	next := ReorderTask{Step: t.Step + 1}
	if moved > 0 {
		return moved, s.enqueueReorder(ctx, next, 0)
	}
	key := order.RecordKey(s.db)
	var r order.Record
	if _, err := s.db.Get(ctx, key, &r); err != nil {
		return 0, fmt.Errorf("activities.Reorder(%d): %w", t.Step, err)
	}
	if !r.Done.IsZero() {
		return 0, nil
	}
	if wait := r.Started.Add(ReorderGrace).Sub(s.now()); wait > 0 {
		return 0, s.enqueueReorder(ctx, next, wait)
	}
	r.Done = s.now().UTC()
	if err := s.db.Put(ctx, key, &r); err != nil {
		return 0, fmt.Errorf("activities.Reorder(%d): %w", t.Step, err)
	}
	s.cfg.Upgrade.Set(true)
	return 0, nil
}

// reorderKind moves up to reorderBatch entities of kind.
func (s *Service) reorderKind(ctx context.Context, kind string) (int, error) {
	return order.Rewrite(ctx, s.db, kind, reorderBatch, func() any {
		if kind == KindActivity {
			return &Activity{}
		}
		return &Audience{}
	})
}
