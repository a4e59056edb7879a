// Package testenv gives tests a real Datastore: the emulator named by
// DATASTORE_EMULATOR_HOST, or else the Firestore emulator in Datastore mode
// (production's engine: locks and property transforms), shared by the
// test binaries of one go test run (shared.go), or started by a binary
// run by hand. Each test gets a namespace of its own, so tests run side by
// side without seeing each other's data. Tests reach the emulator through
// a recorder of their queries, which Main replays on the legacy Datastore
// emulator with index.yaml and --require_indexes, the one emulator that
// enforces indexes: a query without its index fails the run (see
// indexes.go).
//
// A package that uses it runs its tests through Main, which checks the
// indexes and stops the emulators it started:
//
//	func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
//
// Nothing here skips a test: no emulator is a failure.
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"

	"cloud.google.com/go/datastore"
	"google.golang.org/api/option"

	"socialstream/internal/dsemu"
	"socialstream/internal/egress"
	"socialstream/internal/store"
)

// Project is the project id tests use against the emulator.
const Project = "socialstream-test"

var (
	once   sync.Once
	host   string // the recorder's, in front of the emulator
	target string // the emulator's
	// legacyHost is a legacy emulator the run shares, for the index
	// check; "" starts one.
	legacyHost string
	emu        *dsemu.Emulator
	rec        *recorder
	client     *datastore.Client
	setupErr   error
)

// Main runs the tests, checks that index.yaml covers every query they ran,
// and stops the emulators this binary started. Run as the supervisor of
// a run's shared emulators (shared.go), it is that instead.
func Main(m *testing.M) int {
	if dir := os.Getenv(superviseEnv); dir != "" {
		return supervise(dir, os.Getenv(runEnv))
	}
	// No test sends a packet off this machine, even through a guard that
	// broke: every guarded client refuses what is not loopback, and a run
	// in which the guard let something through fails.
	egress.ConfineToLoopback()
	code := m.Run()
	if escaped := egress.Escapes(); len(escaped) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: the guard let %v through (confinement refused them)\n", escaped)
		code = 1
	}
	if client != nil {
		client.Close()
	}
	if rec != nil {
		if code == 0 {
			code = checkIndexes()
		}
		rec.Stop()
	}
	if emu != nil {
		emu.Stop()
	}
	stopRedis()
	return code
}

// checkIndexes replays the recorded queries on the legacy emulator and
// returns 1, naming each query, if index.yaml lacks an index one needs.
func checkIndexes() int {
	index, err := RepoFile("index.yaml")
	if err == nil {
		var missing []string
		missing, err = rec.checkIndexes(context.Background(), index, legacyHost, nil)
		for _, m := range missing {
			fmt.Fprintf(os.Stderr, "testenv: index.yaml has no index for a query the tests ran: %s\n", m)
		}
		if err == nil && len(missing) > 0 {
			return 1
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "testenv: index check: %v\n", err)
		return 1
	}
	return 0
}

func setup() {
	ctx := context.Background()
	target = os.Getenv("DATASTORE_EMULATOR_HOST")
	if run, ok := runOf(); target == "" && ok {
		s, err := joinShared(run)
		if err != nil {
			setupErr = fmt.Errorf("the run's shared emulators: %w", err)
			return
		}
		target, legacyHost = s.Firestore, s.Legacy
	}
	if target == "" {
		index, err := RepoFile("index.yaml")
		if err != nil {
			setupErr = err
			return
		}
		emu, err = dsemu.Start(ctx, dsemu.Options{Engine: dsemu.Firestore, IndexFile: index, InMemory: true})
		if err != nil {
			setupErr = fmt.Errorf("start the Firestore emulator: %w", err)
			return
		}
		target = emu.Host
	}
	host = target
	// The emulator does not enforce index.yaml: record the queries, for
	// Main to replay on one that does.
	if rec, setupErr = startRecorder(target); setupErr != nil {
		return
	}
	host = rec.addr
	client, setupErr = store.Open(ctx, Project, host)
}

// EmulatorHost returns the emulator's host:port, starting it if needed.
func EmulatorHost(t testing.TB) string {
	t.Helper()
	ready(t)
	return host
}

// ready starts the emulator if needed, or fails t.
func ready(t testing.TB) {
	t.Helper()
	once.Do(setup)
	if setupErr != nil {
		t.Fatalf("testenv: %v", setupErr)
	}
}

// DirectHost returns the emulator's host:port itself, not the recorder's
// in front of it: for a benchmark of the process's own work, whose
// queries the tests record anyway.
func DirectHost(t testing.TB) string {
	t.Helper()
	ready(t)
	return target
}

// DB returns a store bound to a fresh namespace for this test.
func DB(t testing.TB) *store.DB {
	t.Helper()
	EmulatorHost(t)
	db, err := store.New(client, Namespace(t))
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// DBWith returns a store bound to a fresh namespace for this test, on a
// client of its own made with opts (an interceptor, say), closed when the
// test ends.
func DBWith(t testing.TB, opts ...option.ClientOption) *store.DB {
	t.Helper()
	return dbOn(t, EmulatorHost(t), opts...)
}

// dbOn returns a store bound to a fresh namespace for this test, on a
// client of its own to the emulator at host, closed when the test ends.
func dbOn(t testing.TB, host string, opts ...option.ClientOption) *store.DB {
	t.Helper()
	c, err := store.Open(context.Background(), Project, host, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	db, err := store.New(c, Namespace(t))
	if err != nil {
		t.Fatal(err)
	}
	return db
}

var unsafe = regexp.MustCompile(`[^0-9A-Za-z._-]+`)

// Namespace returns a Datastore namespace unique to this test.
func Namespace(t testing.TB) string {
	var b [6]byte
	rand.Read(b[:])
	name := unsafe.ReplaceAllString(t.Name(), "_")
	if len(name) > 60 {
		name = name[:60]
	}
	return "t_" + name + "_" + hex.EncodeToString(b[:])
}

// RepoFile returns the path of a file at the root of the repository, found by
// walking up from the working directory to go.mod.
func RepoFile(name string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, name), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testenv: go.mod not found above the working directory")
		}
		dir = parent
	}
}

// OwnDB starts an emulator for this test alone and returns a store on it;
// both stop when the test ends. For tests that load so much data (100,000
// followers) that they would slow every other test sharing an emulator.
// Its queries are not recorded: the same code runs them on the shared one.
func OwnDB(t testing.TB) *store.DB {
	t.Helper()
	index, err := RepoFile("index.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	e, err := dsemu.Start(ctx, dsemu.Options{Engine: dsemu.Firestore, IndexFile: index, InMemory: true})
	if err != nil {
		t.Fatalf("testenv: start an emulator: %v", err)
	}
	t.Cleanup(func() { e.Stop() })
	return dbOn(t, e.Host)
}

// Parallel lets a binary's parallel tests run n at a time, unless its
// command line says how many (-test.parallel): for tests that spend their
// time waiting on emulators and jobs, not on the CPU. Call it from
// TestMain, before Main.
func Parallel(n int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		if err := flag.Set("test.parallel", strconv.Itoa(n)); err != nil {
			panic(err)
		}
	}
}
