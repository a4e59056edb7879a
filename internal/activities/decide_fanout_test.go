package activities

import (
	"errors"
	"math"
	"testing"
)

// What a fan-out's planning job and chunk jobs do, decided without
// Datastore.
func TestDecideFanout(t *testing.T) {
	for _, c := range []struct {
		name    string
		facts   planFacts
		before  int64
		skipped bool
		notYet  bool
	}{
		{"not committed yet", planFacts{}, 0, false, true},
		{"never committed", planFacts{late: true}, 0, true, false},
		{"deleted since found", planFacts{found: true, deleted: true}, 0, true, false},
		{"stamped", planFacts{found: true, chunks: 3, committed: 50, foundAt: 70}, 50, false, false},
		{"one chunk needs no stamp", planFacts{found: true, chunks: 1, foundAt: 70}, 0, false, false},
		{"stamp awaited", planFacts{found: true, chunks: 3, foundAt: 70}, 0, false, true},
		{"stamp never written", planFacts{found: true, chunks: 3, foundAt: 70, late: true}, 70, false, false},
	} {
		before, skipped, err := decidePlan(c.facts)
		if before != c.before || (skipped != "") != c.skipped || errors.Is(err, ErrNotYet) != c.notYet {
			t.Errorf("plan, %s: before %d, skipped %q, %v", c.name, before, skipped, err)
		}
	}
	for _, c := range []struct {
		name       string
		found      bool
		a          Activity
		taskBefore int64
		before     int64
		skipped    bool
	}{
		{"deleted", false, Activity{}, 0, 0, true},
		{"for the mentioned alone", true, Activity{Visibility: MentionedOnly}, 5, 0, true},
		{"the plan's time", true, Activity{Visibility: Public, Committed: 9}, 5, 5, false},
		{"the stamp", true, Activity{Visibility: FollowersOnly, Committed: 9}, 0, 9, false},
		{"no stamp: everyone", true, Activity{Visibility: Public}, 0, math.MaxInt64, false},
	} {
		before, skipped := decideChunk(c.found, &c.a, c.taskBefore)
		if before != c.before || (skipped != "") != c.skipped {
			t.Errorf("chunk, %s: before %d, skipped %q", c.name, before, skipped)
		}
	}
}
