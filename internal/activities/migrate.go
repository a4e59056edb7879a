package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/queue"
	"socialstream/internal/store"
)

// Activities of earlier versions have no visibility: the feeds that find
// what may be seen by a query on visibleTo (@all, a person's page read by
// someone else) would leave them out. The visibility migration makes them
// public, as they were: a chain of jobs pages through every activity by
// key and gives each that has none its visibility and visibleTo, then
// records that it is done (Migration/visibility), so an instance that
// starts later enqueues nothing.

// KindMigration is the kind of the records of finished migrations.
const KindMigration = "Migration"

// MigratePath is where migration jobs are sent.
const MigratePath = "/_tasks/migrate"

// migrateBatch is how many activities one migration job looks at.
const migrateBatch = 500

// MigrateTask is the body of a migration job.
type MigrateTask struct {
	Step   int    `json:"step"`
	Cursor string `json:"cursor,omitempty"` // where the query goes on
}

type migration struct {
	Done time.Time `datastore:"done,noindex"`
}

func migrationKey(db *store.DB) *datastore.Key { return db.NameKey(KindMigration, "visibility", nil) }

// StartMigration enqueues the first job of the visibility migration,
// unless it is done. Every instance calls it as it starts: the job is
// named, so they enqueue it once.
func (s *Service) StartMigration(ctx context.Context) error {
	ok, err := s.db.Get(ctx, migrationKey(s.db), &migration{})
	if err != nil || ok {
		return err
	}
	return s.enqueueMigrate(ctx, MigrateTask{})
}

func (s *Service) enqueueMigrate(ctx context.Context, t MigrateTask) error {
	body, _ := json.Marshal(t)
	return s.queue.Enqueue(ctx, queue.Task{Queue: s.cfg.CleanupQueue, Path: MigratePath, Body: body,
		Name: fmt.Sprintf("migrate-visibility-%d", t.Step)})
}

// Migrate runs one job of the visibility migration: it makes public the
// activities of its batch that have no visibility, and enqueues the next
// job, or records that the migration is done. It returns how many it
// changed. It can run any number of times.
func (s *Service) Migrate(ctx context.Context, t MigrateTask) (int, error) {
	q := s.db.Query(KindActivity).KeysOnly()
	keys, next, err := s.db.KeysFrom(ctx, q, t.Cursor, migrateBatch)
	if err != nil {
		return 0, fmt.Errorf("activities.Migrate(%d): %w", t.Step, err)
	}
	changed := 0
	for start := 0; start < len(keys); start += eraseBatch {
		batch := keys[start:min(start+eraseBatch, len(keys))]
		var ids []string
		err := s.db.Update(ctx, func(tx *store.Tx) error {
			var err error
			ids, err = editActivities(tx, batch, func(_ *datastore.Key, a *Activity) bool {
				if a.Visibility != "" {
					return false
				}
				a.Visibility, a.VisibleTo = Public, visibleTo(Public)
				return true
			})
			return err
		})
		if err != nil {
			return changed, fmt.Errorf("activities.Migrate(%d): %w", t.Step, err)
		}
		changed += len(ids)
	}
	if next != "" && len(keys) == migrateBatch {
		return changed, s.enqueueMigrate(ctx, MigrateTask{Step: t.Step + 1, Cursor: next})
	}
	return changed, s.db.Put(ctx, migrationKey(s.db), &migration{Done: s.now().UTC()})
}
