package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The metadata server as App Engine's answers the region: only to a
// request that says Metadata-Flavor: Google.
func metadataServer(t *testing.T, region string) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Metadata-Flavor") != "Google" {
			http.Error(w, "missing Metadata-Flavor", http.StatusForbidden)
			return
		}
		if r.URL.Path != "/computeMetadata/v1/instance/region" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Metadata-Flavor", "Google")
		w.Write([]byte(region))
	}))
	t.Cleanup(srv.Close)
	t.Setenv("GCE_METADATA_HOST", strings.TrimPrefix(srv.URL, "http://"))
}

func TestRegion(t *testing.T) {
	for _, c := range []struct{ served, want string }{
		{"projects/123456789/regions/europe-west1", "europe-west1"},
		{"projects/123456789/regions/us-central1\n", "us-central1"},
	} {
		metadataServer(t, c.served)
		got, err := Region(context.Background())
		if err != nil || got != c.want {
			t.Errorf("Region of %q = %q, %v; want %q", c.served, got, err, c.want)
		}
	}
	for _, bad := range []string{"us-central1", "projects/1/regions/"} {
		metadataServer(t, bad)
		if got, err := Region(context.Background()); err == nil {
			t.Errorf("Region of %q = %q, want an error", bad, got)
		}
	}
}

// On App Engine the location may be left out (the region is found at
// start); elsewhere it is required.
func TestTasksLocationOnAppEngine(t *testing.T) {
	env := map[string]string{"GOOGLE_CLOUD_PROJECT": "p", "GAE_ENV": "standard"}
	if _, err := FromEnv(func(k string) string { return env[k] }); err != nil {
		t.Errorf("on App Engine without CLOUD_TASKS_LOCATION: %v", err)
	}
	delete(env, "GAE_ENV")
	env["TASKS_SECRET"] = strings.Repeat("s", MinTasksSecret)
	if _, err := FromEnv(func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "CLOUD_TASKS_LOCATION") {
		t.Errorf("off App Engine without CLOUD_TASKS_LOCATION: %v", err)
	}
}

// Off App Engine nothing is traced unless TRACE_SAMPLE says so.
func TestTraceSampleOffAppEngine(t *testing.T) {
	env := map[string]string{"GOOGLE_CLOUD_PROJECT": "p", "CLOUD_TASKS_LOCATION": "l", "TASKS_SECRET": strings.Repeat("s", MinTasksSecret)}
	if c, err := FromEnv(func(k string) string { return env[k] }); err != nil || c.TraceSample != 0 {
		t.Errorf("default off App Engine: %v, %v", c.TraceSample, err)
	}
}
