package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// stormRow is one storm: ops requests on one activity or one user from
// clients at once.
type stormRow struct {
	What      string  `json:"what"`
	Ops       int     `json:"ops"`
	Clients   int     `json:"clients"`
	Seconds   float64 `json:"seconds"`
	PerSecond float64 `json:"perSecond"`
	Latency   dist    `json:"latency"`
	Errors    int     `json:"errors"`
	Count     int64   `json:"count"` // read right after the last answer
	Exact     bool    `json:"exact"`
	First     string  `json:"firstError,omitempty"` // the first failure's, if any
}

// stormPosts are the posts of the followed user: before the follow storm,
// during it (one a second), and after it (same user, same followers, no
// storm), before and after on a quiet system (no job pending).
type stormPosts struct {
	Before dist `json:"before"`
	During dist `json:"during"`
	After  dist `json:"after"`
	// Bystander is an unrelated user's posts during the storm, each right
	// after one of the followed user's: what the storm's load alone costs
	// any post on the same emulator.
	Bystander dist `json:"bystander"`
	// Control is the posts of a user given the same followers by import,
	// with no storm, on a quiet system: what a post to that many followers
	// costs, against which After shows what the storm left behind.
	Control dist `json:"control"`
}

// storm runs op(i) for i in 0..n-1 from clients goroutines, counting
// failures instead of stopping at the first, and times each.
func storm(ctx context.Context, n, clients int, op func(ctx context.Context, i int) error) (lat []time.Duration, took time.Duration, errs int, first error) {
	var next, failed atomic.Int64
	var once sync.Once
	lat = make([]time.Duration, n)
	var wg sync.WaitGroup
	start := time.Now()
	for range clients {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				t := time.Now()
				if err := op(ctx, i); err != nil {
					failed.Add(1)
					once.Do(func() { first = err })
				}
				lat[i] = time.Since(t)
			}
		})
	}
	wg.Wait()
	return lat, time.Since(start), int(failed.Load()), first
}

// expect sends a request and wants status back.
func (s *stack) expect(ctx context.Context, status int, method, path, token string, body any) ([]byte, error) {
	got, data, err := s.call(ctx, method, path, token, body)
	if err == nil && got != status {
		err = fmt.Errorf("%s %s: %d %s", method, path, got, data)
	}
	return data, err
}

// count reads one number field of an entry (or a list of one) through the
// API; a field of a field is named with a dot ("poll.votersCount").
func (s *stack) count(ctx context.Context, path, token, field string) (int64, error) {
	data, err := s.expect(ctx, http.StatusOK, "GET", path, token, nil)
	if err != nil {
		return 0, err
	}
	var r struct {
		Entry map[string]any   `json:"entry"`
		List  []map[string]any `json:"list"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return 0, err
	}
	if r.Entry == nil && len(r.List) == 1 {
		r.Entry = r.List[0]
	}
	entry := r.Entry
	steps := strings.Split(field, ".")
	for _, step := range steps[:len(steps)-1] {
		entry, _ = entry[step].(map[string]any)
	}
	n, ok := entry[steps[len(steps)-1]].(float64)
	if !ok {
		return 0, fmt.Errorf("GET %s: no %s in %s", path, field, data)
	}
	return int64(n), nil
}

func (row *stormRow) finish(lat []time.Duration, took time.Duration, errs int, got, want int64) {
	row.Latency, row.Seconds, row.Errors = summarise(lat), took.Seconds(), errs
	row.PerSecond = float64(row.Ops) / took.Seconds()
	row.Count, row.Exact = got, got == want
}

// stormPostEvery is how often the followed user posts during the follow
// storm: a busy celebrity, each post fanned out to every lane.
const stormPostEvery = time.Second

// storms measures the hot spots: cfg.storm likes of one activity, then
// cfg.storm follows of one user, from cfg.stormClients clients each, with
// that user posting before, during and after the follow storm.
func storms(ctx context.Context, s *stack, cfg config, progress func(string, ...any)) ([]stormRow, stormPosts, error) {
	crowd := make([]user, cfg.storm)
	err := parallel(ctx, len(crowd), 16, func(ctx context.Context, i int) (err error) {
		crowd[i], err = s.register(ctx, fmt.Sprintf("crowd%05d", i))
		return err
	})
	if err != nil {
		return nil, stormPosts{}, err
	}
	star, err := s.register(ctx, "viral")
	if err != nil {
		return nil, stormPosts{}, err
	}
	bystander, err := s.register(ctx, "bystander")
	if err != nil {
		return nil, stormPosts{}, err
	}

	// Like storm.
	id, err := s.postHTTP(ctx, star, "viral post")
	if err != nil {
		return nil, stormPosts{}, err
	}
	likes := stormRow{What: "like storm: likes of one activity", Ops: cfg.storm, Clients: cfg.stormClients}
	lat, took, errs, first := storm(ctx, cfg.storm, cfg.stormClients, func(ctx context.Context, i int) error {
		_, err := s.expect(ctx, http.StatusOK, "POST", "/social/rest/likes/"+id, crowd[i].token, nil)
		return err
	})
	got, err := s.count(ctx, "/social/rest/activities/"+star.id+"/@self/@app/"+id, star.token, "likesCount")
	if err != nil {
		return nil, stormPosts{}, err
	}
	likes.finish(lat, took, errs, got, int64(cfg.storm))
	progress("like storm: %.0f/s, p99 %.0f ms, %d errors (first: %v), likesCount %d", likes.PerSecond, likes.Latency.P99, errs, first, got)

	// Repost and comment storms on the same activity: every reaction
	// counts in it, as a like does.
	reposts, err := reactionStorm(ctx, s, cfg, crowd, star, id, "repost storm: reposts of one activity", "repostsCount",
		func(ctx context.Context, u user) error {
			_, err := s.expect(ctx, http.StatusCreated, "POST", "/social/rest/reposts/"+id, u.token, nil)
			return err
		})
	if err != nil {
		return nil, stormPosts{}, err
	}
	progress("repost storm: %.0f/s, p99 %.0f ms, %d errors, repostsCount %d", reposts.PerSecond, reposts.Latency.P99, reposts.Errors, reposts.Count)
	comments, err := reactionStorm(ctx, s, cfg, crowd, star, id, "comment storm: comments on one activity", "commentsCount",
		func(ctx context.Context, u user) error {
			_, err := s.expect(ctx, http.StatusCreated, "POST", "/social/rest/comments/"+id, u.token, map[string]string{"text": "storm comment by " + u.name})
			return err
		})
	if err != nil {
		return nil, stormPosts{}, err
	}
	progress("comment storm: %.0f/s, p99 %.0f ms, %d errors, commentsCount %d", comments.PerSecond, comments.Latency.P99, comments.Errors, comments.Count)

	// Vote storm: the crowd votes in one poll, each for one of its two
	// options; every vote must count once, in the voters and the votes.
	votes, err := voteStorm(ctx, s, cfg, crowd, star)
	if err != nil {
		return nil, stormPosts{}, err
	}
	progress("vote storm: %.0f/s, p99 %.0f ms, %d errors, votersCount %d", votes.PerSecond, votes.Latency.P99, votes.Errors, votes.Count)

	// Follow storm, and the followed user's posts around it.
	var posts stormPosts
	postSome := func(n int, what string) (dist, error) {
		return postsBy(ctx, s, star, n, what)
	}
	// The posts before and after the storm are made on a quiet system:
	// every job of the storms and of the posts during it done.
	quiet := func() error {
		return waitFor(ctx, 10*time.Minute, 100*time.Millisecond, func() (bool, error) { return s.pending() == 0, nil })
	}
	if err := quiet(); err != nil {
		return nil, stormPosts{}, fmt.Errorf("the jobs of the like storm never finished: %w", err)
	}
	if posts.Before, err = postSome(cfg.stormPosts, "before"); err != nil {
		return nil, stormPosts{}, err
	}
	follows := stormRow{What: "follow storm: follows of one user", Ops: cfg.storm, Clients: cfg.stormClients}
	done := make(chan struct{})
	var during, other []time.Duration
	var postErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(stormPostEvery)
		defer tick.Stop()
		for i := 0; ; i++ {
			if i > 0 { // the first at once, so even a short storm has one
				select {
				case <-done:
					return
				case <-tick.C:
				}
			}
			for _, p := range []struct {
				u user
				d *[]time.Duration
			}{{star, &during}, {bystander, &other}} {
				t := time.Now()
				if _, err := s.postHTTP(ctx, p.u, fmt.Sprintf("during %d", i)); err != nil {
					postErr = err
					return
				}
				*p.d = append(*p.d, time.Since(t))
			}
		}
	})
	lat, took, errs, first = storm(ctx, cfg.storm, cfg.stormClients, func(ctx context.Context, i int) error {
		_, err := s.expect(ctx, http.StatusCreated, "POST", "/social/rest/people/@me/@friends", crowd[i].token, map[string]any{"id": star.id, "copyLimit": 0})
		return err
	})
	close(done)
	wg.Wait()
	if postErr != nil {
		return nil, stormPosts{}, fmt.Errorf("a post during the follow storm: %w", postErr)
	}
	posts.During, posts.Bystander = summarise(during), summarise(other)
	got, err = s.count(ctx, "/social/rest/people/"+star.id+"/@self", star.token, "followersCount")
	if err != nil {
		return nil, stormPosts{}, err
	}
	follows.finish(lat, took, errs, got, int64(cfg.storm))
	progress("follow storm: %.0f/s, p99 %.0f ms, %d errors (first: %v), followersCount %d; %d posts during it, p50 %.0f ms (a bystander's %.0f ms)",
		follows.PerSecond, follows.Latency.P99, errs, first, got, posts.During.N, posts.During.P50, posts.Bystander.P50)
	if err := quiet(); err != nil {
		return nil, stormPosts{}, fmt.Errorf("the jobs of the follow storm never finished: %w", err)
	}
	if posts.After, err = postSome(cfg.stormPosts, "after"); err != nil {
		return nil, stormPosts{}, err
	}
	control, err := s.register(ctx, "control")
	if err != nil {
		return nil, stormPosts{}, err
	}
	ids := make([]string, len(crowd))
	for i, u := range crowd {
		ids[i] = u.id
	}
	if err := s.graph.ImportFollowers(ctx, control.id, ids); err != nil {
		return nil, stormPosts{}, err
	}
	if posts.Control, err = postsBy(ctx, s, control, cfg.stormPosts, "control"); err != nil {
		return nil, stormPosts{}, err
	}
	return []stormRow{likes, reposts, comments, votes, follows}, posts, nil
}

// voteStorm has each of the crowd vote once in one poll of star's, for
// one of its two options, and reads its voters and its votes after the
// last answer: both must be the crowd.
func voteStorm(ctx context.Context, s *stack, cfg config, crowd []user, star user) (stormRow, error) {
	poll, err := s.postPoll(ctx, star, "viral poll")
	if err != nil {
		return stormRow{}, err
	}
	votes, err := reactionStorm(ctx, s, cfg, crowd, star, poll, "vote storm: votes in one poll", "poll.votersCount",
		func(ctx context.Context, u user) error {
			choice := len(u.name) % 2
			_, err := s.expect(ctx, http.StatusOK, "POST", "/social/rest/polls/"+poll+"/votes", u.token, map[string]any{"choices": []int{choice}})
			return err
		})
	if err != nil {
		return votes, err
	}
	n, err := s.count(ctx, "/social/rest/activities/"+star.id+"/@self/@app/"+poll, star.token, "poll.votesCount")
	if err != nil {
		return votes, err
	}
	if n != votes.Count {
		votes.Exact = false
		votes.First = fmt.Sprintf("votesCount %d against votersCount %d in a poll of one choice each", n, votes.Count)
	}
	return votes, nil
}

// reactionStorm has each of the crowd react once to the activity id of
// star's, cfg.stormClients at a time, and reads the count the reactions
// move (field) right after the last answer.
func reactionStorm(ctx context.Context, s *stack, cfg config, crowd []user, star user, id, what, field string, react func(context.Context, user) error) (stormRow, error) {
	row := stormRow{What: what, Ops: cfg.storm, Clients: cfg.stormClients}
	lat, took, errs, first := storm(ctx, cfg.storm, cfg.stormClients, func(ctx context.Context, i int) error {
		return react(ctx, crowd[i])
	})
	got, err := s.count(ctx, "/social/rest/activities/"+star.id+"/@self/@app/"+id, star.token, field)
	if err != nil {
		return row, err
	}
	row.finish(lat, took, errs, got, int64(cfg.storm))
	if first != nil {
		row.First = first.Error()
	}
	return row, nil
}

// postsBy makes n posts by u, one after another, and returns their
// latencies.
func postsBy(ctx context.Context, s *stack, u user, n int, what string) (dist, error) {
	var d []time.Duration
	for i := range n {
		t := time.Now()
		if _, err := s.postHTTP(ctx, u, fmt.Sprintf("%s %d", what, i)); err != nil {
			return dist{}, err
		}
		d = append(d, time.Since(t))
	}
	return summarise(d), nil
}
