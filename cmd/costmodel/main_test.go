package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"socialstream/internal/app"
	"socialstream/internal/costmodel"
	"socialstream/internal/media"
)

func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-preset", "community", "-people", "20000", "-retention-days", "0"}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| | community |", "| **workload**: people | 20k |", "| home retention | for ever |", "multi-region nam5"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := run(context.Background(), nil, &out); err != nil || strings.Count(out.String(), "\n| ") < 20 || !strings.Contains(out.String(), "| | community | million | ten million |") {
		t.Errorf("all presets: %v\n%s", err, out.String())
	}
	for _, bad := range [][]string{{"-preset", "nowhere"}, {"-posts", "-1"}, {"-people", "x"}, {"extra"}} {
		if err := run(context.Background(), bad, &out); err == nil {
			t.Errorf("run(%q) succeeded", bad)
		}
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
