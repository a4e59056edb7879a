package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"socialstream/internal/notifications"
	"socialstream/internal/store"
)

// The bill of pages: every feed's page read cold and warm, a warm home
// page after a write that drops its kept range, and notifications' pages
// and the unread count.

// billFeeds meters a page of each feed.
func billFeeds(ctx context.Context, s *stack, w *billWorld) ([]billRow, error) {
	var rows []billRow
	reader, first := w.reader, w.authors[0]
	feeds := []struct {
		op, path string
		who      user
		extra    int // entities the answer needs beside its query, activities and authors
		rule     string
		// warm meters the page again, once read: what it reads then is
		// what no instance keeps (warmExtra, warmRule: beside its query).
		warm      bool
		warmExtra int
		warmRule  string
		// kept: its query's answer is the reader's home range, which the
		// instance keeps (activities' homeRange).
		kept bool
	}{
		{"home page", "/social/rest/activities/@me/@friends", reader, 0, "", true, 0, "", true},
		{"@self by its owner", "/social/rest/activities/@me/@self", first, 0, "", false, 0, "", false},
		{"@self by another", "/social/rest/activities/" + first.id + "/@self", reader, 1, " + the reader's follow", true, 1, " + the reader's follow", false},
		{"@all page", "/social/rest/activities/@all/@all", reader, 0, "", true, 0, "", false},
		{"@mentions page", "/social/rest/activities/@me/@mentions", reader, 0, "", true, 0, "", false},
		{"group page", "/social/rest/activities/@me/" + w.group, reader, 2, " + the group and the reader's membership", true, 2, " + the group and the reader's membership", false},
		{"tag page", "/social/rest/activities/@me/@tag:" + billTag, reader, 0, "", true, 0, "", false},
		// The pinned page reads its author's card (the list) first: no
		// query, and the reader's state (their likes and reposts) is all
		// the rest of its lookup.
		{"pinned page", "/social/rest/activities/" + first.id + "/@pinned", reader, 0, "", false, 0, "", false},
		// A keys-only query whose keys name the activities.
		{"bookmarks page", "/social/rest/bookmarks", reader, 0, "", false, 0, "", false},
		{"favourites page", "/social/rest/likes", reader, 0, "", false, 0, "", false},
		{"list page", "/social/rest/activities/@me/@list:" + w.list, reader, 1, " + the list", true, 1, " + the list", true},
	}
	for _, f := range feeds {
		var page struct {
			List []struct {
				UserID   string `json:"userId"`
				RepostOf *struct {
					UserID string `json:"userId"`
				} `json:"repostOf"`
			} `json:"list"`
		}
		b, err := s.metered(ctx, f.who, "GET", f.path+"?count="+strconv.Itoa(billPage), nil, &page)
		if err != nil {
			return rows, fmt.Errorf("billing: %s: %w", f.op, err)
		}
		people := map[string]bool{}
		shared := 0
		for _, a := range page.List {
			people[a.UserID] = true
			if a.RepostOf != nil {
				shared++
				people[a.RepostOf.UserID] = true
			}
		}
		n := len(page.List) + shared
		row := billRow{Op: f.op, Bill: b, MinReads: 1 + n + len(people) + f.extra,
			MinRule: fmt.Sprintf("1 query + %d activities + %d authors%s", n, len(people), f.rule)}
		if f.op == "pinned page" {
			row.MinReads, row.MinRule = n+len(people)+1, fmt.Sprintf("%d author's card (the list) + %d activities + the reader's state", len(people), n)
		}
		rows = append(rows, row)
		if f.warm {
			wb, err := s.meteredWarm(ctx, f.who, "GET", f.path+"?count="+strconv.Itoa(billPage), nil, nil)
			if err != nil {
				return rows, fmt.Errorf("billing: %s, warm: %w", f.op, err)
			}
			least, rule := 2+f.warmExtra, "1 query + the ask for changes"+f.warmRule
			if f.kept {
				least, rule = 1+f.warmExtra, "the ask for changes (the home's range kept)"+f.warmRule
			}
			rows = append(rows, billRow{Op: f.op + ", warm", Bill: wb, MinReads: least, MinRule: rule})
		}
	}
	// The Mastodon face's home timeline is the same operation as the home
	// page: its bill must be the home page's.
	var statuses []struct {
		Account struct {
			ID string `json:"id"`
		} `json:"account"`
		Reblog *struct {
			Account struct {
				ID string `json:"id"`
			} `json:"account"`
		} `json:"reblog"`
	}
	b, err := s.metered(ctx, reader, "GET", "/api/v1/timelines/home?limit="+strconv.Itoa(billPage), nil, &statuses)
	if err != nil {
		return rows, fmt.Errorf("billing: the Mastodon home timeline: %w", err)
	}
	people := map[string]bool{}
	shared := 0
	for _, st := range statuses {
		people[st.Account.ID] = true
		if st.Reblog != nil {
			shared++
			people[st.Reblog.Account.ID] = true
		}
	}
	n := len(statuses) + shared
	rows = append(rows, billRow{Op: "Mastodon home timeline", Bill: b, MinReads: 1 + n + len(people),
		MinRule: fmt.Sprintf("1 query + %d activities + %d authors", n, len(people))})
	for _, tl := range []struct{ op, path string }{
		{"Mastodon home timeline, warm", "/api/v1/timelines/home"},
		{"Mastodon public timeline, warm", "/api/v1/timelines/public"},
	} {
		wb, err := s.meteredWarm(ctx, reader, "GET", tl.path+"?limit="+strconv.Itoa(billPage), nil, nil)
		if err != nil {
			return rows, fmt.Errorf("billing: %s: %w", tl.op, err)
		}
		least, rule := 2, "1 query + the ask for changes"
		if tl.op == "Mastodon home timeline, warm" {
			least, rule = 1, "the ask for changes (the home's range kept)"
		}
		rows = append(rows, billRow{Op: tl.op, Bill: wb, MinReads: least, MinRule: rule})
	}
	more, err := billKeptHome(ctx, s, w)
	return append(rows, more...), err
}

// billKeptHome meters a warm home page after a write that drops the
// range of its reader's home the instance kept: a post of an author the
// reader follows, which says whose homes it reaches and drops theirs, and
// the delete of a post the reader never saw, which names no reader and
// drops every range kept (activities' homeRange).
func billKeptHome(ctx context.Context, s *stack, w *billWorld) ([]billRow, error) {
	home := "/social/rest/activities/@me/@friends?count=" + strconv.Itoa(billPage)
	// The post the delete takes, made before the page is read warm: the
	// page's ask finds the delete's mark alone.
	elsewhere, err := s.postHTTP(ctx, w.helper, "a post nobody here follows")
	if err != nil {
		return nil, fmt.Errorf("billing: a post elsewhere: %w", err)
	}
	if err := s.settle(ctx); err != nil {
		return nil, err
	}
	var rows []billRow
	for _, c := range []struct {
		op    string
		write func() error
		least int
		rule  string
	}{
		{"home page, warm, a post reached it since", func() error {
			_, err := s.postHTTP(ctx, w.authors[1], "news for the kept home")
			return err
		}, 4, "1 query + the ask for changes + the new post + its author's card (their count changed)"},
		{"home page, warm, its range dropped", func() error {
			return s.do(ctx, w.helper, "DELETE", "/social/rest/activities/@me/@self/@app/"+elsewhere, nil, nil)
		}, 2, "1 query + the ask for changes (a delete elsewhere dropped every range kept)"},
	} {
		time.Sleep(store.SyncMargin)
		if err := s.do(ctx, w.reader, "GET", home, nil, nil); err != nil {
			return rows, fmt.Errorf("billing: %s: %w", c.op, err)
		}
		if err := c.write(); err != nil {
			return rows, fmt.Errorf("billing: %s: %w", c.op, err)
		}
		if err := s.settle(ctx); err != nil {
			return rows, err
		}
		b, err := s.measure(ctx, w.reader, "GET", home, nil, nil)
		if err != nil {
			return rows, fmt.Errorf("billing: %s: %w", c.op, err)
		}
		rows = append(rows, billRow{Op: c.op, Bill: b, MinReads: c.least, MinRule: c.rule})
	}
	return rows, nil
}

// billNotifications meters notifications' pages and the unread count.
func billNotifications(ctx context.Context, s *stack, w *billWorld) ([]billRow, error) {
	var rows []billRow
	reader := w.reader
	var notes struct {
		List []struct {
			Actor struct {
				ID string `json:"id"`
			} `json:"actor"`
		} `json:"list"`
	}
	b, err := s.metered(ctx, reader, "GET", "/social/rest/notifications/@me?count="+strconv.Itoa(billPage), nil, &notes)
	if err != nil {
		return rows, fmt.Errorf("billing: notifications: %w", err)
	}
	actors := map[string]bool{}
	for _, n := range notes.List {
		actors[n.Actor.ID] = true
	}
	rows = append(rows, billRow{Op: "notifications page", Bill: b, MinReads: 1 + len(notes.List) + len(actors),
		MinRule: fmt.Sprintf("%d notifications + %d actors + the unread count's query", len(notes.List), len(actors))})
	for _, warm := range []struct {
		op, path string
		least    int
		rule     string
	}{
		{"notifications page, warm", "/social/rest/notifications/@me?count=" + strconv.Itoa(billPage), 2, "1 query + the ask for changes (the unread count kept)"},
		// Mastodon's page shows no unread count.
		{"Mastodon notifications, warm", "/api/v1/notifications?limit=" + strconv.Itoa(billPage), 2, "1 query + the ask for changes"},
	} {
		wb, err := s.meteredWarm(ctx, reader, "GET", warm.path, nil, nil)
		if err != nil {
			return rows, fmt.Errorf("billing: %s: %w", warm.op, err)
		}
		rows = append(rows, billRow{Op: warm.op, Bill: wb, MinReads: warm.least, MinRule: warm.rule})
	}
	var groups struct {
		List []struct {
			Count  int `json:"count"`
			Actors []struct {
				ID string `json:"id"`
			} `json:"actors"`
		} `json:"list"`
		Total int `json:"totalResults"`
	}
	b, err = s.metered(ctx, reader, "GET", "/social/rest/notifications/@me?grouped=true&count="+strconv.Itoa(billPage), nil, &groups)
	if err != nil {
		return rows, fmt.Errorf("billing: grouped notifications: %w", err)
	}
	kept := 0
	actors = map[string]bool{}
	for _, g := range groups.List {
		kept += g.Count
		for _, a := range g.Actors {
			actors[a.ID] = true
		}
	}
	if groups.Total > len(groups.List) {
		// Not every group on the page: the rest, unmetered, for how
		// many notifications are kept.
		var rest struct {
			List []struct {
				Count int `json:"count"`
			} `json:"list"`
		}
		path := fmt.Sprintf("/social/rest/notifications/@me?grouped=true&startIndex=%d&count=100", len(groups.List))
		if err := s.do(ctx, reader, "GET", path, nil, &rest); err != nil {
			return rows, fmt.Errorf("billing: grouped notifications: %w", err)
		}
		for _, g := range rest.List {
			kept += g.Count
		}
	}
	rows = append(rows, billRow{Op: "grouped notifications page", Bill: b, MinReads: kept + len(actors),
		MinRule: fmt.Sprintf("%d notifications kept + %d actors shown", kept, len(actors))})

	var unread struct {
		Entry struct {
			Count int `json:"unreadCount"`
		} `json:"entry"`
	}
	b, err = s.metered(ctx, reader, "GET", "/social/rest/notifications/@me/unread", nil, &unread)
	if err != nil {
		return rows, fmt.Errorf("billing: unread count: %w", err)
	}
	rows = append(rows, billRow{Op: "unread count", Bill: b, MinReads: 2,
		MinRule: fmt.Sprintf("a count query (%d unread, one read per 1,000) + the reader's state (whom they hide)", unread.Entry.Count)})
	// An app asks again minutes later: the count is kept, with nothing
	// changed since. Its ask for changes is counted, as the warm pages'
	// are: it comes past the lag an unread count takes another's ask
	// within.
	time.Sleep(store.SyncMargin) // what changed just before is read again
	if err := s.do(ctx, reader, "GET", "/social/rest/notifications/@me/unread", nil, nil); err != nil {
		return rows, fmt.Errorf("billing: unread count, warm: %w", err)
	}
	if err := s.settle(ctx); err != nil {
		return rows, err
	}
	time.Sleep(notifications.UnreadLag)
	b, err = s.measure(ctx, reader, "GET", "/social/rest/notifications/@me/unread", nil, nil)
	if err != nil {
		return rows, fmt.Errorf("billing: unread count, warm: %w", err)
	}
	rows = append(rows, billRow{Op: "unread count, warm", Bill: b, MinReads: 1, MinRule: "the ask for changes (the count kept)"})
	b, err = s.metered(ctx, reader, "GET", "/social/rest/notifications/@me/unread?grouped=true", nil, &unread)
	if err != nil {
		return rows, fmt.Errorf("billing: unread count with its groups: %w", err)
	}
	rows = append(rows, billRow{Op: "unread count, with its groups", Bill: b, MinReads: max(1, unread.Entry.Count) + 1,
		MinRule: fmt.Sprintf("%d unread notifications (1 query if none) + the reader's state", unread.Entry.Count)})
	b, err = billUnreadChanged(ctx, s, w)
	if err != nil {
		return rows, fmt.Errorf("billing: unread count, a notification since: %w", err)
	}
	return append(rows, billRow{Op: "unread count, a notification since", Bill: b, MinReads: 2,
		MinRule: "a count query + the ask for changes"}), nil
}

// billUnreadChanged meters an unread count asked again after a
// notification came: the count kept is dropped, and made again, with
// its reader's state kept (an author's count, not the reader's, whose
// notifications the rows after count).
func billUnreadChanged(ctx context.Context, s *stack, w *billWorld) (opBill, error) {
	who, post := w.authors[12], w.newest[12]
	time.Sleep(store.SyncMargin) // what changed just before is read again
	if err := s.do(ctx, who, "GET", "/social/rest/notifications/@me/unread", nil, nil); err != nil {
		return opBill{}, err
	}
	// A comment tells the post's author, and trends nothing (a like
	// would add a candidate to the hour's refresh, metered later).
	if err := s.do(ctx, w.authors[13], "POST", "/social/rest/comments/"+post, map[string]string{"text": "a comment"}, nil); err != nil {
		return opBill{}, err
	}
	if err := s.settle(ctx); err != nil {
		return opBill{}, err
	}
	time.Sleep(notifications.UnreadLag) // its ask counted, as the warm row's
	return s.measure(ctx, who, "GET", "/social/rest/notifications/@me/unread", nil, nil)
}
