package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// A run's supervisor starts both emulators for the binaries that join
// it, and stops them once the run's process is gone, however it ends: no
// emulator outlives the run. Here a sleep stands for the go command.
func TestSharedEmulatorsEndWithTheRun(t *testing.T) {
	t.Parallel() // a run of its own (the sleep's), so emulators of its own
	run := exec.Command("sleep", "300")
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	defer run.Process.Kill()
	exited := make(chan struct{})
	go func() { run.Wait(); close(exited) }()
	s, err := joinShared(run.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if !s.answers() || s.Firestore == s.Legacy {
		t.Fatalf("the shared emulators %+v do not answer", s)
	}
	// A second binary of the run finds the same ones.
	again, err := joinShared(run.Process.Pid)
	if err != nil || again != s {
		t.Fatalf("a second join: %+v, %v; want %+v", again, err, s)
	}
	run.Process.Kill()
	<-exited
	deadline := time.Now().Add(30 * time.Second)
	for s.answers() {
		if time.Now().After(deadline) {
			t.Fatalf("the shared emulators %+v still answer 30 s after the run ended", s)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for {
		if _, err := os.Stat(filepath.Join(sharedDir(run.Process.Pid), "hosts.json")); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the run's directory is left behind")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
