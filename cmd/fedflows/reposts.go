package main

import (
	"context"
	"fmt"
	"net/url"
)

// The flows of reposts and favourites.

func (r *fedRun) repostHere(ctx context.Context) (string, error) {
	if r.bPostHere == "" {
		return "", fmt.Errorf("their post never reached amy")
	}
	if err := r.amy.call(ctx, "POST", "/api/v1/statuses/"+r.bPostHere+"/reblog", url.Values{}, nil); err != nil {
		return "", err
	}
	err := r.until(ctx, "the repost there", func() (bool, error) {
		var s status
		err := r.b.call(ctx, "GET", "/api/v1/statuses/"+r.bPost.ID, nil, &s)
		return s.ReblogsCount == 1, err
	})
	return "`reblogs_count: 1` there", err
}

// amysThere is amy's first post as their server shows it, from a's home.
func (r *fedRun) amysThere(ctx context.Context) (status, error) {
	var home []status
	if err := r.a.call(ctx, "GET", "/api/v1/timelines/home", nil, &home); err != nil {
		return status{}, err
	}
	s, ok := holding(home, "hello from here")
	if !ok {
		return s, fmt.Errorf("amy's post is not in their home")
	}
	return s, nil
}

func (r *fedRun) theirRepost(ctx context.Context) (string, error) {
	s, err := r.amysThere(ctx)
	if err != nil {
		return "", err
	}
	if err := r.a.call(ctx, "POST", "/api/v1/statuses/"+s.ID+"/reblog", url.Values{}, nil); err != nil {
		return "", err
	}
	err = r.until(ctx, "their repost here", func() (bool, error) {
		var mine status
		err := r.amy.call(ctx, "GET", "/api/v1/statuses/"+r.amyOwn, nil, &mine)
		return mine.ReblogsCount == 1, err
	})
	return "`reblogs_count: 1` here", err
}

func (r *fedRun) theirUnfavourite(ctx context.Context) (string, error) {
	s, err := r.amysThere(ctx)
	if err != nil {
		return "", err
	}
	if err := r.a.call(ctx, "POST", "/api/v1/statuses/"+s.ID+"/unfavourite", url.Values{}, nil); err != nil {
		return "", err
	}
	err = r.until(ctx, "their unfavourite here", func() (bool, error) {
		var mine status
		err := r.amy.call(ctx, "GET", "/api/v1/statuses/"+r.amyOwn, nil, &mine)
		return mine.FavouritesCount == 0, err
	})
	return "`favourites_count: 0` here", err
}
