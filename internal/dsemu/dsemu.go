// Package dsemu starts and stops the emulators of Datastore that ship with
// the Google Cloud CLI:
//
//   - Firestore, the default: the Firestore emulator in Datastore mode, which
//     behaves like production (Firestore in Datastore mode): transactions
//     take locks (PESSIMISTIC concurrency) and property transforms
//     (Increment, AppendMissingElements, RemoveAllFromArray) apply. It keeps
//     its data in memory only and does not enforce index.yaml.
//   - Legacy: the legacy Datastore emulator, in Firestore-in-Datastore mode
//     with --require_indexes, so that a query not covered by index.yaml
//     fails as it would in production. It runs optimistic transactions on
//     entity groups and ignores property transforms, so it only proves
//     index coverage (package testenv replays the suite's queries on it).
//
// The emulator's launcher script runs java as a child of its own, so the
// emulator is started in a process group of its own and Stop signals the whole
// group. And so that no java outlives a parent that dies without calling
// Stop (a test binary killed by its timeout), the launcher is made to exec
// java in its place, where it reads ${JAVA:="java"}, and the process is
// started with a parent-death signal from a goroutine pinned to its thread.
package dsemu

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Engine names an emulator.
type Engine int

const (
	// Firestore is the Firestore emulator in Datastore mode.
	Firestore Engine = iota
	// Legacy is the legacy Datastore emulator.
	Legacy
)

func (e Engine) String() string {
	if e == Legacy {
		return "legacy"
	}
	return "firestore"
}

// Options configure Start.
type Options struct {
	// Engine is the emulator to start; the zero value is Firestore.
	Engine Engine
	// IndexFile is the index.yaml the Legacy emulator enforces; required
	// for it, unused by Firestore.
	IndexFile string
	// DataDir keeps the Legacy emulator's project and, unless InMemory,
	// its data. Empty means a temporary folder removed by Stop. Firestore
	// keeps its data in memory whatever this says.
	DataDir string
	// InMemory keeps no data on disk.
	InMemory bool
	// Port to listen on; 0 picks a free one.
	Port int
	// Log receives the emulator's output; nil discards it.
	Log io.Writer
}

// Emulator is a running Datastore emulator.
type Emulator struct {
	// Host is host:port, the value for DATASTORE_EMULATOR_HOST.
	Host    string
	engine  Engine
	cmd     *exec.Cmd
	done    chan struct{}
	waitErr error
	tmpDir  string
}

// ErrMissingTool is returned when gcloud, the emulator component or java
// is not installed; its text says what to install.
var ErrMissingTool = errors.New("missing tool")

// Command returns the path of the engine's launcher, or an error wrapping
// ErrMissingTool that says what to install.
func Command(ctx context.Context, engine Engine) (string, error) {
	if _, err := exec.LookPath("java"); err != nil {
		return "", fmt.Errorf("%w: java not found: install a Java runtime 11 or newer (Debian: apt-get install openjdk-17-jre-headless)", ErrMissingTool)
	}
	gcloud, err := exec.LookPath("gcloud")
	if err != nil {
		return "", fmt.Errorf("%w: gcloud not found: install the Google Cloud CLI with its emulators (Debian: apt-get install google-cloud-cli google-cloud-cli-firestore-emulator google-cloud-cli-datastore-emulator)", ErrMissingTool)
	}
	out, err := exec.CommandContext(ctx, gcloud, "info", "--format=value(installation.sdk_root)").Output()
	if err != nil {
		return "", fmt.Errorf("dsemu: gcloud info: %w", err)
	}
	dir, launcher, component := "cloud-firestore-emulator", "cloud_firestore_emulator", "cloud-firestore-emulator"
	if engine == Legacy {
		dir, launcher, component = "cloud-datastore-emulator", "cloud_datastore_emulator", "cloud-datastore-emulator"
	}
	bin := filepath.Join(strings.TrimSpace(string(out)), "platform", dir, launcher)
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("%w: the %s emulator is not installed at %s: install it (gcloud components install %s, or Debian: apt-get install google-cloud-cli-%s)", ErrMissingTool, engine, bin, component, strings.TrimPrefix(component, "cloud-"))
	}
	return bin, nil
}

// Start starts an emulator and waits until its health check answers.
func Start(ctx context.Context, opts Options) (*Emulator, error) {
	var index string
	if opts.Engine == Legacy {
		if opts.IndexFile == "" {
			return nil, errors.New("dsemu: IndexFile is required")
		}
		var err error
		if index, err = filepath.Abs(opts.IndexFile); err != nil {
			return nil, err
		}
		if _, err := os.Stat(index); err != nil {
			return nil, fmt.Errorf("dsemu: index file: %w", err)
		}
	}
	bin, err := Command(ctx, opts.Engine)
	if err != nil {
		return nil, err
	}
	logw := opts.Log
	if logw == nil {
		logw = io.Discard
	}

	e := &Emulator{done: make(chan struct{}), engine: opts.Engine}
	dir := opts.DataDir
	if opts.Engine == Legacy && dir == "" {
		if e.tmpDir, err = os.MkdirTemp("", "dsemu-"); err != nil {
			return nil, err
		}
		dir = filepath.Join(e.tmpDir, "project")
	}
	if _, err := os.Stat(filepath.Join(dir, "WEB-INF")); opts.Engine == Legacy && errors.Is(err, os.ErrNotExist) {
		create := exec.CommandContext(ctx, bin, "create", dir)
		if out, err := create.CombinedOutput(); err != nil {
			e.removeTmp()
			return nil, fmt.Errorf("dsemu: create %s: %v: %s", dir, err, out)
		}
	}

	// A port picked here is free when picked, but another process (another
	// test binary's emulator, say) may take it before java binds it; the
	// emulator then exits at once, with status 0 (a test shows it). Such a
	// start is tried again on a new port.
	for attempt := 1; ; attempt++ {
		port := opts.Port
		if port == 0 {
			if port, err = pickPort(); err != nil {
				e.removeTmp()
				return nil, err
			}
		}
		err = e.launch(ctx, bin, port, index, dir, opts.InMemory, logw)
		if err == nil {
			return e, nil
		}
		e.kill()
		if !errors.Is(err, errExitedEarly) || opts.Port != 0 || attempt == maxStarts {
			e.removeTmp()
			return nil, err
		}
	}
}

// maxStarts bounds the starts on freshly picked ports.
const maxStarts = 3

var errExitedEarly = errors.New("dsemu: emulator exited before it was ready")

// launch starts the emulator on port and waits until it is healthy.
func (e *Emulator) launch(ctx context.Context, bin string, port int, index, dir string, inMemory bool, logw io.Writer) error {
	e.done = make(chan struct{})
	e.waitErr = nil
	e.Host = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	args := []string{"start", "--host=127.0.0.1", "--port=" + strconv.Itoa(port)}
	if e.engine == Legacy {
		args = append(args,
			"--store_on_disk="+strconv.FormatBool(!inMemory),
			"--firestore_in_datastore_mode",
			// Firestore in Datastore mode is strongly consistent; the
			// emulator's default (0.9) mimics the legacy eventually
			// consistent Datastore.
			"--consistency=1.0",
			"--require_indexes",
			"--index_file="+index,
			dir,
		)
	} else {
		args = append(args, "--database-mode=datastore-mode")
	}
	e.cmd = exec.Command(bin, args...)
	e.cmd.Stdout, e.cmd.Stderr = logw, logw
	e.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if execsJava(bin) {
		java := os.Getenv("JAVA")
		if java == "" {
			java = "java"
		}
		e.cmd.Env = append(os.Environ(), "JAVA=exec "+java+" "+jvmFlags)
		e.cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	started := make(chan error, 1)
	done := e.done
	go func() {
		// The parent-death signal fires when the thread that started the
		// child exits, so that thread is kept until the child is gone.
		runtime.LockOSThread()
		if err := e.cmd.Start(); err != nil {
			started <- err
			close(done)
			return
		}
		started <- nil
		e.waitErr = e.cmd.Wait()
		close(done)
	}()
	if err := <-started; err != nil {
		e.cmd = nil
		return fmt.Errorf("dsemu: start: %w", err)
	}
	return e.waitHealthy(ctx, 60*time.Second)
}

func (e *Emulator) waitHealthy(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	client := &http.Client{Timeout: time.Second}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+e.Host+"/", nil)
		if resp, err := client.Do(req); err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && strings.TrimSpace(string(body)) == "Ok" {
				return nil
			}
		}
		select {
		case <-e.done:
			return fmt.Errorf("%w (exit: %v)", errExitedEarly, e.waitErr)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("dsemu: emulator on %s not ready after %v", e.Host, limit)
		}
	}
}

// jvmFlags are given to the emulator's java. An emulator here serves a
// small machine (the tests, the checker, a developer's stack), where the
// JVM's parallel collector costs more CPU than it wins back: the serial
// collector. The optimizing compiler pays back, now that the test
// binaries of a run share one emulator for minutes: the API's, the wired
// services', the bench's, Mastodon's and the store's tests at once spent
// 322 and 311 seconds of CPU in all with it, 377 and 434 with the quick
// compiler alone (-XX:TieredStopAtLevel=1, which had saved a quarter
// when each binary started its own).
const jvmFlags = "-XX:+UseSerialGC"

// execsJava reports whether the launcher at bin starts java through an
// unquoted ${JAVA:="java"}, which JAVA="exec java" turns into an exec.
func execsJava(bin string) bool {
	script, err := os.ReadFile(bin)
	return err == nil && strings.Contains(string(script), `${JAVA:="java"} `)
}

// Stop stops the emulator and every process it started, and removes its
// temporary folder if it made one. It is safe to call more than once.
func (e *Emulator) Stop() error {
	e.kill()
	e.removeTmp()
	return nil
}

// kill stops the emulator's process group, if it started.
func (e *Emulator) kill() {
	if e.cmd != nil && e.cmd.Process != nil {
		pgid := e.cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-e.done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-e.done
		}
		// The launcher may be gone while java lingers: make sure of the group.
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

// Done is closed when the emulator process exits.
func (e *Emulator) Done() <-chan struct{} { return e.done }

func (e *Emulator) removeTmp() {
	if e.tmpDir != "" {
		os.RemoveAll(e.tmpDir)
		e.tmpDir = ""
	}
}

// pickPort picks a port for an emulator started without one.
var pickPort = freePort

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("dsemu: pick a port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
