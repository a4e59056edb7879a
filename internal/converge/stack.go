package converge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"golang.org/x/crypto/bcrypt"

	"socialstream/internal/accounts"
	"socialstream/internal/app"
	"socialstream/internal/dsemu"
	"socialstream/internal/dsfaults"
	"socialstream/internal/ids"
	"socialstream/internal/logging"
	"socialstream/internal/queue"
	"socialstream/internal/rebuild"
	"socialstream/internal/store"
	"socialstream/internal/tasksemu"
)

const (
	project  = "converge"
	location = "local"
)

// stack is the service under test: the API on loopback over real HTTP,
// the tasks emulator (with its fault mode) running its jobs, the Datastore
// emulator behind a fault-injecting interceptor.
type stack struct {
	url      string
	tasks    *tasksemu.Server
	dsFaults *dsfaults.Injector
	closers  []func()
}

func (s *stack) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

// startStack starts the stack cfg describes. index.yaml and queue.yaml are
// read from dir.
func startStack(ctx context.Context, cfg Config, logOut io.Writer) (_ *stack, err error) {
	s := &stack{}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	index, queueFile := cfg.Dir+"/index.yaml", cfg.Dir+"/queue.yaml"
	host := cfg.Datastore
	if host == "" {
		if _, err := os.Stat(index); err != nil {
			return nil, errors.New("index.yaml not found: run from the repository root")
		}
		emu, err := dsemu.Start(ctx, dsemu.Options{IndexFile: index, InMemory: true})
		if err != nil {
			return nil, err
		}
		s.closers = append(s.closers, func() { emu.Stop() })
		host = emu.Host
	}
	s.dsFaults = dsfaults.New(dsfaults.Config{Seed: cfg.Seed, Before: cfg.DatastoreFaults, AfterCommit: cfg.CommitFaults,
		SlowCommit: cfg.SlowCommits, MaxDelay: 500 * time.Millisecond})
	client, err := store.Open(ctx, project, host, s.dsFaults.Option())
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, func() { client.Close() })
	db, err := store.New(client, fmt.Sprintf("converge-%d", time.Now().UnixNano()))
	if err != nil {
		return nil, err
	}

	data, err := os.ReadFile(queueFile)
	if err != nil {
		return nil, fmt.Errorf("queue.yaml: %w (run from the repository root)", err)
	}
	queues, err := tasksemu.ParseQueueYAML(data)
	if err != nil {
		return nil, err
	}
	for i := range queues {
		// queue.yaml's queues and retry semantics, but a short backoff and
		// at least 20 dispatches a second (the backfill queue's 2/s would
		// make a run wait minutes for its chains), so that a run converges
		// in seconds. The faults are what is tested, not the rates.
		q := &queues[i]
		q.Retry.MaxBackoff = min(q.Retry.MaxBackoff, cfg.MaxBackoff)
		q.Retry.MinBackoff = min(q.Retry.MinBackoff, q.Retry.MaxBackoff)
		if q.Rate < 20 {
			q.Rate, q.BucketSize, q.MaxConcurrent = 20, max(q.BucketSize, 20), max(q.MaxConcurrent, 10)
		}
	}
	apiL, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.url = "http://" + apiL.Addr().String()
	log := logging.New(logOut, cfg.LogLevel, project)
	s.tasks, err = tasksemu.New(tasksemu.Config{
		Project: project, Location: location, Queues: queues, Target: s.url,
		DispatchDeadline: time.Minute, Logger: log.With("component", "tasks-emulator"),
		Faults: tasksemu.Faults{
			Seed: cfg.Seed, Duplicate: cfg.TaskFaults, Delay: cfg.TaskFaults, MaxDelay: 2 * time.Second,
			Fail: cfg.TaskFaults / 2, Timeout: cfg.TaskFaults / 2,
			CreateFail: cfg.EnqueueFaults, CreateLost: cfg.EnqueueFaults,
		},
	})
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
		s.tasks.Serve(sctx, tasksL)
	}()
	s.closers = append(s.closers, func() { cancel(); <-tasksDone })
	tc, err := queue.Dial(ctx, tasksL.Addr().String())
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, func() { tc.Close() })
	q, err := queue.NewCloudTasks(tc, queue.Config{Project: project, Location: location})
	if err != nil {
		return nil, err
	}
	gen := ids.New()
	acc, err := accounts.New(db, gen, accounts.Config{BcryptCost: bcrypt.MinCost, TokenCacheTTL: 30 * time.Second})
	if err != nil {
		return nil, err
	}
	h, err := app.Handler(db, gen, acc, q, log, rebuild.Config{
		CopyLimit: cfg.CopyLimit, BackfillMax: cfg.BackfillMax, BackfillBatch: cfg.BackfillBatch,
		GiveUpAfter: cfg.GiveUpAfter,
	})
	if err != nil {
		return nil, err
	}
	apiDone := make(chan error, 1)
	go func() { apiDone <- app.Serve(sctx, apiL, h, log) }()
	s.closers = append(s.closers, func() { cancel(); <-apiDone })
	return s, nil
}
