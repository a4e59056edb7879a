package notifications_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"

	"cloud.google.com/go/datastore"
	"golang.org/x/crypto/bcrypt"

	"socialstream/internal/accounts"
	"socialstream/internal/ids"
	"socialstream/internal/notifications"
	"socialstream/internal/queue"
	"socialstream/internal/store"
	"socialstream/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

type nopQueue struct{}

func (nopQueue) Enqueue(context.Context, queue.Task) error { return nil }

func TestKeepsNewest200AndRunsOnce(t *testing.T) {
	ctx := context.Background()
	db := testenv.DB(t)
	acc, err := accounts.New(db, ids.New(), accounts.Config{BcryptCost: bcrypt.MinCost})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := notifications.New(db, ids.New(), acc, nopQueue{}, notifications.Config{})
	if err != nil {
		t.Fatal(err)
	}
	const user, total = "1001", notifications.MaxKept + 7
	for i := 0; i < total; i++ {
		e := notifications.Event{Type: notifications.Like, ActorID: "2002", Recipients: []string{user, "2002"}, ActivityID: fmt.Sprint(5000 + i), ID: fmt.Sprint("like-", i)}
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
		list, unread, next, err := svc.List(ctx, user, p)
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
	db := testenv.DB(t)
	acc, err := accounts.New(db, ids.New(), accounts.Config{BcryptCost: bcrypt.MinCost})
	if err != nil {
		t.Fatal(err)
	}
	q := &capture{}
	svc, err := notifications.New(db, ids.New(), acc, q, notifications.Config{})
	if err != nil {
		t.Fatal(err)
	}
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
	list, _, _, err := svc.List(ctx, user, store.PageRequest{Count: 10})
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
	db := testenv.DB(t)
	acc, err := accounts.New(db, ids.New(), accounts.Config{BcryptCost: bcrypt.MinCost})
	if err != nil {
		t.Fatal(err)
	}
	exists := map[string]bool{"1": true}
	svc, err := notifications.New(db, ids.New(), acc, nopQueue{}, notifications.Config{
		ActivityExists: func(_ *datastore.Transaction, id string) (bool, error) { return exists[id], nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		activity string
		want     int
	}{{"1", 1}, {"2", 0}} {
		e := notifications.Event{Type: notifications.Like, ActorID: "2002", Recipients: []string{"1001"}, ActivityID: c.activity, ID: "like-" + c.activity}
		if made, err := svc.Run(ctx, e); err != nil || made != c.want {
			t.Errorf("about activity %s: made %d, %v; want %d", c.activity, made, err, c.want)
		}
	}
}
