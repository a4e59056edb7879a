package activities

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/ids"
	"socialstream/internal/order"
	"socialstream/internal/queue"
)

// Retention of the home feed's copies.
//
// An activity's audience chunks are what put it in its readers' home
// feeds, and they are nearly all of what a post stores: three index
// entries per reader. With a retention R set, a home feed reaches back R
// and no further: its edge, HomeEdge, is the least seq of an activity
// posted R ago. The feed ends there (nothing older is shown, though a
// chunk not trimmed yet is still stored), the trim job deletes the chunks
// of every activity past it, and no job writes a chunk past it again:
// neither a late fan-out or tag job nor a follow's copies and backfill.
// (An edit of an older mentioned-only post rewrites its chunk of the
// mentioned, which the feed does not show and the next trim deletes.)
// Everything else stays: the activity itself, on its author's page
// (@self), in @mentions, group, tag and @all feeds, which are its own
// properties and not copies.

// HomeEdge returns the least seq a home feed shows at now when it reaches
// back retention, or 0 when it reaches back for ever (retention 0).
func HomeEdge(retention time.Duration, now time.Time) int64 {
	if retention <= 0 {
		return 0
	}
	return ids.First(now.Add(-retention))
}

func (s *Service) homeEdge() int64 { return HomeEdge(s.cfg.HomeRetention, s.now()) }

// TrimTask is the body of a trim job: the hour the schedule started it
// in, which names it (empty: a later step, unnamed).
type TrimTask struct {
	Hour string `json:"hour,omitempty"`
}

// TrimJob deletes the audience chunks past the home feed's edge.
var TrimJob = queue.Job[TrimTask]{Name: "trim", Queue: queue.Cleanup, TaskName: func(t TrimTask) string {
	if t.Hour == "" {
		return ""
	}
	return "audience-trim-" + t.Hour
}}

const trimBatch = 500

// StartTrim enqueues the trim job, under the hour's name (so a schedule
// that calls twice in an hour enqueues one). The scheduled work
// (cron.yaml) calls it every hour; with no retention it does nothing.
func (s *Service) StartTrim(ctx context.Context) error {
	if s.cfg.HomeRetention <= 0 {
		return nil
	}
	if err := TrimJob.Enqueue(ctx, s.queue, TrimTask{Hour: s.now().UTC().Format("2006010215")}, 0); err != nil {
		return fmt.Errorf("activities.StartTrim: %w", err)
	}
	return nil
}

// Trim deletes up to trimBatch audience chunks of activities past the home
// feed's edge, and enqueues itself again when there may be more. It
// returns how many it deleted. With no retention it deletes nothing.
// Deleting a chunk is safe against every writer of one: a job that
// appends or removes a follower fails its commit on a chunk gone since
// its query, retries and no longer finds it, and none writes one past the
// edge.
func (s *Service) Trim(ctx context.Context) (int, error) {
	edge := s.homeEdge()
	if edge == 0 {
		return 0, nil
	}
	// Each shard's range below the edge.
	var keys []*datastore.Key
	var err error
	for shard := 0; shard < TrimShards && err == nil && len(keys) < trimBatch; shard++ {
		var ks []*datastore.Key
		q := s.db.Query(KindAudience).FilterField(trimProp, "<", order.Value(strconv.Itoa(shard), edge)).
			FilterField(trimProp, ">", strconv.Itoa(shard)+"/").KeysOnly().Limit(trimBatch - len(keys))
		ks, err = s.db.GetAll(ctx, q, nil)
		keys = append(keys, ks...)
	}
	if err == nil {
		err = s.db.DeleteMulti(ctx, keys)
	}
	if err != nil {
		return 0, fmt.Errorf("activities.Trim: %w", err)
	}
	if len(keys) == trimBatch {
		if err := TrimJob.Enqueue(ctx, s.queue, TrimTask{}, 0); err != nil {
			return len(keys), fmt.Errorf("activities.Trim: next: %w", err)
		}
	}
	return len(keys), nil
}
