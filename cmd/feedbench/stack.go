package main

import (
	"context"
	"errors"
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
	"socialstream/internal/dsemu"
	"socialstream/internal/graph"
	"socialstream/internal/ids"
	"socialstream/internal/logging"
	"socialstream/internal/queue"
	"socialstream/internal/rebuild"
	"socialstream/internal/store"
	"socialstream/internal/tasksemu"
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
// stores, on a client of their own, for seeding and direct reads.
type stack struct {
	url    string
	http   *http.Client
	calls  *counter // the API's client
	direct *counter // the bench's client

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
	s := &stack{calls: newCounter(), direct: newCounter()}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	host := cfg.datastore
	if host == "" {
		if _, err := os.Stat("index.yaml"); err != nil {
			return nil, errors.New("index.yaml not found: run from the repository root")
		}
		emu, err := dsemu.Start(ctx, dsemu.Options{IndexFile: "index.yaml", InMemory: true})
		if err != nil {
			return nil, err
		}
		s.closer = append(s.closer, func() { emu.Stop() })
		host = emu.Host
	}
	namespace := fmt.Sprintf("feedbench-%d", time.Now().UnixNano())
	open := func(c *counter) (*store.DB, error) {
		client, err := store.Open(ctx, project, host, option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(c.intercept)))
		if err != nil {
			return nil, err
		}
		s.closer = append(s.closer, func() { client.Close() })
		return store.New(client, namespace)
	}
	apiDB, err := open(s.calls)
	if err != nil {
		return nil, err
	}
	if s.db, err = open(s.direct); err != nil {
		return nil, err
	}

	queueYAML, err := os.ReadFile("queue.yaml")
	if err != nil {
		return nil, fmt.Errorf("queue.yaml: %w (run from the repository root)", err)
	}
	queues, err := tasksemu.ParseQueueYAML(queueYAML)
	if err != nil {
		return nil, err
	}
	apiL, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.url = "http://" + apiL.Addr().String()
	log := logging.New(logOut, slog.LevelWarn, project)
	tasks, err := tasksemu.New(tasksemu.Config{Project: project, Location: location, Queues: queues, Target: s.url,
		Logger: log.With("component", "tasks-emulator")})
	if err != nil {
		return nil, err
	}
	tasksL, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(context.Background())
	tasksDone := make(chan struct{})
	go func() {
		defer close(tasksDone)
		tasks.Serve(sctx, tasksL)
	}()
	s.closer = append(s.closer, func() { cancel(); <-tasksDone })
	tc, err := queue.Dial(ctx, tasksL.Addr().String())
	if err != nil {
		return nil, err
	}
	s.closer = append(s.closer, func() { tc.Close() })
	q, err := queue.NewCloudTasks(tc, queue.Config{Project: project, Location: location})
	if err != nil {
		return nil, err
	}

	gen := ids.New()
	// The least bcrypt work: sign-ups are seeding here, not what is
	// measured. Tokens are cached as the service's default configures.
	apiAcc, err := accounts.New(apiDB, gen, accounts.Config{BcryptCost: bcrypt.MinCost, TokenCacheTTL: 30 * time.Second})
	if err != nil {
		return nil, err
	}
	h, err := app.Handler(apiDB, gen, apiAcc, q, log, rebuild.Config{CopyLimit: 200, BackfillMax: 1000})
	if err != nil {
		return nil, err
	}
	tagged := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := fromRequest
		if strings.HasPrefix(r.URL.Path, "/_tasks/") {
			origin = fromJob
		}
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), originKey{}, origin)))
	})
	apiDone := make(chan error, 1)
	go func() { apiDone <- app.Serve(sctx, apiL, tagged, log) }()
	s.closer = append(s.closer, func() { cancel(); <-apiDone })
	s.http = &http.Client{Transport: &http.Transport{MaxIdleConns: 128, MaxIdleConnsPerHost: 128}, Timeout: 5 * time.Minute}

	if s.acc, err = accounts.New(s.db, gen, accounts.Config{BcryptCost: bcrypt.MinCost}); err != nil {
		return nil, err
	}
	if s.graph, err = graph.New(s.db); err != nil {
		return nil, err
	}
	if s.act, err = activities.New(s.db, gen, s.acc, q, activities.Config{FanoutQueue: "fanout"}); err != nil {
		return nil, err
	}
	return s, nil
}
