package main

// The peer mode: one Mastodon-API workload against any server that speaks
// Mastodon's client API, by URL, several servers in one run, side by side.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"socialstream/internal/oauthclient"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
)

// peerTarget is a server the peer mode measures: its name, its base URL,
// the process whose CPU (with its children's, an emulator's) is its
// cost, and how its accounts are had: signed up through the API, or,
// from a file of "email password" lines, signed in through its sign-in
// page (a server that approves sign-ups by hand).
type peerTarget struct {
	name, base string
	pid        int
	signin     string
}

// peerConfig is the peer mode's workload.
type peerConfig struct {
	targets []peerTarget
	people  int // accounts: one author, the rest follow them
	posts   int // the author's posts
	reads   int // timeline pages read, alone and then 8 clients at once
	readers int // clients reading at once
	storm   int // accounts favouriting one post at once (at most people-1)
}

// parsePeer reads -peer name=URL[,pid=N][,signin=FILE].
func parsePeer(s string) (peerTarget, error) {
	name, rest, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return peerTarget{}, fmt.Errorf("-peer %q: want name=URL[,pid=N][,signin=FILE]", s)
	}
	parts := strings.Split(rest, ",")
	t := peerTarget{name: name, base: strings.TrimRight(parts[0], "/")}
	if u, err := url.Parse(t.base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return peerTarget{}, fmt.Errorf("-peer %q: %q is no http(s) URL", s, parts[0])
	}
	for _, p := range parts[1:] {
		k, v, _ := strings.Cut(p, "=")
		switch k {
		case "pid":
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return peerTarget{}, fmt.Errorf("-peer %q: pid %q", s, v)
			}
			t.pid = n
		case "signin":
			t.signin = v
		default:
			return peerTarget{}, fmt.Errorf("-peer %q: unknown %q", s, k)
		}
	}
	return t, nil
}

// peerResult is one server's figures.
type peerResult struct {
	ops    map[string]*peerOp
	counts map[string]string
}

// peerOp is one operation's measure: latencies, wall time, and the
// server's CPU over it (cpu with its children's, an emulator's; self its
// own process's alone).
type peerOp struct {
	lat       []time.Duration
	wall      time.Duration
	cpu, self time.Duration
	n         int
}

func (o *peerOp) pct(p float64) float64 {
	if len(o.lat) == 0 {
		return 0
	}
	s := slices.Clone(o.lat)
	slices.Sort(s)
	return float64(s[min(len(s)-1, int(p*float64(len(s))))]) / float64(time.Millisecond)
}

func (o *peerOp) perSecond() float64 { return float64(o.n) / o.wall.Seconds() }

func (o *peerOp) cpuPerOp() float64 { return float64(o.cpu) / float64(time.Millisecond) / float64(o.n) }

func (o *peerOp) selfPerOp() float64 {
	return float64(o.self) / float64(time.Millisecond) / float64(o.n)
}

// peerClient speaks Mastodon's API to one server.
type peerClient struct {
	t    peerTarget
	http *http.Client
}

// errStatus is an answer that was not a success.
type errStatus struct {
	status int
	body   string
}

func (e *errStatus) Error() string { return fmt.Sprintf("%d %s", e.status, e.body) }

// call sends a JSON body (or none) with token, and decodes a JSON answer
// into out.
func (c *peerClient) call(ctx context.Context, method, path, token string, body, out any) error {
	var r io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.t.base+path, r)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", "feedbench (socialstream)")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %w", method, path, &errStatus{resp.StatusCode, strings.TrimSpace(string(data[:min(len(data), 300)]))})
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

type peerApp struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
}

type peerToken struct {
	AccessToken string `json:"access_token"`
}

const peerScopes = "read write follow"

// app registers the bench as an app with redirect.
func (c *peerClient) app(ctx context.Context, redirect string) (peerApp, error) {
	var a peerApp
	err := c.call(ctx, http.MethodPost, "/api/v1/apps", "", map[string]string{"client_name": "feedbench", "redirect_uris": redirect, "scopes": peerScopes}, &a)
	return a, err
}

// signUp makes n accounts through POST /api/v1/accounts with an app's
// token, timing each.
func (c *peerClient) signUp(ctx context.Context, n int, op *peerOp) ([]string, error) {
	a, err := c.app(ctx, "urn:ietf:wg:oauth:2.0:oob")
	if err != nil {
		return nil, err
	}
	var app peerToken
	if err := c.call(ctx, http.MethodPost, "/oauth/token", "", map[string]string{"grant_type": "client_credentials",
		"client_id": a.ClientID, "client_secret": a.ClientSecret, "scope": peerScopes}, &app); err != nil {
		return nil, err
	}
	run := strconv.FormatInt(time.Now().UnixMilli()%1e7, 36)
	tokens := make([]string, n)
	for i := range n {
		name := fmt.Sprintf("fb%s%d", run, i)
		var tok peerToken
		start := time.Now()
		if err := c.call(ctx, http.MethodPost, "/api/v1/accounts", app.AccessToken, map[string]any{"username": name,
			"email": name + "@example.com", "password": "feedbench-" + name + "-pw", "agreement": true, "locale": "en"}, &tok); err != nil {
			return nil, fmt.Errorf("sign-up: %w", err)
		}
		op.lat = append(op.lat, time.Since(start))
		tokens[i] = tok.AccessToken
	}
	op.n = n
	return tokens, nil
}

// signIn gets a token for each of the first n "email password" lines of
// file through the server's sign-in page (package oauthclient).
func (c *peerClient) signIn(ctx context.Context, file string, n int) ([]string, error) {
	logins, err := oauthclient.Logins(file, n)
	if err != nil {
		return nil, err
	}
	a, err := oauthclient.Register(ctx, c.t.base, "feedbench", "feedbench (socialstream)")
	if err != nil {
		return nil, err
	}
	tokens := make([]string, len(logins))
	for i, l := range logins {
		if tokens[i], err = a.SignIn(ctx, l[0], l[1]); err != nil {
			return nil, err
		}
	}
	return tokens, nil
}

// cpu is the CPU time so far of the target's process and its
// descendants, and of the process alone (0 without a pid).
func (c *peerClient) cpu() (tree, self time.Duration, err error) {
	if c.t.pid == 0 {
		return 0, 0, nil
	}
	return treeCPU(c.t.pid)
}

// treeCPU sums /proc's user and system time of pid and every process
// below it, and tells pid's own.
func treeCPU(pid int) (tree, self time.Duration, err error) {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return 0, 0, err
	}
	parent := map[int]int{}
	ticks := map[int]int64{}
	for _, p := range stats {
		data, err := os.ReadFile(p)
		if err != nil {
			continue // gone since
		}
		// pid (comm) state ppid ... utime stime: the comm may hold
		// spaces, so the fields are counted from its closing bracket.
		s := string(data)
		end := strings.LastIndexByte(s, ')')
		if end < 0 {
			continue
		}
		id, _ := strconv.Atoi(strings.Fields(s[:end])[0])
		f := strings.Fields(s[end+1:])
		if len(f) < 13 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		u, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		parent[id], ticks[id] = ppid, u+st
	}
	own, ok := ticks[pid]
	if !ok {
		return 0, 0, fmt.Errorf("no process %d", pid)
	}
	var sum int64
	for id, t := range ticks {
		for p := id; p > 1; p = parent[p] {
			if p == pid {
				sum += t
				break
			}
		}
	}
	const tick = time.Second / 100 // USER_HZ is 100 on Linux
	return time.Duration(sum) * tick, time.Duration(own) * tick, nil
}

// timed runs f n times on clients goroutines, each call timed, and
// records latencies, wall time and the server's CPU in op.
func (c *peerClient) timed(ctx context.Context, op *peerOp, n, clients int, f func(ctx context.Context, i int) error) error {
	cpu0, self0, err := c.cpu()
	if err != nil {
		return err
	}
	var mu sync.Mutex
	var next atomic.Int64
	start := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	for range clients {
		g.Go(func() error {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return nil
				}
				t := time.Now()
				if err := f(gctx, i); err != nil {
					return err
				}
				d := time.Since(t)
				mu.Lock()
				op.lat = append(op.lat, d)
				mu.Unlock()
			}
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	op.wall += time.Since(start)
	op.n += n
	cpu1, self1, err := c.cpu()
	op.cpu, op.self = op.cpu+cpu1-cpu0, op.self+self1-self0
	return err
}

type peerStatus struct {
	ID              string `json:"id"`
	FavouritesCount int    `json:"favourites_count"`
}

type peerAccount struct {
	ID string `json:"id"`
}

// runPeer runs the workload against one target.
func runPeer(ctx context.Context, cfg peerConfig, t peerTarget, progress func(string, ...any)) (*peerResult, error) {
	c := &peerClient{t: t, http: &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	res := &peerResult{ops: map[string]*peerOp{}, counts: map[string]string{}}
	op := func(name string) *peerOp {
		if res.ops[name] == nil {
			res.ops[name] = &peerOp{}
		}
		return res.ops[name]
	}
	var tokens []string
	var err error
	if t.signin != "" {
		tokens, err = c.signIn(ctx, t.signin, cfg.people)
	} else {
		o := op("sign-up")
		cpu0, self0, _ := c.cpu()
		start := time.Now()
		tokens, err = c.signUp(ctx, cfg.people, o)
		o.wall = time.Since(start)
		cpu1, self1, _ := c.cpu()
		o.cpu, o.self = cpu1-cpu0, self1-self0
	}
	if err != nil {
		return nil, fmt.Errorf("%s: accounts: %w", t.name, err)
	}
	progress("%s: %d accounts", t.name, len(tokens))
	ids := make([]string, len(tokens))
	for i, tok := range tokens {
		var a peerAccount
		// Open accounts: a follow takes effect at once. A server whose
		// accounts start locked (GoToSocial's) unlocks them here.
		if err := c.call(ctx, http.MethodPatch, "/api/v1/accounts/update_credentials", tok, map[string]any{"locked": false}, &a); err != nil {
			return nil, fmt.Errorf("%s: unlock: %w", t.name, err)
		}
		ids[i] = a.ID
	}
	author, followers := tokens[0], tokens[1:]
	if err := c.timed(ctx, op("follow"), len(followers), 1, func(ctx context.Context, i int) error {
		return c.call(ctx, http.MethodPost, "/api/v1/accounts/"+ids[0]+"/follow", followers[i], nil, nil)
	}); err != nil {
		return nil, fmt.Errorf("%s: follow: %w", t.name, err)
	}
	var last peerStatus
	if err := c.timed(ctx, op("post"), cfg.posts, 1, func(ctx context.Context, i int) error {
		return c.call(ctx, http.MethodPost, "/api/v1/statuses", author, map[string]string{"status": fmt.Sprintf("post %d of the peer bench", i), "visibility": "public"}, &last)
	}); err != nil {
		return nil, fmt.Errorf("%s: post: %w", t.name, err)
	}
	progress("%s: %d follows, %d posts", t.name, len(followers), cfg.posts)
	// Fan-out: a post, then every follower's home polled until it shows.
	var probe peerStatus
	start := time.Now()
	if err := c.call(ctx, http.MethodPost, "/api/v1/statuses", author, map[string]string{"status": "the fan-out probe", "visibility": "public"}, &probe); err != nil {
		return nil, err
	}
	for _, tok := range followers {
		for {
			var home []peerStatus
			if err := c.call(ctx, http.MethodGet, "/api/v1/timelines/home?limit=5", tok, nil, &home); err != nil {
				return nil, err
			}
			if slices.ContainsFunc(home, func(s peerStatus) bool { return s.ID == probe.ID }) {
				break
			}
			if time.Since(start) > time.Minute {
				return nil, fmt.Errorf("%s: the probe is not at home a minute after it was posted", t.name)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	res.counts["fan-out: a post until every follower's home shows it, ms"] = fmt.Sprintf("%.0f", float64(time.Since(start))/float64(time.Millisecond))
	for _, tl := range []struct{ name, path string }{{"home", "/api/v1/timelines/home?limit=20"}, {"public", "/api/v1/timelines/public?limit=20"}} {
		read := func(ctx context.Context, i int) error {
			var page []peerStatus
			if err := c.call(ctx, http.MethodGet, tl.path, followers[i%len(followers)], nil, &page); err != nil {
				return err
			}
			if len(page) < min(20, cfg.posts) {
				return fmt.Errorf("%s page of %d statuses, want 20", tl.name, len(page))
			}
			return nil
		}
		if err := c.timed(ctx, op(tl.name+" page, alone"), cfg.reads, 1, read); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", t.name, tl.name, err)
		}
		if err := c.timed(ctx, op(fmt.Sprintf("%s page, %d at once", tl.name, cfg.readers)), cfg.reads, cfg.readers, read); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", t.name, tl.name, err)
		}
	}
	progress("%s: timelines read", t.name)
	storm := min(cfg.storm, len(followers))
	if err := c.timed(ctx, op(fmt.Sprintf("favourite, %d at once", storm)), storm, storm, func(ctx context.Context, i int) error {
		return c.call(ctx, http.MethodPost, "/api/v1/statuses/"+probe.ID+"/favourite", followers[i], nil, nil)
	}); err != nil {
		return nil, fmt.Errorf("%s: favourite: %w", t.name, err)
	}
	var after peerStatus
	if err := c.call(ctx, http.MethodGet, "/api/v1/statuses/"+probe.ID, author, nil, &after); err != nil {
		return nil, err
	}
	time.Sleep(2 * time.Second) // a count a job keeps may come late
	var settled peerStatus
	if err := c.call(ctx, http.MethodGet, "/api/v1/statuses/"+probe.ID, author, nil, &settled); err != nil {
		return nil, err
	}
	res.counts[fmt.Sprintf("favourites_count after %d at once (at once; 2 s later)", storm)] = fmt.Sprintf("%d; %d", after.FavouritesCount, settled.FavouritesCount)
	return res, nil
}

// peerMode runs the workload against every target, one after another,
// and writes the table.
func peerMode(ctx context.Context, cfg peerConfig, out io.Writer, progress func(string, ...any)) error {
	if len(cfg.targets) == 0 {
		return errors.New("name a server: -peer name=URL")
	}
	results := make([]*peerResult, len(cfg.targets))
	for i, t := range cfg.targets {
		r, err := runPeer(ctx, cfg, t, progress)
		if err != nil {
			return err
		}
		results[i] = r
	}
	peerMarkdown(out, cfg, results)
	return nil
}

// peerMarkdown writes each operation's figures, a column a server, and
// the first server's over each other's.
func peerMarkdown(out io.Writer, cfg peerConfig, rs []*peerResult) {
	head := []string{"operation", "figure"}
	for _, t := range cfg.targets {
		head = append(head, t.name)
	}
	for _, t := range cfg.targets[1:] {
		head = append(head, cfg.targets[0].name+" / "+t.name)
	}
	fmt.Fprintf(out, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat(" --- |", len(head)))
	var names []string
	for name := range rs[0].ops {
		names = append(names, name)
	}
	order := []string{"sign-up", "follow", "post", "home page, alone", "public page, alone"}
	slices.SortFunc(names, func(a, b string) int {
		ia, ib := slices.Index(order, a), slices.Index(order, b)
		if ia < 0 {
			ia = len(order)
		}
		if ib < 0 {
			ib = len(order)
		}
		if ia != ib {
			return ia - ib
		}
		return strings.Compare(a, b)
	})
	row := func(name, figure string, f func(o *peerOp) float64) {
		cells := []string{name, figure}
		var vals []float64
		for _, r := range rs {
			o := r.ops[name]
			if o == nil {
				cells, vals = append(cells, "n/a"), append(vals, 0)
				continue
			}
			v := f(o)
			cells, vals = append(cells, fmt.Sprintf("%.2f", v)), append(vals, v)
		}
		for _, v := range vals[1:] {
			if v > 0 && vals[0] > 0 {
				cells = append(cells, fmt.Sprintf("%.2fx", vals[0]/v))
			} else {
				cells = append(cells, "")
			}
		}
		fmt.Fprintf(out, "| %s |\n", strings.Join(cells, " | "))
	}
	for _, name := range names {
		row(name, "p50 ms", func(o *peerOp) float64 { return o.pct(0.5) })
		row(name, "p95 ms", func(o *peerOp) float64 { return o.pct(0.95) })
		row(name, "per second", func(o *peerOp) float64 { return o.perSecond() })
		if cfg.targets[0].pid != 0 {
			row(name, "server CPU ms each", func(o *peerOp) float64 { return o.cpuPerOp() })
			row(name, "of which its own process", func(o *peerOp) float64 { return o.selfPerOp() })
		}
	}
	var counts []string
	for k := range rs[0].counts {
		counts = append(counts, k)
	}
	slices.Sort(counts)
	for _, k := range counts {
		cells := []string{k, ""}
		for _, r := range rs {
			cells = append(cells, r.counts[k])
		}
		for range rs[1:] {
			cells = append(cells, "")
		}
		fmt.Fprintf(out, "| %s |\n", strings.Join(cells, " | "))
	}
}
