// Command dev runs socialstream locally in one go: the Firestore emulator
// in Datastore mode (production's engine; data in memory), or the one
// DATASTORE_EMULATOR_HOST names, the project's Cloud Tasks emulator
// reading queue.yaml, and the API. Ctrl-C or SIGTERM stops all of them.
//
// Run it from the repository root:
//
//	go run ./cmd/dev [--port 8080] [--host 127.0.0.1] [--tls-port 8443]
//
// It reads the same environment variables as cmd/server (docs/deploy.md lists
// them), except those the stack sets itself: the emulator hosts, the
// queues' location and the task secret, which it makes anew each run.
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
	"strconv"
	"syscall"

	"socialstream/internal/app"
	"socialstream/internal/localstack"
	"socialstream/internal/logging"
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
	cfg, err := app.ReadEnv(os.Getenv)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	if cfg.Project == "" {
		cfg.Project = project
	}
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	port := fs.String("port", cfg.Port, "port of the API (default $PORT, else 8080)")
	host := fs.String("host", "127.0.0.1", "interface the API listens on (0.0.0.0 for every one: then anyone who reaches this machine reaches the API)")
	dsPort := fs.Int("datastore-port", 0, "port of the Datastore emulator (0 picks a free one)")
	tasksPort := fs.Int("tasks-port", 0, "port of the Cloud Tasks emulator (0 picks a free one)")
	verbose := fs.Bool("v", false, "log debug lines, and the Datastore emulator's output")
	tlsPort := fs.Int("tls-port", 0, "also serve https on 127.0.0.1 at this port, with a certificate of its own that no one trusts, for a peer of the fediverse on this machine that reaches servers over https alone (FEDERATION_DOMAIN then names it: 127.0.0.1:PORT)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *tlsPort != 0 {
		want := net.JoinHostPort("127.0.0.1", strconv.Itoa(*tlsPort))
		if cfg.Federation.Domain != want || !cfg.Federation.AllowLoopback {
			return fmt.Errorf("--tls-port %d is for federating on this machine: set FEDERATION_DOMAIN=%s and FEDERATION_ALLOW_LOOPBACK=1", *tlsPort, want)
		}
		cfg.Federation.LoopbackTLS = true
		if os.Getenv("FORWARDED_HEADERS") == "" {
			cfg.Forwarded.Proto = true // the door says it terminated TLS
		}
	}
	for _, f := range []string{"index.yaml", "queue.yaml"} {
		if _, err := os.Stat(f); err != nil {
			return fmt.Errorf("%s not found: run from the repository root", f)
		}
	}
	level := cfg.LogLevel
	if *verbose {
		level = slog.LevelDebug
	}
	log := logging.New(os.Stderr, level, cfg.Project)

	var emuLog io.Writer
	if *verbose {
		emuLog = os.Stderr
	}
	o := localstack.Options{
		Project: cfg.Project, Location: location, DatastorePort: *dsPort, EmulatorLog: emuLog,
		DatastoreHost: cfg.DatastoreEmulatorHost,
		Namespace:     cfg.Namespace,
		APIAddr:       net.JoinHostPort(*host, *port),
		TasksAddr:     net.JoinHostPort("127.0.0.1", strconv.Itoa(*tasksPort)),
		Config:        cfg,
		Logger:        log,
	}
	where := "Firestore in Datastore mode, data in memory"
	if o.DatastoreHost != "" {
		where = "DATASTORE_EMULATOR_HOST"
	}
	storage := "in this process, data in memory"
	if cfg.StorageEmulatorHost != "" {
		// One run elsewhere, whose bucket MEDIA_BUCKET must exist.
		o.StorageEndpoint, o.Bucket = "http://"+cfg.StorageEmulatorHost+"/storage/v1/", cfg.MediaBucket
		storage = "STORAGE_EMULATOR_HOST"
	}
	st, err := localstack.Start(ctx, o)
	if err != nil {
		return err
	}
	defer st.Close()
	fmt.Fprintf(out, "datastore emulator  %s  (%s)\n", st.DatastoreHost, where)
	fmt.Fprintf(out, "tasks emulator      %s  (queues from queue.yaml)\n", st.Tasks.Host)
	fmt.Fprintf(out, "storage emulator    %s  (%s; bucket %s)\n", st.StorageEndpoint, storage, st.Bucket)
	if st.SharedURL != "" {
		fmt.Fprintf(out, "shared page cache   %s  (PAGE_CACHE_REDIS)\n", st.SharedURL)
	}
	limits := "on"
	if cfg.RateLimits.Off {
		limits = "off (RATE_LIMITS=off)"
	}
	fmt.Fprintf(out, "API                 %s  (rate limits %s)\n", st.URL, limits)
	if *tlsPort != 0 {
		door, err := localstack.FrontDoor(ctx, net.JoinHostPort("127.0.0.1", strconv.Itoa(*tlsPort)), st.URL)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "API over TLS        %s  (a certificate no one trusts; federating as %s)\n", door, cfg.Federation.Base())
	}
	err = st.Wait(ctx)
	fmt.Fprintln(out, "stopping")
	return err
}
