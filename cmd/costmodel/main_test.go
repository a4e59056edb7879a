package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
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
