package api_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"socialstream/internal/activities"
	"socialstream/internal/app"
	"socialstream/internal/graph"
	"socialstream/internal/paging"
	"socialstream/internal/testenv"
)

// TestPostReachesHundredThousandFollowers seeds an author with 100,000
// followers through the store, posts over HTTP, and checks that followers
// across the whole range see the post at home: the first chunk at once,
// the rest once the fan-out jobs (through the tasks emulator) have run;
// and that no audience entity breaks the index entry limit.
func TestPostReachesHundredThousandFollowers(t *testing.T) {
	const followers = 100_000
	// An emulator of its own: 100,000 follows would slow every later test.
	e := newEnvOn(t, testenv.OwnDB(t), app.Config{BackfillMax: 1000})
	ctx := context.Background()
	author := e.register("celebrity")
	ids := make([]string, followers)
	for i := range ids {
		ids[i] = fmt.Sprint(9_000_000_000 + i) // synthetic follower ids
	}
	g := e.svc.Graph
	start := time.Now()
	if err := g.ImportFollowers(ctx, author.id, ids); err != nil {
		t.Fatal(err)
	}
	t.Logf("seeded %d followers in %v", followers, time.Since(start))

	start = time.Now()
	id := e.post(author, "hello, everyone")
	t.Logf("post answered in %v", time.Since(start))

	act := e.activitiesService()
	sees := func(viewer string) bool {
		list, _, err := act.Feed(ctx, activities.FeedRequest{Viewer: viewer, Selector: activities.Friends, UserID: viewer, Page: paging.Request{Count: 5}})
		if err != nil {
			t.Fatalf("home of %s: %v", viewer, err)
		}
		return len(list) > 0 && list[0].ID == id
	}
	// The author and the first chunk see it as soon as the post answers.
	for _, v := range []string{author.id, ids[0], ids[graph.ChunkCap-1]} {
		if !sees(v) {
			t.Errorf("%s does not see the post right after posting", v)
		}
	}
	// A sample across the whole range sees it once the fan-out is done.
	var sample []string
	for i := 0; i < followers; i += 2477 {
		sample = append(sample, ids[i])
	}
	sample = append(sample, ids[followers-1])
	deadline := time.Now().Add(3 * time.Minute)
	for _, v := range sample {
		for !sees(v) {
			if time.Now().After(deadline) {
				t.Fatalf("follower %s never saw the post", v)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	t.Logf("every sampled follower sees it %v after the post", time.Since(start))

	var chunks []activities.Audience
	if _, err := e.db.GetAll(ctx, e.db.Query(activities.KindAudience).Ancestor(activities.Key(e.db, id)), &chunks); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, c := range chunks {
		if n := len(c.FollowerIDs); n > activities.AudienceChunkSize || activities.AudienceIndexEntries(n) > activities.MaxIndexEntries {
			t.Errorf("audience chunk %d: %d ids, %d index entries", i, n, activities.AudienceIndexEntries(n))
		}
		for _, f := range c.FollowerIDs {
			seen[f] = true
		}
	}
	if len(seen) != followers+1 {
		t.Errorf("audience holds %d distinct ids, want %d", len(seen), followers+1)
	}
}
