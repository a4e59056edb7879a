package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"socialstream/internal/scheduled"
)

// What posts carry, metered: a post scheduled and its publication, and a
// post whose link gets a preview card.

// billScheduled meters a post scheduled for later, and its publication
// by its job at its time: run here, over the API's metered client, by a
// clock set just past it (the task itself is due hours later).
func billScheduled(ctx context.Context, s *stack, _ *billWorld) ([]billRow, error) {
	u, err := s.register(ctx, "billscheduler")
	if err != nil {
		return nil, err
	}
	at := time.Now().Add(3 * time.Hour).UTC().Truncate(time.Second)
	var made created
	b, err := s.metered(ctx, u, "POST", "/social/rest/activities/@me/@self", map[string]any{"title": "later", "scheduledAt": at.Format(time.RFC3339)}, &made)
	if err != nil {
		return nil, fmt.Errorf("billing: schedule a post: %w", err)
	}
	rows := []billRow{{Op: "schedule a post", Bill: b}}
	pub, err := s.scheduler(func() time.Time { return at.Add(time.Second) })
	if err != nil {
		return rows, err
	}
	if err := s.settle(ctx); err != nil {
		return rows, err
	}
	s.cache.Purge()
	s.meter.Take()
	before := s.operations()
	outcome, err := pub.Publish(ctx, scheduled.PublishTask{ID: made.Entry.ID, User: u.id, At: at.UnixMicro(), Due: at.UnixMicro()})
	if err == nil && outcome != scheduled.Published {
		err = fmt.Errorf("the job answered %q", outcome)
	}
	if err != nil {
		return rows, fmt.Errorf("billing: publish a scheduled post: %w", err)
	}
	if err := s.settle(ctx); err != nil {
		return rows, err
	}
	return append(rows, billRow{Op: "publish a scheduled post, 0 followers", Bill: opBill{Bill: s.meter.Take(), Tasks: s.operations().Sub(before)}}), nil
}

// billLinks meters a post whose link gets a preview card, by an author
// of no followers: the first of its address, whose job fetches the page
// (on loopback) and makes the card, and a second, whose job copies the
// card the first made.
func billLinks(ctx context.Context, s *stack, _ *billWorld) ([]billRow, error) {
	site := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/html")
		io.WriteString(rw, `<html><head><meta property="og:title" content="A page"><meta property="og:description" content="What it says"></head><body>`)
	}))
	defer site.Close()
	var rows []billRow
	for i, op := range []string{"post with a link, its card made", "post with a link, its card shared"} {
		u, err := s.register(ctx, fmt.Sprintf("billlinker%d", i)) // of no followers, as "post, 0 followers"
		if err != nil {
			return rows, err
		}
		b, err := s.metered(ctx, u, "POST", "/social/rest/activities/@me/@self", map[string]string{"title": "see " + site.URL + "/page"}, nil)
		if err != nil {
			return rows, fmt.Errorf("billing: %s: %w", op, err)
		}
		rows = append(rows, billRow{Op: op, Bill: b})
	}
	return rows, nil
}
