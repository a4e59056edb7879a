package api_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"socialstream/internal/activities"
	"socialstream/internal/store"
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
		list, _, err := act.Feed(ctx, activities.FeedRequest{Viewer: viewer, Selector: activities.Friends, UserID: viewer, Page: store.PageRequest{Count: 1, Offset: offset}})
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
