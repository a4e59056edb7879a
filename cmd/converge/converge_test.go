package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"socialstream/internal/converge"
	"socialstream/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// A short run of the checker, with a fixed seed: every operation of the
// mix and every kind of fault happens, and once the queues are empty
// every feed and count agrees with the oracle. It is the command's test
// (the command runs the same), and so starts early in a run of the
// suite: its jobs' give-up takes two minutes.
func TestConverges(t *testing.T) {
	index, err := testenv.RepoFile("index.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := converge.Defaults()
	cfg.Dir = filepath.Dir(index)
	cfg.Datastore = testenv.EmulatorHost(t)
	cfg.Seed = 7
	cfg.Duration = 25 * time.Second
	cfg.MinEach = 3 // a slow machine runs longer rather than skip one
	var progress strings.Builder
	cfg.Progress = &progress
	rep, err := converge.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	rep.Print(&out)
	t.Log("\n" + out.String())
	for _, op := range converge.Kinds() {
		if rep.Ops[op] == 0 {
			t.Errorf("the mix ran no %s", op)
		}
	}
	for _, k := range []string{"task delivered twice", "task delayed", "delivery answered 500", "delivery timed out after the app ran it", "CreateTask failed", "CreateTask failed after creating"} {
		if rep.TaskFaults[k] == 0 {
			t.Errorf("the tasks emulator injected no %q", k)
		}
	}
	// The other server's faults, and Notes of it in homes here.
	if r := rep.Remote; r.Taken == 0 || r.InHomes == 0 || r.Deleted == 0 || r.Overtaken == 0 || r.Twice == 0 || r.Refused == 0 || r.Withheld == 0 {
		t.Errorf("the other server: %+v", r)
	}
	after := 0
	for k, n := range rep.DatastoreFaults {
		if strings.Contains(k, "after it applied") {
			after += int(n)
		}
	}
	if after == 0 || len(rep.DatastoreFaults) < 4 {
		t.Errorf("Datastore faults: %v", rep.DatastoreFaults)
	}
	if len(rep.Violations) > 0 {
		t.Errorf("%d violations", len(rep.Violations))
	}
}
