package notifications

import "testing"

// Whether an event about an activity is told now, decided without
// Datastore.
func TestDecideTold(t *testing.T) {
	for _, c := range []struct {
		name          string
		minted, found bool
		edits, edit   int
		waiting       bool
		want          told
	}{
		{"there", true, true, 0, 0, true, toldNow},
		{"not committed yet", true, false, 0, 0, true, toldLater},
		{"never committed", true, false, 0, 0, false, toldNoOne},
		{"no such id", false, false, 0, 0, true, toldNoOne},
		{"its edit not committed yet", true, true, 1, 2, true, toldLater},
		{"its edit never committed", true, true, 1, 2, false, toldNow},
		{"edited since", true, true, 3, 2, true, toldNow},
	} {
		if got := decideTold(c.minted, c.found, c.edits, c.edit, c.waiting); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
