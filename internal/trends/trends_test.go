package trends

import (
	"testing"
	"time"
)

// A post's reactions bump its candidate at the first, then at each
// doubling: a few times however many.
func TestSampled(t *testing.T) {
	var bumps []int64
	for n := int64(1); n <= 5000; n++ {
		if Sampled(n) {
			bumps = append(bumps, n)
		}
	}
	if len(bumps) != 13 || bumps[0] != 1 || bumps[1] != 2 || bumps[2] != 4 || bumps[len(bumps)-1] != 4096 {
		t.Errorf("the bumps of 5,000 reactions: %v", bumps)
	}
}

// A subject trends by its people today, and yesterday's as much as today
// has yet to run; it needs MinPeople; ties go by name.
func TestRank(t *testing.T) {
	items := []Item{
		{Name: "old", Today: 0, Yesterday: 10},
		{Name: "new", Today: 6, Yesterday: 0},
		{Name: "lonely", Today: 1, Yesterday: 0},
		{Name: "b", Today: 3},
		{Name: "a", Today: 3},
	}
	got := rank(items, 18*time.Hour) // a quarter of today to run: old scores 2.5
	var names []string
	for _, it := range got {
		names = append(names, it.Name)
	}
	if want := []string{"new", "a", "b", "old"}; len(names) != len(want) || names[0] != want[0] || names[1] != want[1] || names[2] != want[2] || names[3] != want[3] {
		t.Errorf("ranked %v, want %v", names, want)
	}
	if got := rank([]Item{{Name: "old", Yesterday: 10}, {Name: "new", Today: 6}}, 0); got[0].Name != "old" {
		t.Errorf("at midnight, yesterday's counts whole: %v", got)
	}
}
