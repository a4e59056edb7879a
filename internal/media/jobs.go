package media

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/queue"
	"socialstream/internal/store"
)

// Job is the media jobs: collections, a deleted album's items, the
// fetches of pictures from elsewhere and their end, and (in a queue of
// their own, which a deployment may send to a service of its own) the
// uploads made safe off the request (later.go).
var Job = queue.Job[Task]{Name: "media", Queue: queue.Cleanup, TaskName: Task.name, QueueOf: func(t Task) string {
	if t.Op == OpProcess {
		return queue.Pictures
	}
	return ""
}}

// The jobs' operations.
const (
	// OpCollect deletes an item's objects unless its record holds them:
	// an item on an activity, in an album, or loose for less than
	// LooseFor. A loose item older than that goes with them. Enqueued by
	// a delete (Deleted), it waits for the delete to commit instead.
	OpCollect = "collect"
	// OpAlbum deletes the items of a deleted album.
	OpAlbum = "album"
	// OpFetch fetches the bytes of a picture from elsewhere (remote.go).
	OpFetch = "fetch"
	// OpUncache deletes them RemoteCacheFor after their fetch.
	OpUncache = "uncache"
	// OpProcess makes an upload safe (UploadLater).
	OpProcess = "process"
)

// Task is the body of a media job.
type Task struct {
	Op string `json:"op"`
	ID string `json:"id"` // the item's or the album's
	// Deleted says the item's delete enqueued it.
	Deleted bool  `json:"deleted,omitempty"`
	At      int64 `json:"at,omitempty"` // when it was enqueued, µs
	// Cached is, for OpUncache, when the bytes it deletes were fetched.
	Cached int64 `json:"cached,omitempty"`
}

// name names the task: an upload's collection by the item alone; a
// delete's job by its time too, so that a delete tried again after one
// that failed has a job of its own (the first may have given up).
func (t Task) name() string {
	n := "media-" + t.Op + "-" + t.ID
	switch {
	case t.Deleted || t.Op == OpAlbum:
		n += fmt.Sprintf("-deleted-%d", t.At)
	case t.Op == OpUncache:
		n += fmt.Sprintf("-%d", t.Cached)
	}
	return n
}

func (s *Service) enqueue(ctx context.Context, t Task, delay time.Duration) error {
	t.At = s.now().UnixMicro()
	return Job.Enqueue(ctx, s.queue, t, delay)
}

// ErrNotYet says a job came before the change it follows committed; the
// queue retries it.
var ErrNotYet = queue.NotYet("the album's deletion")

// Run runs one media job and says what it did, for its log line.
func (s *Service) Run(ctx context.Context, t Task) (string, error) {
	if !ValidID(t.ID) {
		return "malformed task", nil
	}
	switch t.Op {
	case OpCollect:
		if t.Deleted {
			return s.collectDeleted(ctx, t)
		}
		return s.collect(ctx, t.ID)
	case OpAlbum:
		var a Album
		ok, err := s.db.Get(ctx, AlbumKey(s.db, t.ID), &a)
		if err != nil {
			return "", err
		}
		if ok {
			if s.now().Sub(time.UnixMicro(t.At)) < queue.GiveUpOf(s.queue) {
				return "", ErrNotYet
			}
			return "the album was never deleted", nil
		}
		n, err := s.deleteWhere(ctx, "albumId", t.ID, 1<<30)
		return fmt.Sprintf("%d items of the album deleted", n), err
	case OpFetch:
		return s.fetchJob(ctx, t)
	case OpUncache:
		return s.uncache(ctx, t)
	case OpProcess:
		return s.processJob(ctx, t)
	}
	return "malformed task", nil
}

// collect deletes an item's objects, and a loose one's record once it has
// been loose for LooseFor, unless the record holds them.
// CollectLoose collects up to n items left loose for longer than LooseFor
// and an hour, whose upload's own collection (enqueued with the upload,
// to run a day later) gave up, and returns how many it collected. The
// scheduled work (cron.yaml) runs it every hour.
func (s *Service) CollectLoose(ctx context.Context, n int) (int, error) {
	before := s.now().Add(-LooseFor - time.Hour).UnixMicro()
	keys, err := s.db.GetAll(ctx, s.db.Query(KindItem).FilterField("loose", "<", before).KeysOnly().Limit(n), nil)
	if err != nil {
		return 0, fmt.Errorf("media.CollectLoose: %w", err)
	}
	done := 0
	for _, k := range keys {
		what, err := s.collect(ctx, k.Name)
		if err != nil {
			return done, fmt.Errorf("media.CollectLoose: %w", err)
		}
		if what == "collected" {
			done++
		}
	}
	return done, nil
}

func (s *Service) collect(ctx context.Context, id string) (string, error) {
	var drop bool
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		var it Item
		ok, err := tx.Get(ItemKey(s.db, id), &it)
		if err != nil {
			return err
		}
		switch {
		case !ok:
			drop = true // never stored, or deleted
		case it.loose() && s.now().Sub(it.Created) >= LooseFor:
			drop = true
			return tx.Delete(ItemKey(s.db, id))
		default:
			drop = false
		}
		return nil
	})
	if err != nil || !drop {
		return "kept", err
	}
	if err := s.deleteObjects(ctx, id); err != nil {
		return "", err
	}
	return "collected", nil
}

// collectDeleted deletes the objects of an item once its delete has
// committed.
func (s *Service) collectDeleted(ctx context.Context, t Task) (string, error) {
	found, err := s.db.Get(ctx, ItemKey(s.db, t.ID), &Item{})
	switch {
	case err != nil:
		return "", err
	case found && s.now().Sub(time.UnixMicro(t.At)) < queue.GiveUpOf(s.queue):
		return "", errDeleteNotYet
	case found:
		return "the item was never deleted", nil
	}
	if err := s.deleteObjects(ctx, t.ID); err != nil {
		return "", err
	}
	return "collected", nil
}

var errDeleteNotYet = queue.NotYet("the media item's deletion")

// deleteWhere deletes up to n items whose field is value, objects first,
// and returns how many.
func (s *Service) deleteWhere(ctx context.Context, field, value string, n int) (int, error) {
	q := s.db.Query(KindItem).FilterField(field, "=", value).KeysOnly()
	return s.db.Drain(ctx, q, n, 100, func(keys []*datastore.Key) error {
		var errs []error
		for _, k := range keys {
			errs = append(errs, s.deleteObjects(ctx, k.Name))
		}
		if err := errors.Join(errs...); err != nil {
			return err
		}
		return s.db.DeleteMulti(ctx, keys)
	})
}

// ForgetActivity deletes the pictures of a deleted activity, for its
// cleanup job (activities.Config.Forget).
func (s *Service) ForgetActivity(ctx context.Context, activity string) (int, error) {
	n, err := s.deleteWhere(ctx, "activityId", activity, 1<<30)
	if err != nil {
		return n, fmt.Errorf("media.ForgetActivity(%s): %w", activity, err)
	}
	return n, nil
}

// Erase deletes up to n of a deleted account's items, objects first, then
// its albums, and returns how many it deleted: a phase of its erasure.
func (s *Service) Erase(ctx context.Context, user string, n int) (int, error) {
	done, err := s.deleteWhere(ctx, "userId", user, n)
	if err != nil || done >= n {
		return done, err
	}
	albums, err := s.db.DeleteWhere(ctx, KindAlbum, []string{"userId"}, user, n-done)
	return done + albums, err
}

// EachItem calls f with the view of each of user's items, for an export:
// its links work for LinkLife. Those on an activity hidden says the person
// may not read (one moderation removed) are left out.
func (s *Service) EachItem(ctx context.Context, user string, hidden func(activity string) bool, f func(View) error) error {
	m, err := s.Links.Minter(ctx)
	if err != nil {
		return err
	}
	return store.Each(ctx, s.db, s.db.Query(KindItem).FilterField("userId", "=", user), 200, func(k *datastore.Key, it *Item) error {
		if it.ActivityID != "" && hidden(it.ActivityID) {
			return nil // on an activity the person may not read (removed)
		}
		it.ID = k.Name
		return f(m.Item(it))
	})
}

// EachAlbum calls f with the view of each of user's albums, for an export.
func (s *Service) EachAlbum(ctx context.Context, user string, f func(AlbumView) error) error {
	m, err := s.Links.Minter(ctx)
	if err != nil {
		return err
	}
	return store.Each(ctx, s.db, s.db.Query(KindAlbum).FilterField("userId", "=", user), 200, func(k *datastore.Key, a *Album) error {
		return f(m.Album(k.Name, a))
	})
}
