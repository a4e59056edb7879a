package activities

import (
	"math/rand/v2"
	"slices"
	"testing"

	"socialstream/internal/ids"
)

// What a celebrity's newest posts keep, whatever order their jobs come
// in: the newest KeptCelebrityPosts, newest first, and More once any
// was let go.
func TestKeepNewestCelebrityPosts(t *testing.T) {
	n := KeptCelebrityPosts + 10
	posts := make([]string, n) // oldest first
	for i := range posts {
		posts[i] = ids.Format(int64(1_000_000 + i*1000))
	}
	newest := slices.Clone(posts[n-KeptCelebrityPosts:])
	slices.Reverse(newest)
	for seed := range uint64(20) {
		order := slices.Clone(posts)
		r := rand.New(rand.NewPCG(seed, 1))
		r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		var c CelebrityPosts
		for _, id := range order {
			c.keep(id)
			if c.keep(id) {
				t.Fatalf("seed %d: %s kept twice", seed, id)
			}
		}
		if !slices.Equal(c.IDs, newest) || !c.More {
			t.Fatalf("seed %d: kept %v (more %v), want %v and more", seed, c.IDs, c.More, newest)
		}
		// One older than every post kept changes nothing once some were
		// let go: the range of c:{author} finds it.
		if c.keep(ids.Format(999_000)) || !slices.Equal(c.IDs, newest) {
			t.Fatalf("seed %d: an older post changed what is kept: %v", seed, c.IDs)
		}
	}
	// Under the bound nothing is let go.
	var c CelebrityPosts
	for _, id := range posts[:3] {
		c.keep(id)
	}
	if c.More || len(c.IDs) != 3 || c.IDs[0] != posts[2] {
		t.Fatalf("three kept: %v (more %v)", c.IDs, c.More)
	}
}
