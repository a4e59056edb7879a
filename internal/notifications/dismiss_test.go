package notifications_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"socialstream/internal/ids"
	"socialstream/internal/notifications"
	"socialstream/internal/store"
)

// A dismissed notification leaves the list, the grouped list and the
// unread count at once, is not there by id, and a late retry of the job
// that made it does not make it again; clearing does so to all of them,
// and the tombstones go with a pruning after DismissedKept.
func TestDismissAndClear(t *testing.T) {
	ctx := context.Background()
	q := &capture{}
	db, svc := newService(t, ids.New(), q, notifications.Config{})
	const user = "1001"
	gen := ids.New()
	var events []notifications.Event
	for i := range 6 {
		e := notifications.Event{Type: notifications.Follow, ActorID: "2002", Recipients: []string{user}, ID: fmt.Sprint("f-", i), Seq: gen.Next()}
		if i%2 == 1 {
			e = notifications.Event{Type: notifications.Like, ActorID: "3003", Recipients: []string{user}, ActivityID: fmt.Sprint(7000 + i), ID: fmt.Sprint("l-", i), Seq: gen.Next()}
		}
		if _, err := svc.Run(ctx, e); err != nil {
			t.Fatal(err)
		}
		events = append(events, e)
	}
	list := func(types ...string) []notifications.View {
		t.Helper()
		vs, _, _, err := svc.List(ctx, user, notifications.Query{Page: store.PageRequest{Count: 2}, Types: types})
		if err != nil {
			t.Fatal(err)
		}
		return vs
	}
	// A page of a type is full though others come between.
	if got := list(notifications.Like); len(got) != 2 || got[0].Type != notifications.Like || got[1].Type != notifications.Like {
		t.Errorf("a page of likes: %+v", got)
	}
	newest := events[5]
	byID := strconv.FormatInt(newest.Seq, 10)
	if v, err := svc.One(ctx, user, byID); err != nil || v.Seq != newest.Seq {
		t.Fatalf("one by its seq: %+v, %v", v, err)
	}
	if err := svc.Dismiss(ctx, user, byID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.One(ctx, user, byID); !errors.Is(err, notifications.ErrNoSuchNotification) {
		t.Errorf("a dismissed one by id: %v", err)
	}
	if err := svc.Dismiss(ctx, user, byID); !errors.Is(err, notifications.ErrNoSuchNotification) {
		t.Errorf("dismissed twice: %v", err)
	}
	if err := svc.Dismiss(ctx, "2002", strconv.FormatInt(events[4].Seq, 10)); !errors.Is(err, notifications.ErrNoSuchNotification) {
		t.Errorf("another's dismissed: %v", err)
	}
	if made, err := svc.Run(ctx, newest); err != nil || made != 0 {
		t.Errorf("a late retry of its job made %d, %v", made, err)
	}
	all, unread, _, err := svc.List(ctx, user, notifications.Query{Page: store.PageRequest{Count: 20}})
	if err != nil || len(all) != 5 || unread != 5 || all[0].Seq != events[4].Seq {
		t.Errorf("after a dismissal: %d listed, %d unread, %v", len(all), unread, err)
	}
	if n, err := svc.Unread(ctx, user); err != nil || n != 5 {
		t.Errorf("unread after a dismissal: %d, %v", n, err)
	}
	groups, _, _, _, err := svc.Grouped(ctx, user, notifications.GroupQuery{Count: 10})
	if err != nil {
		t.Fatal(err)
	}
	likes := 0
	for _, g := range groups {
		if g.Type == notifications.Like {
			likes += g.Count
		}
	}
	if likes != 2 {
		t.Errorf("likes grouped after a dismissal: %d, want 2", likes)
	}

	if err := svc.Clear(ctx, user); err != nil {
		t.Fatal(err)
	}
	if all, unread, _, err := svc.List(ctx, user, notifications.Query{Page: store.PageRequest{Count: 20}}); err != nil || len(all) != 0 || unread != 0 {
		t.Errorf("after a clear: %d listed, %d unread, %v", len(all), unread, err)
	}
	for _, e := range events {
		if made, err := svc.Run(ctx, e); err != nil || made != 0 {
			t.Errorf("a late retry after a clear made %d, %v", made, err)
		}
	}
	tombstones := func() int {
		n, err := db.Count(ctx, db.Query(notifications.Kind).FilterField("userId", "=", user))
		if err != nil {
			t.Fatal(err)
		}
		return int(n)
	}
	if n := tombstones(); n != 6 {
		t.Errorf("%d tombstones kept, want 6", n)
	}
	svc.SetNow(func() time.Time { return time.Now().Add(notifications.DismissedKept + time.Hour) })
	if len(q.bodies) == 0 {
		t.Fatal("no sweeping job enqueued")
	}
	var sweep notifications.Event
	if err := json.Unmarshal(q.bodies[len(q.bodies)-1], &sweep); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Run(ctx, sweep); err != nil {
		t.Fatal(err)
	}
	if n := tombstones(); n != 0 {
		t.Errorf("%d tombstones after the sweep past DismissedKept", n)
	}
}
