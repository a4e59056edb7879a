package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"
	"google.golang.org/api/option"
	"google.golang.org/grpc"

	"socialstream/internal/accounts"
	"socialstream/internal/activities"
	"socialstream/internal/app"
	"socialstream/internal/federation"
	"socialstream/internal/graph"
	"socialstream/internal/localstack"
	"socialstream/internal/logging"
	"socialstream/internal/meter"
	"socialstream/internal/push"
	"socialstream/internal/push/receiver"
	"socialstream/internal/scheduled"
	"socialstream/internal/store"
	"socialstream/internal/tasksemu"
	"socialstream/internal/trends"
)

const (
	project  = "feedbench"
	location = "local"
)

// Where a Datastore call came from, told by a context value.
const (
	fromRequest = "request" // an API request from outside
	fromJob     = "job"     // a Cloud Tasks job (/_tasks/...)
	fromDirect  = "direct"  // the bench itself: seeding, floor, baseline
)

type originKey struct{}

// counter counts Datastore RPCs and the time they take, by origin and
// method, from a gRPC client interceptor on the client.
type counter struct {
	mu sync.Mutex
	t  map[string]tally
}

// tally is what one origin's calls came to.
type tally struct {
	Calls map[string]int
	Time  map[string]time.Duration
}

func newCounter() *counter { return &counter{t: map[string]tally{}} }

func (c *counter) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	origin, _ := ctx.Value(originKey{}).(string)
	if origin == "" {
		origin = fromDirect
	}
	name := method[strings.LastIndex(method, "/")+1:]
	start := time.Now()
	err := invoker(ctx, method, req, reply, cc, opts...)
	took := time.Since(start)
	c.mu.Lock()
	t, ok := c.t[origin]
	if !ok {
		t = tally{Calls: map[string]int{}, Time: map[string]time.Duration{}}
		c.t[origin] = t
	}
	t.Calls[name]++
	t.Time[name] += took
	c.mu.Unlock()
	return err
}

// take returns the tally of origin since the last take and zeroes it.
func (c *counter) take(origin string) tally {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.t[origin]
	delete(c.t, origin)
	if !ok {
		t = tally{Calls: map[string]int{}, Time: map[string]time.Duration{}}
	}
	return t
}

// meanMs is the mean time of a call of each method, in milliseconds.
func (t tally) meanMs() map[string]float64 {
	out := map[string]float64{}
	for m, n := range t.Calls {
		out[m] = float64(t.Time[m].Microseconds()) / 1000 / float64(n)
	}
	return out
}

// stack is the service under test: the API over real HTTP on loopback, its
// jobs run by the tasks emulator, against the Datastore emulator; and the
// services over a store on a client of their own, for seeding and direct
// reads.
type stack struct {
	url    string
	http   *http.Client
	calls  *counter     // the API's client
	direct *counter     // the bench's client
	meter  *meter.Meter // the API's client: what its calls are billed

	handler    http.Handler               // the API's, to serve a request in the process
	cache      *store.Cache               // what the API's pages read through
	pending    func() int                 // tasks not yet done
	operations func() tasksemu.Operations // Cloud Tasks operations so far
	hold       func() (release func())    // holds every queue's tasks until released
	// scheduler is the API's scheduled posts over its metered client, on
	// the clock now: the bill runs a publishing job at a post's time.
	scheduler func(now func() time.Time) (*scheduled.Service, error)
	// trends are the API's trends, over its metered client: the bill
	// runs the hour's refresh and approves what waits.
	trends struct {
		refresh func(context.Context) error
		svc     *trends.Service
	}

	// push is a push service on loopback, for the bill of a push, and
	// keys the instance's VAPID keys, which it checks messages against.
	push struct {
		*receiver.Service
		keys *push.Keys
	}

	// dsHost is the Datastore emulator's address, and logOut where the
	// API logs: another stack beside this one uses them (the bill's
	// federation).
	dsHost string
	logOut io.Writer

	db     *store.DB // the bench's
	acc    *accounts.Service
	graph  *graph.Service
	act    *activities.Service
	closer []func()
}

func (s *stack) close() {
	for i := len(s.closer) - 1; i >= 0; i-- {
		s.closer[i]()
	}
}

// startStack starts what cfg asks for. With no emulator host, it starts
// one with index.yaml and --require_indexes.
func startStack(ctx context.Context, cfg config, logOut io.Writer) (_ *stack, err error) {
	s := &stack{calls: newCounter(), direct: newCounter(), logOut: logOut}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	indexYAML, err := os.ReadFile("index.yaml")
	if err != nil {
		return nil, fmt.Errorf("run the bench from the repository's root: %w", err)
	}
	if s.meter, err = meter.New(indexYAML); err != nil {
		return nil, err
	}
	log := logging.New(logOut, slog.LevelWarn, project)
	// The API's Datastore calls are counted and metered, unless the run
	// measures the process's own CPU (unmetered).
	clientOptions := []option.ClientOption{option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(s.calls.intercept, s.meter.Intercept))}
	if cfg.unmetered {
		clientOptions = nil
	}
	namespace := fmt.Sprintf("feedbench-%d", time.Now().UnixNano())
	// The least bcrypt work: sign-ups are seeding here, not what is
	// measured. Tokens are cached as the service's default configures.
	service := app.Config{BcryptCost: bcrypt.MinCost, TokenCacheTTL: 30 * time.Second, CopyLimit: 200, BackfillMax: 1000,
		WebPushAllowLoopback: true, LinkPreviewsAllowLoopback: true, CelebrityFollowers: cfg.celebrities}
	if cfg.bill {
		// The bill meters pages cold and warm, as the service's default
		// keeps them; the timings compare a page's Datastore calls with
		// the same calls made bare, so every page reads them all.
		service.PageCacheTTL = app.DefaultPageCacheTTL
		// The bill counts every ask; the CPU bench leaves PAGE_CACHE_SYNC
		// at 0, so that each page asks as at the presets' instances (a
		// page a second or so: docs/performance.md, "Serving").
		service.PageCacheAskAlways = !cfg.unmetered
		if cfg.sharedAlone {
			service.PageCacheRedis, service.PageCacheLocalOff = app.LocalRedis, true
		}
		// A commit slower than a second writes its marks again: on a
		// loaded machine, a write the operation does not make.
		service.PageCacheRemarkAfter = time.Hour
		service.PruneWindow = billPruneWindow
		// A token whose cached check ends while an operation is metered
		// is read again by it, a read and a Lookup more than the
		// operation's own (the notifications page, once, on a loaded
		// machine). The bill is of operations, not of signing in: a
		// token stays verified through a run.
		service.TokenCacheTTL = time.Hour
	}
	s.push.Service = receiver.New()
	s.closer = append(s.closer, s.push.Close)
	var apiL net.Listener
	if cfg.federate { // on loopback, its domain its own address
		var apiAddr string
		if apiL, apiAddr, err = localstack.Listen(); err != nil {
			return nil, err
		}
		service.Federation = federation.Config{Domain: apiAddr, AllowLoopback: true, BlockRefresh: time.Hour}
	}
	st, err := localstack.Start(ctx, localstack.Options{
		Project: project, Location: location, DatastoreHost: cfg.datastore, Namespace: namespace, APIListener: apiL,
		ClientOptions: clientOptions,
		Config:        service, Logger: log,
		Wrap: func(h http.Handler) http.Handler {
			s.handler = h
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				origin := fromRequest
				if strings.HasPrefix(r.URL.Path, "/_tasks/") {
					origin = fromJob
				}
				h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), originKey{}, origin)))
			})
		},
	})
	if err != nil {
		return nil, err
	}
	s.closer = append(s.closer, st.Close)
	s.url, s.dsHost = st.URL, st.DatastoreHost
	s.pending, s.operations, s.hold, s.cache = st.Tasks.Server.Pending, st.Tasks.Server.Operations, st.Tasks.Server.Hold, st.Services.Cache
	s.scheduler = func(now func() time.Time) (*scheduled.Service, error) {
		return scheduled.New(st.DB, st.Gen, st.Tasks.Queue, st.Services.Activities, scheduled.Config{Now: now})
	}
	s.trends.refresh, s.trends.svc = st.Services.Activities.RefreshTrends, st.Services.Trends
	s.http = &http.Client{Transport: &http.Transport{MaxIdleConns: 128, MaxIdleConnsPerHost: 128}, Timeout: 5 * time.Minute}

	client, err := store.Open(ctx, project, st.DatastoreHost, option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(s.direct.intercept)))
	if err != nil {
		return nil, err
	}
	s.closer = append(s.closer, func() { client.Close() })
	if s.db, err = store.New(client, namespace); err != nil {
		return nil, err
	}
	if s.acc, err = accounts.New(s.db, st.Gen, service.Accounts()); err != nil {
		return nil, err
	}
	svc, err := app.NewServices(s.db, st.Gen, s.acc, st.Tasks.Queue, log, service.Rebuild(), app.Pictures{}, app.Push{}, federation.Config{}, trends.Config{})
	if err != nil {
		return nil, err
	}
	s.graph, s.act, s.push.keys = svc.Graph, svc.Activities, svc.Push.Keys()
	return s, nil
}
