// Package testenv gives tests a real Datastore: the emulator named by
// DATASTORE_EMULATOR_HOST, or else one it starts once per test binary with the
// repository's index.yaml and --require_indexes. Each test gets a namespace of
// its own, so tests run side by side without seeing each other's data.
//
// A package that uses it runs its tests through Main, which stops the
// emulator it started:
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
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"

	"cloud.google.com/go/datastore"

	"socialstream/internal/dsemu"
	"socialstream/internal/store"
)

// Project is the project id tests use against the emulator.
const Project = "socialstream-test"

var (
	once     sync.Once
	host     string
	emu      *dsemu.Emulator
	client   *datastore.Client
	setupErr error
)

// Main runs the tests and stops the emulator if this binary started one.
func Main(m *testing.M) int {
	code := m.Run()
	if client != nil {
		client.Close()
	}
	if emu != nil {
		emu.Stop()
	}
	return code
}

func setup() {
	ctx := context.Background()
	host = os.Getenv("DATASTORE_EMULATOR_HOST")
	if host == "" {
		index, err := RepoFile("index.yaml")
		if err != nil {
			setupErr = err
			return
		}
		emu, err = dsemu.Start(ctx, dsemu.Options{IndexFile: index, InMemory: true})
		if err != nil {
			setupErr = fmt.Errorf("start the Datastore emulator: %w", err)
			return
		}
		host = emu.Host
	}
	client, setupErr = store.Open(ctx, Project, host)
}

// EmulatorHost returns the emulator's host:port, starting it if needed.
func EmulatorHost(t testing.TB) string {
	t.Helper()
	once.Do(setup)
	if setupErr != nil {
		t.Fatalf("testenv: %v", setupErr)
	}
	return host
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
func OwnDB(t testing.TB) *store.DB {
	t.Helper()
	index, err := RepoFile("index.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	e, err := dsemu.Start(ctx, dsemu.Options{IndexFile: index, InMemory: true})
	if err != nil {
		t.Fatalf("testenv: start an emulator: %v", err)
	}
	t.Cleanup(func() { e.Stop() })
	c, err := store.Open(ctx, Project, e.Host)
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
