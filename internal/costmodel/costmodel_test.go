package costmodel

import (
	"math"
	"testing"
)

func TestPostChunks(t *testing.T) {
	alone := PostAlone.IndexEntries
	for _, c := range []struct {
		followers    float64
		writes       float64
		reads        float64
		indexEntries float64
	}{
		{0, 4, 11, alone},
		{AudienceChunkSize - 1, 4, 11, alone + 3*(AudienceChunkSize-1)}, // the author and every follower in chunk 0
		{AudienceChunkSize, 5, 14, alone + 3*AudienceChunkSize},         // one more chunk, by a fan-out job
		{100_000, 24, 71, alone + 300_000},
	} {
		got := Post(c.followers)
		if got.Writes != c.writes || got.Reads != c.reads || got.IndexEntries != c.indexEntries {
			t.Errorf("Post(%.0f) = %+v, want %v writes, %v reads, %v index entries", c.followers, got, c.writes, c.reads, c.indexEntries)
		}
	}
}

// A community small enough to count by hand: 100 people, all active,
// each following 10, posting once and reading home twice a day.
func TestModelByHand(t *testing.T) {
	w := Workload{Name: "hand", People: 100, Active: 1, Following: 10, Posts: 1, HomePages: 2, RetentionDays: 10, Peak: 1}
	r := Model(w, Nam5)
	if r.OrdinaryFollowers != 10 || r.PostsPerDay != 100 {
		t.Fatalf("followers %v, posts %v", r.OrdinaryFollowers, r.PostsPerDay)
	}
	post := Post(10)
	want := Counts{
		Reads:        100*post.Reads + 200*Metered["home page"].Reads,
		Writes:       100 * post.Writes,
		Deletes:      100 * (post.Writes - PostOwnWrites), // each audience chunk trimmed
		IndexEntries: 100 * post.IndexEntries,
		StoredBytes:  100 * (post.Bytes - 10*PerFollower.Bytes),
		HeldBytes:    10 * 100 * 10 * PerFollower.Bytes,
	}
	if !near(r.Day, want) {
		t.Errorf("day = %+v\nwant  %+v", r.Day, want)
	}
	if h := r.Homes[0]; h.Reads != 200*Metered["home page"].Reads || h.Writes != 100*post.Writes || h.Held != want.HeldBytes {
		t.Errorf("this design's home: %+v", h)
	}
	if h := r.Homes[1]; h.RedisOps != 2*100*10+200 || h.Memory != 100*HomeSize*RedisBytesPerItem {
		t.Errorf("Redis: %+v", h)
	}
	if h := r.Homes[2]; h.Reads != 200*(10+Metered["home page"].Reads-2) || h.Writes != 100 {
		t.Errorf("pull: %+v", h)
	}
	// Without retention nothing is trimmed, and the copies stay.
	w.RetentionDays = 0
	if r := Model(w, Nam5); r.Day.Deletes != 0 || r.Day.HeldBytes != 0 || r.Day.StoredBytes != 100*post.Bytes {
		t.Errorf("for ever: %+v", r.Day)
	}
}

// Celebrities' posts go to their followers, and the busiest ranges are
// the marks of changes' and a word's every post carries: one a post,
// where a shard of the trim takes a sixteenth of their two audience
// chunks.
func TestCelebrities(t *testing.T) {
	w := Workload{People: 1000, Active: 1, Following: 20, Celebrities: 2, CelebrityFollowers: 9000, CelebrityPosts: 10, Peak: 2}
	r := Model(w, Nam5)
	if want := (1000*20 - 2*9000) / 998.0; math.Abs(r.OrdinaryFollowers-want) > 1e-9 {
		t.Errorf("ordinary followers %v, want %v", r.OrdinaryFollowers, want)
	}
	if r.CelebrityPostsPerDay != 20 || r.Day.Writes != 20*Post(9000).Writes {
		t.Errorf("celebrity posts %v, writes %v", r.CelebrityPostsPerDay, r.Day.Writes)
	}
	marks := -1.0
	for _, rg := range r.Ranges {
		if rg.Name == "a shard of the marks of changes (1 of 1)" {
			marks = rg.PerSecond
		}
	}
	if want := 20 * 2 / 86400.0; math.Abs(marks-want) > 1e-12 || math.Abs(r.HottestRange-want) > 1e-12 {
		t.Errorf("the marks' range %v, the hottest %v (%s); want both %v", marks, r.HottestRange, r.HottestName, want)
	}
}

func near(a, b Counts) bool {
	eq := func(x, y float64) bool { return math.Abs(x-y) <= 1e-6*math.Max(1, math.Abs(y)) }
	return eq(a.Reads, b.Reads) && eq(a.Writes, b.Writes) && eq(a.Deletes, b.Deletes) &&
		eq(a.IndexEntries, b.IndexEntries) && eq(a.StoredBytes, b.StoredBytes) && eq(a.HeldBytes, b.HeldBytes)
}

// Cloud Tasks: each like's notification job is created and run (2
// operations); a month past the free million is billed.
func TestTasks(t *testing.T) {
	w := Workload{People: 100_000, Active: 1, Likes: 1}
	r := Model(w, Nam5)
	if r.Day.Tasks != 2*100_000 {
		t.Fatalf("tasks a day %v, want 200,000", r.Day.Tasks)
	}
	if want := (30*2*100_000.0 - 1_000_000) / 1e6 * 0.40; math.Abs(r.TasksDollarsMonth-want) > 1e-9 {
		t.Errorf("Cloud Tasks dollars %v, want %v", r.TasksDollarsMonth, want)
	}
}

// A post's likes bump its trend candidate at the first, then at each
// doubling; the day's likes cost the bumping like's figures that share
// of the time, the third like's the rest.
func TestBumpShare(t *testing.T) {
	for _, c := range []struct{ perPost, want float64 }{{0.5, 1}, {1, 1}, {2, 1}, {3, 2.0 / 3}, {5, 0.6}, {1024, 11.0 / 1024}} {
		if got := BumpShare(c.perPost); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("BumpShare(%v) = %v, want %v", c.perPost, got, c.want)
		}
	}
	w := Workload{People: 1000, Active: 1, Following: 10, Posts: 2, Likes: 10}
	with, without := Model(w, Nam5), Model(Workload{People: 1000, Active: 1, Following: 10, Posts: 2}, Nam5)
	like, third := Metered["like"], Metered["like, its post's third (no trend bumped)"]
	want := 10000 * (0.6*like.Reads + 0.4*third.Reads)
	if got := with.ColdReads - without.ColdReads; math.Abs(got-want) > 1e-6 {
		t.Errorf("10,000 likes of 2,000 posts read %v, want %v", got, want)
	}
}
