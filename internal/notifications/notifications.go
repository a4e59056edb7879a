// Package notifications tells users what happened to them: mentions,
// follows, comments, likes and joins of their groups.
//
// Requests never wait for notifications: they describe the Event and a
// job on the notifications queue makes the Notification entities. Each is
// keyed by its recipient and the event (Notification/{userId}_{event}), so
// a job that runs twice makes nothing twice, and liking again after an
// unlike notifies no one twice. A user keeps the newest MaxKept; the job
// prunes older ones.
package notifications

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/accounts"
	"socialstream/internal/derrors"
	"socialstream/internal/ids"
	"socialstream/internal/queue"
	"socialstream/internal/store"
)

// Kind of the entities this package owns.
const Kind = "Notification"

// Types of notification.
const (
	Mention   = "mention"
	Follow    = "follow"
	Comment   = "comment"
	Like      = "like"
	GroupJoin = "group_join"
)

// MaxKept is how many notifications a user keeps.
const MaxKept = 200

// MaxReadIDs bounds the ids of one mark-read call.
const MaxReadIDs = 200

// Path is where notification jobs are sent.
const Path = "/_tasks/notify"

// Event is something that notifies people: the body of a job.
type Event struct {
	Type       string   `json:"type"`
	ActorID    string   `json:"actorId"`
	Recipients []string `json:"recipients"`
	ActivityID string   `json:"activityId,omitempty"`
	GroupID    string   `json:"groupId,omitempty"`
	// ID names the event uniquely, e.g. "comment-123"; letters, digits,
	// - and _ only.
	ID string `json:"id"`
	// Seq orders the event among a user's notifications: minted when it
	// is enqueued, so jobs that run in another order keep the order of
	// the events. Zero (an event from an older version) is minted when
	// the job runs.
	Seq int64 `json:"seq,omitempty"`
}

// Notification is the stored notification.
type Notification struct {
	UserID     string    `datastore:"userId"`
	Seq        int64     `datastore:"seq"`
	Read       bool      `datastore:"read"`
	Type       string    `datastore:"type,noindex"`
	ActorID    string    `datastore:"actorId,noindex"`
	ActivityID string    `datastore:"activityId"` // indexed: deleting an activity deletes its notifications
	GroupID    string    `datastore:"groupId,noindex"`
	Published  time.Time `datastore:"published,noindex"`
}

// View is a notification as the API shows it.
type View struct {
	ID         string           `json:"id"`
	Type       string           `json:"type"`
	Actor      *accounts.Person `json:"actor,omitempty"`
	ActivityID string           `json:"activityId,omitempty"`
	GroupID    string           `json:"groupId,omitempty"`
	Published  string           `json:"published"`
	Read       bool             `json:"read"`
}

// Config tunes a Service.
type Config struct {
	Queue string // default "notifications"
	// ActivityExists, when set, tells whether an activity exists, in the
	// transaction that writes notifications about it: none is made about
	// an activity deleted already, whose cleanup may be over.
	ActivityExists func(tx *datastore.Transaction, id string) (bool, error)
}

// Service makes and lists notifications.
type Service struct {
	db    *store.DB
	ids   *ids.Generator
	acc   *accounts.Service
	queue queue.Queue
	cfg   Config
	now   func() time.Time
}

// New returns a Service.
func New(db *store.DB, gen *ids.Generator, acc *accounts.Service, q queue.Queue, cfg Config) (*Service, error) {
	if db == nil || gen == nil || acc == nil || q == nil {
		return nil, errors.New("notifications.New: nil dependency")
	}
	if cfg.Queue == "" {
		cfg.Queue = "notifications"
	}
	return &Service{db: db, ids: gen, acc: acc, queue: q, cfg: cfg, now: time.Now}, nil
}

var eventID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,400}$`)

// Notify enqueues the job that makes an event's notifications. Nobody is
// notified of their own doing.
func (s *Service) Notify(ctx context.Context, e Event) error {
	e.Recipients = slices.DeleteFunc(slices.Clone(e.Recipients), func(r string) bool { return r == e.ActorID || r == "" })
	if len(e.Recipients) == 0 {
		return nil
	}
	if !eventID.MatchString(e.ID) {
		return fmt.Errorf("notifications.Notify: bad event id %q", e.ID)
	}
	if e.Seq == 0 {
		e.Seq = s.ids.Next()
	}
	body, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return s.queue.Enqueue(ctx, queue.Task{Queue: s.cfg.Queue, Path: Path, Body: body, Name: "n-" + e.ID})
}

// Key returns the key of a recipient's notification of an event.
func Key(db *store.DB, user, event string) *datastore.Key {
	return db.NameKey(Kind, user+"_"+event, nil)
}

// Run makes the notifications of an event that do not exist yet, and prunes
// each recipient's oldest beyond MaxKept. It returns how many it made.
func (s *Service) Run(ctx context.Context, e Event) (int, error) {
	if !eventID.MatchString(e.ID) || e.Type == "" {
		return 0, nil // malformed: nothing to do, ever
	}
	var keys []*datastore.Key
	var recipients []string
	for _, r := range e.Recipients {
		if r != e.ActorID && r != "" && !slices.Contains(recipients, r) {
			recipients = append(recipients, r)
			keys = append(keys, Key(s.db, r, e.ID))
		}
	}
	seq := e.Seq
	if seq <= 0 {
		seq = s.ids.Next()
	}
	made := 0
	for start := 0; start < len(keys); start += 250 {
		part := keys[start:min(start+250, len(keys))]
		users := recipients[start:min(start+250, len(keys))]
		err := s.db.RunInTransaction(ctx, func(tx *datastore.Transaction) error {
			made = 0
			if e.ActivityID != "" && s.cfg.ActivityExists != nil {
				if ok, err := s.cfg.ActivityExists(tx, e.ActivityID); err != nil || !ok {
					return err // deleted: nothing to tell
				}
			}
			dst := make([]Notification, len(part))
			err := tx.GetMulti(part, dst)
			missing, ok := store.IsMissing(err, len(part))
			if !ok {
				return err
			}
			var putKeys []*datastore.Key
			var putVals []*Notification
			for i, k := range part {
				if missing[i] {
					putKeys = append(putKeys, k)
					putVals = append(putVals, &Notification{
						UserID: users[i], Seq: seq, Type: e.Type, ActorID: e.ActorID,
						ActivityID: e.ActivityID, GroupID: e.GroupID, Published: ids.Time(seq).UTC(),
					})
				}
			}
			if len(putKeys) == 0 {
				return nil
			}
			_, err = tx.PutMulti(putKeys, putVals)
			made = len(putKeys)
			return err
		})
		if err != nil {
			return made, fmt.Errorf("notifications.Run(%s): %w", e.ID, err)
		}
	}
	for _, r := range recipients {
		if err := s.prune(ctx, r); err != nil {
			return made, err
		}
	}
	return made, nil
}

// ForgetActivity deletes every notification that points at an activity,
// once it is deleted, and returns how many it deleted.
func (s *Service) ForgetActivity(ctx context.Context, activity string) (int, error) {
	q := s.db.Query(Kind).FilterField("activityId", "=", activity).KeysOnly().Limit(500)
	n := 0
	for {
		keys, err := s.db.Client.GetAll(ctx, q, nil)
		if err == nil && len(keys) > 0 {
			err = s.db.Client.DeleteMulti(ctx, keys)
		}
		if err != nil {
			return n, fmt.Errorf("notifications.ForgetActivity(%s): %w", activity, store.Convert(err))
		}
		if len(keys) == 0 {
			return n, nil
		}
		n += len(keys)
	}
}

func (s *Service) prune(ctx context.Context, user string) error {
	q := s.db.Query(Kind).FilterField("userId", "=", user).Order("-seq").Offset(MaxKept).KeysOnly()
	keys, err := s.db.Client.GetAll(ctx, q, nil)
	if err != nil {
		return fmt.Errorf("notifications.prune(%s): %w", user, store.Convert(err))
	}
	for len(keys) > 0 {
		n := min(len(keys), 500)
		if err := s.db.Client.DeleteMulti(ctx, keys[:n]); err != nil {
			return fmt.Errorf("notifications.prune(%s): %w", user, store.Convert(err))
		}
		keys = keys[n:]
	}
	return nil
}

// List returns a page of user's notifications, newest first, and how many
// are unread.
func (s *Service) List(ctx context.Context, user string, p store.PageRequest) ([]View, int64, string, error) {
	q := s.db.Query(Kind).FilterField("userId", "=", user).Order("-seq")
	keys, vals, next, err := store.Page[Notification](ctx, s.db, q, "notifications:"+user, p)
	if err != nil {
		return nil, 0, "", err
	}
	unread, err := s.unread(ctx, user)
	if err != nil {
		return nil, 0, "", err
	}
	var actors []string
	for _, n := range vals {
		actors = append(actors, n.ActorID)
	}
	people, err := s.acc.GetMulti(ctx, actors)
	if err != nil {
		return nil, 0, "", err
	}
	out := make([]View, len(vals))
	for i, n := range vals {
		v := View{ID: keys[i].Name, Type: n.Type, ActivityID: n.ActivityID, GroupID: n.GroupID,
			Published: n.Published.UTC().Format(time.RFC3339), Read: n.Read}
		if a, ok := people[n.ActorID]; ok {
			v.Actor = &a
		}
		out[i] = v
	}
	return out, unread, next, nil
}

func (s *Service) unread(ctx context.Context, user string) (int64, error) {
	// At most MaxKept, so counting the keys is cheap and needs no
	// aggregation index.
	keys, err := s.db.Client.GetAll(ctx, s.db.Query(Kind).FilterField("userId", "=", user).FilterField("read", "=", false).KeysOnly(), nil)
	if err != nil {
		return 0, fmt.Errorf("notifications.unread(%s): %w", user, store.Convert(err))
	}
	return int64(len(keys)), nil
}

// MarkRead marks user's notifications read: those with the given ids, or
// all of them. Ids of other users' notifications are ignored.
func (s *Service) MarkRead(ctx context.Context, user string, idList []string, all bool) error {
	var keys []*datastore.Key
	switch {
	case all && len(idList) > 0:
		return derrors.New(derrors.InvalidArgument, `give "ids" or "all", not both`)
	case all:
		var err error
		keys, err = s.db.Client.GetAll(ctx, s.db.Query(Kind).FilterField("userId", "=", user).FilterField("read", "=", false).KeysOnly(), nil)
		if err != nil {
			return fmt.Errorf("notifications.MarkRead: %w", store.Convert(err))
		}
	case len(idList) == 0:
		return derrors.New(derrors.InvalidArgument, `give "ids" (a non-empty list) or "all": true`)
	case len(idList) > MaxReadIDs:
		return derrors.New(derrors.InvalidArgument, fmt.Sprintf("at most %d ids at once", MaxReadIDs))
	default:
		for _, id := range idList {
			if !strings.HasPrefix(id, user+"_") || len(id) > 500 {
				continue // not the caller's
			}
			keys = append(keys, s.db.NameKey(Kind, id, nil))
		}
	}
	for start := 0; start < len(keys); start += 250 {
		part := keys[start:min(start+250, len(keys))]
		err := s.db.RunInTransaction(ctx, func(tx *datastore.Transaction) error {
			dst := make([]Notification, len(part))
			err := tx.GetMulti(part, dst)
			missing, ok := store.IsMissing(err, len(part))
			if !ok {
				return err
			}
			var putKeys []*datastore.Key
			var putVals []*Notification
			for i := range dst {
				if !missing[i] && !dst[i].Read && dst[i].UserID == user {
					dst[i].Read = true
					putKeys, putVals = append(putKeys, part[i]), append(putVals, &dst[i])
				}
			}
			if len(putKeys) == 0 {
				return nil
			}
			_, err = tx.PutMulti(putKeys, putVals)
			return err
		})
		if err != nil {
			return fmt.Errorf("notifications.MarkRead: %w", err)
		}
	}
	return nil
}
