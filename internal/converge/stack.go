package converge

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"golang.org/x/crypto/bcrypt"
	"google.golang.org/api/option"

	"socialstream/internal/app"
	"socialstream/internal/dsfaults"
	"socialstream/internal/federation"
	"socialstream/internal/localstack"
	"socialstream/internal/logging"
	"socialstream/internal/push/receiver"
	"socialstream/internal/scheduled"
	"socialstream/internal/store"
	"socialstream/internal/tasksemu"
)

const (
	project  = "converge"
	location = "local"
)

// stack is the service under test: the API on loopback over real HTTP,
// the tasks emulator (with its fault mode) running its jobs, the Datastore
// emulator behind a fault-injecting interceptor, the Cloud Storage
// emulator of the pictures.
type stack struct {
	url string
	// shared is what the instances' shared cache tier was asked and
	// answered, both instances' together.
	shared func() store.SharedStats
	// answers is how many home ranges both instances took as kept, read,
	// and kept once read (store.Cache.AnswerStats).
	answers func() (taken, read, kept int64)
	// federates is its root as it federates.
	federates string
	// other is a second instance of the service on the same Datastore,
	// as App Engine runs several: writes through it with a token it
	// still trusts must be refused once the account is suspended or
	// deleted through the first.
	other    string
	tasks    *tasksemu.Server
	dsFaults *dsfaults.Injector
	db       *store.DB // through the faults
	objects  func() ([]string, error)
	// push is the push service every user's device subscribes at, and
	// deliveries what the stacks' deliveries to it did.
	push       *receiver.Service
	deliveries *deliveries
	// longest is the longest request either instance served.
	longest *longest
	// publisher is the service's scheduled posts on the clock now (its
	// job is run at a post's time by the checker: the task is due hours
	// later), and externalIDOf tells which post an external id made.
	publisher    func(now func() time.Time) (*scheduled.Service, error)
	externalIDOf func(ctx context.Context, author, ext string) (string, bool, error)
	// site serves the pages the posts link, for their cards.
	site  *site
	close func()
}

// startStack starts the stack cfg describes. index.yaml and queue.yaml are
// read from cfg.Dir.
func startStack(ctx context.Context, cfg Config, logOut io.Writer) (*stack, error) {
	// It federates as the loopback address it listens at, so that the
	// other server of the mix (remote.go) reaches it at the addresses it
	// gives; both instances as one deployment.
	apiL, addr, err := localstack.Listen()
	if err != nil {
		return nil, err
	}
	service := app.Config{BcryptCost: bcrypt.MinCost, TokenCacheTTL: 30 * time.Second, PageCacheTTL: cfg.PageCacheTTL,
		PageCacheSync: cfg.PageCacheSync, PageCacheShards: cfg.PageCacheShards, PageCacheRedis: cfg.sharedCache(),
		PageCacheLocalOff: cfg.SharedOnly && cfg.sharedCache() != "", CopyLimit: cfg.CopyLimit, BackfillMax: cfg.BackfillMax, BackfillBatch: cfg.BackfillBatch, GiveUpAfter: cfg.GiveUpAfter,
		WebPushAllowLoopback: true, LinkPreviewsAllowLoopback: true, Federation: federation.Config{Domain: addr, AllowLoopback: true},
		CelebrityFollowers: cfg.CelebrityFollowers}
	told := newDeliveries(logging.New(logOut, cfg.LogLevel, project).Handler())
	long := &longest{}
	faults := dsfaults.New(dsfaults.Config{Seed: cfg.Seed, Before: cfg.DatastoreFaults, AfterCommit: cfg.CommitFaults,
		SlowCommit: cfg.SlowCommits, MaxDelay: 500 * time.Millisecond})
	clientOptions := []option.ClientOption{faults.Option(), long.option()}
	if cfg.TxLog != nil {
		clientOptions = append(clientOptions, (&txLog{w: cfg.TxLog}).option()) // innermost: the calls sent
	}
	st, err := localstack.Start(ctx, localstack.Options{
		Dir: cfg.Dir, Project: project, Location: location,
		APIListener: apiL, DatastoreHost: cfg.Datastore, Namespace: fmt.Sprintf("converge-%d", time.Now().UnixNano()),
		ClientOptions: clientOptions,
		// queue.yaml's queues and retry semantics, but a short backoff and
		// at least 20 dispatches a second (the backfill queue's 2/s would
		// make a run wait minutes for its chains), so that a run converges
		// in seconds. The faults are what is tested, not the rates.
		Queue: func(q *tasksemu.QueueConfig) {
			q.Retry.MaxBackoff = min(q.Retry.MaxBackoff, cfg.MaxBackoff)
			q.Retry.MinBackoff = min(q.Retry.MinBackoff, q.Retry.MaxBackoff)
			if q.Rate < 20 {
				q.Rate, q.BucketSize, q.MaxConcurrent = 20, max(q.BucketSize, 20), max(q.MaxConcurrent, 10)
			}
		},
		DispatchDeadline: time.Minute,
		TaskFaults: tasksemu.Faults{
			Seed: cfg.Seed, Duplicate: cfg.TaskFaults, Delay: cfg.TaskFaults, MaxDelay: 2 * time.Second,
			Fail: cfg.TaskFaults / 2, Timeout: cfg.TaskFaults / 2,
			CreateFail: cfg.EnqueueFaults, CreateLost: cfg.EnqueueFaults,
		},
		Config: service,
		Logger: slog.New(told),
		Wrap:   long.wrap, WrapQueue: long.wrapQueue,
	})
	if err != nil {
		return nil, err
	}
	objects := func() ([]string, error) { return st.Storage.Objects(st.Bucket, "") }
	// The second instance: the same Datastore, pictures' bucket and
	// shared cache tier, with no faults of its own (its writes are all
	// refused), and a token cache and a page cache of its own.
	// Its own cache is small, so that most of what its pages show comes
	// from the tier.
	second := service
	second.PageCacheRedis = st.SharedURL
	if second.PageCacheRedis != "" {
		second.PageCacheEntries = 16
	}
	other, err := localstack.Start(ctx, localstack.Options{
		Dir: cfg.Dir, Project: project, Location: location, DB: st.DB,
		StorageEndpoint: st.StorageEndpoint, Bucket: st.Bucket,
		DispatchDeadline: time.Minute, Config: second,
		Logger: slog.New(told), Wrap: long.wrap, WrapQueue: long.wrapQueue,
	})
	if err != nil {
		st.Close()
		return nil, err
	}
	ps := receiver.New()
	pages := newSite()
	publisher := func(now func() time.Time) (*scheduled.Service, error) {
		return scheduled.New(st.DB, st.Gen, st.Tasks.Queue, st.Services.Activities, scheduled.Config{Now: now})
	}
	shared := func() store.SharedStats {
		var sum store.SharedStats
		for _, s := range []*localstack.Stack{st, other} {
			if s.Shared != nil {
				x := s.Shared.Stats()
				sum.Hits, sum.Misses, sum.Tombs, sum.Failed = sum.Hits+x.Hits, sum.Misses+x.Misses, sum.Tombs+x.Tombs, sum.Failed+x.Failed
			}
		}
		return sum
	}
	answers := func() (taken, read, kept int64) {
		for _, s := range []*localstack.Stack{st, other} {
			t, r, k := s.Services.Cache.AnswerStats()
			taken, read, kept = taken+t, read+r, kept+k
		}
		return taken, read, kept
	}
	return &stack{url: st.URL, shared: shared, answers: answers, federates: "http://" + addr, other: other.URL, tasks: st.Tasks.Server, dsFaults: faults, db: st.DB, objects: objects, push: ps, deliveries: told, longest: long,
		publisher: publisher, externalIDOf: st.Services.Activities.ExternalIDOf, site: pages,
		close: func() { pages.Close(); ps.Close(); other.Close(); st.Close() }}, nil
}
