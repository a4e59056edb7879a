package main

import (
	"bufio"
	"context"
	"encoding/json"
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

	// The server's variables reach the local stack, wired as the server
	// is: a page of this origin may call the API.
	const origin = "https://app.example.org"
	t.Setenv("CORS_ORIGINS", origin)
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- realMain(ctx, []string{"--port", "0"}, pw)
		pw.Close()
	}()

	lines := map[string]string{}
	re := regexp.MustCompile(`^(datastore emulator|tasks emulator|storage emulator|API)\s+(\S+)`)
	sc := bufio.NewScanner(pr)
	for len(lines) < 4 && sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			lines[m[1]] = m[2]
		}
	}
	go io.Copy(io.Discard, pr)
	if len(lines) < 4 {
		t.Fatalf("stack did not print its four addresses: %v (err %v)", lines, <-done)
	}
	if body := get(t, lines["storage emulator"]+"b"); !strings.Contains(body, "socialstream-local-media") {
		t.Errorf("storage emulator's buckets: %q", body)
	}

	dsHost := lines["datastore emulator"]
	if body := get(t, "http://"+dsHost+"/"); strings.TrimSpace(body) != "Ok" {
		t.Errorf("datastore emulator health: %q", body)
	}
	if body := get(t, lines["API"]+"/healthz"); !strings.Contains(body, "ok") {
		t.Errorf("API health: %q", body)
	}
	if !strings.HasPrefix(lines["API"], "http://127.0.0.1:") {
		t.Errorf("the API listens on %s, want 127.0.0.1 unless --host says otherwise", lines["API"])
	}
	preflight, _ := http.NewRequest("OPTIONS", lines["API"]+"/social/rest/activities/@me/@self", nil)
	preflight.Header.Set("Origin", origin)
	preflight.Header.Set("Access-Control-Request-Method", "PATCH")
	preflight.Header.Set("Access-Control-Request-Headers", "authorization,idempotency-key")
	if resp, err := http.DefaultClient.Do(preflight); err != nil || resp.Header.Get("Access-Control-Allow-Origin") != origin ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "PATCH") {
		t.Errorf("CORS_ORIGINS' preflight on the dev stack: %v %v", resp, err)
	}
	// A task request made up by anyone who reaches the port is refused,
	// whatever App Engine header it carries.
	forged, _ := http.NewRequest("POST", lines["API"]+"/_tasks/notify", strings.NewReader(`{}`))
	forged.Header.Set("X-AppEngine-QueueName", "notify")
	if resp, err := http.DefaultClient.Do(forged); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("forged task request: %v %v, want 403", resp, err)
	}
	// A follow's rebuild job goes through the stack's own tasks emulator
	// to the API's task handler: the followee's earlier post reaches home.
	api := lines["API"]
	alice, bob := register(t, api, "devalice"), register(t, api, "devbob")
	post := call(t, "POST", api+"/social/rest/activities/@me/@self", bob, `{"title":"before the follow"}`, http.StatusCreated)
	postID := post["entry"].(map[string]any)["id"].(string)
	call(t, "POST", api+"/social/rest/people/@me/@friends", alice, `{"id":"@username:devbob"}`, http.StatusCreated)
	if lastHeader.Get("RateLimit") == "" || lastHeader.Get("RateLimit-Policy") == "" {
		t.Errorf("dev runs without rate limits by default: headers %v", lastHeader)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		home := call(t, "GET", api+"/social/rest/activities/@me/@friends", alice, "", http.StatusOK)
		if list, _ := home["list"].([]any); len(list) == 1 && list[0].(map[string]any)["id"] == postID {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the follow's job never copied bob's post home: %v", home)
		}
		time.Sleep(100 * time.Millisecond)
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

func register(t *testing.T, api, name string) string {
	t.Helper()
	r := call(t, "POST", api+"/auth/register", "", `{"username":"`+name+`","password":"password1"}`, http.StatusCreated)
	return r["token"].(string)
}

// lastHeader is the headers of call's last answer.
var lastHeader http.Header

// call sends a request and decodes the JSON answer, checking its status.
func call(t *testing.T, method, url, token, body string, want int) map[string]any {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lastHeader = resp.Header
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d %v, want %d", method, url, resp.StatusCode, out, want)
	}
	return out
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
	_, err := dsemu.Command(context.Background(), dsemu.Firestore)
	if !errors.Is(err, dsemu.ErrMissingTool) || !strings.Contains(err.Error(), "install") {
		t.Errorf("Command with an empty PATH = %v, want ErrMissingTool saying what to install", err)
	}
}
