package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"socialstream/internal/localstack"
)

// masto is one person's Mastodon API, on one server.
type masto struct {
	name, base, token string
}

var client = &http.Client{Timeout: 30 * time.Second}

// userAgent names the command (GoToSocial refuses requests without one).
const userAgent = "socialstream-fedflows"

// call sends form (nil: none) and reads the JSON answer into out (nil:
// dropped); a status past 299 is an error with the answer.
func (m masto) call(ctx context.Context, method, path string, form url.Values, out any) error {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, m.base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+m.token)
	req.Header.Set("User-Agent", userAgent)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode > 299 {
		return fmt.Errorf("%s %s as %s: %d %s", method, path, m.name, resp.StatusCode, bytes.TrimSpace(raw))
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(raw, out)
}

// status and account are what the flows read of Mastodon's.
type status struct {
	ID, Content, URI string
	Account          account
	FavouritesCount  int          `json:"favourites_count"`
	ReblogsCount     int          `json:"reblogs_count"`
	Media            []attachment `json:"media_attachments"`
}

// attachment is what the flows read of a MediaAttachment.
type attachment struct {
	URL       string `json:"url"`
	RemoteURL string `json:"remote_url"`
}

type account struct {
	ID, Acct string
}

// fedRun is one run of the flows: two people here (amy, ben), two there
// (a, b), and what the flows learn of each other.
type fedRun struct {
	amy, ben, a, b masto
	domain, there  string // the accts' hosts: here, there
	wait           time.Duration
	stamp          string // marks this run's posts

	amyThere, bHere   string // ids: amy at their server, b here
	bPost             status // b's post, there
	bPostHere, amyOwn string // b's post here, amy's first post here
}

func newRun(ctx context.Context, st *localstack.Stack, gts, tokenA, tokenB, domain string) (*fedRun, error) {
	u, err := url.Parse(gts)
	if err != nil {
		return nil, err
	}
	r := &fedRun{domain: domain, there: u.Host, stamp: time.Now().UTC().Format("150405")}
	for _, p := range []struct {
		name string
		to   *masto
	}{{"amy", &r.amy}, {"ben", &r.ben}} {
		_, token, err := st.Services.Accounts.Register(ctx, p.name, "fedflows-"+p.name+"-password", "")
		if err != nil {
			return nil, err
		}
		*p.to = masto{name: p.name, base: st.URL, token: token}
	}
	r.a, r.b = masto{name: "a", base: gts, token: tokenA}, masto{name: "b", base: gts, token: tokenB}
	var me account
	for _, m := range []*masto{&r.a, &r.b} { // unlocked for the run: their follows are not requests
		if err := m.call(ctx, "PATCH", "/api/v1/accounts/update_credentials", url.Values{"locked": {"false"}}, &me); err != nil {
			return nil, err
		}
		m.name = me.Acct
	}
	return r, nil
}

// flow is one of the flows: what it does, and how it is seen to have
// done it.
type flow struct {
	name, how string
	run       func(ctx context.Context) (string, error)
}

// all runs every flow in order, prints the table, and returns how many
// failed. A flow that fails leaves those after it to run (some need it:
// they fail too, each saying why).
func (r *fedRun) all(ctx context.Context, out io.Writer) int {
	fmt.Fprintln(out, "| flow | how | result |")
	fmt.Fprintln(out, "| --- | --- | --- |")
	failed := 0
	for _, f := range r.flows() {
		began := time.Now()
		result, err := f.run(ctx)
		if err != nil {
			failed++
			result = "FAILED: " + err.Error()
		}
		fmt.Fprintf(out, "| %s | %s | %s (%.1f s) |\n", f.name, f.how, result, time.Since(began).Seconds())
	}
	return failed
}

// until polls seen every second until it is true, for r.wait at most.
func (r *fedRun) until(ctx context.Context, what string, seen func() (bool, error)) error {
	end := time.Now().Add(r.wait)
	var last error
	for time.Now().Before(end) {
		ok, err := seen()
		if ok && err == nil {
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	return errors.Join(fmt.Errorf("%s: not seen in %s", what, r.wait), last)
}

// holding reports whether one of statuses holds text.
func holding(statuses []status, text string) (status, bool) {
	for _, s := range statuses {
		if strings.Contains(s.Content, text) {
			return s, true
		}
	}
	return status{}, false
}

func (r *fedRun) flows() []flow {
	return []flow{
		{"their server finds a person here", "`GET /api/v2/search?resolve=true` there", r.theyFind},
		{"their person follows one here", "`POST /api/v1/accounts/:id/follow` there", r.theyFollow},
		{"a post here reaches them", "`POST /api/v1/statuses` here, public", r.postReaches},
		{"a person here finds theirs", "`GET /api/v1/accounts/lookup` here", r.weFind},
		{"a person here follows theirs", "`POST /api/v1/accounts/:id/follow` here", r.weFollow},
		{"their post, with a mention, reaches a person here", "`POST /api/v1/statuses` there (its `Mention` tag)", r.theirPost},
		{"a person here writes to theirs alone", "`POST /api/v1/statuses` here, direct", r.direct},
		{"a reply here to their post", "`POST /api/v1/statuses` here, `in_reply_to_id`", r.reply},
		{"their edit of their post", "`PUT /api/v1/statuses/:id` there", r.edit},
		{"their favourite of a post here", "`POST /api/v1/statuses/:id/favourite` there", r.favourite},
		{"a repost here of their post", "`POST /api/v1/statuses/:id/reblog` here", r.repostHere},
		{"their repost of a post here", "`POST /api/v1/statuses/:id/reblog` there", r.theirRepost},
		{"their unfavourite of a post here", "`POST /api/v1/statuses/:id/unfavourite` there", r.theirUnfavourite},
		{"a poll here, voted in there", "`POST /api/v1/statuses` (`poll[options][]`) here, `POST /api/v1/polls/:id/votes` there", r.pollHere},
		{"their poll, voted in here", "`POST /api/v1/statuses` (`poll[options][]`) there, `POST /api/v1/polls/:id/votes` here", r.pollThere},
		{"a post here with a picture", "`POST /api/v2/media`, then `/api/v1/statuses` here", r.pictureHere},
		{"their post with a picture", "`POST /api/v2/media`, then `/api/v1/statuses` there", r.pictureThere},
		{"a delete here of a post", "`DELETE /api/v1/statuses/:id` here", r.deleteHere},
		{"their delete of their post", "`DELETE /api/v1/statuses/:id` there", r.theirDelete},
		{"a profile change here reaches them", "`PATCH /api/v1/accounts/update_credentials` here", r.profile},
		{"a block here of their person", "`POST /api/v1/accounts/:id/block` here", r.block},
		{"their unfollow of a person here", "`POST /api/v1/accounts/:id/unfollow` there", r.unfollow},
	}
}
