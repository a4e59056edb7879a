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
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"socialstream/internal/accounts"
	"socialstream/internal/localstack"
	"socialstream/internal/logging"
	"socialstream/internal/rebuild"
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

	var emuLog io.Writer
	if *verbose {
		emuLog = os.Stderr
	}
	o := localstack.Options{
		Project: project, Location: location, DatastorePort: *dsPort, EmulatorLog: emuLog,
		APIAddr:   net.JoinHostPort("", *port),
		TasksAddr: net.JoinHostPort("127.0.0.1", strconv.Itoa(*tasksPort)),
		Accounts:  accounts.Config{TokenCacheTTL: 30 * time.Second},
		Rebuild:   rebuild.Config{CopyLimit: 200, BackfillMax: 1000},
		Logger:    log,
	}
	where := "in memory"
	if !*inMemory {
		o.DataDir, where = *dataDir, *dataDir
	}
	st, err := localstack.Start(ctx, o)
	if err != nil {
		return err
	}
	defer st.Close()
	fmt.Fprintf(out, "datastore emulator  %s  (data: %s)\n", st.DatastoreHost, where)
	fmt.Fprintf(out, "tasks emulator      %s  (queues from queue.yaml)\n", st.Tasks.Host)
	fmt.Fprintf(out, "API                 http://localhost:%s\n", st.URL[strings.LastIndex(st.URL, ":")+1:])
	err = st.Wait(ctx)
	fmt.Fprintln(out, "stopping")
	return err
}
