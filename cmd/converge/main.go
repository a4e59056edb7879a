// Command converge checks that feeds and counts converge to what the
// acknowledged operations say, under concurrency and injected faults. It
// starts the local stack (or uses a given Datastore emulator), runs a
// seeded random mix of writes from concurrent clients over HTTP, waits
// until every queue is empty, compares every feed and count with an
// oracle, and prints the operations, the faults injected, the violations
// and the time to converge. It exits 1 on any violation.
//
// Run it from the repository root:
//
//	go run ./cmd/converge [-clients 16] [-duration 10m] [-seed 1]
//
// With -seeds N it is the sweep: N runs one after another, of seeds
// -seed to -seed+N-1, each report printed as it ends and a table of
// them all at the end (docs/convergence.md keeps the last one's):
//
//	go run ./cmd/converge -seeds 20 -seed 1001
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"socialstream/internal/converge"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	n, err := realMain(ctx, os.Args[1:], os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "converge:", err)
		os.Exit(2)
	}
	if n > 0 {
		os.Exit(1)
	}
}

// realMain runs the checker and returns the number of violations.
func realMain(ctx context.Context, args []string, out, errOut io.Writer) (int, error) {
	cfg := converge.Defaults()
	fs := flag.NewFlagSet("converge", flag.ContinueOnError)
	fs.SetOutput(errOut)
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the operation mix and of the faults")
	fs.IntVar(&cfg.Clients, "clients", cfg.Clients, "concurrent clients")
	fs.IntVar(&cfg.Users, "users", cfg.Users, "users registered before the mix (more register during it)")
	fs.IntVar(&cfg.MaxUsers, "max-users", cfg.MaxUsers, "the mix registers no more users once there are this many")
	fs.DurationVar(&cfg.Duration, "duration", cfg.Duration, "how long the mix runs")
	fs.DurationVar(&cfg.Settle, "settle", cfg.Settle, "the longest wait for every queue to empty")
	fs.DurationVar(&cfg.GiveUpAfter, "give-up", cfg.GiveUpAfter, "how long a job waits for the change it follows to commit (every request must end sooner: a violation else)")
	fs.DurationVar(&cfg.PageCacheTTL, "page-cache-ttl", cfg.PageCacheTTL, "how long each instance keeps what its pages read (0: no cache)")
	fs.DurationVar(&cfg.PageCacheSync, "page-cache-sync", cfg.PageCacheSync, "how long an ask for the marks of changes serves an instance's pages")
	fs.IntVar(&cfg.PageCacheShards, "page-cache-shards", cfg.PageCacheShards, "how many ranges the marks of changes are spread over")
	fs.BoolVar(&cfg.SharedCache, "shared-cache", cfg.SharedCache, "put a cache tier both instances share (a redis-server of its own) under their own")
	fs.BoolVar(&cfg.SharedOnly, "shared-only", cfg.SharedOnly, "with -shared-cache, the instances keep nothing of their own and mark no changes (PAGE_CACHE_LOCAL=off)")
	fs.StringVar(&cfg.Datastore, "datastore", "", "host:port of a running Firestore emulator in Datastore mode (default: start one)")
	fs.Float64Var(&cfg.TaskFaults, "task-faults", cfg.TaskFaults, "share of task deliveries delayed, and of those delivered twice (half as many answered 500, half timed out)")
	fs.Float64Var(&cfg.EnqueueFaults, "enqueue-faults", cfg.EnqueueFaults, "share of CreateTask calls failed before, and of those failed after, creating the task")
	fs.Float64Var(&cfg.DatastoreFaults, "datastore-faults", cfg.DatastoreFaults, "share of Datastore calls failed before they are sent")
	fs.Float64Var(&cfg.CommitFaults, "commit-faults", cfg.CommitFaults, "share of Datastore commits failed after they applied")
	fs.Float64Var(&cfg.SlowCommits, "slow-commits", cfg.SlowCommits, "share of Datastore commits held up to half a second before they are sent")
	fs.IntVar(&cfg.Storms, "storms", cfg.Storms, "weight of storms in the mix (others weigh 1 to 20): 16 users at once liking, reposting and commenting on one post and following its author; 30 makes a storm mode")
	fs.IntVar(&cfg.CopyLimit, "copy-limit", cfg.CopyLimit, "the service's COPY_LIMIT")
	fs.IntVar(&cfg.BackfillMax, "backfill-max", cfg.BackfillMax, "the service's BACKFILL_MAX")
	fs.IntVar(&cfg.CelebrityFollowers, "celebrity-followers", cfg.CelebrityFollowers, "the service's CELEBRITY_FOLLOWERS: followers that make a person a celebrity at their next post (0: nobody is one)")
	verbose := fs.Bool("v", false, "print the stack's warnings and errors")
	txlog := fs.String("txlog", "", "write each Datastore call of a transaction, and each commit, to this file: when, which, by what request or job, how long, its code and keys")
	seeds := fs.Int("seeds", 1, "how many runs, of seeds -seed, -seed+1, ..., one after another (a sweep)")
	if err := fs.Parse(args); err != nil {
		return 0, err
	}
	if *seeds < 1 {
		return 0, fmt.Errorf("-seeds %d: at least 1", *seeds)
	}
	if *verbose {
		cfg.Log, cfg.LogLevel = errOut, slog.LevelWarn
	}
	cfg.Progress = errOut
	if *txlog != "" {
		f, err := os.Create(*txlog)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		w := bufio.NewWriter(f)
		defer w.Flush()
		cfg.TxLog = w
	}
	var reps []*converge.Report
	violations := 0
	for i := range *seeds {
		run := cfg
		run.Seed = cfg.Seed + uint64(i)
		rep, err := converge.Run(ctx, run)
		if err != nil {
			return violations, fmt.Errorf("seed %d: %w", run.Seed, err)
		}
		rep.Print(out)
		reps = append(reps, rep)
		violations += len(rep.Violations)
	}
	if *seeds > 1 {
		fmt.Fprintln(out)
		converge.PrintSweep(out, reps)
	}
	return violations, nil
}
