package dsemu

import (
	"context"
	"errors"
	"net"
	"strconv"
	"testing"
)

// TestBusyPort: an emulator given a port another process holds exits at
// once (status 0); Start says so when the port was the caller's, and tries
// a new port when it picked the busy one itself.
func TestBusyPort(t *testing.T) {
	t.Parallel() // pickPort is this process's, and no other test here starts an emulator in it
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	busy := l.Addr().(*net.TCPAddr).Port

	_, err = Start(context.Background(), Options{IndexFile: "../../index.yaml", InMemory: true, Port: busy})
	if !errors.Is(err, errExitedEarly) {
		t.Fatalf("Start on a busy port given = %v, want errExitedEarly", err)
	}

	picks := 0
	pickPort = func() (int, error) {
		picks++
		if picks == 1 {
			return busy, nil
		}
		return freePort()
	}
	t.Cleanup(func() { pickPort = freePort })
	e, err := Start(context.Background(), Options{IndexFile: "../../index.yaml", InMemory: true})
	if err != nil {
		t.Fatalf("Start after a busy pick: %v", err)
	}
	defer e.Stop()
	if picks != 2 || e.Host == net.JoinHostPort("127.0.0.1", strconv.Itoa(busy)) {
		t.Errorf("picks = %d, host %s (busy port %d)", picks, e.Host, busy)
	}
}
