package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"syscall"
	"testing"
	"time"

	"socialstream/internal/testenv"
)

// BenchmarkPageCPU serves pages of 20 in the process, on a warm instance
// (every activity and author on the page read a moment before, as the
// bill's warm rows), and reports the Go process's CPU time a page
// (cpu-ms/op, user and system, from getrusage): the service's own work
// and its Datastore client's, without the emulator's, which production
// replaces, nor an HTTP client's, nor the tests' recorder of queries or
// the bill's meter, which this stack goes without.
//
//	go test ./cmd/feedbench -run '^$' -bench PageCPU -benchtime 200x
func BenchmarkPageCPU(b *testing.B) {
	ctx := context.Background()
	cfg, err := parseFlags([]string{"-bill", "-datastore", testenv.DirectHost(b)})
	if err != nil {
		b.Fatal(err)
	}
	cfg.unmetered = true
	s, err := startStack(ctx, cfg, io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	defer s.close()
	w, err := billSeed(ctx, s)
	if err != nil {
		b.Fatal(err)
	}
	n := strconv.Itoa(billPage)
	for _, page := range []struct{ name, path string }{
		{"home", "/social/rest/activities/@me/@friends?count=" + n},
		{"all", "/social/rest/activities/@all/@all?count=" + n},
		{"tag", "/social/rest/activities/@me/@tag:" + billTag + "?count=" + n},
		{"notifications", "/social/rest/notifications/@me?count=" + n},
		{"mastodon-home", "/api/v1/timelines/home?limit=" + n},
		{"mastodon-public", "/api/v1/timelines/public?limit=" + n},
	} {
		b.Run(page.name, func(b *testing.B) {
			serve := func() {
				req := httptest.NewRequestWithContext(ctx, http.MethodGet, page.path, nil)
				req.Header.Set("Authorization", "Bearer "+w.reader.token)
				rec := httptest.NewRecorder()
				s.handler.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("%s: %d %s", page.path, rec.Code, rec.Body.String())
				}
			}
			serve() // warm: what the page shows is read once
			before := cpuTime()
			b.ResetTimer()
			for b.Loop() {
				serve()
			}
			b.StopTimer()
			b.ReportMetric(float64(cpuTime()-before)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		})
	}
}

// cpuTime is the process's CPU time so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
