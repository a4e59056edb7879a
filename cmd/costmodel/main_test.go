package main

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"socialstream/internal/app"
	"socialstream/internal/costmodel"
	"socialstream/internal/media"
)

func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-preset", "community", "-people", "20000", "-retention-days", "0"}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| | community |", "| **workload**: people | 20k |", "| home retention | for ever |", "regional us-east4"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := run(context.Background(), nil, &out); err != nil || strings.Count(out.String(), "\n| ") < 20 || !strings.Contains(out.String(), "| | community | million | ten million |") {
		t.Errorf("all presets: %v\n%s", err, out.String())
	}
	for _, bad := range [][]string{{"-preset", "nowhere"}, {"-posts", "-1"}, {"-people", "x"}, {"extra"}, {"-database-location", "us-central"}} {
		if err := run(context.Background(), bad, &out); err == nil {
			t.Errorf("run(%q) succeeded", bad)
		}
	}
}

// allIn returns the all-in dollars a month of the community preset with
// args.
func allIn(t *testing.T, args ...string) float64 {
	t.Helper()
	var out bytes.Buffer
	if err := run(context.Background(), append([]string{"-preset", "community"}, args...), &out); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if rest, ok := strings.CutPrefix(line, "| **all in, dollars a month** | **$"); ok {
			v, err := strconv.ParseFloat(strings.TrimSuffix(rest, "** |"), 64)
			if err != nil {
				t.Fatalf("all in: %q: %v", line, err)
			}
			return v
		}
	}
	t.Fatalf("no all-in row:\n%s", out.String())
	return 0
}

// A smaller picture sends fewer bytes when opened: -picture-bytes reaches
// the model, and the bill all in comes down.
func TestPictureBytes(t *testing.T) {
	kept, smaller := allIn(t), allIn(t, "-picture-bytes", "100000")
	if !(smaller < kept) {
		t.Errorf("all in with a picture of 100,000 bytes $%.2f, with the default's $%.2f: want less", smaller, kept)
	}
}

// Without redis-server the measurement says what it needs.
func TestMeasureRedisNeedsTheServer(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	err := run(context.Background(), []string{"-measure-redis"}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "needs redis-server") {
		t.Errorf("run -measure-redis with no redis-server: %v", err)
	}
}

// The model's figures of the service's configuration are its defaults:
// the page cache's TTL and entries, and the upload budget.
func TestServiceDefaults(t *testing.T) {
	cfg, err := app.ReadEnv(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if got, want := float64(costmodel.UploadMemory), float64(media.DefaultMemory>>20); cfg.UploadMemory != 0 || got != want {
		t.Errorf("costmodel.UploadMemory %v MiB, UPLOAD_MEMORY's default %d (0: media's %v)", got, cfg.UploadMemory, want)
	}
	entries := cfg.PageCacheEntries
	if entries == 0 {
		entries = app.DefaultPageCacheEntries
	}
	for _, w := range costmodel.Presets {
		if w.CacheTTL != cfg.PageCacheTTL.Seconds() || w.CacheEntries != float64(entries) {
			t.Errorf("%s: cache TTL %v s and %v entries, the service's defaults %v and %d", w.Name, w.CacheTTL, w.CacheEntries, cfg.PageCacheTTL, entries)
		}
	}
}

// The model's F1 is app.yaml's: its class, the budget of pictures and
// entries of the page cache it sets there, which the service takes, and
// the scheduler's processors its CPU figures were measured with.
func TestF1IsAppYAMLs(t *testing.T) {
	raw, err := os.ReadFile("../../app.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var y struct {
		InstanceClass string            `yaml:"instance_class"`
		Env           map[string]string `yaml:"env_variables"`
	}
	if err := yaml.Unmarshal(raw, &y); err != nil {
		t.Fatal(err)
	}
	if y.InstanceClass != costmodel.F1.Name {
		t.Errorf("app.yaml's class %q, the model's %q", y.InstanceClass, costmodel.F1.Name)
	}
	cfg, err := app.ReadEnv(func(k string) string { return y.Env[k] })
	if err != nil {
		t.Fatalf("app.yaml's variables: %v", err)
	}
	if got := float64(cfg.UploadMemory) * (1 << 20) / 1e6; got != costmodel.F1UploadMemory || cfg.UploadMemory != media.MinMemory>>20 {
		t.Errorf("app.yaml's UPLOAD_MEMORY %d MiB, the model's F1 %v MB, media.MinMemory %d MiB", cfg.UploadMemory, costmodel.F1UploadMemory, media.MinMemory>>20)
	}
	if float64(cfg.PageCacheEntries) != costmodel.F1CacheEntries {
		t.Errorf("app.yaml's PAGE_CACHE_ENTRIES %d, the model's F1 %v", cfg.PageCacheEntries, costmodel.F1CacheEntries)
	}
	// The CPU figures were measured with the scheduler's processors the
	// service is deployed with (the bench reads them from app.yaml).
	if procs, err := strconv.Atoi(y.Env["GOMAXPROCS"]); err != nil || procs != costmodel.Measured.Procs {
		t.Errorf("app.yaml's GOMAXPROCS %q, the model's CPU figures measured at %d", y.Env["GOMAXPROCS"], costmodel.Measured.Procs)
	}
}

// The bill takes the prices of the database's location: the multi-region
// nam5 bills more than the default, one region.
func TestDatabaseLocation(t *testing.T) {
	regional, nam5 := allIn(t), allIn(t, "-database-location", "nam5")
	if !(regional < nam5) {
		t.Errorf("all in, regional $%.2f, nam5 $%.2f: want the region less", regional, nam5)
	}
	if got := allIn(t, "-database-location", costmodel.Regional.Location); got != regional {
		t.Errorf("-database-location %s: $%.2f, the default $%.2f", costmodel.Regional.Location, got, regional)
	}
}

// The default prices are those of the location docs/deploy.md creates the
// database in: its example region, which the database is made in.
func TestDefaultPricesAreWhereDeployPutsTheDatabase(t *testing.T) {
	b, err := os.ReadFile("../../docs/deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	region := ""
	for _, line := range strings.Split(doc, "\n") {
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, "REGION="); ok && region == "" {
				region = v
			}
		}
	}
	if region != costmodel.Regional.Location {
		t.Errorf("docs/deploy.md's example REGION is %q; the model prices a database in %q", region, costmodel.Regional.Location)
	}
	if !strings.Contains(doc, "gcloud firestore databases create --type=datastore-mode --location=$REGION") {
		t.Error("docs/deploy.md does not make the database in $REGION")
	}
}
