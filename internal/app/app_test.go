package app

import (
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestFromEnv(t *testing.T) {
	got, err := FromEnv(env(map[string]string{
		"GOOGLE_CLOUD_PROJECT": "p1", "CLOUD_TASKS_LOCATION": "us-central1",
		"GAE_ENV": "standard", "GAE_SERVICE": "api", "LOG_LEVEL": "warn",
		"BCRYPT_COST": "12", "TOKEN_TTL": "72h", "DATASTORE_NAMESPACE": "staging",
		"TOKEN_CACHE_TTL": "10s",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Port: "8080", Project: "p1", Namespace: "staging", TasksLocation: "us-central1",
		OnAppEngine: true, Service: "api", LogLevel: slog.LevelWarn, BcryptCost: 12, TokenTTL: 72 * time.Hour,
		TokenCacheTTL: 10 * time.Second, CopyLimit: 200, BackfillMax: 1000}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

func TestFromEnvRejects(t *testing.T) {
	base := map[string]string{"GOOGLE_CLOUD_PROJECT": "p", "CLOUD_TASKS_LOCATION": "l"}
	tests := map[string]map[string]string{
		"no project":             {"CLOUD_TASKS_LOCATION": "l"},
		"no location":            {"GOOGLE_CLOUD_PROJECT": "p"},
		"bad port":               {"PORT": "http"},
		"bad level":              {"LOG_LEVEL": "loud"},
		"bad cost":               {"BCRYPT_COST": "40"},
		"bad ttl":                {"TOKEN_TTL": "soon"},
		"bad cache ttl":          {"TOKEN_CACHE_TTL": "later"},
		"negative cache ttl":     {"TOKEN_CACHE_TTL": "-1s"},
		"emulator on App Engine": {"GAE_ENV": "standard", "DATASTORE_EMULATOR_HOST": "localhost:1"},
		"bad namespace":          {"DATASTORE_NAMESPACE": "a/b"},
		"copy limit too big":     {"COPY_LIMIT": "1001"},
		"copy limit zero":        {"COPY_LIMIT": "0"},
		"negative backfill":      {"BACKFILL_MAX": "-1"},
	}
	for name, over := range tests {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range over {
			m[k] = v
		}
		if name == "no project" || name == "no location" {
			m = over
		}
		if _, err := FromEnv(env(m)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
