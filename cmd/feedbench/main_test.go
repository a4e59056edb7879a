package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"socialstream/internal/testenv"
)

// TestMain runs the tests from the repository's root, where the bench
// finds queue.yaml and index.yaml.
func TestMain(m *testing.M) {
	root, err := testenv.RepoFile("")
	if err == nil {
		err = os.Chdir(root)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "feedbench tests:", err)
		os.Exit(1)
	}
	os.Exit(testenv.Main(m))
}

// testStack starts the bench's stack on the suite's emulator, with args
// beside -datastore, and closes it when the test ends.
func testStack(t testing.TB, args ...string) *stack {
	t.Helper()
	cfg, err := parseFlags(append(args, "-datastore", testenv.EmulatorHost(t)))
	if err != nil {
		t.Fatal(err)
	}
	s, err := startStack(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	return s
}

// TestQuick runs the whole bench on a small graph against the test
// emulator and checks what it reports: every section, and the call counts
// that are the model's claim (a home feed page costs the API what it costs
// the floor: one query and two lookups, the token coming from the cache).
// Latencies are reported, not judged: speed is for the bench itself.
func TestQuick(t *testing.T) {
	t.Parallel() // each in a namespace of its own
	jsonPath := filepath.Join(t.TempDir(), "out.json")
	var out, log bytes.Buffer
	if err := realMain(context.Background(), []string{"-quick", "-datastore", testenv.EmulatorHost(t), "-json", jsonPath}, &out, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var rep report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}

	calls := map[string]map[string]int{}
	for _, c := range rep.Calls {
		calls[c.Op] = c.Calls
	}
	want := map[string]int{"RunQuery": 1, "Lookup": 2}
	if diff := cmp.Diff(want, calls["home feed page (API)"]); diff != "" {
		t.Errorf("API home feed calls mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, calls["home feed page (floor)"]); diff != "" {
		t.Errorf("floor home feed calls mismatch (-want +got):\n%s", diff)
	}
	// A post's calls, as the bill's table gives them (docs/performance.md
	// shows both).
	post := map[string]int{"Lookup": 3, "BeginTransaction": 1, "Commit": 1}
	for _, op := range []string{"post, 0 followers", "post, 100 followers"} {
		if diff := cmp.Diff(post, calls[op]); diff != "" {
			t.Errorf("%s: calls mismatch (-want +got):\n%s", op, diff)
		}
	}
	if calls["follow"]["Commit"] != 1 {
		t.Errorf("follow: calls %v, want one commit", calls["follow"])
	}

	if len(rep.Home) != 2 || rep.Home[0].Clients != 1 || rep.Home[1].Clients != 4 {
		t.Errorf("home rows %+v, want 1 and 4 clients", rep.Home)
	}
	for _, h := range rep.Home {
		if h.Ours.N != 40 || h.Floor.N != 40 || h.Ours.P50 <= 0 || h.Floor.P50 <= 0 || h.RatioP50 <= 0 {
			t.Errorf("home row %+v", h)
		}
	}
	var following []int
	for _, f := range rep.Flatness {
		following = append(following, f.Following)
		if f.Ours.N != 20 || f.PullMerge.N != 4 || f.PullMerge.P50 <= 0 {
			t.Errorf("flatness row %+v", f)
		}
	}
	if diff := cmp.Diff([]int{1, 10, 50}, following); diff != "" {
		t.Errorf("readers mismatch (-want +got):\n%s", diff)
	}
	var followers []int
	for _, p := range rep.Posts {
		followers = append(followers, p.Followers)
		if p.Post.N != 1 || p.AllSee.P50 < p.Post.P50 {
			t.Errorf("post row %+v: all see it before the answer?", p)
		}
	}
	if diff := cmp.Diff([]int{0, 100, 6000}, followers); diff != "" {
		t.Errorf("posters mismatch (-want +got):\n%s", diff)
	}
	if rep.FollowToHome.N != 2 || rep.FollowToHome.P50 <= 0 {
		t.Errorf("follow to home %+v", rep.FollowToHome)
	}
	// The storms are checked, not only timed: no request fails, and the
	// count read after the last answer is the number of requests.
	if len(rep.Storms) != 5 {
		t.Fatalf("storm rows %+v, want 5", rep.Storms)
	}
	for _, st := range rep.Storms {
		if st.Ops != 120 || st.Clients != 8 || st.Errors != 0 || !st.Exact || st.Count != 120 || st.Latency.N != 120 || st.PerSecond <= 0 {
			t.Errorf("storm row %+v", st)
		}
	}
	if p := rep.StormPosts; p.Before.N != 4 || p.After.N != 4 || p.Control.N != 4 || p.During.N < 1 || p.Bystander.N != p.During.N {
		t.Errorf("posts around the follow storm %+v", p)
	}
	if len(rep.Targets) != 20 {
		t.Errorf("%d targets, want 20", len(rep.Targets))
	}
	if rep.Graph.Users != 60+3+3+1 || rep.Graph.Activities != firstAuthorPosts+59+starPosts {
		t.Errorf("graph %+v", rep.Graph)
	}
	md := out.String()
	for _, s := range []string{"### Datastore calls per operation", "### Flatness", "### Hot spots", "### Targets", "JSON: " + jsonPath} {
		if !strings.Contains(md, s) {
			t.Errorf("report lacks %q", s)
		}
	}
}

func TestFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-readers", "1,x"},
		{"-readers", "0"},
		{"-authors", "10", "-readers", "11"},
		{"-samples", "2"},
		{"-storm", "0"},
		{"-storm-clients", "0"},
		{"-bill-posters", "10,x"},
		{"extra"},
	} {
		if _, err := parseFlags(args); err == nil {
			t.Errorf("parseFlags(%q): no error", args)
		}
	}
	cfg, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{1, 100, 1000, 5000}, cfg.readers); diff != "" {
		t.Errorf("default readers mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{0, 1000, 10000, 100000}, cfg.posters); diff != "" {
		t.Errorf("default posters mismatch (-want +got):\n%s", diff)
	}
}
