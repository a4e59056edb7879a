// Package converge checks that the copies on activities converge to what
// the graph says, under concurrency and faults. It starts the local stack
// (the Datastore emulator behind a fault-injecting gRPC interceptor, the
// tasks emulator in its fault mode, the API over HTTP), runs a seeded
// random mix of every write the API offers from concurrent clients, waits
// until every queue is empty, and compares every feed and count with an
// oracle computed from the acknowledged operations.
//
// run.go drives the mix; each operation lives beside those it exercises
// with (people.go, posts.go, groups.go, reactions.go, appdata.go); model.go
// records what was acknowledged and oracle.go checks the end state.
//
// cmd/converge runs it from the command line; its test runs it briefly.
package converge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"socialstream/internal/app"
	"socialstream/internal/notifications"
	"socialstream/internal/push/receiver"
	"socialstream/internal/scheduled"
	"socialstream/internal/store"
)

// Config configures a run.
type Config struct {
	Seed     uint64
	Clients  int           // concurrent clients
	Users    int           // users registered before the mix starts
	MaxUsers int           // the mix registers no more once there are this many
	Duration time.Duration // how long the mix runs
	// MinEach, when set, lets the mix run on past Duration (up to four
	// times as long, for a loaded machine) until every operation has run
	// at least this many times, and the other server's faults have all
	// come about (runner.faultUnseen).
	MinEach int
	Settle  time.Duration // the longest wait for every queue to empty

	Dir       string // the repository root: index.yaml and queue.yaml
	Datastore string // an emulator's host:port; empty starts one of Engine

	// Fault shares (0 to 1): TaskFaults of task deliveries delayed, and
	// as many delivered twice, half as many answered 500 by the emulator
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
	// PageCacheTTL is how long each instance keeps what its pages read.
	// A change leaves every instance's cache before the first page begun
	// PageCacheSync after it: the mix reads pages through the second
	// instance too, and the comparison reads half the feeds through it
	// once that is past. PageCacheShards are the marks of changes'
	// shards (more than the service's one, so that an ask reads several).
	PageCacheTTL, PageCacheSync time.Duration
	PageCacheShards             int
	// SharedCache puts a cache tier both instances share (a redis-server
	// of the stack's) under their own; with SharedOnly, instead of their
	// own (PAGE_CACHE_LOCAL=off: no marks of changes).
	SharedCache, SharedOnly bool
	// CelebrityFollowers is the stack's CELEBRITY_FOLLOWERS: low, so that
	// the mix's most followed people become celebrities during a run.
	CelebrityFollowers int

	LogLevel slog.Level
	Log      io.Writer // the stack's logs; nil discards them
	// TxLog, if not nil, takes a line for each Datastore call of a
	// transaction and each commit (txLog).
	TxLog    io.Writer
	Progress io.Writer // a line now and then; nil for none
}

// Defaults returns a configuration of a short run.
func Defaults() Config {
	return Config{
		Seed: 1, Clients: 4, Users: 10, MaxUsers: 200, Duration: 30 * time.Second, Storms: 2, Settle: 3 * time.Minute, Dir: ".",
		TaskFaults: 0.1, EnqueueFaults: 0.03, DatastoreFaults: 0.02, CommitFaults: 0.03, SlowCommits: 0.1,
		CopyLimit: 3, BackfillMax: 4, BackfillBatch: 2,
		// Shorter than the service's two minutes, which a run would sit
		// out at its end for the jobs of changes that never committed:
		// so long as every request ends sooner (checkLongest, a
		// violation else), no job gives up on a change that commits.
		GiveUpAfter: time.Minute, MaxBackoff: 2 * time.Second, LogLevel: slog.LevelError,
		PageCacheTTL: app.DefaultPageCacheTTL, PageCacheSync: app.DefaultPageCacheSync, PageCacheShards: 3,
		SharedCache: true, CelebrityFollowers: 3,
	}
}

// sharedCache is the stack's PAGE_CACHE_REDIS.
func (c Config) sharedCache() string {
	if c.SharedCache && c.PageCacheTTL > 0 {
		return app.LocalRedis
	}
	return ""
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
	r, err := newRunner(ctx, cfg, st)
	if err != nil {
		return nil, err
	}
	defer r.remote.close()
	clients := make([]*actor, cfg.Clients)
	for i := range clients {
		clients[i] = &actor{n: i, rng: rand.New(rand.NewPCG(cfg.Seed, uint64(i)+1))}
	}
	if err := r.startStaff(ctx, st.db); err != nil {
		return nil, err
	}
	for i := 0; i < max(cfg.Users, cfg.Clients); i++ { // each client acts as one user at least
		if err := r.register(ctx, clients[i%len(clients)]); err != nil {
			return nil, err
		}
	}
	if err := r.meet(ctx, r.m.users[0]); err != nil {
		return nil, err
	}
	start := time.Now()
	if err := r.mix(ctx, clients, start, st); err != nil {
		return nil, err
	}
	rep := &Report{Seed: cfg.Seed, Clients: cfg.Clients, Elapsed: time.Since(start)}
	drain(&r.remote.flights, func() { r.settle(st) })
	settled := time.Now()
	rep.Converged = time.Since(r.m.lastOp)
	rep.Shared = st.shared()
	// A change shows on every instance on the first page begun
	// PageCacheSync after it, and in an unread count UnreadLag later: a
	// job's, the queues' last, no later than they emptied.
	r.m.mu.Lock()
	last := r.m.lastOp
	r.m.mu.Unlock()
	if wait := cfg.PageCacheSync - time.Since(last); wait > 0 {
		time.Sleep(wait)
	}
	if wait := cfg.PageCacheSync + notifications.UnreadLag - time.Since(settled); wait > 0 {
		time.Sleep(wait)
	}
	if cfg.Progress != nil {
		fmt.Fprintf(cfg.Progress, "converge: queues empty %s after the last operation; comparing\n", rep.Converged.Round(time.Millisecond))
	}
	// The comparison reads without faults: they are for the writes and
	// jobs, and the reads have been shown to survive them during the mix.
	st.dsFaults.SetEnabled(false)
	r.checkLongest(st, rep)
	if err := r.check(ctx, rep); err != nil {
		return nil, err
	}
	rep.HomesTaken, rep.HomesRead, rep.HomesKept = st.answers()
	rep.Ops, rep.Failed = r.m.ops, r.m.failed
	rep.TaskFaults = st.tasks.FaultCounts()
	rep.DatastoreFaults = st.dsFaults.Counts()
	// The model's violations (the mix's, and the checks' through the
	// oracle) and those the checks added to the report.
	rep.Violations = append(slices.Clone(r.m.violations), rep.Violations...)
	return rep, nil
}

// newRunner returns the runner of a run on st, its push service set to
// check messages against the instance's key.
func newRunner(ctx context.Context, cfg Config, st *stack) (*runner, error) {
	r := &runner{
		cfg: cfg, m: newModel(), objects: st.objects, db: st.db, push: st.push, deliveries: st.deliveries,
		publisher: st.publisher, externalIDOf: st.externalIDOf, site: st.site,
		remote: newRemote(cfg.Seed, st.federates),
		c:      &client{base: st.url, http: &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}},
		other:  &client{base: st.other, http: &http.Client{Timeout: 2 * time.Minute}},
	}
	return r, r.expectPushKey(ctx)
}

// mix runs the clients' operations until Config.Duration is over (or
// longer: Config.MinEach), and reports progress now and then.
func (r *runner) mix(ctx context.Context, clients []*actor, start time.Time, st *stack) error {
	cfg := r.cfg
	stop := start.Add(cfg.Duration)
	hardStop := start.Add(4 * cfg.Duration)
	r.stop = stop
	more := func() bool {
		now := time.Now()
		if now.Before(stop) {
			return true
		}
		return now.Before(hardStop) && !(r.everyOpRan(cfg.MinEach) && r.faultsSeen())
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
		go r.progress(ctx, more, start, st)
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// progress says, every ten seconds while more, how the mix goes.
func (r *runner) progress(ctx context.Context, more func() bool, start time.Time, st *stack) {
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
			fmt.Fprintf(r.cfg.Progress, "converge: %s, %d operations, %d tasks pending\n", time.Since(start).Round(time.Second), n, st.tasks.Pending())
		}
	}
}

// settle waits until every queue is empty, twice in a row, or
// Config.Settle is over (a violation).
func (r *runner) settle(st *stack) {
	deadline := time.Now().Add(r.cfg.Settle)
	for empty := 0; empty < 2; {
		if time.Now().After(deadline) {
			r.m.violate(fmt.Sprintf("queues still hold %d tasks %s after the last operation: %s", st.tasks.Pending(), r.cfg.Settle, strings.Join(st.tasks.Describe(), "; ")))
			return
		}
		if st.tasks.Pending() == 0 {
			empty++
		} else {
			empty = 0
		}
		time.Sleep(100 * time.Millisecond)
	}
}

type runner struct {
	cfg   Config
	m     *model
	c     *client
	other *client   // the second instance's (see stack.other)
	db    *store.DB // reads what no answer may tell (see truth)
	// publisher, externalIDOf and site are the stack's (scheduled.go,
	// cards.go).
	publisher    func(now func() time.Time) (*scheduled.Service, error)
	externalIDOf func(ctx context.Context, author, ext string) (string, bool, error)
	site         *site
	locks        sync.Map // string → *sync.RWMutex: pairs and comments that two users may change
	staff        *user    // the moderator, in no actor's users
	seq          sync.Mutex
	n            int
	turns        atomic.Int64 // alternates REST and JSON-RPC where both serve
	// stop is when the mix's Duration ends (see wants).
	stop time.Time
	// objects lists the pictures' bucket.
	objects func() ([]string, error)
	// push is the push service of every user's device, and deliveries
	// what the deliveries to it did.
	push       *receiver.Service
	deliveries *deliveries
	// remote is the other server of the fediverse in the mix.
	remote *remote
}

// Kinds are the operations of the mix, as reports name them.
func Kinds() []string { return slices.Clone(kinds) }

// kinds are the operations of the mix, as reports name them.
var kinds = []string{"register", "follow", "unfollow", "post", "edit", "delete", "create group", "join", "invite", "accept",
	"decline", "leave", "owner removes", "like", "unlike", "comment", "delete comment", "sessions", "burst",
	"block", "unblock", "mute", "unmute", "lock", "unlock", "approve", "reject", "withdraw", "mark", "read notices", "read elsewhere", "follow tag", "unfollow tag", "repost", "unrepost", "delete account", "set app data", "delete app data", "report", "remove", "limit", "unlimit", "suspend", "unsuspend", "filter", "unfilter", "upload", "pin", "unpin", "bookmark", "unbookmark", "profile", "vote", "schedule", "search", "storm",
	"follow remote", "unfollow remote", "remote post", "remote delete", "remote outage", "far follow", "far unfollow"}

// tagNames are the tags posts carry, written in any case (#Alpha, #ALPHA),
// and people follow.
var tagNames = []string{"alpha", "beta", "gamma"}

// wants reports whether the mix runs on past its Duration (see
// Config.MinEach) and op has not yet run MinEach times: the operations
// that report it then weigh ten times as much, so that a rare one (a
// decision on a follow request needs a locked account and a request
// first) does not leave the run short on a slow machine.
//
// So, with MinEach set, does an operation that brings about one of the
// other server's faults the run has not seen yet (faultUnseen).
func (r *runner) wants(op string) bool {
	if time.Now().Before(r.stop) {
		return false
	}
	return r.ran(op) < r.cfg.MinEach || r.cfg.MinEach > 0 && r.faultUnseen(op)
}

// faultUnseen reports whether op brings about a fault of the other
// server's that the run has not seen: a Note's Delete that overtakes its
// Create ("remote post", which then sends its Delete at once), or a
// delivery from here refused while the other server is unreachable
// ("remote outage"; it needs someone there following someone here).
// Which of them a run sees is chance; a run with MinEach set goes on
// until it has seen both.
func (r *runner) faultUnseen(op string) bool {
	switch op {
	case "remote post":
		r.m.mu.Lock()
		defer r.m.mu.Unlock()
		return r.m.rOvertaken == 0
	case "remote outage":
		return r.remote != nil && r.remote.srv.Refused() == 0
	}
	return false
}

// faultsSeen reports whether the run has seen every fault of the other
// server's it brings about (faultUnseen), when MinEach asks it to.
func (r *runner) faultsSeen() bool {
	return r.cfg.MinEach == 0 || !r.faultUnseen("remote post") && !r.faultUnseen("remote outage")
}

// needs names, of the operations a rare one needs done first, those that
// rarely leave it anything to do: an invitation is accepted three times
// as often as it is declined, so a decline that is wanted waits for
// invitations the accepts have not taken; a decision on a follow request,
// or its withdrawal, needs a locked account, and a withdrawal a request
// its asker still holds (the decisions take them too); an owner's removal
// needs a group of theirs with a member besides them; an outage of the
// other server refuses a delivery only to a follower there of someone
// here.
var needs = map[string][]string{"decline": {"invite"}, "accept": {"invite"},
	"approve": {"lock"}, "reject": {"lock"}, "withdraw": {"lock", "follow"},
	"owner removes": {"create group", "join"}, "remote outage": {"far follow"}}

// boosted reports whether an operation of kinds weighs ten times as much
// now: one of them is wanted (wants), or makes what a wanted one needs.
func (r *runner) boosted(kinds []string) bool {
	if slices.ContainsFunc(kinds, r.wants) {
		return true
	}
	for op, first := range needs {
		if r.wants(op) && slices.ContainsFunc(kinds, func(k string) bool { return slices.Contains(first, k) }) {
			return true
		}
	}
	return false
}

// ran returns how many times op has run.
func (r *runner) ran(op string) int {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	return r.m.ops[op]
}

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
	// suspended are its users a moderator suspended: in no operation
	// until the suspension is lifted.
	suspended []*user
	count     int
}

func (r *runner) lock(key string) func() {
	v, _ := r.locks.LoadOrStore(key, &sync.RWMutex{})
	mu := v.(*sync.RWMutex)
	mu.Lock()
	return mu.Unlock
}

// rlock is lock shared with other holders of rlock: for operations that
// may run at once with each other, but not with one that takes lock (many
// reposts of one post, and no moderator's removal of it meanwhile).
func (r *runner) rlock(key string) func() {
	v, _ := r.locks.LoadOrStore(key, &sync.RWMutex{})
	mu := v.(*sync.RWMutex)
	mu.RLock()
	return mu.RUnlock
}

// outcome of a write.
type outcome int

const (
	acked   outcome = iota // 2xx
	refused                // a 4xx the operation may answer: nothing changed
	unknown                // 503 or no answer: read to find out
)

func (o outcome) String() string { return [...]string{"acked", "refused", "unknown"}[o] }

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
		kinds  []string // what it reports, leaned on when short (see wants)
	}
	ops := []op{
		{3, func(ctx context.Context, a *actor) (bool, error) {
			if r.full() {
				return false, nil
			}
			return true, r.register(ctx, a)
		}, []string{"register"}},
		{2, r.burst, []string{"burst"}},
		{14, r.follow, []string{"follow"}}, {8, r.unfollow, []string{"unfollow", "withdraw"}},
		{20, r.post, []string{"post", "upload"}}, {4, r.editPost, []string{"edit"}}, {4, r.deletePost, []string{"delete"}},
		{3, r.createGroup, []string{"create group"}}, {5, r.join, []string{"join"}}, {4, r.invite, []string{"invite"}},
		{6, r.accept, []string{"accept"}}, {2, r.decline, []string{"decline"}}, {3, r.leave, []string{"leave"}},
		{3, r.ownerRemove, []string{"owner removes"}},
		{8, r.like, []string{"like"}}, {4, r.unlike, []string{"unlike"}}, {6, r.comment, []string{"comment"}},
		{3, r.deleteComment, []string{"delete comment"}}, {1, r.sessions, []string{"sessions"}},
		{2, r.block, []string{"block"}}, {1, r.unblock, []string{"unblock"}}, {2, r.setLocked, []string{"lock", "unlock"}},
		{3, r.decide, []string{"approve", "reject"}}, {2, r.mute, []string{"mute", "unmute"}}, {2, r.mark, []string{"mark"}}, {2, r.readNotices, []string{"read notices"}}, {3, r.readElsewhere, []string{"read elsewhere"}},
		{3, r.followTag, []string{"follow tag", "unfollow tag"}}, {4, r.repost, []string{"repost", "unrepost"}},
		{1, r.deleteAccount, []string{"delete account"}},
		{3, r.setAppData, []string{"set app data"}}, {2, r.deleteAppData, []string{"delete app data"}},
		{1, r.remove, []string{"remove", "report"}}, {2, r.limit, []string{"limit", "unlimit"}},
		{2, r.suspend, []string{"suspend", "unsuspend"}}, {2, r.filter, []string{"filter", "unfilter"}},
		{3, r.pin, []string{"pin", "unpin"}}, {3, r.bookmark, []string{"bookmark", "unbookmark"}},
		{2, r.setProfile, []string{"profile"}}, {4, r.vote, []string{"vote"}}, {2, r.schedule, []string{"schedule"}},
		{2, r.searchOp, []string{"search"}},
		{4, r.followRemote, []string{"follow remote", "unfollow remote"}}, {5, r.remotePost, []string{"remote post"}},
		{2, r.remoteDelete, []string{"remote delete"}}, {1, r.remoteOutage, []string{"remote outage"}},
		{2, r.farFollow, []string{"far follow", "far unfollow"}},
		{r.cfg.Storms, r.storm, []string{"storm"}},
	}
	total := 0
	for i, o := range ops {
		if r.boosted(o.kinds) {
			ops[i].weight *= 10
		}
		total += ops[i].weight
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
// client's own) like, unlike, repost and comment on one user's post and
// follow and unfollow that user, stormRounds times each, so that the
// transactions on the post's counts and on the user's followers contend.
// Each user still makes one request at a time.
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
				switch k := rng.IntN(12); {
				case p != nil && k < 3:
					err = r.likeAs(gctx, u, p, true)
				case p != nil && k < 5:
					err = r.likeAs(gctx, u, p, false)
				case p != nil && k < 7:
					err = r.repostAs(gctx, u, p)
				case p != nil && k < 9:
					err = r.commentAs(gctx, u, p)
				case k < 11 || !r.follows(u.id, star.id):
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
