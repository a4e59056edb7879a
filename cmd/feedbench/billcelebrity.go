package main

import (
	"context"
	"fmt"
	"strconv"
)

// billCelebrities meters, on a stack of its own whose CELEBRITY_FOLLOWERS
// is 1: a post by someone no one follows (what every post reads more
// there: whether its author is a celebrity); a celebrity's post, which
// copies none of their followers' ids; and a follower's home page, cold
// and warm (the query of the celebrities they follow, beside the range of
// copies, and the celebrity's newest posts, kept as activities are).
func billCelebrities(ctx context.Context, s *stack) ([]billRow, error) {
	cs, err := startStack(ctx, config{bill: true, datastore: s.dsHost, celebrities: 1}, s.logOut)
	if err != nil {
		return nil, fmt.Errorf("billing celebrities: %w", err)
	}
	defer cs.close()
	var rows []billRow
	post := func(u user, title string) (opBill, error) {
		return cs.metered(ctx, u, "POST", "/social/rest/activities/@me/@self", map[string]string{"title": title}, nil)
	}
	alone, err := cs.register(ctx, "billalone")
	if err != nil {
		return nil, err
	}
	b, err := post(alone, "a post")
	if err != nil {
		return nil, fmt.Errorf("billing celebrities: a post: %w", err)
	}
	rows = append(rows, billRow{Op: "post, 0 followers, celebrities on", Bill: b})

	star, err := cs.register(ctx, "billstar")
	if err != nil {
		return rows, err
	}
	fan, err := cs.register(ctx, "billfan")
	if err != nil {
		return rows, err
	}
	if _, err := cs.graph.Follow(ctx, fan.id, star.id, nil); err != nil {
		return rows, err
	}
	// The first post finds the threshold reached: its job makes the
	// author a celebrity.
	if err := cs.do(ctx, star, "POST", "/social/rest/activities/@me/@self", map[string]string{"title": "the last copied"}, nil); err != nil {
		return rows, err
	}
	if b, err = post(star, "a celebrity's"); err != nil {
		return rows, fmt.Errorf("billing celebrities: a celebrity's post: %w", err)
	}
	rows = append(rows, billRow{Op: "post by a celebrity, 1 follower", Bill: b})

	home := "/social/rest/activities/@me/@friends?count=" + strconv.Itoa(billPage)
	if b, err = cs.metered(ctx, fan, "GET", home, nil, nil); err != nil {
		return rows, fmt.Errorf("billing celebrities: home page: %w", err)
	}
	// 2 activities, 1 author, and the celebrity's newest posts.
	rows = append(rows, billRow{Op: "home page, following a celebrity", Bill: b, MinReads: 6,
		MinRule: "1 query + the celebrities' query + 2 activities + 1 author + 1 celebrity's newest posts"})
	if b, err = cs.meteredWarm(ctx, fan, "GET", home, nil, nil); err != nil {
		return rows, fmt.Errorf("billing celebrities: home page, warm: %w", err)
	}
	rows = append(rows, billRow{Op: "home page, following a celebrity, warm", Bill: b, MinReads: 2,
		MinRule: "the ask for changes + the celebrities' query (the home's range kept)"})
	return rows, nil
}
