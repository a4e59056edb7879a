package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"socialstream/internal/dsemu"
)

// TestStackStartsServesAndStops runs the dev stack as `go run ./cmd/dev`
// would, checks each part answers, and that stopping it leaves no emulator
// process behind.
func TestStackStartsServesAndStops(t *testing.T) {
	if err := os.Chdir("../.."); err != nil { // the repository root, as the README says
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chdir("cmd/dev") })

	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- realMain(ctx, []string{"--port", "0", "--in-memory"}, pw)
		pw.Close()
	}()

	lines := map[string]string{}
	re := regexp.MustCompile(`^(datastore emulator|tasks emulator|API)\s+(\S+)`)
	sc := bufio.NewScanner(pr)
	for len(lines) < 3 && sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			lines[m[1]] = m[2]
		}
	}
	go io.Copy(io.Discard, pr)
	if len(lines) < 3 {
		t.Fatalf("stack did not print its three addresses: %v (err %v)", lines, <-done)
	}

	dsHost := lines["datastore emulator"]
	if body := get(t, "http://"+dsHost+"/"); strings.TrimSpace(body) != "Ok" {
		t.Errorf("datastore emulator health: %q", body)
	}
	if body := get(t, lines["API"]+"/healthz"); !strings.Contains(body, "ok") {
		t.Errorf("API health: %q", body)
	}
	resp, err := http.Post(lines["API"]+"/auth/register", "application/json", strings.NewReader(`{"username":"devuser","password":"password1"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Errorf("register through the dev stack: %d", resp.StatusCode)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("realMain: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("stack did not stop")
	}
	out, _ := exec.Command("pgrep", "-f", "port="+strings.Split(dsHost, ":")[1]).Output()
	if len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("emulator processes left behind: %s", out)
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func TestMissingToolsSayWhatToInstall(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := dsemu.Command(context.Background())
	if !errors.Is(err, dsemu.ErrMissingTool) || !strings.Contains(err.Error(), "install") {
		t.Errorf("Command with an empty PATH = %v, want ErrMissingTool saying what to install", err)
	}
}
