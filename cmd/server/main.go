// Command server is the socialstream API as App Engine runs it
// (main: ./cmd/server in app.yaml). Configuration comes from the
// environment; see docs/deploy.md#configuration.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"socialstream/internal/app"
	"socialstream/internal/logging"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := realMain(ctx); err != nil {
		slog.Error("server failed", "err", err)
		os.Exit(1)
	}
}

func realMain(ctx context.Context) error {
	cfg, err := app.FromEnv(os.Getenv)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	log := logging.New(os.Stdout, cfg.LogLevel, cfg.Project)
	slog.SetDefault(log)

	a, err := app.New(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer a.Close()
	l, err := net.Listen("tcp", ":"+cfg.Port)
	if err != nil {
		return err
	}
	log.Info("listening", "addr", l.Addr().String(), "project", cfg.Project, "appengine", cfg.OnAppEngine)
	return app.Serve(ctx, l, a.Handler, log)
}
