package dsemu

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestHelperProcess is not a test: TestNoEmulatorOutlivesItsParent runs
// the test binary as a parent that starts an emulator and is then killed.
func TestHelperProcess(t *testing.T) {
	if os.Getenv("DSEMU_HELPER") != "1" {
		return
	}
	e, err := Start(context.Background(), Options{IndexFile: "../../index.yaml", InMemory: true})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("host", e.Host)
	time.Sleep(time.Minute) // killed before this ends
	os.Exit(0)
}

func TestNoEmulatorOutlivesItsParent(t *testing.T) {
	t.Parallel() // its emulator is the helper's, in a process of its own
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), "DSEMU_HELPER=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var host string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if h, ok := strings.CutPrefix(sc.Text(), "host "); ok {
			host = h
			break
		}
		if strings.HasPrefix(sc.Text(), "error") {
			t.Fatal(sc.Text())
		}
	}
	if host == "" {
		t.Fatal("the helper did not start an emulator")
	}
	if resp, err := http.Get("http://" + host + "/"); err != nil {
		t.Fatalf("emulator not answering: %v", err)
	} else {
		resp.Body.Close()
	}
	cmd.Process.Kill() // no Stop: the parent dies
	cmd.Wait()
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get("http://" + host + "/")
		if err != nil {
			return // gone
		}
		resp.Body.Close()
		if time.Now().After(deadline) {
			t.Fatalf("the emulator on %s outlived its killed parent", host)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
