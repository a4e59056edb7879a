package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"
)

// The flows of polls: a poll is a Question across servers, and a vote a
// Note named by the option chosen, sent to the poll's server.

// poll is what the flows read of a status's poll.
type poll struct {
	ID         string `json:"id"`
	VotesCount int    `json:"votes_count"`
	Voted      bool   `json:"voted"`
}

// polled is a status with its poll.
type polled struct {
	ID      string `json:"id"`
	Content string `json:"content"`
	Poll    *poll  `json:"poll"`
}

// pollIn finds, in m's home, the status holding text, with its poll.
func pollIn(ctx context.Context, m masto, text string) (polled, bool, error) {
	var home []polled
	if err := m.call(ctx, "GET", "/api/v1/timelines/home", nil, &home); err != nil {
		return polled{}, false, err
	}
	for _, s := range home {
		if s.Poll != nil && strings.Contains(s.Content, text) {
			return s, true, nil
		}
	}
	return polled{}, false, nil
}

// pollHere: amy's poll reaches their server as a poll, and the vote of
// a (who follows her) there counts here.
func (r *fedRun) pollHere(ctx context.Context) (string, error) {
	text := "a poll from here " + r.stamp
	var mine polled
	if err := r.amy.call(ctx, "POST", "/api/v1/statuses", url.Values{"status": {text},
		"poll[options][]": {"tea", "coffee"}, "poll[expires_in]": {"86400"}}, &mine); err != nil {
		return "", err
	}
	var there polled
	if err := r.until(ctx, "the poll in their home", func() (found bool, err error) {
		there, found, err = pollIn(ctx, r.a, text)
		return found, err
	}); err != nil {
		return "", err
	}
	if err := r.a.call(ctx, "POST", "/api/v1/polls/"+there.Poll.ID+"/votes", url.Values{"choices[]": {"1"}}, nil); err != nil {
		return "", err
	}
	err := r.until(ctx, "their vote here", func() (bool, error) {
		var p poll
		err := r.amy.call(ctx, "GET", "/api/v1/polls/"+mine.Poll.ID, nil, &p)
		return p.VotesCount == 1, err
	})
	return "a poll there; their vote counted here (`votes_count: 1`)", err
}

// pollThere: b's poll reaches amy as a poll, and amy's vote counts
// there.
func (r *fedRun) pollThere(ctx context.Context) (string, error) {
	text := "a poll from there " + r.stamp
	var theirs polled
	if err := r.b.call(ctx, "POST", "/api/v1/statuses", url.Values{"status": {text},
		"poll[options][]": {"yes", "no"}, "poll[expires_in]": {"86400"}}, &theirs); err != nil {
		return "", err
	}
	var here polled
	if err := r.until(ctx, "their poll in amy's home", func() (found bool, err error) {
		here, found, err = pollIn(ctx, r.amy, text)
		return found, err
	}); err != nil {
		return "", err
	}
	var voted poll
	if err := r.amy.call(ctx, "POST", "/api/v1/polls/"+here.Poll.ID+"/votes", url.Values{"choices[]": {"0"}}, &voted); err != nil {
		return "", err
	}
	if !voted.Voted {
		return "", fmt.Errorf("amy's vote answered %+v", voted)
	}
	err := r.until(ctx, "amy's vote there", func() (bool, error) {
		var p poll
		err := r.b.call(ctx, "GET", "/api/v1/polls/"+theirs.Poll.ID, nil, &p)
		return p.VotesCount == 1, err
	})
	return "a poll here; amy's vote counted there (`votes_count: 1`)", err
}
