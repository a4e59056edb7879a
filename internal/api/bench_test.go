package api_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"socialstream/internal/activities"
	"socialstream/internal/paging"
	"socialstream/internal/stacktest"
)

// BenchmarkFollowToHome200 measures how long after a follow the followee's
// newest 200 activities are all on the follower's home feed, through real
// HTTP, the tasks emulator and the rebuild handler, against the Datastore
// emulator. It reports the median and 90th percentile.
//
//	go test ./internal/api -run '^$' -bench FollowToHome200 -benchtime 10x
func BenchmarkFollowToHome200(b *testing.B) {
	e := newEnv(b)
	ctx := context.Background()
	author := e.register("author")
	act := e.activitiesService()
	var oldest, newest string
	for i := 0; i < 200; i++ {
		id := e.post(author, fmt.Sprint("activity ", i))
		if i == 0 {
			oldest = id
		}
		newest = id
	}
	at := func(viewer string, offset int) string {
		list, _, err := act.Feed(ctx, activities.FeedRequest{Viewer: viewer, Selector: activities.Friends, UserID: viewer, Page: paging.Request{Count: 1, Offset: offset}})
		if err != nil {
			b.Fatal(err)
		}
		if len(list) == 0 {
			return ""
		}
		return list[0].ID
	}
	var took []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		reader := e.register(fmt.Sprintf("reader%04d", i))
		b.StartTimer()
		start := time.Now()
		e.follow(reader, author.id)
		deadline := start.Add(2 * time.Minute)
		for at(reader.id, 199) != oldest {
			if time.Now().After(deadline) {
				b.Fatalf("follow %d: the 200th activity never reached home", i)
			}
			time.Sleep(10 * time.Millisecond)
		}
		took = append(took, time.Since(start))
		if at(reader.id, 0) != newest {
			b.Fatalf("follow %d: newest activity not first at home", i)
		}
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Milliseconds()), "p50-ms")
	b.ReportMetric(float64(took[len(took)*9/10].Milliseconds()), "p90-ms")
}

// BenchmarkServePicture measures what one view of a picture costs an
// instance when no shared cache answers it: a signed link read through
// the service, its bytes streamed from the Cloud Storage emulator over
// real HTTP (a 1600 × 1200 JPEG as uploaded, and its thumbnail). It
// reports the bytes of each view; the choice of how pictures are
// delivered weighs it (docs/choices.md).
//
//	go test ./internal/api -run '^$' -bench ServePicture -benchtime 200x
func BenchmarkServePicture(b *testing.B) {
	e := newEnv(b)
	ann := e.register("ann")
	r := e.do("POST", "/social/rest/mediaItems/@me/@self", ann.token, stacktest.Picture(b, "jpeg", 1600, 1200), "Content-Type", "image/jpeg")
	if r.status != http.StatusCreated {
		b.Fatalf("upload: %d %s", r.status, r.raw)
	}
	for _, variant := range []string{"url", "thumbnailUrl"} {
		link := e.entry(r)[variant].(string)
		b.Run(variant, func(b *testing.B) {
			var n int64
			for b.Loop() {
				res, err := http.Get(link)
				if err != nil {
					b.Fatal(err)
				}
				k, err := io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if err != nil || res.StatusCode != http.StatusOK {
					b.Fatalf("%d %v", res.StatusCode, err)
				}
				n = k
			}
			b.ReportMetric(float64(n), "bytes/view")
		})
	}
}
