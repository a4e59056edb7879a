// Package localstack starts the whole service on one machine, wired as in
// production: the official Datastore emulator (or a store given), the
// project's Cloud Tasks emulator with queue.yaml's queues, reached through
// the real cloudtasks/apiv2 client, a Cloud Storage emulator reached
// through the real cloud.google.com/go/storage client, and the API on
// real HTTP. cmd/dev,
// cmd/feedbench, the convergence checker and the API's tests all start it
// here, each with its own options (ports, faults, interceptors).
package localstack

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/option"

	"socialstream/internal/api"
	"socialstream/internal/app"
	"socialstream/internal/dsemu"
	"socialstream/internal/gcsemu"
	"socialstream/internal/ids"
	"socialstream/internal/media"
	"socialstream/internal/queue"
	"socialstream/internal/ratelimit"
	"socialstream/internal/redisserver"
	"socialstream/internal/store"
	"socialstream/internal/tasksemu"
)

// Options say what to start.
type Options struct {
	// Dir is where index.yaml and queue.yaml are; default ".".
	Dir string
	// Config is the service's configuration, as cmd/server reads it
	// (app.ReadEnv), wired by the function cmd/server's is (app.Wire):
	// the stack sets alone what reaching its own parts takes (the
	// project, the queues' location, the emulators, the tasks' proof, the
	// bucket, and the public URL when Config has none). Zero rate limits
	// are none.
	Config app.Config
	// Project and Location name the emulators' project and queue
	// location; default "socialstream-local" and "local".
	Project, Location string

	// DB, when set, is the store the API uses (tests bring their own
	// namespace on a shared emulator); the Datastore fields below are
	// then ignored.
	DB *store.DB
	// DatastoreHost is an emulator already running; empty starts the
	// Firestore emulator in Datastore mode, which keeps its data in
	// memory.
	DatastoreHost string
	DatastorePort int       // 0 picks a free port
	EmulatorLog   io.Writer // the started emulator's output; nil drops it
	Namespace     string    // the API's Datastore namespace
	// ClientOptions are added to the API's Datastore client (a gRPC
	// interceptor that counts calls or injects faults).
	ClientOptions []option.ClientOption

	// StorageEndpoint is a Cloud Storage emulator already running (its
	// JSON API's URL), with the bucket Bucket; empty starts one in the
	// process (package gcsemu).
	StorageEndpoint string
	// Bucket is the pictures' bucket; default "socialstream-local-media".
	Bucket string

	// APIAddr and TasksAddr are where the API and the tasks emulator
	// listen; default 127.0.0.1:0.
	APIAddr, TasksAddr string
	// APIListener, when set, is where the API listens (APIAddr is then
	// unused): a listener opened before the stack, for a stack that must
	// know its address first (Listen). The stack closes it.
	APIListener net.Listener
	// Queue adjusts each of queue.yaml's queues before the emulator
	// starts (shorter backoffs for the checker, say).
	Queue func(*tasksemu.QueueConfig)
	// TaskFaults turns on the tasks emulator's fault mode.
	TaskFaults       tasksemu.Faults
	DispatchDeadline time.Duration // default the emulator's

	// Gen mints the ids; default ids.New() (tests bring one on a clock
	// of their own).
	Gen *ids.Generator
	// Wrap, when set, wraps the API's handler (to tag requests, say),
	// and WrapQueue the queue its jobs are enqueued on (to see when).
	Wrap      func(http.Handler) http.Handler
	WrapQueue func(queue.Queue) queue.Queue
	Logger    *slog.Logger // default: discard
}

// Stack is a running local stack.
type Stack struct {
	URL           string // the API's base URL
	DatastoreHost string // "" when Options.DB was given
	// Storage is the Cloud Storage emulator started (nil when
	// Options.StorageEndpoint was given), StorageEndpoint the JSON API
	// the service uses, and Bucket the pictures'.
	Storage         *gcsemu.Emulator
	StorageEndpoint string
	Bucket          string
	DB              *store.DB
	Gen             *ids.Generator
	Services        *app.Services
	Tasks           *tasksemu.Local
	// TaskSecret is this run's proof of the tasks emulator: the API runs
	// only task requests that carry it (api.TaskSecretHeader).
	TaskSecret string
	// Shared is the cache tier the instances share, when
	// Config.PageCacheRedis names one ("local": a redis-server this stack
	// started, at SharedURL).
	Shared    *store.Shared
	SharedURL string

	emu     *dsemu.Emulator
	errc    chan error
	closers []func()
}

// Start starts what o asks for; Close stops it all.
func Start(ctx context.Context, o Options) (_ *Stack, err error) {
	o.defaults()
	s := &Stack{DB: o.DB, errc: make(chan error, 2)}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	apiL := o.APIListener
	if apiL == nil {
		if apiL, err = net.Listen("tcp", o.APIAddr); err != nil {
			return nil, fmt.Errorf("API address: %w", err)
		}
	}
	s.closers = append(s.closers, func() { apiL.Close() })
	if s.DB == nil {
		if s.DB, err = s.openStore(ctx, o); err != nil {
			return nil, err
		}
	}
	addr := apiL.Addr().(*net.TCPAddr)
	host := "127.0.0.1"
	if !addr.IP.IsUnspecified() {
		host = addr.IP.String()
	}
	s.URL = "http://" + net.JoinHostPort(host, strconv.Itoa(addr.Port))
	if err := s.startTasks(o); err != nil {
		return nil, err
	}
	h, err := s.handler(ctx, o)
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := app.Serve(sctx, apiL, h, o.Logger); err != nil {
			s.errc <- fmt.Errorf("API: %w", err)
		}
	}()
	s.closers = append(s.closers, func() { cancel(); <-done })
	// As a deployed instance does when it starts; a failure (a fault the
	// caller injects) is tried again, as the next instance would.
	for try := 1; ; try++ {
		err := s.Services.Warm(ctx)
		if err == nil {
			break
		}
		if try == 5 {
			return nil, err
		}
		time.Sleep(100 * time.Millisecond)
	}
	return s, nil
}

func (o *Options) defaults() {
	if o.Dir == "" {
		o.Dir = "."
	}
	if o.Project == "" {
		o.Project = "socialstream-local"
	}
	if o.Location == "" {
		o.Location = "local"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	for _, addr := range []*string{&o.APIAddr, &o.TasksAddr} {
		if *addr == "" {
			*addr = "127.0.0.1:0"
		}
	}
}

// startTasks starts the tasks emulator, with queue.yaml's queues, to
// deliver to s.URL with this run's proof.
func (s *Stack) startTasks(o Options) error {
	queues, err := tasksemu.LoadQueueYAML(filepath.Join(o.Dir, "queue.yaml"))
	if err != nil {
		return err
	}
	for i := range queues {
		if o.Queue != nil {
			o.Queue(&queues[i])
		}
	}
	var secret [32]byte
	if _, err := rand.Read(secret[:]); err != nil {
		return err
	}
	s.TaskSecret = hex.EncodeToString(secret[:])
	s.Tasks, err = tasksemu.StartLocal(tasksemu.Config{
		Project: o.Project, Location: o.Location, Queues: queues, Target: s.URL,
		DispatchDeadline: o.DispatchDeadline, Faults: o.TaskFaults,
		Proof:  http.Header{api.TaskSecretHeader: {s.TaskSecret}},
		Logger: o.Logger.With("component", "tasks-emulator"),
	}, o.TasksAddr)
	if err != nil {
		return err
	}
	s.closers = append(s.closers, s.Tasks.Close)
	return nil
}

// handler builds the services and the API's handler, as cmd/server's
// are built (app.Wire), over the stack's own parts.
func (s *Stack) handler(ctx context.Context, o Options) (http.Handler, error) {
	s.Gen = o.Gen
	if s.Gen == nil {
		s.Gen = ids.New()
	}
	storage, err := s.openStorage(ctx, o)
	if err != nil {
		return nil, err
	}
	cfg := o.Config
	cfg.Project, cfg.TasksLocation, cfg.Namespace, cfg.MediaBucket = o.Project, o.Location, s.DB.Namespace(), s.Bucket
	cfg.TasksSecret, cfg.OnAppEngine, cfg.Service = s.TaskSecret, false, ""
	if cfg.PublicURL == "" {
		cfg.PublicURL = s.URL
	}
	if cfg.RateLimits == (ratelimit.Config{}) {
		cfg.RateLimits.Off = true
	}
	var h http.Handler
	var q queue.Queue = s.Tasks.Queue
	if o.WrapQueue != nil {
		q = o.WrapQueue(q)
	}
	if err := s.openShared(ctx, &cfg, o.Logger); err != nil {
		return nil, err
	}
	s.Services, h, err = app.Wire(cfg, o.Logger, app.Parts{DB: s.DB, Gen: s.Gen, Queue: q, Storage: storage, Shared: s.Shared})
	if err != nil {
		return nil, err
	}
	if o.Wrap != nil {
		h = o.Wrap(h)
	}
	return h, nil
}

// openStore connects to the emulator o names, or starts one.
func (s *Stack) openStore(ctx context.Context, o Options) (*store.DB, error) {
	host := o.DatastoreHost
	if host == "" {
		index := filepath.Join(o.Dir, "index.yaml")
		if _, err := os.Stat(index); err != nil {
			return nil, errors.New("index.yaml not found: run from the repository root")
		}
		emu, err := dsemu.Start(ctx, dsemu.Options{Engine: dsemu.Firestore, IndexFile: index, InMemory: true, Port: o.DatastorePort, Log: o.EmulatorLog})
		if err != nil {
			return nil, err
		}
		s.emu = emu
		s.closers = append(s.closers, func() { emu.Stop() })
		host = emu.Host
		go func() {
			<-emu.Done()
			s.errc <- errors.New("the Datastore emulator exited")
		}()
	}
	s.DatastoreHost = host
	client, err := store.Open(ctx, o.Project, host, o.ClientOptions...)
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, func() { client.Close() })
	return store.New(client, o.Namespace)
}

// openStorage connects to the Cloud Storage emulator o names, or starts
// one in the process.
func (s *Stack) openStorage(ctx context.Context, o Options) (*storage.Client, error) {
	s.Bucket = o.Bucket
	if s.Bucket == "" {
		s.Bucket = "socialstream-local-media"
	}
	endpoint := o.StorageEndpoint
	if endpoint == "" {
		emu, err := gcsemu.Start(0, s.Bucket)
		if err != nil {
			return nil, err
		}
		s.Storage = emu
		s.closers = append(s.closers, emu.Stop)
		endpoint = emu.Endpoint
	}
	s.StorageEndpoint = endpoint
	client, err := media.Dial(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, func() { client.Close() })
	return client, nil
}

// Wait returns when ctx is done, or with the error of a part of the stack
// that stopped by itself (the emulator, the API).
func (s *Stack) Wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case err := <-s.errc:
		return err
	}
}

// Close stops everything Start started, the last first.
func (s *Stack) Close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}

// openShared opens the cache tier cfg names, starting a redis-server for
// "local" (app.LocalRedis), and names its address in cfg.
func (s *Stack) openShared(ctx context.Context, cfg *app.Config, log *slog.Logger) error {
	if cfg.PageCacheRedis == "" {
		return nil
	}
	if cfg.PageCacheRedis == app.LocalRedis {
		srv, err := redisserver.Start(ctx, 256<<20)
		if err != nil {
			return fmt.Errorf("PAGE_CACHE_REDIS=local: %w", err)
		}
		s.closers = append(s.closers, srv.Stop)
		cfg.PageCacheRedis = srv.URL
	}
	shared, err := store.NewShared(ctx, cfg.PageCacheRedis, log)
	if err != nil {
		return err
	}
	s.closers = append(s.closers, func() { shared.Close() })
	s.Shared, s.SharedURL = shared, cfg.PageCacheRedis
	return nil
}

// Listen opens a listener on a free loopback port, and returns it with
// its address: for a stack that federates as the address it listens at,
// which it must know before it starts (Options.APIListener). The port is
// held from now on, so no other process can take it meanwhile.
func Listen() (net.Listener, string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	return l, l.Addr().String(), nil
}
