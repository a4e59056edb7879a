package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"
)

// The flows of deletions.

func (r *fedRun) deleteHere(ctx context.Context) (string, error) {
	text := "soon deleted " + r.stamp
	var s status
	if err := r.amy.call(ctx, "POST", "/api/v1/statuses", url.Values{"status": {text}}, &s); err != nil {
		return "", err
	}
	if err := r.until(ctx, "in their home", func() (bool, error) {
		var home []status
		err := r.a.call(ctx, "GET", "/api/v1/timelines/home", nil, &home)
		_, ok := holding(home, text)
		return ok, err
	}); err != nil {
		return "", err
	}
	if err := r.amy.call(ctx, "DELETE", "/api/v1/statuses/"+s.ID, nil, nil); err != nil {
		return "", err
	}
	err := r.until(ctx, "gone from their home", func() (bool, error) {
		var home []status
		err := r.a.call(ctx, "GET", "/api/v1/timelines/home", nil, &home)
		_, ok := holding(home, text)
		return !ok, err
	})
	return "gone from their home", err
}

func (r *fedRun) theirDelete(ctx context.Context) (string, error) {
	if r.bPostHere == "" {
		return "", fmt.Errorf("their post never reached amy")
	}
	if err := r.b.call(ctx, "DELETE", "/api/v1/statuses/"+r.bPost.ID, nil, nil); err != nil {
		return "", err
	}
	err := r.until(ctx, "gone here", func() (bool, error) {
		err := r.amy.call(ctx, "GET", "/api/v1/statuses/"+r.bPostHere, nil, nil)
		return err != nil && strings.Contains(err.Error(), ": 404 "), nil
	})
	return "404 here", err
}
