// Command fedflows runs the federation flows against a GoToSocial on this
// machine (docs/federation.md, "Against GoToSocial"): it starts the local
// stack federating as 127.0.0.1:PORT behind a TLS front door, makes two
// people here, and drives both servers through their Mastodon APIs, flow
// by flow, each waited on until it shows or the wait passes. It prints a
// table of what came of each flow and fails if any did not. Its test
// runs the same flows between two deployments of the service.
//
//	go run ./cmd/fedflows -gts http://127.0.0.1:8091 -gts-logins FILE [-tls-port 8445]
//
// FILE holds "email password" lines of people of the GoToSocial, as
// cmd/feedbench's peer mode reads them: the first two are signed in
// through its sign-in page and unlocked for the run. The GoToSocial must
// reach loopback and skip the verification of certificates.
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
	"time"

	"socialstream/internal/app"
	"socialstream/internal/federation"
	"socialstream/internal/localstack"
	"socialstream/internal/oauthclient"
	"socialstream/internal/ratelimit"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "fedflows:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("fedflows", flag.ContinueOnError)
	gts := fs.String("gts", "http://127.0.0.1:8091", "the GoToSocial's root")
	logins := fs.String("gts-logins", "", `a file of "email password" lines of people of the GoToSocial: the first two take part`)
	tlsPort := fs.Int("tls-port", 8445, "the port of the TLS front door here (a GoToSocial keeps the keys it read: a new port is a new server to it)")
	wait := fs.Duration("wait", time.Minute, "how long each flow is waited on")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *logins == "" || fs.NArg() > 0 {
		return fmt.Errorf("give -gts-logins, a file of the logins of two people of the GoToSocial")
	}
	people, err := oauthclient.Logins(*logins, 2)
	if err != nil {
		return err
	}
	signin, err := oauthclient.Register(ctx, *gts, "socialstream-fedflows", userAgent)
	if err != nil {
		return err
	}
	var tokens [2]string
	for i, p := range people {
		if tokens[i], err = signin.SignIn(ctx, p[0], p[1]); err != nil {
			return err
		}
	}
	for _, f := range []string{"index.yaml", "queue.yaml"} {
		if _, err := os.Stat(f); err != nil {
			return fmt.Errorf("%s not found: run from the repository root", f)
		}
	}
	domain := net.JoinHostPort("127.0.0.1", strconv.Itoa(*tlsPort))
	cfg := app.Config{Federation: federation.Config{Domain: domain, AllowLoopback: true, LoopbackTLS: true},
		RateLimits: ratelimit.Config{Off: true}}
	st, err := localstack.Start(ctx, localstack.Options{Project: "socialstream-fedflows", Config: cfg,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	defer st.Close()
	if _, err := localstack.FrontDoor(ctx, domain, st.URL); err != nil {
		return err
	}
	fmt.Fprintf(out, "federating as %s, against %s\n\n", cfg.Federation.Base(), *gts)
	r, err := newRun(ctx, st, *gts, tokens[0], tokens[1], domain)
	if err != nil {
		return err
	}
	r.wait = *wait
	failed := r.all(ctx, out)
	if failed > 0 {
		return fmt.Errorf("%d flows failed", failed)
	}
	return nil
}
