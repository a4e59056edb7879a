// Command dev runs socialstream locally in one go: the official Datastore
// emulator (Firestore in Datastore mode, --require_indexes, the repository's
// index.yaml), the project's Cloud Tasks emulator reading queue.yaml, and the
// API. Ctrl-C or SIGTERM stops all three.
//
// Run it from the repository root:
//
//	go run ./cmd/dev [--port 8080] [--in-memory] [--data-dir DIR]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"socialstream/internal/app"
	"socialstream/internal/dsemu"
	"socialstream/internal/logging"
	"socialstream/internal/tasksemu"
)

const (
	project  = "socialstream-dev"
	location = "local"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := realMain(ctx, os.Args[1:], os.Stdout); err != nil {
		// A missing gcloud or java is one line saying what to install.
		fmt.Fprintln(os.Stderr, "dev:", err)
		os.Exit(1)
	}
}

func realMain(ctx context.Context, args []string, out io.Writer) error {
	defaultPort := os.Getenv("PORT")
	if defaultPort == "" {
		defaultPort = "8080"
	}
	cacheDir, _ := os.UserCacheDir()
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	port := fs.String("port", defaultPort, "port of the API (default $PORT, else 8080)")
	inMemory := fs.Bool("in-memory", false, "keep no Datastore data on disk")
	dataDir := fs.String("data-dir", filepath.Join(cacheDir, "socialstream", "datastore"), "where the Datastore emulator keeps its data")
	dsPort := fs.Int("datastore-port", 0, "port of the Datastore emulator (0 picks a free one)")
	tasksPort := fs.Int("tasks-port", 0, "port of the Cloud Tasks emulator (0 picks a free one)")
	verbose := fs.Bool("v", false, "log debug lines, and the Datastore emulator's output")
	if err := fs.Parse(args); err != nil {
		return err
	}
	for _, f := range []string{"index.yaml", "queue.yaml"} {
		if _, err := os.Stat(f); err != nil {
			return fmt.Errorf("%s not found: run from the repository root", f)
		}
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := logging.New(os.Stderr, level, project)

	// Datastore emulator.
	var emuLog io.Writer
	if *verbose {
		emuLog = os.Stderr
	}
	opts := dsemu.Options{IndexFile: "index.yaml", InMemory: *inMemory, Port: *dsPort, Log: emuLog}
	if !*inMemory {
		if err := os.MkdirAll(filepath.Dir(*dataDir), 0o755); err != nil {
			return err
		}
		opts.DataDir = *dataDir
	}
	emu, err := dsemu.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer emu.Stop()
	where := *dataDir
	if *inMemory {
		where = "in memory"
	}
	fmt.Fprintf(out, "datastore emulator  %s  (data: %s)\n", emu.Host, where)

	// Cloud Tasks emulator, dispatching to the API.
	queueYAML, err := os.ReadFile("queue.yaml")
	if err != nil {
		return err
	}
	queues, err := tasksemu.ParseQueueYAML(queueYAML)
	if err != nil {
		return err
	}
	apiListener, err := net.Listen("tcp", net.JoinHostPort("", *port))
	if err != nil {
		return fmt.Errorf("API port: %w", err)
	}
	apiPort := apiListener.Addr().(*net.TCPAddr).Port
	tasks, err := tasksemu.New(tasksemu.Config{
		Project: project, Location: location, Queues: queues,
		Target: "http://127.0.0.1:" + strconv.Itoa(apiPort),
		Logger: log.With("component", "tasks-emulator"),
	})
	if err != nil {
		return err
	}
	tasksListener, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(*tasksPort)))
	if err != nil {
		return fmt.Errorf("tasks emulator port: %w", err)
	}
	fmt.Fprintf(out, "tasks emulator      %s  (queues from queue.yaml)\n", tasksListener.Addr())

	cfg := app.Config{
		Port: strconv.Itoa(apiPort), Project: project, TasksLocation: location,
		DatastoreEmulatorHost: emu.Host, TasksEmulatorHost: tasksListener.Addr().String(),
		CopyLimit: 200, BackfillMax: 1000, LogLevel: level, TokenCacheTTL: 30 * time.Second,
	}
	a, err := app.New(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer a.Close()
	fmt.Fprintf(out, "API                 http://localhost:%d\n", apiPort)

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return tasks.Serve(gctx, tasksListener) })
	g.Go(func() error { return app.Serve(gctx, apiListener, a.Handler, log) })
	g.Go(func() error {
		select {
		case <-emu.Done():
			return errors.New("the Datastore emulator exited")
		case <-gctx.Done():
			return nil
		}
	})
	err = g.Wait()
	fmt.Fprintln(out, "stopping")
	return err
}
