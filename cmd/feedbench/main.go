// Command feedbench measures what a feed costs in the query-on-read model,
// against the bare Datastore calls (the floor) and against pulling and
// merging each followee's activities, in one run against the Datastore
// emulator.
//
// It starts the emulator (or uses --datastore), the tasks emulator and the
// API on loopback, builds a synthetic graph through the stores, and then
// measures Datastore calls per operation, home feed latency at 1 and 16
// clients against the floor, home feed latency for readers following 1 to
// 5,000 users beside a pull-merge baseline, post latency and the time until
// every follower sees a post for authors with up to 100,000 followers, and
// the time from a follow until the followee's newest 200 activities are at
// home, and the hot spots: a like storm on one activity and a follow storm
// on one user, with that user's posts during the storm. It prints a markdown report and writes JSON.
//
// With -bill it meters instead what each operation is billed (every feed
// page, the notifications pages, posts, likes, comments, reposts, edits,
// deletes, follows and unfollows, each with its jobs), in entities read,
// written and deleted and index entries stored, beside the least its
// answer needs.
//
// Run it from the repository root:
//
//	go run ./cmd/feedbench [-json feedbench.json] [-quick]
//	go run ./cmd/feedbench -bill [-bill-posters 0,1000,100000]
//
// With -peer it runs instead one Mastodon-API workload (sign-up, follows,
// posts, the fan-out of a post, home and public timeline pages alone and 8
// at once, a favourite storm) against each server named by URL, and
// writes their figures side by side with the server's CPU each (by its
// process id, its children included):
//
//	go run ./cmd/feedbench -peer us=http://127.0.0.1:8080,pid=N -peer them=http://127.0.0.1:8081,pid=M,signin=accounts.txt
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := realMain(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "feedbench:", err)
		os.Exit(1)
	}
}

// config is what a run measures.
type config struct {
	datastore    string
	jsonPath     string
	authors      int
	fanOut       int
	readers      []int
	posters      []int
	clients      []int
	samples      int
	mergeSamples int
	postSamples  int
	follows      int
	storm        int
	stormClients int
	stormPosts   int
	cpuProfile   string
	stormsOnly   bool
	bill         bool
	// unmetered leaves the API's Datastore client bare: no count, no
	// meter (BenchmarkPageCPU); sharedAlone puts the shared cache tier
	// (a redis-server of its own) in place of the instance's cache.
	unmetered, sharedAlone bool
	billPosters            []int
	// federate: the stack federates, on loopback (the bill's
	// federation rows, on a stack of their own).
	federate bool
	// celebrities is the stack's CELEBRITY_FOLLOWERS (the bill's
	// celebrity rows, on a stack of their own).
	celebrities int
	verbose     bool
	// peer, with servers named, is the peer mode's: no stack of its
	// own, the workload against each server by URL.
	peer peerConfig
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q is not a list of counts", s)
		}
		out = append(out, n)
	}
	return out, nil
}

func parseFlags(args []string) (config, error) {
	fs := flag.NewFlagSet("feedbench", flag.ContinueOnError)
	var cfg config
	var readers, posters, clients string
	quick := fs.Bool("quick", false, "a small graph and few samples: checks that the bench works, measures little")
	fs.StringVar(&cfg.datastore, "datastore", "", "host:port of a running Firestore emulator in Datastore mode (default: start one)")
	fs.StringVar(&cfg.jsonPath, "json", "feedbench.json", "where to write the results as JSON")
	fs.IntVar(&cfg.authors, "authors", 5000, "authors in the synthetic graph")
	fs.IntVar(&cfg.fanOut, "fan-out", 10, "users each author follows, drawn from a Zipf distribution")
	fs.StringVar(&readers, "readers", "1,100,1000,5000", "readers: how many authors each follows")
	fs.StringVar(&posters, "posters", "0,1000,10000,100000", "posters: how many followers each has")
	fs.StringVar(&clients, "clients", "1,16", "concurrent clients of the home feed measurement")
	fs.IntVar(&cfg.samples, "samples", 1000, "home feed reads per measurement")
	fs.IntVar(&cfg.mergeSamples, "merge-samples", 20, "pull-merge reads per reader")
	fs.IntVar(&cfg.postSamples, "post-samples", 3, "posts per poster")
	fs.IntVar(&cfg.follows, "follows", 10, "follows timed until 200 activities are at home")
	fs.IntVar(&cfg.storm, "storm", 2000, "likes of one activity, and follows of one user, in each storm")
	fs.IntVar(&cfg.stormClients, "storm-clients", 32, "concurrent clients of each storm")
	fs.IntVar(&cfg.stormPosts, "storm-posts", 20, "posts by the followed user before and after the follow storm")
	fs.StringVar(&cfg.cpuProfile, "cpuprofile", "", "write a CPU profile of the home feed at 1 client (API and floor, interleaved) to this file")
	fs.BoolVar(&cfg.stormsOnly, "storms-only", false, "measure the hot spots alone, on an empty graph")
	fs.BoolVar(&cfg.bill, "bill", false, "meter what each operation is billed, alone, on a small world of its own")
	billPosters := fs.String("bill-posters", "0,1000,100000", "follower counts of the posts -bill meters")
	fs.BoolVar(&cfg.verbose, "v", false, "show the service's warnings (job retries and the like)")
	fs.Func("peer", "peer mode: a Mastodon-API server to measure, name=URL[,pid=N][,signin=FILE] (repeat it: one column each)", func(v string) error {
		t, err := parsePeer(v)
		cfg.peer.targets = append(cfg.peer.targets, t)
		return err
	})
	fs.IntVar(&cfg.peer.people, "peer-people", 51, "peer mode: accounts, one author and their followers")
	fs.IntVar(&cfg.peer.posts, "peer-posts", 100, "peer mode: the author's posts")
	fs.IntVar(&cfg.peer.reads, "peer-reads", 200, "peer mode: timeline pages read alone, and again at once")
	fs.IntVar(&cfg.peer.readers, "peer-readers", 8, "peer mode: clients reading at once")
	fs.IntVar(&cfg.peer.storm, "peer-storm", 50, "peer mode: followers favouriting one post at once")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *quick {
		cfg.authors, cfg.fanOut, readers, posters, cfg.samples, cfg.mergeSamples, cfg.postSamples, cfg.follows =
			60, 5, "1,10,50", "0,100,6000", 40, 4, 1, 2
		cfg.storm, cfg.stormClients, cfg.stormPosts = 120, 8, 4
		clients = "1,4"
	}
	var err error
	if cfg.billPosters, err = parseInts(*billPosters); err != nil {
		return cfg, err
	}
	if cfg.readers, err = parseInts(readers); err != nil {
		return cfg, err
	}
	if cfg.posters, err = parseInts(posters); err != nil {
		return cfg, err
	}
	if cfg.clients, err = parseInts(clients); err != nil {
		return cfg, err
	}
	for _, k := range cfg.readers {
		if k < 1 || k > cfg.authors {
			return cfg, fmt.Errorf("a reader follows 1 to -authors (%d) authors, not %d", cfg.authors, k)
		}
	}
	if p := cfg.peer; len(p.targets) > 0 && (p.people < 2 || p.posts < 20 || p.reads < 1 || p.readers < 1 || p.storm < 1) {
		return cfg, errors.New("-peer-people must be at least 2, -peer-posts 20 (a full page), and the other counts 1")
	}
	if cfg.authors < 2 || cfg.samples < 4 || cfg.mergeSamples < 1 || cfg.postSamples < 1 || cfg.follows < 1 ||
		cfg.storm < 1 || cfg.stormClients < 1 || cfg.stormPosts < 1 {
		return cfg, errors.New("-authors must be at least 2, -samples 4, and the other counts 1")
	}
	return cfg, nil
}

func realMain(ctx context.Context, args []string, out, logOut io.Writer) error {
	cfg, err := parseFlags(args)
	if err != nil {
		return err
	}
	progress := func(format string, a ...any) {
		fmt.Fprintf(logOut, "feedbench: "+format+"\n", a...)
	}
	if len(cfg.peer.targets) > 0 {
		return peerMode(ctx, cfg.peer, out, progress)
	}
	appLog := io.Discard
	if cfg.verbose {
		appLog = logOut
	}
	s, err := startStack(ctx, cfg, appLog)
	if err != nil {
		return err
	}
	defer s.close()
	progress("API on %s", s.url)

	if cfg.bill {
		rows, err := billing(ctx, s, cfg.billPosters, progress)
		if err != nil {
			return err
		}
		billMarkdown(out, rows)
		return nil
	}
	if cfg.stormsOnly {
		rep := &report{}
		if rep.Storms, rep.StormPosts, err = storms(ctx, s, cfg, progress); err != nil {
			return err
		}
		rep.hotSpots(out)
		return nil
	}
	w, err := seed(ctx, s, cfg, progress)
	if err != nil {
		return fmt.Errorf("seeding: %w", err)
	}
	progress("graph ready in %.0f s", w.graphStats.SeedSeconds)
	rep, err := run(ctx, s, w, cfg, progress)
	if err != nil {
		return err
	}
	rep.Machine = machine{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), Go: runtime.Version(),
		Date: time.Now().UTC().Format(time.RFC3339), Args: strings.Join(args, " ")}
	rep.Graph = w.graphStats
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(cfg.jsonPath, append(data, '\n'), 0o644); err != nil {
		return err
	}
	rep.markdown(out)
	fmt.Fprintf(out, "\nJSON: %s\n", cfg.jsonPath)
	return nil
}
