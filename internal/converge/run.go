// Package converge checks that the copies on activities converge to what
// the graph says, under concurrency and faults. It starts the local stack
// (the Datastore emulator behind a fault-injecting gRPC interceptor, the
// tasks emulator in its fault mode, the API over HTTP), runs a seeded
// random mix of every write the API offers from concurrent clients, waits
// until every queue is empty, and compares every feed and count with an
// oracle computed from the acknowledged operations (see model.go).
//
// cmd/converge runs it from the command line; its test runs it briefly.
package converge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
)

// Config configures a run.
type Config struct {
	Seed     uint64
	Clients  int           // concurrent clients
	Users    int           // users registered before the mix starts
	MaxUsers int           // the mix registers no more once there are this many
	Duration time.Duration // how long the mix runs
	// MinEach, when set, lets the mix run on past Duration (up to twice
	// as long) until every operation has run at least this many times.
	MinEach int
	Settle  time.Duration // the longest wait for every queue to empty

	Dir       string // the repository root: index.yaml and queue.yaml
	Datastore string // an emulator's host:port; empty starts one of Engine

	// Fault shares (0 to 1): TaskFaults of task deliveries delayed, and
	// as many delivered twice, half as many answered 503 by the emulator
	// and half as many timed out after the app ran them; EnqueueFaults of
	// CreateTask calls failed before, and as many after, creating the
	// task; DatastoreFaults of Datastore calls failed before they are
	// sent; CommitFaults of commits failed after they applied;
	// SlowCommits of commits held up to half a second before they are
	// sent (so jobs run before the change they follow lands).
	TaskFaults, EnqueueFaults, DatastoreFaults, CommitFaults, SlowCommits float64

	// Storms is the weight of storms in the mix (the others weigh 1 to
	// 20): many users at once liking one post and following its author.
	Storms int

	// The service's copy settings: small, so that windows matter.
	CopyLimit, BackfillMax, BackfillBatch int
	// GiveUpAfter is how long jobs wait for their change to commit.
	GiveUpAfter time.Duration
	// MaxBackoff caps every queue's retry backoff.
	MaxBackoff time.Duration

	LogLevel slog.Level
	Log      io.Writer // the stack's logs; nil discards them
	Progress io.Writer // a line now and then; nil for none
}

// Defaults returns a configuration of a short run.
func Defaults() Config {
	return Config{
		Seed: 1, Clients: 4, Users: 10, MaxUsers: 200, Duration: 30 * time.Second, Storms: 2, Settle: 3 * time.Minute, Dir: ".",
		TaskFaults: 0.1, EnqueueFaults: 0.03, DatastoreFaults: 0.02, CommitFaults: 0.03, SlowCommits: 0.1,
		CopyLimit: 3, BackfillMax: 4, BackfillBatch: 2,
		// The service's default: on the Firestore emulator a change can
		// commit tens of seconds late, after waiting out a lock timeout,
		// and its jobs must still be waiting for it then.
		GiveUpAfter: 2 * time.Minute, MaxBackoff: 2 * time.Second, LogLevel: slog.LevelError,
	}
}

// Report is what a run found.
type Report struct {
	Seed            uint64
	Clients         int
	Elapsed         time.Duration // of the mix
	Ops, Failed     map[string]int
	TaskFaults      map[string]int64
	DatastoreFaults map[string]int64
	// Converged is the time from the last operation's answer until every
	// queue was empty.
	Converged                 time.Duration
	Users, Activities, Groups int
	Checked                   int // feeds and counts compared
	Violations                []string
}

// Print writes the report for people.
func (r *Report) Print(w io.Writer) {
	total, failed := 0, 0
	for _, n := range r.Ops {
		total += n
	}
	for _, n := range r.Failed {
		failed += n
	}
	fmt.Fprintf(w, "seed %d, %d clients, mix ran %s\n", r.Seed, r.Clients, r.Elapsed.Round(time.Millisecond))
	fmt.Fprintf(w, "operations: %d (%d answered with an error and resolved by reading)\n", total, failed)
	for _, k := range sortedKeys(r.Ops) {
		fmt.Fprintf(w, "  %-16s %6d  (%d failed)\n", k, r.Ops[k], r.Failed[k])
	}
	fmt.Fprintf(w, "faults injected by the tasks emulator: %d\n", sum(r.TaskFaults))
	for _, k := range sortedKeys(r.TaskFaults) {
		fmt.Fprintf(w, "  %-44s %6d\n", k, r.TaskFaults[k])
	}
	fmt.Fprintf(w, "faults injected into Datastore calls: %d\n", sum(r.DatastoreFaults))
	for _, k := range sortedKeys(r.DatastoreFaults) {
		fmt.Fprintf(w, "  %-44s %6d\n", k, r.DatastoreFaults[k])
	}
	fmt.Fprintf(w, "final state: %d users, %d activities, %d groups; %d feeds and counts compared\n", r.Users, r.Activities, r.Groups, r.Checked)
	fmt.Fprintf(w, "converged %s after the last operation\n", r.Converged.Round(time.Millisecond))
	fmt.Fprintf(w, "violations: %d\n", len(r.Violations))
	for _, v := range r.Violations {
		fmt.Fprintf(w, "  - %s\n", v)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// Run runs the checker. An error means it could not run; violations are
// in the report.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Clients < 1 || cfg.Users < 2 || cfg.Duration <= 0 {
		return nil, errors.New("converge: need at least 1 client, 2 users and a duration")
	}
	logOut := cfg.Log
	if logOut == nil {
		logOut = io.Discard
	}
	st, err := startStack(ctx, cfg, logOut)
	if err != nil {
		return nil, err
	}
	defer st.close()
	r := &runner{
		cfg: cfg, m: newModel(),
		c: &client{base: st.url, http: &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}},
	}
	clients := make([]*actor, cfg.Clients)
	for i := range clients {
		clients[i] = &actor{n: i, rng: rand.New(rand.NewPCG(cfg.Seed, uint64(i)+1))}
	}
	for i := 0; i < max(cfg.Users, cfg.Clients); i++ { // each client acts as one user at least
		if err := r.register(ctx, clients[i%len(clients)]); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	stop := start.Add(cfg.Duration)
	hardStop := start.Add(2 * cfg.Duration)
	more := func() bool {
		now := time.Now()
		if now.Before(stop) {
			return true
		}
		return now.Before(hardStop) && !r.everyOpRan(cfg.MinEach)
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(clients))
	for _, a := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for more() && ctx.Err() == nil {
				if err := r.step(ctx, a); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	if cfg.Progress != nil {
		go func() {
			t := time.NewTicker(10 * time.Second)
			defer t.Stop()
			for more() {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					r.m.mu.Lock()
					n := 0
					for _, v := range r.m.ops {
						n += v
					}
					r.m.mu.Unlock()
					fmt.Fprintf(cfg.Progress, "converge: %s, %d operations, %d tasks pending\n", time.Since(start).Round(time.Second), n, st.tasks.Pending())
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	rep := &Report{Seed: cfg.Seed, Clients: cfg.Clients, Elapsed: time.Since(start)}

	// Converged: every queue empty, twice in a row.
	deadline := time.Now().Add(cfg.Settle)
	for empty := 0; empty < 2; {
		if time.Now().After(deadline) {
			r.m.violate(fmt.Sprintf("queues still hold %d tasks %s after the last operation", st.tasks.Pending(), cfg.Settle))
			break
		}
		if st.tasks.Pending() == 0 {
			empty++
		} else {
			empty = 0
		}
		time.Sleep(100 * time.Millisecond)
	}
	rep.Converged = time.Since(r.m.lastOp)
	if cfg.Progress != nil {
		fmt.Fprintf(cfg.Progress, "converge: queues empty %s after the last operation; comparing\n", rep.Converged.Round(time.Millisecond))
	}
	// The comparison reads without faults: they are for the writes and
	// jobs, and the reads have been shown to survive them during the mix.
	st.dsFaults.SetEnabled(false)
	if err := r.check(ctx, rep); err != nil {
		return nil, err
	}
	rep.Ops, rep.Failed = r.m.ops, r.m.failed
	rep.TaskFaults = st.tasks.FaultCounts()
	rep.DatastoreFaults = st.dsFaults.Counts()
	rep.Violations = r.m.violations
	return rep, nil
}

type runner struct {
	cfg   Config
	m     *model
	c     *client
	locks sync.Map // string → *sync.Mutex: pairs and comments that two users may change
	seq   sync.Mutex
	n     int
	turns atomic.Int64 // alternates REST and JSON-RPC where both serve
}

// kinds are the operations of the mix, as reports name them.
var kinds = []string{"register", "follow", "unfollow", "post", "edit", "delete", "create group", "join", "invite", "accept",
	"decline", "leave", "owner removes", "like", "unlike", "comment", "delete comment", "sessions", "burst",
	"block", "unblock", "mute", "unmute", "mark", "follow tag", "unfollow tag", "repost", "unrepost", "delete account", "set app data", "delete app data", "storm"}

// tagNames are the tags posts carry, written in any case (#Alpha, #ALPHA),
// and people follow.
var tagNames = []string{"alpha", "beta", "gamma"}

// everyOpRan reports whether every operation ran at least n times.
func (r *runner) everyOpRan(n int) bool {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	for _, k := range kinds {
		if k == "storm" && r.cfg.Storms == 0 {
			continue
		}
		if r.m.ops[k] < n {
			return false
		}
	}
	return true
}

// actor is one client: it acts as the users it registered, one operation
// at a time, so each user's own operations never overlap.
type actor struct {
	n     int
	rng   *rand.Rand
	users []*user
	count int
}

func (r *runner) lock(key string) func() {
	v, _ := r.locks.LoadOrStore(key, &sync.Mutex{})
	mu := v.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// outcome of a write.
type outcome int

const (
	acked   outcome = iota // 2xx
	refused                // a 4xx the operation may answer: nothing changed
	unknown                // 503 or no answer: read to find out
)

// viaRPC as a write's method sends it as a JSON-RPC call: the path is the
// RPC method, the body its params.
const viaRPC = "RPC"

// write sends a write and classifies the answer. A status the operation
// must never answer is a violation; a 5xx other than 503 is one too.
func (r *runner) write(ctx context.Context, op, method, path, token string, body any, refusals ...int) (reply, outcome) {
	return r.writeIf(ctx, op, method, path, token, body, nil, refusals...)
}

// writeIf is write, where a 4xx that tolerated (nil: none) accepts, asked
// once the answer is in, is a refusal too: an operation that names someone
// whose account is being deleted may be refused with 401, 403, 404 or 409.
func (r *runner) writeIf(ctx context.Context, op, method, path, token string, body any, tolerated func(status int) bool, refusals ...int) (reply, outcome) {
	var rep reply
	var err error
	if method == viaRPC {
		rep, err = r.c.rpcCall(ctx, path, token, body)
	} else {
		rep, err = r.c.call(ctx, method, path, token, body)
	}
	switch {
	case err != nil:
		return rep, unknown
	case rep.status >= 200 && rep.status < 300:
		return rep, acked
	case rep.status == http.StatusServiceUnavailable:
		return rep, unknown
	}
	for _, s := range refusals {
		if rep.status == s {
			return rep, refused
		}
	}
	if rep.status < 500 && tolerated != nil && tolerated(rep.status) {
		return rep, refused
	}
	r.m.violate(fmt.Sprintf("%s: %s %s answered %d %v", op, method, path, rep.status, rep.body))
	if rep.status >= 500 {
		return rep, unknown
	}
	return rep, refused
}

// probe reads until the read answers one of the given statuses.
func (r *runner) probe(ctx context.Context, op, path, token string, statuses ...int) (reply, error) {
	rep, err := r.c.read(ctx, path, token)
	if err != nil {
		return rep, fmt.Errorf("%s: %w", op, err)
	}
	for _, s := range statuses {
		if rep.status == s {
			return rep, nil
		}
	}
	return rep, fmt.Errorf("%s: GET %s answered %d %v", op, path, rep.status, rep.body)
}

// step runs one operation of the mix.
func (r *runner) step(ctx context.Context, a *actor) error {
	if len(a.users) == 0 { // its registrations all failed so far
		return r.register(ctx, a)
	}
	type op struct {
		weight int
		run    func(context.Context, *actor) (bool, error)
	}
	ops := []op{
		{3, func(ctx context.Context, a *actor) (bool, error) {
			if r.full() {
				return false, nil
			}
			return true, r.register(ctx, a)
		}},
		{2, r.burst},
		{14, r.follow}, {8, r.unfollow}, {20, r.post}, {4, r.editPost}, {4, r.deletePost},
		{3, r.createGroup}, {5, r.join}, {4, r.invite}, {6, r.accept}, {2, r.decline}, {3, r.leave}, {3, r.ownerRemove},
		{8, r.like}, {4, r.unlike}, {6, r.comment}, {3, r.deleteComment}, {1, r.sessions},
		{2, r.block}, {1, r.unblock}, {2, r.mute}, {2, r.mark}, {3, r.followTag}, {4, r.repost}, {1, r.deleteAccount},
		{3, r.setAppData}, {2, r.deleteAppData},
		{r.cfg.Storms, r.storm},
	}
	total := 0
	for _, o := range ops {
		total += o.weight
	}
	for tries := 0; tries < 10; tries++ {
		k := a.rng.IntN(total)
		for _, o := range ops {
			if k < o.weight {
				ran, err := o.run(ctx, a)
				if err != nil || ran {
					return err
				}
				break
			}
			k -= o.weight
		}
	}
	return nil
}

func (a *actor) pick() *user { return a.users[a.rng.IntN(len(a.users))] }

// snapshot helpers, under the model's lock.

func (r *runner) otherUser(a *actor, not string) *user {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	for range 10 {
		u := r.m.users[a.rng.IntN(len(r.m.users))]
		if u.id != not && !u.gone {
			return u
		}
	}
	return nil
}

// someUser picks any user.
func (r *runner) someUser(rng *rand.Rand) *user {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	for range 10 {
		if u := r.m.users[rng.IntN(len(r.m.users))]; !u.gone {
			return u
		}
	}
	return r.m.users[rng.IntN(len(r.m.users))]
}

// burst is the race the service once lost posts to: a new author posts
// three times while up to three readers follow it, all at once. Each user
// still makes one request at a time.
func (r *runner) burst(ctx context.Context, a *actor) (bool, error) {
	if len(a.users) < 2 || r.full() {
		return false, nil
	}
	if err := r.register(ctx, a); err != nil {
		return true, err
	}
	author := a.users[len(a.users)-1]
	readers := slices.Clone(a.users[:len(a.users)-1])
	a.rng.Shuffle(len(readers), func(i, j int) { readers[i], readers[j] = readers[j], readers[i] })
	readers = readers[:min(3, len(readers))]
	g, gctx := errgroup.WithContext(ctx)
	postRNG := rand.New(rand.NewPCG(a.rng.Uint64(), a.rng.Uint64()))
	g.Go(func() error {
		for range 3 {
			if err := r.postAs(gctx, postRNG, author); err != nil {
				return err
			}
		}
		return nil
	})
	for _, f := range readers {
		limit := copyLimit(a.rng)
		g.Go(func() error { return r.followAs(gctx, f, author, limit) })
	}
	r.m.done("burst", false, time.Now())
	return true, g.Wait()
}

// storm is the hot spots' race: up to stormCrowd users at once (of the
// client's own) like and
// unlike one user's post and follow and unfollow that user, stormRounds
// times each, so that the transactions on the post's counts and on the
// user's followers contend. Each user still makes one
// request at a time.
func (r *runner) storm(ctx context.Context, a *actor) (bool, error) {
	star := r.someUser(a.rng)
	p := r.livePost(a, star.id)
	r.m.mu.Lock()
	if star.gone {
		r.m.mu.Unlock()
		return false, nil
	}
	// The crowd is this client's own users: no other client acts as them
	// meanwhile (deleting one of them, say).
	var crowd []*user
	for _, i := range a.rng.Perm(len(a.users)) {
		if u := a.users[i]; !u.gone && u.id != star.id && len(crowd) < stormCrowd {
			crowd = append(crowd, u)
		}
	}
	r.m.mu.Unlock()
	if len(crowd) < 2 {
		return false, nil
	}
	g, gctx := errgroup.WithContext(ctx)
	for _, u := range crowd {
		rng := rand.New(rand.NewPCG(a.rng.Uint64(), a.rng.Uint64()))
		g.Go(func() error {
			for range stormRounds {
				var err error
				switch k := rng.IntN(10); {
				case p != nil && k < 4:
					err = r.likeAs(gctx, u, p, true)
				case p != nil && k < 6:
					err = r.likeAs(gctx, u, p, false)
				case k < 9 || !r.follows(u.id, star.id):
					err = r.followAs(gctx, u, star, copyLimit(rng))
				default:
					// Only a follow the model knows of: an unfollow of none
					// is no change, and no event.
					err = r.unfollowAs(gctx, u, star.id, rng.IntN(2) == 0)
				}
				if err != nil {
					return err
				}
			}
			return nil
		})
	}
	r.m.done("storm", false, time.Now())
	return true, g.Wait()
}

// follows reports whether the model has a following b.
func (r *runner) follows(a, b string) bool {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	return r.m.following[pair{a, b}]
}

// A storm's size.
const (
	stormCrowd  = 16
	stormRounds = 3
)

func (r *runner) full() bool {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	return len(r.m.users) >= r.cfg.MaxUsers
}

// newcomer picks one of the four users registered last, other than not.
func (r *runner) newcomer(a *actor, not string) *user {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	n := len(r.m.users)
	u := r.m.users[max(0, n-1-a.rng.IntN(min(4, n)))]
	if u.id == not || u.gone {
		return nil
	}
	return u
}

func (r *runner) livePost(a *actor, author string) *post {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	var live []*post
	for _, p := range r.m.posts {
		if !p.deleted && (author == "" || p.author == author) {
			live = append(live, p)
		}
	}
	if len(live) == 0 {
		return nil
	}
	return live[a.rng.IntN(len(live))]
}

// password is every checker user's.
const password = "correct horse battery"

func (r *runner) register(ctx context.Context, a *actor) error {
	a.count++
	name := fmt.Sprintf("u%d_%d", a.n, a.count)
	rep, out := r.write(ctx, "register", http.MethodPost, "/auth/register", "", map[string]string{"username": name, "password": password}, http.StatusConflict)
	failed := out != acked
	if out == unknown || out == refused {
		// A 409 for one's own name means an earlier attempt took it.
		for {
			rep, out = r.write(ctx, "register (login)", http.MethodPost, "/auth/login", "", map[string]string{"username": name, "password": password}, http.StatusUnauthorized)
			if out != unknown {
				break
			}
		}
	}
	end := time.Now()
	r.m.done("register", failed, end)
	if out != acked {
		return nil // never registered
	}
	u := &user{id: str(entry(rep), "id"), name: name, token: str(rep.body, "token")}
	if u.id == "" || u.token == "" {
		return fmt.Errorf("register %s: no id or token in %v", name, rep.body)
	}
	a.users = append(a.users, u)
	r.m.mu.Lock()
	r.m.users = append(r.m.users, u)
	r.m.byID[u.id] = u
	r.m.mu.Unlock()
	return nil
}

func (r *runner) follow(ctx context.Context, a *actor) (bool, error) {
	f := a.pick()
	b := r.otherUser(a, f.id)
	if a.rng.IntN(10) < 4 {
		// Newcomers are followed while they post their first activities:
		// the race of a post with a follow whose job finds nothing yet.
		b = r.newcomer(a, f.id)
	}
	if b == nil {
		return false, nil
	}
	return true, r.followAs(ctx, f, b, copyLimit(a.rng))
}

// copyLimit draws a follow's copyLimit: none (-1, the default), 0, or 1 to 6.
func copyLimit(rng *rand.Rand) int {
	switch k := rng.IntN(10); {
	case k < 3:
		return 0
	case k < 6:
		return 1 + rng.IntN(6)
	}
	return -1
}

// followAs makes f follow b with copyLimit limit (-1: none given).
func (r *runner) followAs(ctx context.Context, f, b *user, limit int) error {
	path := "/social/rest/people/@me/@friends"
	if limit >= 0 {
		path += fmt.Sprintf("?copyLimit=%d", limit)
	}
	key := pair{f.id, b.id}
	defer r.lock("follow " + f.id + " " + b.id)()
	r.m.mu.Lock()
	before := r.m.following[key]
	blocked := r.m.between(f.id, b.id)
	r.m.mu.Unlock()
	var refusals []int
	if blocked {
		refusals = append(refusals, http.StatusForbidden)
	}
	start := time.Now()
	_, out := r.writeIf(ctx, "follow", http.MethodPost, path, f.token, map[string]string{"id": b.id}, r.goneAnswer(b.id), refusals...)
	now := out == acked
	if out == unknown {
		rep, err := r.probe(ctx, "follow", "/social/rest/people/@me/@friends/"+b.id, f.token, 200, 404)
		if err != nil {
			return err
		}
		now = rep.status == 200
	}
	end := time.Now()
	r.m.done("follow", out != acked, end)
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	if now && !before {
		r.m.follows[key] = append(r.m.follows[key], event{add: true, start: start, end: end, copyLimit: limit})
	}
	r.m.following[key] = now || before
	return nil
}

func (r *runner) unfollow(ctx context.Context, a *actor) (bool, error) {
	f := a.pick()
	r.m.mu.Lock()
	var followees []string
	for k, on := range r.m.following {
		if on && k.a == f.id {
			followees = append(followees, k.b)
		}
	}
	r.m.mu.Unlock()
	if len(followees) == 0 {
		return false, nil
	}
	sort.Strings(followees)
	return true, r.unfollowAs(ctx, f, followees[a.rng.IntN(len(followees))], a.rng.IntN(10) < 3)
}

// unfollowAs makes f unfollow b, keeping the copies' history if keep.
func (r *runner) unfollowAs(ctx context.Context, f *user, b string, keep bool) error {
	defer r.lock("follow " + f.id + " " + b)()
	path := "/social/rest/people/@me/@friends/" + b
	if keep {
		path += "?keepHistory=true"
	}
	start := time.Now()
	_, out := r.write(ctx, "unfollow", http.MethodDelete, path, f.token, nil)
	gone := out == acked
	if out == unknown {
		rep, err := r.probe(ctx, "unfollow", "/social/rest/people/@me/@friends/"+b, f.token, 200, 404)
		if err != nil {
			return err
		}
		gone = rep.status == 404
	}
	end := time.Now()
	r.m.done("unfollow", out != acked, end)
	if gone {
		key := pair{f.id, b}
		r.m.mu.Lock()
		r.m.follows[key] = append(r.m.follows[key], event{start: start, end: end, keep: keep})
		r.m.following[key] = false
		r.m.mu.Unlock()
	}
	return nil
}

func (r *runner) post(ctx context.Context, a *actor) (bool, error) {
	return true, r.postAs(ctx, a.rng, a.pick())
}

// postAs posts as u, mentioning up to two users, half the time with an
// externalId.
func (r *runner) postAs(ctx context.Context, rng *rand.Rand, u *user) error {
	r.seq.Lock()
	r.n++
	n := r.n
	r.seq.Unlock()
	var mentions []string
	title := fmt.Sprintf("post %d by %s", n, u.name)
	for k := rng.IntN(3); k > 0; k-- {
		m := r.someUser(rng)
		if !strings.Contains(title, "@"+m.name+" ") {
			title += " @" + m.name + " "
			mentions = append(mentions, m.id)
		}
	}
	// A third carry a tag or two, in whatever case.
	var tagged []string
	if rng.IntN(3) == 0 {
		for k := 1 + rng.IntN(2); k > 0; k-- {
			t := tagNames[rng.IntN(len(tagNames))]
			if !slices.Contains(tagged, t) {
				tagged = append(tagged, t)
			}
		}
	}
	title = strings.TrimSpace(title) + tagText(rng, tagged)
	body := map[string]string{"title": title}
	// Seven in ten public, two for followers, one for the mentioned.
	visibility := "public"
	switch k := rng.IntN(10); {
	case k == 9:
		visibility = "mentioned"
	case k >= 7:
		visibility = "followers"
	}
	if visibility != "public" || rng.IntN(2) == 0 {
		body["visibility"] = visibility
	}
	if rng.IntN(2) == 0 {
		body["externalId"] = fmt.Sprintf("ext-%d", n)
	}
	start := time.Now()
	rep, out := r.write(ctx, "post", http.MethodPost, "/social/rest/activities/@me/@self", u.token, body)
	id := ""
	var made []string // the mentions the post made
	if out == acked {
		id = str(entry(rep), "id")
		made = r.checkMentions(title, u.id, entry(rep), mentions)
	}
	if out == unknown {
		// It is the newest of the author's own, if it happened.
		rep, err := r.probe(ctx, "post", "/social/rest/activities/@me/@self?count=5", u.token, 200)
		if err != nil {
			return err
		}
		items, _ := rep.body["list"].([]any)
		for _, it := range items {
			if m, ok := it.(map[string]any); ok && str(m, "title") == title {
				id = str(m, "id")
				made = r.checkMentions(title, u.id, m, mentions)
			}
		}
	}
	end := time.Now()
	r.m.done("post", out != acked, end)
	if id != "" {
		p := &post{id: id, author: u.id, title: title, mentions: made, tags: tagged, start: start, end: end, seqTime: seqTime(id), visibility: visibility}
		r.m.mu.Lock()
		if r.m.postByID[id] != nil {
			r.m.mu.Unlock()
			r.m.violate(fmt.Sprintf("post %q answered the id of another post, %s", title, id))
			return nil
		}
		r.m.posts = append(r.m.posts, p)
		r.m.postByID[id] = p
		r.m.mu.Unlock()
	}
	return nil
}

// checkMentions returns the mentions activity v made, and checks them
// against those its title asked for: a mention may only be dropped for
// someone whose account is gone or who had a block with the author.
func (r *runner) checkMentions(title, author string, v map[string]any, asked []string) []string {
	got, _ := v["mentions"].([]any)
	made := make([]string, 0, len(got))
	for _, g := range got {
		made = append(made, fmt.Sprint(g))
	}
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	for _, m := range made {
		if !slices.Contains(asked, m) {
			r.m.violations = append(r.m.violations, fmt.Sprintf("post %q: mentions %s, which it did not name", title, m))
		}
	}
	for _, m := range asked {
		if !slices.Contains(made, m) && !r.m.gone(m) && !r.m.blockedOnce(author, m) {
			r.m.violations = append(r.m.violations, fmt.Sprintf("post %q: dropped the mention of %s", title, m))
		}
	}
	return made
}

// goneAnswer tolerates the refusals an operation naming id may get while
// id's account is being deleted.
func (r *runner) goneAnswer(id string) func(int) bool {
	return func(status int) bool {
		r.m.mu.Lock()
		defer r.m.mu.Unlock()
		return r.m.gone(id) && (status == 401 || status == 403 || status == 404 || status == 409)
	}
}

// ownerGone tolerates the refusals a join, acceptance or refusal may get
// while the group's owner's account is being deleted: 409 until the group
// is handed on, 404 once it is deleted.
func (r *runner) ownerGone(g *group) func(int) bool {
	return func(status int) bool {
		r.m.mu.Lock()
		defer r.m.mu.Unlock()
		return r.m.gone(g.owner) && (status == 403 || status == 404 || status == 409)
	}
}

// editPost edits one of a user's posts, by REST or JSON-RPC in turn: a new
// title naming up to two people, so that its mentions change.
func (r *runner) editPost(ctx context.Context, a *actor) (bool, error) {
	u := a.pick()
	p := r.livePost(a, u.id)
	if p == nil || p.repostOf != "" {
		return false, nil // a repost has no text to edit
	}
	r.seq.Lock()
	r.n++
	n := r.n
	r.seq.Unlock()
	title := fmt.Sprintf("edit %d by %s", n, u.name)
	var mentions []string
	for k := a.rng.IntN(3); k > 0; k-- {
		m := r.someUser(a.rng)
		if !strings.Contains(title, "@"+m.name+" ") {
			title += " @" + m.name + " "
			mentions = append(mentions, m.id)
		}
	}
	// An edit keeps the post's tags (the tag jobs of edits are tested on
	// their own): the oracle's tag history of a post is its posting's.
	r.m.mu.Lock()
	tagged := p.tags
	r.m.mu.Unlock()
	title = strings.TrimSpace(title) + tagText(a.rng, tagged)
	path := "/social/rest/activities/@me/@self/@app/" + p.id
	var rep reply
	var out outcome
	if r.turns.Add(1)%2 == 0 {
		rep, out = r.write(ctx, "edit", viaRPC, "activities.update", u.token,
			map[string]any{"activityId": p.id, "activity": map[string]string{"title": title}}, http.StatusConflict)
		rep.body = map[string]any{"entry": rep.body}
	} else {
		rep, out = r.write(ctx, "edit", http.MethodPut, path, u.token, map[string]string{"title": title}, http.StatusConflict)
	}
	var made []string
	applied := out == acked
	if applied {
		made = r.checkMentions(title, u.id, entry(rep), mentions)
	}
	if out == unknown {
		rep, err := r.probe(ctx, "edit", "/social/rest/activities/@me/@self/@app/"+p.id, u.token, 200)
		if err != nil {
			return true, err
		}
		if items, _ := rep.body["list"].([]any); len(items) == 1 {
			if m, ok := items[0].(map[string]any); ok && str(m, "title") == title {
				applied = true
				made = r.checkMentions(title, u.id, m, mentions)
			}
		}
	}
	r.m.done("edit", out != acked, time.Now())
	if applied {
		r.m.mu.Lock()
		p.title, p.mentions = title, made
		r.m.mu.Unlock()
	}
	return true, nil
}

func (r *runner) deletePost(ctx context.Context, a *actor) (bool, error) {
	u := a.pick()
	p := r.livePost(a, u.id)
	if p == nil {
		return false, nil
	}
	path := "/social/rest/activities/@me/@self/@app/" + p.id
	_, out := r.write(ctx, "delete", http.MethodDelete, path, u.token, nil, http.StatusNotFound)
	gone := out != unknown // 204, or a 404 after an attempt that did delete
	if out == unknown {
		rep, err := r.probe(ctx, "delete", path, u.token, 200, 404)
		if err != nil {
			return true, err
		}
		gone = rep.status == 404
	}
	r.m.done("delete", out != acked, time.Now())
	if gone {
		r.m.mu.Lock()
		r.m.drop(p)
		r.m.mu.Unlock()
	}
	return true, nil
}

// groupsOf lists the ids of the groups of user (by id or @me).
func (r *runner) groupsOf(ctx context.Context, who, token string) (map[string]string, error) {
	items, err := r.c.list(ctx, "/social/rest/groups/"+who, token)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, it := range items {
		out[str(it, "id")] = str(it, "title")
	}
	return out, nil
}

func (r *runner) createGroup(ctx context.Context, a *actor) (bool, error) {
	u := a.pick()
	r.seq.Lock()
	r.n++
	title := fmt.Sprintf("group %d", r.n)
	r.seq.Unlock()
	policy := "open"
	if a.rng.IntN(2) == 0 {
		policy = "closed"
	}
	start := time.Now()
	rep, out := r.write(ctx, "create group", http.MethodPost, "/social/rest/groups/@me", u.token, map[string]string{"title": title, "joinPolicy": policy}, http.StatusConflict)
	id := ""
	if out == acked {
		id = str(entry(rep), "id")
	}
	if out == unknown {
		gs, err := r.groupsOf(ctx, "@me", u.token)
		if err != nil {
			return true, err
		}
		for gid, t := range gs {
			if t == title {
				id = gid
			}
		}
	}
	end := time.Now()
	r.m.done("create group", out != acked, end)
	if id != "" {
		r.m.mu.Lock()
		r.m.groups = append(r.m.groups, &group{id: id, owner: u.id, title: title, policy: policy})
		key := pair{id, u.id}
		r.m.members[key] = append(r.m.members[key], event{add: true, start: start, end: end, copyLimit: 0})
		r.m.isMember[key] = true
		r.m.mu.Unlock()
	}
	return true, nil
}

// membership changes (group, user) on behalf of actor: add or remove.
func (r *runner) membership(ctx context.Context, op string, actor *user, g *group, target *user, add bool, refusals ...int) error {
	defer r.lock("member " + g.id + " " + target.id)()
	key := pair{g.id, target.id}
	r.m.mu.Lock()
	before := r.m.isMember[key]
	r.m.mu.Unlock()
	start := time.Now()
	var out outcome
	rpc := actor == target && r.turns.Add(1)%2 == 0 // half of one's own joins and leaves by JSON-RPC
	switch {
	case rpc:
		method := map[bool]string{true: "groups.join", false: "groups.leave"}[add]
		_, out = r.writeIf(ctx, op, viaRPC, method, actor.token, map[string]string{"groupId": g.id}, r.ownerGone(g), append(refusals, http.StatusConflict)...)
	case add:
		id := target.id
		if actor == target {
			id = "@me"
		}
		_, out = r.writeIf(ctx, op, http.MethodPost, "/social/rest/groups/@all/"+g.id+"/members", actor.token, map[string]string{"id": id}, r.ownerGone(g), append(refusals, http.StatusConflict)...)
	default:
		_, out = r.writeIf(ctx, op, http.MethodDelete, "/social/rest/groups/@all/"+g.id+"/members/"+target.id, actor.token, nil, r.ownerGone(g))
	}
	now := before
	switch out {
	case acked:
		now = add
	case unknown:
		gs, err := r.groupsOf(ctx, target.id, actor.token)
		if err != nil {
			return err
		}
		_, now = gs[g.id]
	}
	end := time.Now()
	r.m.done(op, out != acked, end)
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	if now != before {
		r.m.members[key] = append(r.m.members[key], event{add: now, start: start, end: end, copyLimit: -1})
	}
	r.m.isMember[key] = now
	if out != unknown {
		delete(r.m.invited, key) // accepted, declined, or never there
	}
	return nil
}

// someGroup picks a group for which ok holds.
func (r *runner) someGroup(a *actor, ok func(g *group) bool) *group {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	var gs []*group
	for _, g := range r.m.groups {
		if ok(g) {
			gs = append(gs, g)
		}
	}
	if len(gs) == 0 {
		return nil
	}
	return gs[a.rng.IntN(len(gs))]
}

func (r *runner) memberNow(g, u string) bool {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	return r.m.isMember[pair{g, u}]
}

func (r *runner) join(ctx context.Context, a *actor) (bool, error) {
	u := a.pick()
	g := r.someGroup(a, func(g *group) bool { return g.policy == "open" && !r.m.isMember[pair{g.id, u.id}] })
	if g == nil {
		return false, nil
	}
	return true, r.membership(ctx, "join", u, g, u, true)
}

// invite is an owner's invitation of someone else: no membership until
// they accept.
func (r *runner) invite(ctx context.Context, a *actor) (bool, error) {
	o := a.pick()
	g := r.someGroup(a, func(g *group) bool { return g.owner == o.id })
	v := r.otherUser(a, o.id)
	if g == nil || v == nil || r.memberNow(g.id, v.id) {
		return false, nil
	}
	defer r.lock("member " + g.id + " " + v.id)()
	_, out := r.writeIf(ctx, "invite", http.MethodPost, "/social/rest/groups/@all/"+g.id+"/members", o.token, map[string]string{"id": v.id}, r.goneAnswer(v.id))
	r.m.done("invite", out != acked, time.Now())
	if out != refused {
		r.m.mu.Lock()
		r.m.invited[pair{g.id, v.id}] = true
		r.m.mu.Unlock()
	}
	return true, nil
}

// invitation picks one of a's users and a group it may be invited to.
func (r *runner) invitation(a *actor) (*user, *group) {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	type open struct {
		u *user
		g *group
	}
	var all []open
	for _, u := range a.users {
		for _, g := range r.m.groups {
			if k := (pair{g.id, u.id}); r.m.invited[k] && !r.m.isMember[k] {
				all = append(all, open{u, g})
			}
		}
	}
	if len(all) == 0 {
		return nil, nil
	}
	o := all[a.rng.IntN(len(all))]
	return o.u, o.g
}

// accept joins a group one may be invited to; a closed group refuses it
// (403) when the invitation never landed.
func (r *runner) accept(ctx context.Context, a *actor) (bool, error) {
	u, g := r.invitation(a)
	if g == nil {
		return false, nil
	}
	return true, r.membership(ctx, "accept", u, g, u, true, http.StatusForbidden)
}

// decline ends an invitation: membership does not change.
func (r *runner) decline(ctx context.Context, a *actor) (bool, error) {
	u, g := r.invitation(a)
	if g == nil {
		return false, nil
	}
	return true, r.membership(ctx, "decline", u, g, u, false)
}

// sessions logs in anew, ends every session of the user (the new one
// included) and logs in again, going on with the last token: the old
// ones must stop working and nothing else change.
func (r *runner) sessions(ctx context.Context, a *actor) (bool, error) {
	u := a.pick()
	login := func() (string, error) {
		for ctx.Err() == nil {
			rep, out := r.write(ctx, "sessions", http.MethodPost, "/auth/login", "", map[string]string{"username": u.name, "password": password})
			if out == acked {
				return str(rep.body, "token"), nil
			}
		}
		return "", ctx.Err()
	}
	old := u.token
	tok, err := login()
	if err != nil {
		return true, err
	}
	_, out := r.write(ctx, "sessions", http.MethodPost, "/auth/logout?all=true", tok, nil, http.StatusUnauthorized)
	for out == unknown {
		_, out = r.write(ctx, "sessions", http.MethodPost, "/auth/logout?all=true", tok, nil, http.StatusUnauthorized)
	}
	if tok, err = login(); err != nil {
		return true, err
	}
	r.m.mu.Lock()
	u.token = tok
	r.m.mu.Unlock()
	r.m.done("sessions", false, time.Now())
	if rep, err := r.c.read(ctx, "/social/rest/people/@me/@self", old); err == nil && rep.status != http.StatusUnauthorized {
		r.m.violate(fmt.Sprintf("sessions: %s's token works after logout?all=true: %d", u.name, rep.status))
	}
	return true, nil
}

func (r *runner) leave(ctx context.Context, a *actor) (bool, error) {
	u := a.pick()
	g := r.someGroup(a, func(g *group) bool { return g.owner != u.id && !r.m.gone(g.owner) && r.m.isMember[pair{g.id, u.id}] })
	if g == nil {
		return false, nil
	}
	return true, r.membership(ctx, "leave", u, g, u, false)
}

func (r *runner) ownerRemove(ctx context.Context, a *actor) (bool, error) {
	o := a.pick()
	g := r.someGroup(a, func(g *group) bool { return g.owner == o.id })
	if g == nil {
		return false, nil
	}
	r.m.mu.Lock()
	var members []*user
	for _, u := range r.m.users {
		if u.id != o.id && !u.gone && r.m.isMember[pair{g.id, u.id}] {
			members = append(members, u)
		}
	}
	r.m.mu.Unlock()
	if len(members) == 0 {
		return false, nil
	}
	return true, r.membership(ctx, "owner removes", o, g, members[a.rng.IntN(len(members))], false)
}

func (r *runner) like(ctx context.Context, a *actor) (bool, error) {
	return r.setLike(ctx, a, true)
}

func (r *runner) unlike(ctx context.Context, a *actor) (bool, error) {
	return r.setLike(ctx, a, false)
}

func (r *runner) setLike(ctx context.Context, a *actor, on bool) (bool, error) {
	u := a.pick()
	var p *post
	if on {
		p = r.livePost(a, "")
	} else {
		r.m.mu.Lock()
		var liked []*post
		for _, q := range r.m.posts {
			if !q.deleted && r.m.likes[pair{q.id, u.id}] {
				liked = append(liked, q)
			}
		}
		r.m.mu.Unlock()
		if len(liked) > 0 {
			p = liked[a.rng.IntN(len(liked))]
		}
	}
	if p == nil {
		return false, nil
	}
	return true, r.likeAs(ctx, u, p, on)
}

// likeAs makes u like p (or unlike it, with on false).
func (r *runner) likeAs(ctx context.Context, u *user, p *post, on bool) error {
	defer r.lock("like " + p.id + " " + u.id)()
	op, method := "like", http.MethodPost
	if !on {
		op, method = "unlike", http.MethodDelete
	}
	path := "/social/rest/likes/" + p.id
	rep, out := r.writeIf(ctx, op, method, path, u.token, nil, r.blockedAnswer(u.id, p.author), http.StatusNotFound)
	key := pair{p.id, u.id}
	r.m.mu.Lock()
	now := r.m.likes[key]
	r.m.mu.Unlock()
	switch out {
	case acked:
		now = on
		// The answer is the activity as u sees it after the change.
		if e := entry(rep); str(e, "id") != p.id || e["likedByViewer"] != on || num(e, "likesCount") < boolCount(on) {
			r.m.violate(fmt.Sprintf("%s %s by %s answered %v", op, p.id, u.name, rep.body))
		}
	case unknown:
		rep, err := r.probe(ctx, op, path, u.token, 200, 404)
		if err != nil {
			return err
		}
		now = false
		items, _ := rep.body["list"].([]any)
		for _, it := range items {
			if m, ok := it.(map[string]any); ok && str(m, "id") == u.id {
				now = true
			}
		}
	}
	r.m.done(op, out != acked, time.Now())
	r.m.mu.Lock()
	r.m.likes[key] = now
	r.m.mu.Unlock()
	return nil
}

func boolCount(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func (r *runner) comment(ctx context.Context, a *actor) (bool, error) {
	u := a.pick()
	p := r.livePost(a, "")
	if p == nil {
		return false, nil
	}
	r.seq.Lock()
	r.n++
	text := fmt.Sprintf("comment %d by %s", r.n, u.name)
	r.seq.Unlock()
	path := "/social/rest/comments/" + p.id
	rep, out := r.writeIf(ctx, "comment", http.MethodPost, path, u.token, map[string]string{"text": text}, r.blockedAnswer(u.id, p.author), http.StatusNotFound)
	id := ""
	if out == acked {
		id = str(entry(rep), "id")
	}
	if out == unknown {
		items, err := r.c.list(ctx, path, u.token)
		if err != nil && !strings.Contains(err.Error(), ": 404 ") {
			return true, err
		}
		for _, it := range items {
			if str(it, "text") == text {
				id = str(it, "id")
			}
		}
	}
	r.m.done("comment", out != acked, time.Now())
	if id != "" {
		r.m.mu.Lock()
		r.m.comments = append(r.m.comments, &comment{id: id, activity: p.id, author: u.id})
		r.m.mu.Unlock()
	}
	return true, nil
}

func (r *runner) deleteComment(ctx context.Context, a *actor) (bool, error) {
	u := a.pick()
	r.m.mu.Lock()
	var mine []*comment
	for _, c := range r.m.comments {
		if p := r.m.postByID[c.activity]; !c.deleted && !p.deleted && (c.author == u.id || p.author == u.id) {
			mine = append(mine, c)
		}
	}
	r.m.mu.Unlock()
	if len(mine) == 0 {
		return false, nil
	}
	c := mine[a.rng.IntN(len(mine))]
	defer r.lock("comment " + c.id)()
	path := "/social/rest/comments/" + c.activity + "/" + c.id
	_, out := r.write(ctx, "delete comment", http.MethodDelete, path, u.token, nil, http.StatusNotFound)
	gone := out != unknown
	if out == unknown {
		items, err := r.c.list(ctx, "/social/rest/comments/"+c.activity, u.token)
		if err != nil && !strings.Contains(err.Error(), ": 404 ") {
			return true, err
		}
		gone = true
		for _, it := range items {
			if str(it, "id") == c.id {
				gone = false
			}
		}
	}
	r.m.done("delete comment", out != acked, time.Now())
	if gone {
		r.m.mu.Lock()
		c.deleted = true
		r.m.mu.Unlock()
	}
	return true, nil
}

// blockedAnswer tolerates the 403 of a like or comment between two people
// who ever had a block between them.
func (r *runner) blockedAnswer(a, b string) func(int) bool {
	return func(status int) bool {
		r.m.mu.Lock()
		defer r.m.mu.Unlock()
		return status == http.StatusForbidden && r.m.blockedOnce(a, b)
	}
}

// lockPair takes the follow locks of a and b both ways, in one order, for
// a block or unblock, which changes both.
func (r *runner) lockPair(a, b string) func() {
	keys := []string{"follow " + a + " " + b, "follow " + b + " " + a}
	sort.Strings(keys)
	u1, u2 := r.lock(keys[0]), r.lock(keys[1])
	return func() { u2(); u1() }
}

// block makes one of a's users block someone: the follows between them
// end both ways, as an unfollow's would.
func (r *runner) block(ctx context.Context, a *actor) (bool, error) {
	u := a.pick()
	b := r.otherUser(a, u.id)
	if b == nil {
		return false, nil
	}
	defer r.lockPair(u.id, b.id)()
	r.m.mu.Lock()
	r.m.everBlocked[pair{u.id, b.id}] = true // from the moment it is asked
	r.m.mu.Unlock()
	start := time.Now()
	_, out := r.writeIf(ctx, "block", http.MethodPost, "/social/rest/people/@me/@blocked", u.token, map[string]string{"id": b.id}, r.goneAnswer(b.id))
	now := out == acked
	if out == unknown {
		items, err := r.c.list(ctx, "/social/rest/people/@me/@blocked", u.token)
		if err != nil {
			return true, err
		}
		now = slices.ContainsFunc(items, func(it map[string]any) bool { return str(it, "id") == b.id })
	}
	end := time.Now()
	r.m.done("block", out != acked, end)
	if !now {
		return true, nil
	}
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	r.m.blocks[pair{u.id, b.id}] = true
	for _, k := range []pair{{u.id, b.id}, {b.id, u.id}} {
		if r.m.following[k] {
			r.m.follows[k] = append(r.m.follows[k], event{start: start, end: end})
			r.m.following[k] = false
		}
	}
	return true, nil
}

// unblock ends a block one of a's users made: no follow comes back.
func (r *runner) unblock(ctx context.Context, a *actor) (bool, error) {
	r.m.mu.Lock()
	var mine []pair
	for k, on := range r.m.blocks {
		if on && slices.Contains(a.users, r.m.byID[k.a]) {
			mine = append(mine, k)
		}
	}
	r.m.mu.Unlock()
	if len(mine) == 0 {
		return false, nil
	}
	sort.Slice(mine, func(i, j int) bool { return mine[i].a+mine[i].b < mine[j].a+mine[j].b })
	k := mine[a.rng.IntN(len(mine))]
	r.m.mu.Lock()
	u := r.m.byID[k.a]
	r.m.mu.Unlock()
	defer r.lockPair(k.a, k.b)()
	path := "/social/rest/people/@me/@blocked/" + k.b
	_, out := r.write(ctx, "unblock", http.MethodDelete, path, u.token, nil)
	for out == unknown {
		_, out = r.write(ctx, "unblock", http.MethodDelete, path, u.token, nil)
	}
	r.m.done("unblock", false, time.Now())
	r.m.mu.Lock()
	r.m.blocks[k] = false
	r.m.mu.Unlock()
	return true, nil
}

// mute makes one of a's users mute someone, or unmute someone they mute,
// by REST or JSON-RPC in turn: nothing changes but what the muter's feeds
// show.
func (r *runner) mute(ctx context.Context, a *actor) (bool, error) {
	u, b := a.pick(), (*user)(nil)
	r.m.mu.Lock()
	var mine []pair
	for k, on := range r.m.mutes {
		if on && slices.Contains(a.users, r.m.byID[k.a]) {
			mine = append(mine, k)
		}
	}
	if len(mine) > 0 && a.rng.IntN(2) == 0 {
		sort.Slice(mine, func(i, j int) bool { return mine[i].a+mine[i].b < mine[j].a+mine[j].b })
		k := mine[a.rng.IntN(len(mine))]
		u, b = r.m.byID[k.a], r.m.byID[k.b]
	}
	r.m.mu.Unlock()
	if b == nil {
		if b = r.otherUser(a, u.id); b == nil {
			return false, nil
		}
	}
	r.m.mu.Lock()
	on := !r.m.mutes[pair{u.id, b.id}]
	r.m.mu.Unlock()
	op := "mute"
	var out outcome
	switch {
	case !on:
		op = "unmute"
		_, out = r.write(ctx, op, http.MethodDelete, "/social/rest/people/@me/@muted/"+b.id, u.token, nil)
	case r.turns.Add(1)%2 == 0:
		_, out = r.writeIf(ctx, op, viaRPC, "people.create", u.token, map[string]string{"groupId": "@muted", "id": b.id}, r.goneAnswer(b.id))
	default:
		_, out = r.writeIf(ctx, op, http.MethodPost, "/social/rest/people/@me/@muted", u.token, map[string]string{"id": b.id}, r.goneAnswer(b.id))
	}
	now := on == (out == acked) // refused: as it was
	if out == unknown {
		rep, err := r.probe(ctx, op, "/social/rest/people/@me/@muted/"+b.id, u.token, 200, 404)
		if err != nil {
			return true, err
		}
		now = rep.status == 200
	}
	r.m.done(op, out != acked, time.Now())
	r.m.mu.Lock()
	r.m.mutes[pair{u.id, b.id}] = now
	r.m.mu.Unlock()
	return true, nil
}

// repost makes one of a's users repost a live post (a repost shares the
// post it shares), or undo one of theirs, by REST: a new repost is a post
// of theirs, an undone one is deleted with it; reposting again must
// answer the first repost.
func (r *runner) repost(ctx context.Context, a *actor) (bool, error) {
	u := a.pick()
	r.m.mu.Lock()
	var mine []*post
	for k, p := range r.m.reposts {
		if k.b == u.id && !p.deleted {
			mine = append(mine, p)
		}
	}
	sort.Slice(mine, func(i, j int) bool { return mine[i].id < mine[j].id })
	r.m.mu.Unlock()
	if len(mine) > 0 && a.rng.IntN(3) == 0 {
		return true, r.unrepost(ctx, u, mine[a.rng.IntN(len(mine))])
	}
	p := r.livePost(a, "")
	if p == nil {
		return false, nil
	}
	orig, sharer := p.id, p.author
	if p.repostOf != "" {
		orig, sharer = p.repostOf, p.sharedAuthor
	}
	defer r.lock("repost " + orig + " " + u.id)()
	start := time.Now()
	path := "/social/rest/reposts/" + p.id
	// Only a public post can be reposted: another is a 403 (or, to
	// someone who may not see it, a 404).
	r.m.mu.Lock()
	shared := r.m.postByID[orig]
	public := shared != nil && shared.public()
	r.m.mu.Unlock()
	blocked := r.blockedAnswer(u.id, sharer)
	rep, out := r.writeIf(ctx, "repost", http.MethodPost, path, u.token, nil,
		func(status int) bool { return status == http.StatusForbidden && !public || blocked(status) }, http.StatusNotFound)
	id := ""
	switch out {
	case acked:
		e := entry(rep)
		id = str(e, "id")
		if o, _ := e["repostOf"].(map[string]any); o == nil || str(o, "id") != orig || o["repostedByViewer"] != true || num(o, "repostsCount") < 1 {
			r.m.violate(fmt.Sprintf("repost of %s by %s answered %v", p.id, u.name, rep.body))
		}
	case unknown:
		// It is among the reposter's own, if it happened.
		pr, err := r.probe(ctx, "repost", "/social/rest/activities/@me/@self?count=20", u.token, 200)
		if err != nil {
			return true, err
		}
		items, _ := pr.body["list"].([]any)
		for _, it := range items {
			if m, ok := it.(map[string]any); ok {
				if o, _ := m["repostOf"].(map[string]any); o != nil && str(o, "id") == orig {
					id = str(m, "id")
				}
			}
		}
	}
	end := time.Now()
	r.m.done("repost", out != acked, end)
	if id == "" {
		return true, nil
	}
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	k := pair{orig, u.id}
	if had := r.m.reposts[k]; had != nil && !had.deleted {
		if had.id != id {
			r.m.violations = append(r.m.violations, fmt.Sprintf("repost of %s by %s answered %s, not the first repost %s", orig, u.name, id, had.id))
		}
		return true, nil
	}
	q := &post{id: id, author: u.id, repostOf: orig, sharedAuthor: sharer, start: start, end: end, seqTime: seqTime(id)}
	if r.m.postByID[id] != nil {
		r.m.violations = append(r.m.violations, fmt.Sprintf("repost of %s by %s answered the id of another post, %s", orig, u.name, id))
		return true, nil
	}
	r.m.posts = append(r.m.posts, q)
	r.m.postByID[id] = q
	r.m.reposts[k] = q
	if o := r.m.postByID[orig]; o == nil || o.deleted {
		r.m.drop(q) // its post went meanwhile: so does the repost
	}
	return true, nil
}

// unrepost undoes u's repost q: the answer is the post it shared.
func (r *runner) unrepost(ctx context.Context, u *user, q *post) error {
	defer r.lock("repost " + q.repostOf + " " + u.id)()
	rep, out := r.write(ctx, "unrepost", http.MethodDelete, "/social/rest/reposts/"+q.repostOf, u.token, nil, http.StatusNotFound)
	gone := out != unknown
	if out == acked {
		if e := entry(rep); str(e, "id") != q.repostOf || e["repostedByViewer"] != false {
			r.m.violate(fmt.Sprintf("unrepost of %s by %s answered %v", q.repostOf, u.name, rep.body))
		}
	}
	if out == unknown {
		pr, err := r.probe(ctx, "unrepost", "/social/rest/activities/@me/@self/@app/"+q.id, u.token, 200, 404)
		if err != nil {
			return err
		}
		gone = pr.status == 404
	}
	r.m.done("unrepost", out != acked, time.Now())
	if gone {
		r.m.mu.Lock()
		r.m.drop(q)
		r.m.mu.Unlock()
	}
	return nil
}

// tagText writes tags as a title's tail, each in a case of its own.
func tagText(rng *rand.Rand, tags []string) string {
	var b strings.Builder
	for _, t := range tags {
		switch rng.IntN(3) {
		case 0:
			t = strings.ToUpper(t)
		case 1:
			t = strings.ToUpper(t[:1]) + t[1:]
		}
		b.WriteString(" #" + t)
	}
	return b.String()
}

// followTag makes one of a's users follow a tag, or unfollow one they
// follow, by REST: from the follow on, the tag's new posts come to their
// home feed; an unfollow stops what comes next.
func (r *runner) followTag(ctx context.Context, a *actor) (bool, error) {
	u := a.pick()
	tag := tagNames[a.rng.IntN(len(tagNames))]
	k := pair{u.id, tag}
	r.m.mu.Lock()
	on := !r.m.tagFollowing[k]
	r.m.mu.Unlock()
	op := "follow tag"
	start := time.Now()
	var out outcome
	if on {
		name := tag
		if a.rng.IntN(2) == 0 {
			name = "#" + strings.ToUpper(tag)
		}
		_, out = r.write(ctx, op, http.MethodPost, "/social/rest/tags/@me", u.token, map[string]string{"name": name})
	} else {
		op = "unfollow tag"
		_, out = r.write(ctx, op, http.MethodDelete, "/social/rest/tags/@me/"+tag, u.token, nil)
	}
	now := on == (out == acked) // refused: as it was
	if out == unknown {
		rep, err := r.probe(ctx, op, "/social/rest/tags/@me/"+tag, u.token, 200)
		if err != nil {
			return true, err
		}
		now = entry(rep)["following"] == true
	}
	end := time.Now()
	r.m.done(op, out != acked, end)
	r.m.mu.Lock()
	if now != r.m.tagFollowing[k] {
		r.m.tagFollows[k] = append(r.m.tagFollows[k], event{add: now, start: start, end: end})
	}
	r.m.tagFollowing[k] = now
	r.m.mu.Unlock()
	return true, nil
}

// mark moves one of a's users' home marker to some post, by REST: the
// answer must be the newer of that post and the marker as it was.
func (r *runner) mark(ctx context.Context, a *actor) (bool, error) {
	u := a.pick()
	p := r.livePost(a, "")
	if p == nil {
		return false, nil
	}
	r.m.mu.Lock()
	was := r.m.marks[u.id]
	r.m.mu.Unlock()
	want := p.id
	if was != "" && newerOrSame(was, p.id) {
		want = was
	}
	rep, out := r.write(ctx, "mark", http.MethodPost, "/social/rest/markers/@me", u.token, map[string]any{"home": map[string]string{"lastReadId": p.id}})
	if out == unknown {
		var err error
		if rep, err = r.probe(ctx, "mark", "/social/rest/markers/@me?feeds=home", u.token, 200); err != nil {
			return true, err
		}
	}
	r.m.done("mark", out != acked, time.Now())
	home, _ := entry(rep)["home"].(map[string]any)
	got := str(home, "lastReadId")
	switch {
	case out == acked && got != want, out == unknown && got != want && got != was:
		r.m.violate(fmt.Sprintf("mark: %s's home marker moved from %q to %s answered %q, want %q", u.name, was, p.id, got, want))
	case out != refused:
		r.m.mu.Lock()
		r.m.marks[u.id] = got
		r.m.mu.Unlock()
	}
	return true, nil
}

// deleteAccount deletes one of a's users (a keeps one at least, and the
// mix deletes at most one user in eight). At once its token must stop
// working; once the jobs have run, nothing anywhere may show it.
func (r *runner) deleteAccount(ctx context.Context, a *actor) (bool, error) {
	if len(a.users) < 2 {
		return false, nil
	}
	r.m.mu.Lock()
	gone := 0
	for _, u := range r.m.users {
		if u.gone {
			gone++
		}
	}
	if (gone+1)*8 > len(r.m.users) {
		r.m.mu.Unlock()
		return false, nil
	}
	i := a.rng.IntN(len(a.users))
	u := a.users[i]
	u.gone = true
	r.m.mu.Unlock()
	a.users = slices.Delete(a.users, i, i+1)
	failed := false
	for {
		// A 401 after an attempt that answered nothing: that attempt
		// deleted the account.
		var refusals []int
		if failed {
			refusals = []int{http.StatusUnauthorized}
		}
		_, out := r.write(ctx, "delete account", http.MethodDelete, "/auth/account", u.token, map[string]string{"password": password}, refusals...)
		if out != unknown {
			break
		}
		failed = true
		if ctx.Err() != nil {
			return true, ctx.Err()
		}
	}
	r.m.done("delete account", failed, time.Now())
	if rep, err := r.c.read(ctx, "/social/rest/people/@me/@self", u.token); err == nil && rep.status != http.StatusUnauthorized {
		r.m.violate(fmt.Sprintf("delete account: %s's token works after the deletion: %d", u.name, rep.status))
	}
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	u.deleted = true
	for _, p := range r.m.posts {
		if p.author == u.id && !p.deleted {
			r.m.drop(p)
		}
	}
	for _, c := range r.m.comments {
		if c.author == u.id {
			c.deleted = true
		}
	}
	return true, nil
}

// App data: each user writes only their own, one operation at a time, so
// the model knows it exactly: what was acknowledged, or, after an answer
// that was lost, what a read finds.

var (
	apps    = []string{"@app", "notes"}
	appKeys = []string{"k0", "k1", "k2", "k3", "k4"}
)

func (a *actor) someKeys(n int) []string {
	keys := slices.Clone(appKeys)
	a.rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	return keys[:1+a.rng.IntN(n)]
}

// setAppData sets some keys, by REST or JSON-RPC; a third of the calls
// also name fields, and only the keys in both change.
func (r *runner) setAppData(ctx context.Context, a *actor) (bool, error) {
	u, app := a.pick(), apps[a.rng.IntN(len(apps))]
	data := map[string]string{}
	for _, k := range a.someKeys(3) {
		a.count++
		data[k] = fmt.Sprintf("v%d.%d", a.n, a.count)
	}
	var fields []string
	if a.rng.IntN(3) == 0 {
		fields = a.someKeys(4)
	}
	var out outcome
	if r.turns.Add(1)%2 == 0 {
		_, out = r.write(ctx, "set app data", viaRPC, "appdata.update", u.token, map[string]any{"appId": app, "data": data, "fields": fields})
	} else {
		path := "/social/rest/appdata/@me/@self/" + app
		if fields != nil {
			path += "?fields=" + strings.Join(fields, ",")
		}
		_, out = r.write(ctx, "set app data", http.MethodPut, path, u.token, data)
	}
	return true, r.appDataDone(ctx, "set app data", u, app, out, func(d map[string]string) {
		for k, v := range data {
			if fields == nil || slices.Contains(fields, k) {
				d[k] = v
			}
		}
	})
}

// deleteAppData deletes some keys, or all of an app's.
func (r *runner) deleteAppData(ctx context.Context, a *actor) (bool, error) {
	u, app := a.pick(), apps[a.rng.IntN(len(apps))]
	var keys []string
	if a.rng.IntN(4) > 0 {
		keys = a.someKeys(2)
	}
	var out outcome
	if r.turns.Add(1)%2 == 0 {
		_, out = r.write(ctx, "delete app data", viaRPC, "appdata.delete", u.token, map[string]any{"appId": app, "fields": keys})
	} else {
		_, out = r.write(ctx, "delete app data", http.MethodDelete, "/social/rest/appdata/@me/@self/"+app+"?fields="+strings.Join(keys, ","), u.token, nil)
	}
	return true, r.appDataDone(ctx, "delete app data", u, app, out, func(d map[string]string) {
		if keys == nil {
			clear(d)
		}
		for _, k := range keys {
			delete(d, k)
		}
	})
}

// appDataDone records a write of u's app data: applied when acknowledged,
// as read back when the answer was lost.
func (r *runner) appDataDone(ctx context.Context, op string, u *user, app string, out outcome, apply func(map[string]string)) error {
	r.m.done(op, out != acked, time.Now())
	var read map[string]string
	if out == unknown {
		rep, err := r.probe(ctx, op, "/social/rest/appdata/@me/@self/"+app, u.token, http.StatusOK)
		if err != nil {
			return err
		}
		read = appDataOf(rep, u.id)
	}
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	d := r.m.appData[pair{u.id, app}]
	if d == nil {
		d = map[string]string{}
		r.m.appData[pair{u.id, app}] = d
	}
	switch out {
	case acked:
		apply(d)
	case unknown:
		clear(d)
		maps.Copy(d, read)
	}
	return nil
}

// appDataOf is user's data in an app data answer.
func appDataOf(rep reply, user string) map[string]string {
	out := map[string]string{}
	d, _ := entry(rep)[user].(map[string]any)
	for k, v := range d {
		out[k], _ = v.(string)
	}
	return out
}
