package notifications_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"cloud.google.com/go/datastore"
	"golang.org/x/crypto/bcrypt"

	"socialstream/internal/accounts"
	"socialstream/internal/blocks"
	"socialstream/internal/ids"
	"socialstream/internal/notifications"
	"socialstream/internal/policy"
	"socialstream/internal/queue"
	"socialstream/internal/store"
	"socialstream/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

type nopQueue struct{}

func (nopQueue) Enqueue(context.Context, queue.Task) error { return nil }

func TestKeepsNewest200AndRunsOnce(t *testing.T) {
	ctx := context.Background()
	_, svc := newService(t, ids.New(), nopQueue{}, notifications.Config{})
	const user, total = "1001", notifications.MaxKept + 7
	gen := ids.New()
	for i := 0; i < total; i++ {
		e := notifications.Event{Type: notifications.Like, ActorID: "2002", Recipients: []string{user, "2002"}, ActivityID: fmt.Sprint(5000 + i), ID: fmt.Sprint("like-", i), Seq: gen.Next()}
		made, err := svc.Run(ctx, e)
		if err != nil || made != 1 {
			t.Fatalf("Run %d: made %d, %v (the actor is never notified)", i, made, err)
		}
		if i == 0 {
			if again, err := svc.Run(ctx, e); err != nil || again != 0 {
				t.Fatalf("running an event twice made %d more, %v", again, err)
			}
		}
	}
	var got []string
	p := store.PageRequest{Count: 100}
	for {
		list, unread, next, err := svc.List(ctx, user, notifications.Query{Page: p})
		if err != nil {
			t.Fatal(err)
		}
		if unread != notifications.MaxKept {
			t.Fatalf("unread = %d, want %d", unread, notifications.MaxKept)
		}
		for _, v := range list {
			got = append(got, v.ActivityID)
		}
		if next == "" {
			break
		}
		p.Cursor = next
	}
	if len(got) != notifications.MaxKept {
		t.Fatalf("kept %d, want %d", len(got), notifications.MaxKept)
	}
	if got[0] != fmt.Sprint(5000+total-1) || got[len(got)-1] != fmt.Sprint(5000+total-notifications.MaxKept) {
		t.Errorf("kept %s..%s, want the newest", got[0], got[len(got)-1])
	}
}

// capture keeps the events it is given.
type capture struct{ bodies [][]byte }

func (c *capture) Enqueue(_ context.Context, t queue.Task) error {
	c.bodies = append(c.bodies, t.Body)
	return nil
}

// A user's notifications are in the order of their events, whatever order
// their jobs run in. They used to be in the order the jobs ran.
func TestOrderOfEventsNotOfJobs(t *testing.T) {
	ctx := context.Background()
	q := &capture{}
	_, svc := newService(t, ids.New(), q, notifications.Config{})
	const user = "1001"
	for _, id := range []string{"comment-1", "like-2"} {
		if err := svc.Notify(ctx, notifications.Event{Type: notifications.Like, ActorID: "2002", Recipients: []string{user}, ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	for i := len(q.bodies) - 1; i >= 0; i-- { // the later event's job first
		var e notifications.Event
		if err := json.Unmarshal(q.bodies[i], &e); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Run(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	list, _, _, err := svc.List(ctx, user, notifications.Query{Page: store.PageRequest{Count: 10}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range list {
		got = append(got, v.ID)
	}
	if want := []string{user + "_like-2", user + "_comment-1"}; !slices.Equal(got, want) {
		t.Errorf("notifications = %v, want %v (newest event first)", got, want)
	}
}

// No notification is made about an activity that no longer exists: its
// cleanup may be over already.
func TestNothingAboutADeletedActivity(t *testing.T) {
	ctx := context.Background()
	// 4 is read as there, and deleted before the job's commit.
	exists := map[string]bool{"1": true, "4": true}
	gen := ids.New()
	var db *store.DB
	db, svc := newService(t, gen, nopQueue{}, notifications.Config{
		Activities: mentions(func(_ context.Context, id string) (*datastore.Key, bool, []string, int, error) {
			return db.NameKey("Activity", id, nil), exists[id], []string{"1001"}, 0, nil
		}),
		GiveUpAfter: time.Minute,
	})
	if err := db.Put(ctx, db.NameKey("Activity", "1", nil), &struct{ N int }{1}); err != nil {
		t.Fatal(err)
	}
	long := ids.NewNode(1, func() time.Time { return time.Now().Add(-2 * time.Minute) }).Next()
	for _, c := range []struct {
		name     string
		activity string
		seq      int64 // when the event was enqueued
		edit     int   // the edit whose mentions it tells of
		want     int
		wantErr  error
	}{
		{"an edit not committed yet: retry", "1", gen.Next(), 1, 0, notifications.ErrNotYet},
		{"exists", "1", gen.Next(), 0, 1, nil},
		{"not committed yet: retry", "2", gen.Next(), 0, 0, notifications.ErrNotYet},
		{"never committed, or deleted", "3", long, 0, 0, nil},
		{"deleted before the commit", "4", gen.Next(), 0, 0, nil},
	} {
		e := notifications.Event{Type: notifications.Mention, ActorID: "2002", Recipients: []string{"1001"}, ActivityID: c.activity,
			ID: "mention-" + c.activity, Seq: c.seq, Edit: c.edit}
		if made, err := svc.Run(ctx, e); !errors.Is(err, c.wantErr) || made != c.want {
			t.Errorf("%s: made %d, %v; want %d, %v", c.name, made, err, c.want, c.wantErr)
		}
		if ok, err := db.Get(ctx, notifications.Key(db, "1001", e.ID), &notifications.Notification{}); err != nil || ok != (c.want == 1) {
			t.Errorf("%s: notification stored %v, %v; want %v", c.name, ok, err, c.want == 1)
		}
	}
}

// An operation's notification is written in its own transaction: none
// when it does not commit, one when it does, never two.
func TestPreparedNotificationsCommitWithTheirChange(t *testing.T) {
	ctx := context.Background()
	q := &capture{}
	db, svc := newService(t, ids.New(), q, notifications.Config{})
	e := notifications.Event{Type: notifications.Follow, ActorID: "2002", Recipients: []string{"1001", "2002"}, ID: "follow-2002-1001-1"}
	if err := svc.Expect(ctx, e); err != nil || len(q.bodies) != 1 {
		t.Fatalf("Expect: %v, %d pruning jobs; want 1 (the actor is never notified)", err, len(q.bodies))
	}
	write := func(commit bool) (int, error) {
		var made int
		errAbort := errors.New("abort")
		err := db.Update(ctx, func(tx *store.Tx) error {
			l := tx.Lookup()
			p := svc.Prepare(l, e)
			if err := l.Run(ctx); err != nil {
				return err
			}
			var err error
			if made, err = p.Write(tx); err != nil || commit {
				return err
			}
			return errAbort
		})
		if errors.Is(err, errAbort) {
			err = nil
		}
		return made, err
	}
	count := func() int {
		_, unread, _, err := svc.List(ctx, "1001", notifications.Query{Page: store.PageRequest{Count: 10}})
		if err != nil {
			t.Fatal(err)
		}
		return int(unread)
	}
	if _, err := write(false); err != nil || count() != 0 {
		t.Fatalf("a change that did not commit notified: %v, %d", err, count())
	}
	for i := 0; i < 2; i++ {
		if made, err := write(true); err != nil || made != 1-i || count() != 1 {
			t.Fatalf("commit %d: made %d, %v, %d notifications; want %d, 1", i, made, err, count(), 1-i)
		}
	}
}

// newService returns a service over a fresh namespace.
func newService(t *testing.T, gen *ids.Generator, q queue.Queue, cfg notifications.Config) (*store.DB, *notifications.Service) {
	t.Helper()
	db := testenv.DB(t)
	acc := accountsOn(t, db)
	svc, err := notifications.New(db, gen, acc, q, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The people the tests notify: nobody who does not exist is.
	for _, id := range []string{"1001", "2002", "3003"} {
		person(t, db, id)
	}
	return db, svc
}

// accountsOn returns the accounts service over db, with the cheapest
// password hashes. (The tests of this package build no other service:
// one that imports notifications would be compiled again for them.)
func accountsOn(t *testing.T, db *store.DB) *accounts.Service {
	t.Helper()
	acc, err := accounts.New(db, ids.New(), accounts.Config{BcryptCost: bcrypt.MinCost})
	if err != nil {
		t.Fatal(err)
	}
	return acc
}

// person stores a person as registration does: the User and its card.
func person(t *testing.T, db *store.DB, id string) {
	t.Helper()
	u := &accounts.User{Username: "u" + id}
	if err := db.PutMulti(context.Background(), []*datastore.Key{accounts.UserKey(db, id), accounts.CountsKey(db, id)}, []any{u, accounts.Card(u, accounts.Counts{})}); err != nil {
		t.Fatal(err)
	}
}

// Nobody is notified who is gone, who blocks the actor or whom the actor
// blocks, nor of a mention the activity no longer makes; the others are.
func TestNotifiesOnlyWhomItMay(t *testing.T) {
	ctx := context.Background()
	db, svc := newService(t, ids.New(), nopQueue{}, notifications.Config{
		Activities: mentions(func(_ context.Context, id string) (*datastore.Key, bool, []string, int, error) {
			return nil, true, []string{"1001", "3003", "4004", "5005"}, 0, nil
		}),
	})
	for _, b := range []struct{ blocker, blocked string }{{"3003", "2002"}, {"2002", "5005"}} {
		if err := db.Update(ctx, func(tx *store.Tx) error { return blocks.Set(tx, b.blocker, b.blocked, time.Now()) }); err != nil {
			t.Fatal(err)
		}
	}
	person(t, db, "5005")
	// 1001 is mentioned; 3003 blocks the actor; 4004 does not exist; the
	// actor blocks 5005; 6006 is not mentioned (any more).
	e := notifications.Event{Type: notifications.Mention, ActorID: "2002", Recipients: []string{"1001", "3003", "4004", "5005", "6006"},
		ActivityID: "7", ID: "mention-7", Seq: ids.New().Next()}
	made, err := svc.Run(ctx, e)
	if err != nil || made != 1 {
		t.Fatalf("made %d, %v; want 1", made, err)
	}
	for _, u := range []string{"1001", "3003", "4004", "5005", "6006"} {
		ok, err := db.Get(ctx, notifications.Key(db, u, e.ID), &notifications.Notification{})
		if err != nil || ok != (u == "1001") {
			t.Errorf("%s notified: %v, %v", u, ok, err)
		}
	}
}

// mentions is what a job reads of an activity, as package activities'
// Records answer it: here, a function of the test's.
type mentions func(ctx context.Context, id string) (*datastore.Key, bool, []string, int, error)

func (f mentions) Mentioned(ctx context.Context, id string) (*datastore.Key, bool, []string, int, error) {
	return f(ctx, id)
}

func (mentions) Texts(context.Context, string, []string) (map[string][]string, error) {
	return nil, nil
}

// Posts weighs no post: the activities here are stand-ins of no shape.
func (mentions) Posts(*store.Lookup, []string) func() map[string]policy.Post { return nil }

// Each pruning window has a pruning job of its own, named apart from the
// next one's even when windows are shorter than a second (the bill's
// stack prunes every half second): two windows of one second once shared
// a name, so the second's pruning was taken for the first's.
func TestAPruningWindowHasItsOwnJob(t *testing.T) {
	ctx := context.Background()
	names := map[string]bool{}
	q := queueFunc(func(_ context.Context, task queue.Task) error {
		names[task.Name] = true
		return nil
	})
	_, svc := newService(t, ids.New(), q, notifications.Config{PruneWindow: 500 * time.Millisecond})
	// Two windows, ending at 10:00:00.000 and 10:00:00.500.
	second := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	for i, at := range []time.Time{second.Add(-400 * time.Millisecond), second.Add(-300 * time.Millisecond), second.Add(200 * time.Millisecond)} {
		svc.SetNow(func() time.Time { return at })
		e := notifications.Event{Type: notifications.Like, ActorID: "2002", Recipients: []string{"1001"}, ID: fmt.Sprintf("like-%d", i)}
		if err := svc.Expect(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if len(names) != 2 {
		t.Errorf("pruning jobs %v: want one for each of the two windows", names)
	}
}

type queueFunc func(context.Context, queue.Task) error

func (f queueFunc) Enqueue(ctx context.Context, t queue.Task) error { return f(ctx, t) }
