package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"socialstream/internal/app"
	"socialstream/internal/federation"
	"socialstream/internal/localstack"
	"socialstream/internal/ratelimit"
	"socialstream/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// deployment starts a deployment of the service on loopback, federating
// as the address it listens at, with its own namespace and keys.
func deployment(t *testing.T) *localstack.Stack {
	t.Helper()
	index, err := testenv.RepoFile("index.yaml")
	if err != nil {
		t.Fatal(err)
	}
	apiL, addr, err := localstack.Listen()
	if err != nil {
		t.Fatal(err)
	}
	st, err := localstack.Start(context.Background(), localstack.Options{
		Dir: filepath.Dir(index), Project: testenv.Project, Location: "test", DB: testenv.DB(t), APIListener: apiL,
		DispatchDeadline: time.Minute, Logger: slog.New(slog.DiscardHandler),
		Config: app.Config{BcryptCost: bcrypt.MinCost, RateLimits: ratelimit.Config{Off: true},
			Federation: federation.Config{Domain: addr, AllowLoopback: true}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st
}

// The flows the command runs against GoToSocial, run between two
// deployments of the service, each driven through its Mastodon API:
// every one shows.
func TestFlowsBetweenTwoDeployments(t *testing.T) {
	ctx := context.Background()
	here, there := deployment(t), deployment(t)
	var tokens [2]string
	for i, name := range []string{"ada", "bea"} {
		_, token, err := there.Services.Accounts.Register(ctx, name, "fedflows-"+name+"-password", "")
		if err != nil {
			t.Fatal(err)
		}
		tokens[i] = token
	}
	r, err := newRun(ctx, here, there.URL, tokens[0], tokens[1], strings.TrimPrefix(here.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	r.wait = 30 * time.Second
	var out strings.Builder
	failed := r.all(ctx, &out)
	t.Log("\n" + out.String())
	if failed > 0 || strings.Count(out.String(), "\n| ") != len(r.flows())+1 {
		t.Errorf("%d of %d flows failed", failed, len(r.flows()))
	}
}
