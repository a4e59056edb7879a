package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"socialstream/internal/activities"
	"socialstream/internal/graph"
	"socialstream/internal/likes"
)

// pageSize is the feed page every reader asks for.
const pageSize = 20

// dist summarises latencies, in milliseconds.
type dist struct {
	N    int     `json:"n"`
	P50  float64 `json:"p50Ms"`
	P90  float64 `json:"p90Ms"`
	P99  float64 `json:"p99Ms"`
	Max  float64 `json:"maxMs"`
	Mean float64 `json:"meanMs"`
}

func summarise(d []time.Duration) dist {
	if len(d) == 0 {
		return dist{}
	}
	d = slices.Clone(d)
	slices.Sort(d)
	ms := func(x time.Duration) float64 { return float64(x.Microseconds()) / 1000 }
	at := func(q float64) float64 { return ms(d[max(0, int(math.Ceil(q*float64(len(d))))-1)]) }
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	return dist{N: len(d), P50: at(0.50), P90: at(0.90), P99: at(0.99), Max: ms(d[len(d)-1]), Mean: ms(sum / time.Duration(len(d)))}
}

// timed runs op n times on clients goroutines and returns each latency.
func timed(ctx context.Context, n, clients int, op func(ctx context.Context) error) ([]time.Duration, error) {
	out := make([]time.Duration, n)
	var next int
	var mu sync.Mutex
	errc := make(chan error, clients)
	for c := 0; c < clients; c++ {
		go func() {
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					errc <- nil
					return
				}
				start := time.Now()
				if err := op(ctx); err != nil {
					errc <- err
					return
				}
				out[i] = time.Since(start)
			}
		}()
	}
	var errs []error
	for c := 0; c < clients; c++ {
		errs = append(errs, <-errc)
	}
	return out, errors.Join(errs...)
}

// interleaved measures a and b in rounds, a then b, so drift in the
// emulator over the run touches both alike.
func interleaved(ctx context.Context, n, clients int, a, b func(ctx context.Context) error) (da, db []time.Duration, err error) {
	const rounds = 4
	for r := 0; r < rounds; r++ {
		m := n / rounds
		if r == rounds-1 {
			m = n - m*(rounds-1)
		}
		x, err := timed(ctx, m, clients, a)
		if err != nil {
			return nil, nil, err
		}
		y, err := timed(ctx, m, clients, b)
		if err != nil {
			return nil, nil, err
		}
		da, db = append(da, x...), append(db, y...)
	}
	return da, db, nil
}

// call sends a request to the API and returns the status and body.
func (s *stack) call(ctx context.Context, method, path, token string, body any) (int, []byte, error) {
	var rd io.Reader
	kind := "application/json"
	switch b := body.(type) {
	case nil:
	case []byte: // a picture's bytes
		rd, kind = bytes.NewReader(b), "image/png"
	default:
		data, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.url+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if rd != nil {
		req.Header.Set("Content-Type", kind)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := s.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	return res.StatusCode, data, err
}

// homeHTTP reads the first page of u's home feed through the API.
func (s *stack) homeHTTP(u user) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		status, body, err := s.call(ctx, "GET", "/social/rest/activities/@me/@friends?count="+strconv.Itoa(pageSize), u.token, nil)
		if err != nil {
			return err
		}
		if status != http.StatusOK {
			return fmt.Errorf("home of %s: %d %s", u.name, status, body)
		}
		return nil
	}
}

// homeFloor issues the Datastore calls of a home feed page directly: the
// keys-only audience query (one result more, to know of a next page), the
// lookup of the activities, and the lookup of their authors, counts and
// the viewer's likes. No HTTP, no token, no JSON.
func (s *stack) homeFloor(u user) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		ids, err := activities.HomeIDs(ctx, s.db, u.id, 0, pageSize+1)
		if err != nil {
			return err
		}
		return s.lookupViews(ctx, u, ids[:min(pageSize, len(ids))])
	}
}

// lookupViews looks up activities, then their authors' cards and the
// viewer's state, as a feed does.
func (s *stack) lookupViews(ctx context.Context, u user, ids []string) error {
	n, err := activities.LookupBare(ctx, s.db, u.id, ids, likes.Records{DB: s.db})
	if err != nil {
		return err
	}
	if n != pageSize {
		return fmt.Errorf("home of %s: %d activities, want %d", u.name, n, pageSize)
	}
	return nil
}

// pullMerge reads a home page the normalised way: the newest page of each
// followee's own activities, one query each (16 at a time), merged by time
// (ids are time-ordered), then the same lookups as a feed.
func (s *stack) pullMerge(u user, followees []user) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		var mu sync.Mutex
		var all []activities.Ref
		err := parallel(ctx, len(followees), 16, func(ctx context.Context, i int) error {
			refs, err := activities.Newest(ctx, s.db, followees[i].id, 0, pageSize)
			if err != nil {
				return err
			}
			mu.Lock()
			all = append(all, refs...)
			mu.Unlock()
			return nil
		})
		if err != nil {
			return err
		}
		slices.SortFunc(all, func(a, b activities.Ref) int { return cmp.Compare(b.Seq, a.Seq) })
		ids := make([]string, 0, pageSize)
		for _, r := range all[:min(pageSize, len(all))] {
			ids = append(ids, r.ID)
		}
		return s.lookupViews(ctx, u, ids)
	}
}

// postHTTP posts as u through the API and returns the activity's id.
func (s *stack) postHTTP(ctx context.Context, u user, title string) (string, error) {
	return s.postBody(ctx, u, map[string]any{"title": title})
}

// postPoll posts as u a poll of two options, open a day.
func (s *stack) postPoll(ctx context.Context, u user, title string) (string, error) {
	return s.postBody(ctx, u, map[string]any{"title": title, "poll": map[string]any{"options": []string{"yes", "no"}, "expiresIn": 86400}})
}

// created is what the REST face answers a request that makes something:
// its id.
type created struct {
	Entry struct {
		ID string `json:"id"`
	} `json:"entry"`
}

// postBody posts the activity body as u and returns its id.
func (s *stack) postBody(ctx context.Context, u user, activity map[string]any) (string, error) {
	status, body, err := s.call(ctx, "POST", "/social/rest/activities/@me/@self", u.token, activity)
	if err != nil {
		return "", err
	}
	if status != http.StatusCreated {
		return "", fmt.Errorf("post as %s: %d %s", u.name, status, body)
	}
	var r created
	if err := json.Unmarshal(body, &r); err != nil {
		return "", err
	}
	return r.Entry.ID, nil
}

// audienceSize counts the distinct ids in an activity's audience entities.
func (s *stack) audienceSize(ctx context.Context, activity string) (int, error) {
	return activities.AudienceSize(ctx, s.db, activity)
}

// waitAllSee waits until every follower has the activity at the top of
// their home feed. A fan-out writes a whole follower chunk in one
// transaction, so it looks at the first and the last follower of each
// chunk (graph.ChunkCap ids, in import order), each by the home feed's own
// query, until each chunk has been seen. A call that times out while the
// emulator is busy writing counts as "not yet".
func (s *stack) waitAllSee(ctx context.Context, id, author string, followers []string) error {
	probes := []string{author}
	for i := 0; i < len(followers); i += graph.ChunkCap {
		probes = append(probes, followers[i], followers[min(i+graph.ChunkCap, len(followers))-1])
	}
	return waitFor(ctx, 10*time.Minute, 50*time.Millisecond, func() (bool, error) {
		for len(probes) > 0 {
			got, err := s.atHome(ctx, probes[0], 0)
			if status.Code(err) == codes.DeadlineExceeded || status.Code(err) == codes.Unavailable {
				return false, nil
			}
			if err != nil || got != id {
				return false, err
			}
			probes = probes[1:]
		}
		return true, nil
	})
}

// retry runs f up to 5 times while it fails with a timeout or an
// unavailable emulator.
func retry(ctx context.Context, f func() error) error {
	var err error
	for i := 0; i < 5; i++ {
		if err = f(); status.Code(err) != codes.DeadlineExceeded && status.Code(err) != codes.Unavailable {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	return err
}

// atHome returns the id of the activity at offset on u's home feed,
// by the home feed's own query, or "" if there is none.
func (s *stack) atHome(ctx context.Context, userID string, offset int) (string, error) {
	ids, err := activities.HomeIDs(ctx, s.db, userID, offset, 1)
	if err != nil || len(ids) == 0 {
		return "", err
	}
	return ids[0], nil
}

// waitFor polls cond every interval until it is true or limit passes.
func waitFor(ctx context.Context, limit, interval time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(limit)
	for {
		ok, err := cond()
		if err != nil || ok {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not done after %v", limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}
