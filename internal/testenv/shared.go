package testenv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"socialstream/internal/dsemu"
)

// Emulators shared by the test binaries of one `go test` run.
//
// Each test binary used to start its own Firestore emulator and, for the
// index check, its own legacy emulator: two Java programs per package,
// most of a run's time on 2 cores. The binaries of one run (children of
// one go command) now share one of each. The first binary to need them
// starts a supervisor, a copy of itself in its own session, which starts
// both emulators (they die with it: a parent-death signal), writes their
// addresses where the others look, and stops them when the go command is
// gone, so no emulator outlives the run, whatever kills it. A file lock
// makes the others wait for the first. Each test still works in a
// namespace of its own, and each binary still records its own queries.
//
// A binary not run by the go command (run by hand, say) starts its own,
// as before, which stop with it.

// The supervisor's environment: where it writes, and whose end it waits
// for.
const (
	superviseEnv = "SOCIALSTREAM_TESTENV_SUPERVISE"
	runEnv       = "SOCIALSTREAM_TESTENV_RUN"
)

// shared are the addresses of a run's emulators.
type shared struct {
	Firestore string `json:"firestore"`
	Legacy    string `json:"legacy"`
}

// sharedWait is how long a binary waits for the supervisor's emulators.
const sharedWait = 3 * time.Minute

// runOf returns the process id of the go command running this binary,
// if it is one.
func runOf() (int, bool) {
	ppid := os.Getppid()
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", ppid))
	return ppid, err == nil && strings.TrimSpace(string(comm)) == "go"
}

// sharedDir is where the emulators of the run of process run are named.
func sharedDir(run int) string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("socialstream-testenv-%d", run))
}

// joinShared returns the emulators shared by the binaries of run,
// starting their supervisor if none has.
func joinShared(run int) (shared, error) {
	dir := sharedDir(run)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return shared{}, err
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return shared{}, err
	}
	defer lock.Close() // and with it the lock
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return shared{}, err
	}
	if s, err := readShared(dir); err == nil && s.answers() {
		return s, nil
	}
	return startSupervisor(dir, run)
}

func readShared(dir string) (shared, error) {
	var s shared
	b, err := os.ReadFile(filepath.Join(dir, "hosts.json"))
	if err == nil {
		err = json.Unmarshal(b, &s)
	}
	return s, err
}

// answers reports whether both emulators accept connections.
func (s shared) answers() bool {
	for _, h := range []string{s.Firestore, s.Legacy} {
		c, err := net.DialTimeout("tcp", h, time.Second)
		if err != nil {
			return false
		}
		c.Close()
	}
	return true
}

// startSupervisor starts this binary again as the supervisor of run's
// emulators, and waits until they answer.
func startSupervisor(dir string, run int) (shared, error) {
	os.Remove(filepath.Join(dir, "hosts.json"))
	logPath := filepath.Join(dir, "supervisor.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return shared{}, err
	}
	defer logf.Close()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), superviseEnv+"="+dir, runEnv+"="+strconv.Itoa(run))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // not in the binary's process group
	if err := cmd.Start(); err != nil {
		return shared{}, fmt.Errorf("start the emulators' supervisor: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.After(sharedWait)
	for {
		if s, err := readShared(dir); err == nil && s.answers() {
			return s, nil
		}
		select {
		case err := <-exited:
			out, _ := os.ReadFile(logPath)
			return shared{}, fmt.Errorf("the emulators' supervisor exited (%v): %s", err, out)
		case <-deadline:
			cmd.Process.Kill()
			return shared{}, fmt.Errorf("the emulators' supervisor did not start them in %s", sharedWait)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// supervise is the supervisor: it starts the emulators, names them in
// dir, and stops them once the process run is gone. It returns the exit
// code.
func supervise(dir, run string) int {
	pid, err := strconv.Atoi(run)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testenv: supervisor of no run:", run)
		return 2
	}
	index, err := RepoFile("index.yaml")
	if err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		return 1
	}
	ctx := context.Background()
	fire, err := dsemu.Start(ctx, dsemu.Options{Engine: dsemu.Firestore, IndexFile: index, InMemory: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "testenv: start the Firestore emulator:", err)
		return 1
	}
	defer fire.Stop()
	legacy, err := dsemu.Start(ctx, dsemu.Options{Engine: dsemu.Legacy, IndexFile: index, InMemory: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "testenv: start the legacy emulator:", err)
		return 1
	}
	defer legacy.Stop()
	defer os.RemoveAll(dir)
	b, _ := json.Marshal(shared{Firestore: fire.Host, Legacy: legacy.Host})
	tmp := filepath.Join(dir, "hosts.json.tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		return 1
	}
	if err := os.Rename(tmp, filepath.Join(dir, "hosts.json")); err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		return 1
	}
	for alive(pid) {
		time.Sleep(200 * time.Millisecond)
	}
	return 0
}

// alive reports whether process pid is there.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
