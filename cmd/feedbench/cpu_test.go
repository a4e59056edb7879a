package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"socialstream/internal/activities"
	"socialstream/internal/store"
	"socialstream/internal/testenv"
)

// BenchmarkPageCPU serves pages of 20 in the process, on a warm instance
// (every activity and author on the page read a moment before, as the
// bill's warm rows), and reports the Go process's CPU time a page
// (cpu-ms/op, user and system, from getrusage) and the bytes of its
// answer (body-bytes/op, and gzip-bytes/op gzipped, as App Engine sends it
// to a client that accepts it: the egress the cost model prices): the service's
// own work and its Datastore client's, without the emulator's, which
// production replaces, nor an HTTP client's, nor the tests' recorder of
// queries or the bill's meter, which this stack goes without, nor a
// recorder's buffer for the answer. Each page asks for the marks of
// changes itself, as at the presets' instances (PAGE_CACHE_SYNC 0), and
// the Go scheduler has the processors app.yaml gives it. A like and
// its unlike are measured the same way, with the job the like enqueues
// (its notification) run in the process too, and a picture's thumbnail
// by its link (with the Cloud Storage emulator's work, which is in the
// process); and what the instance's page cache holds costs its heap
// (heap-bytes/entry).
//
//	go test ./cmd/feedbench -run '^$' -bench PageCPU -benchtime 300x -count 5
func BenchmarkPageCPU(b *testing.B) { pageCPU(b, false) }

// BenchmarkPageCPUSharedAlone is BenchmarkPageCPU's pages with the shared
// tier in place of the instance's cache (PAGE_CACHE_LOCAL=off): what a
// page costs that takes its activities and authors from Redis.
func BenchmarkPageCPUSharedAlone(b *testing.B) { pageCPU(b, true) }

func pageCPU(b *testing.B, sharedAlone bool) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(deployedProcs(b)))
	ctx := context.Background()
	cfg, err := parseFlags([]string{"-bill", "-datastore", testenv.DirectHost(b)})
	if err != nil {
		b.Fatal(err)
	}
	cfg.unmetered, cfg.sharedAlone = true, sharedAlone
	s, err := startStack(ctx, cfg, io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	defer s.close()
	w, err := billSeed(ctx, s)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.settle(ctx); err != nil {
		b.Fatal(err)
	}
	if sharedAlone {
		time.Sleep(store.SyncMargin) // the tier takes nothing read within the margin of its write
	}
	request := func(method, path string) *http.Request {
		req := httptest.NewRequestWithContext(ctx, method, path, nil)
		req.Header.Set("Authorization", "Bearer "+w.reader.token)
		return req
	}
	serve := func(b *testing.B, method, path string, want int) []byte {
		rec := httptest.NewRecorder()
		s.handler.ServeHTTP(rec, request(method, path))
		if rec.Code != want {
			b.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body.String())
		}
		return rec.Body.Bytes()
	}
	// again serves a request as serve does, its answer counted and let
	// go, as a server's connection sends it: a recorder's buffer, grown
	// for each answer, is the bench's garbage, not the service's.
	var sent sink
	again := func(b *testing.B, method, path string, want int) {
		sent.reset()
		s.handler.ServeHTTP(&sent, request(method, path))
		if sent.code != want {
			b.Fatalf("%s %s: %d, %d bytes", method, path, sent.code, sent.bytes)
		}
	}
	n := strconv.Itoa(billPage)
	pages := []struct{ name, path string }{
		{"home", "/social/rest/activities/@me/@friends?count=" + n},
		{"all", "/social/rest/activities/@all/@all?count=" + n},
		{"tag", "/social/rest/activities/@me/@tag:" + billTag + "?count=" + n},
		{"notifications", "/social/rest/notifications/@me?count=" + n},
		{"unread", "/social/rest/notifications/@me/unread"},
		{"mastodon-home", "/api/v1/timelines/home?limit=" + n},
		{"mastodon-public", "/api/v1/timelines/public?limit=" + n},
	}
	for _, page := range pages {
		b.Run(page.name, func(b *testing.B) {
			body := serve(b, http.MethodGet, page.path, http.StatusOK) // warm: what the page shows is read once
			before := cpuTime()
			b.ResetTimer()
			for b.Loop() {
				again(b, http.MethodGet, page.path, http.StatusOK)
			}
			b.StopTimer()
			b.ReportMetric(float64(cpuTime()-before)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(len(body)), "body-bytes/op")
			b.ReportMetric(float64(gzipped(body)), "gzip-bytes/op")
		})
	}
	// The home page's own query alone (activities.HomeIDs, one range of
	// the audience chunks, keys only, as the page asks it), issued by the
	// bench's Datastore client: what no page of this design goes without
	// (the answer's activities and authors come from the cache).
	b.Run("home-query", func(b *testing.B) {
		before := cpuTime()
		b.ResetTimer()
		for b.Loop() {
			ids, err := activities.HomeIDs(ctx, s.db, w.reader.id, 0, billPage+1)
			if err != nil {
				b.Fatal(err)
			}
			if len(ids) < billPage {
				b.Fatalf("the reader's home holds %d, want a page of %d", len(ids), billPage)
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(cpuTime()-before)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	})
	b.Run("like-unlike", func(b *testing.B) {
		path := "/social/rest/likes/" + w.newest[1]
		before := cpuTime()
		b.ResetTimer()
		for b.Loop() {
			again(b, http.MethodPost, path, http.StatusOK)
			again(b, http.MethodDelete, path, http.StatusOK)
		}
		if err := s.settle(ctx); err != nil { // the likes' jobs, in the process
			b.Fatal(err)
		}
		b.StopTimer()
		b.ReportMetric(float64(cpuTime()-before)/float64(time.Millisecond)/float64(b.N)/2, "cpu-ms/op")
	})
	b.Run("thumbnail", func(b *testing.B) {
		var up struct {
			Entry struct {
				ThumbnailURL string `json:"thumbnailUrl"`
			} `json:"entry"`
		}
		if err := s.do(ctx, w.reader, http.MethodPost, "/social/rest/mediaItems/@me/@self", billPicture, &up); err != nil {
			b.Fatal(err)
		}
		link, err := url.Parse(up.Entry.ThumbnailURL)
		if err != nil {
			b.Fatal(err)
		}
		before := cpuTime()
		b.ResetTimer()
		for b.Loop() {
			again(b, http.MethodGet, link.RequestURI(), http.StatusOK)
		}
		b.StopTimer()
		b.ReportMetric(float64(cpuTime()-before)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	})
	if sharedAlone {
		return // the instance keeps nothing of its own: no heap to measure
	}
	b.Run("cache", func(b *testing.B) {
		for b.Loop() {
			s.cache.Purge()
			runtime.GC()
			empty := heapAlloc()
			for _, page := range pages {
				serve(b, http.MethodGet, page.path, http.StatusOK)
			}
			runtime.GC()
			kept := s.cache.Len()
			if kept == 0 {
				b.Fatal("the pages kept nothing")
			}
			b.ReportMetric(float64(heapAlloc()-empty)/float64(kept), "heap-bytes/entry")
		}
	})
}

// deployedProcs is the GOMAXPROCS app.yaml runs the service with, so
// that the bench measures the scheduler as deployed.
func deployedProcs(b *testing.B) int {
	path, err := testenv.RepoFile("app.yaml")
	if err != nil {
		b.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	var y struct {
		Env map[string]string `yaml:"env_variables"`
	}
	if err := yaml.Unmarshal(raw, &y); err != nil {
		b.Fatalf("app.yaml: %v", err)
	}
	n, err := strconv.Atoi(y.Env["GOMAXPROCS"])
	if err != nil || n < 1 {
		b.Fatalf("app.yaml's GOMAXPROCS %q: want a count of processors", y.Env["GOMAXPROCS"])
	}
	return n
}

// sink is a ResponseWriter that counts an answer's bytes and keeps none.
type sink struct {
	header      http.Header
	code, bytes int
}

func (s *sink) reset() {
	if s.header == nil {
		s.header = http.Header{}
	}
	clear(s.header)
	s.code, s.bytes = 0, 0
}

func (s *sink) Header() http.Header { return s.header }

func (s *sink) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
}

func (s *sink) Write(p []byte) (int, error) {
	s.WriteHeader(http.StatusOK)
	s.bytes += len(p)
	return len(p), nil
}

// gzipped is how many bytes body takes gzipped, as App Engine's front end
// sends an answer to a client that accepts it.
func gzipped(body []byte) int {
	var buf bytes.Buffer
	z := gzip.NewWriter(&buf)
	_, _ = z.Write(body)
	_ = z.Close()
	return buf.Len()
}

func heapAlloc() int64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// cpuTime is the process's CPU time so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
