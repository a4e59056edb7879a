package notifications_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/accounts"
	"socialstream/internal/filters"
	"socialstream/internal/ids"
	"socialstream/internal/markers"
	"socialstream/internal/notifications"
	"socialstream/internal/policy"
	"socialstream/internal/store"
	"socialstream/internal/viewer"
)

// The unread count is the list's: whoever the reader hides (none, up to
// the ten a not-in filter takes, more, a mute that ended, a state that
// does not know), whoever is withheld, whatever was read by id or by a
// marker moved past it; the list read through the instance's cache.
func TestUnreadCountsWhatTheListShows(t *testing.T) {
	ctx := context.Background()
	gen := ids.New()
	// The activities the notifications are about: one speaks of a
	// spoiler, which a filter of the reader's hides.
	db, svc := cachedService(t, gen, notifications.Config{Activities: texts{"7": "a spoiler"}})
	const reader = "1001"
	var actors []string
	var seqs []int64
	for i := range 15 {
		a := fmt.Sprint(5000 + i)
		person(t, db, a)
		actors = append(actors, a)
		seq := gen.Next()
		seqs = append(seqs, seq)
		n := &notifications.Notification{UserID: reader, Seq: seq, Type: notifications.Like, ActorID: a,
			ActivityID: fmt.Sprint(i), Published: ids.Time(seq), Withheld: i == 14}
		if err := db.Put(ctx, notifications.Key(db, reader, fmt.Sprint("like-", i)), n); err != nil {
			t.Fatal(err)
		}
	}
	// The last actor is suspended: the withholding job marked theirs.
	if err := db.Update(ctx, func(tx *store.Tx) error {
		_, err := accounts.Suspend(ctx, tx, actors[14], time.Now(), "spam")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	setState := func(edit func(*viewer.State)) {
		t.Helper()
		err := db.Update(ctx, func(tx *store.Tx) error {
			l := tx.Lookup()
			r := viewer.Read(l, reader)
			if err := l.Run(ctx); err != nil {
				return err
			}
			if !r.Found() {
				if err := viewer.Start(tx, reader); err != nil {
					return err
				}
				r = viewer.Read(tx.Lookup(), reader)
			}
			st := r.Edit()
			edit(st)
			return r.Save(tx)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string, want int64) {
		t.Helper()
		list, listed, _, err := svc.List(ctx, reader, notifications.Query{Page: store.PageRequest{Count: 100}})
		if err != nil {
			t.Fatal(err)
		}
		shown := int64(0)
		for _, v := range list {
			if !v.Read {
				shown++
			}
		}
		n, err := svc.Unread(ctx, reader)
		if err != nil {
			t.Fatal(err)
		}
		grouped, _, err := svc.UnreadGroups(ctx, reader)
		if err != nil {
			t.Fatal(err)
		}
		if n != want || shown != want || listed != want || grouped != want {
			t.Errorf("%s: unread %d, the list's own count %d, grouped %d, the list shows %d unread; want %d", what, n, listed, grouped, shown, want)
		}
		// Uncounted: the same page, and no count.
		same, none, _, err := svc.List(ctx, reader, notifications.Query{Page: store.PageRequest{Count: 100}, Uncounted: true})
		if err != nil {
			t.Fatal(err)
		}
		if none != 0 || len(same) != len(list) {
			t.Errorf("%s: uncounted, %d shown and %d unread; want %d shown and 0", what, len(same), none, len(list))
		}
	}
	check("no state", 14) // the slow path: the unread read
	setState(func(*viewer.State) {})
	check("hiding no one", 14)
	setState(func(st *viewer.State) {
		st.SetBlock(actors[0], true)
		st.SetBlockedBy(actors[1], true)
		st.SetMute(actors[2], time.Time{}, true)
		st.SetMute(actors[3], time.Now().Add(-time.Minute), true) // ended
		st.SetMute(actors[14], time.Time{}, true)                 // withheld too
	})
	check("hiding four (not-in)", 11)
	setState(func(st *viewer.State) {
		for _, a := range actors[4:12] {
			st.SetMute(a, time.Now().Add(time.Hour), true)
		}
		for i := range 30 {
			st.SetBlock(fmt.Sprint(9000+i), true) // with none of their notifications
		}
	})
	check("hiding 42 (in filters)", 3)

	// Marked read by a marker moved past them: all but the newest two.
	setState(func(st *viewer.State) {
		for _, a := range actors {
			st.SetBlock(a, false)
			st.SetBlockedBy(a, false)
			st.SetMute(a, time.Time{}, false)
		}
	})
	check("hiding none again", 14)
	// A keyword filter that hides, in notifications: the one about the
	// spoiler is left out; one that warns leaves it in.
	filter := func(action string) {
		raw, err := json.Marshal(filters.Filter{ID: "f1", Title: "spoilers", Action: action,
			Context: []string{filters.Notifications}, Keywords: []filters.Keyword{{Keyword: "spoiler"}}})
		if err != nil {
			t.Fatal(err)
		}
		setState(func(st *viewer.State) { st.Filters = []string{string(raw)} })
	}
	filter(filters.Hide)
	check("a filter hides one", 13)
	filter(filters.Warn)
	check("a filter warns of one", 14)
	m, err := markers.New(db, svc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Move(ctx, reader, map[string]markers.Marker{markers.NotificationsFeed: {LastReadID: ids.Format(seqs[12])}}); err != nil {
		t.Fatal(err)
	}
	check("the marker past all but the newest two", 1) // the newest is withheld
	// A job's notification placed below the marker comes read: its
	// reader has read past its place.
	e := notifications.Event{Type: notifications.Mention, ActorID: actors[0], Recipients: []string{reader}, ID: "mention-late", Seq: seqs[5]}
	if made, err := svc.Run(ctx, e); err != nil || made != 1 {
		t.Fatalf("made %d, %v", made, err)
	}
	check("a late mention below the marker", 1)
	e = notifications.Event{Type: notifications.Mention, ActorID: actors[0], Recipients: []string{reader}, ID: "mention-new", Seq: gen.Next()}
	if made, err := svc.Run(ctx, e); err != nil || made != 1 {
		t.Fatalf("made %d, %v", made, err)
	}
	check("a mention above the marker", 2)
}

// cachedService is a service whose pages read through an instance's
// cache, as the service's are, its unread counts kept: what this
// instance writes shows at once.
func cachedService(t *testing.T, gen *ids.Generator, cfg notifications.Config) (*store.DB, *notifications.Service) {
	t.Helper()
	plain, _ := newService(t, gen, nopQueue{}, notifications.Config{})
	db := plain.WithCache(store.NewCache(store.CacheConfig{Kinds: slices.Concat(notifications.PageKinds(), viewer.PageKinds()),
		TTL: time.Minute, Entries: 100, Derived: notifications.Derived}))
	svc, err := notifications.New(db, gen, accountsOn(t, db), nopQueue{}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return db, svc
}

// texts are activities' texts, by id, as package activities' Records
// answer them (one not named: "news").
type texts map[string]string

func (texts) Mentioned(context.Context, string) (*datastore.Key, bool, []string, int, error) {
	return nil, true, nil, 0, nil
}

// Posts weighs no post: these tests are of notifications alone.
func (texts) Posts(*store.Lookup, []string) func() map[string]policy.Post { return nil }

func (t texts) Texts(_ context.Context, _ string, idList []string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, id := range idList {
		if v, ok := t[id]; ok {
			out[id] = []string{v}
		} else {
			out[id] = []string{"news"}
		}
	}
	return out, nil
}

// The unread count kept for a person is dropped by a write of a
// notification of theirs or of their state, and by nothing else.
func TestDerivedNamesTheRecipientsCount(t *testing.T) {
	for name, want := range map[string]string{
		"/Notification,1001_like-5-7":    "/UnreadCount,1001",
		"/Notification,1001_mention-a_b": "/UnreadCount,1001",
		"/ViewerState,1001":              "/UnreadCount,1001",
		"/Notification,1002_follow-1":    "/UnreadCount,1002",
		"/Notification,nounderscore":     "",
		"/Notification,_like-5":          "",
		"/Activity,1001":                 "",
		"/ViewerState,1001/Child,1":      "",
		"/Counts,1001":                   "",
	} {
		if got := notifications.Derived(name); got != want {
			t.Errorf("Derived(%q) = %q, want %q", name, got, want)
		}
	}
}

// A count made while a mute hides someone is kept until the mute ends,
// and made again then: no write marks the end of a mute.
func TestUnreadKeptUntilAMuteEnds(t *testing.T) {
	ctx := context.Background()
	gen := ids.New()
	db, svc := cachedService(t, gen, notifications.Config{})
	const reader, muted, other = "1001", "5000", "5001"
	for i, a := range []string{muted, other} {
		person(t, db, a)
		seq := gen.Next()
		n := &notifications.Notification{UserID: reader, Seq: seq, Type: notifications.Like, ActorID: a, ActivityID: fmt.Sprint(i), Published: ids.Time(seq)}
		if err := db.Put(ctx, notifications.Key(db, reader, fmt.Sprint("like-", i)), n); err != nil {
			t.Fatal(err)
		}
	}
	ends := time.Now().Add(time.Second)
	if err := db.Update(ctx, func(tx *store.Tx) error {
		if err := viewer.Start(tx, reader); err != nil {
			return err
		}
		l := tx.Lookup()
		r := viewer.Read(l, reader)
		if err := l.Run(ctx); err != nil {
			return err
		}
		r.Edit().SetMute(muted, ends, true)
		return r.Save(tx)
	}); err != nil {
		t.Fatal(err)
	}
	unread := func(what string, want int64) {
		t.Helper()
		if n, err := svc.Unread(ctx, reader); err != nil || n != want {
			t.Errorf("%s: %d unread, %v; want %d", what, n, err, want)
		}
	}
	unread("while the mute holds", 1)
	unread("asked again", 1)
	time.Sleep(time.Until(ends) + 100*time.Millisecond)
	unread("once the mute ended", 2)
}
