package polls

import (
	"slices"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/datastore"
)

// A poll asked for is checked against the limits the instance states.
func TestMake(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)
	ok := Input{Options: []string{" yes ", "no"}, ExpiresIn: time.Hour, HideTotals: true}
	p, err := ok.Make("7", now)
	if err != nil || p.ID != "7" || p.Options[0] != "yes" || !p.HideTotals || !p.Expires.Equal(now.Add(time.Hour).Truncate(time.Second)) {
		t.Fatalf("a good poll: %+v, %v", p, err)
	}
	if p.Expired(now.Add(59*time.Minute)) || !p.Expired(p.Expires) {
		t.Errorf("expired: before its end %v, at it %v", p.Expired(now.Add(59*time.Minute)), p.Expired(p.Expires))
	}
	for name, in := range map[string]Input{
		"one option":      {Options: []string{"a"}, ExpiresIn: time.Hour},
		"five options":    {Options: []string{"a", "b", "c", "d", "e"}, ExpiresIn: time.Hour},
		"an empty option": {Options: []string{"a", "  "}, ExpiresIn: time.Hour},
		"a long option":   {Options: []string{"a", strings.Repeat("é", MaxOptionChars+1)}, ExpiresIn: time.Hour},
		"the same twice":  {Options: []string{"a", " a"}, ExpiresIn: time.Hour},
		"invalid UTF-8":   {Options: []string{"a", "\xff"}, ExpiresIn: time.Hour},
		"ending too soon": {Options: []string{"a", "b"}, ExpiresIn: MinExpiry - time.Second},
		"ending too late": {Options: []string{"a", "b"}, ExpiresIn: MaxExpiry + time.Second},
		"no ending":       {Options: []string{"a", "b"}},
	} {
		if p, err := in.Make("7", now); err == nil {
			t.Errorf("%s: made %+v", name, p)
		}
	}
	if _, err := (Input{Options: []string{"a", strings.Repeat("é", MaxOptionChars)}, ExpiresIn: MaxExpiry}).Make("7", now); err != nil {
		t.Errorf("at the limits: %v", err)
	}
}

// The counts a vote's transforms make read back, and a count of an
// option no poll has is left alone.
func TestCountLoads(t *testing.T) {
	var c Count
	err := c.Load([]datastore.Property{{Name: "voters", Value: int64(3)}, {Name: "votes", Value: int64(5)},
		{Name: "o0", Value: int64(2)}, {Name: "o3", Value: int64(3)}, {Name: "o9", Value: int64(1)}, {Name: "other", Value: "x"}})
	if err != nil || c.Voters != 3 || c.Votes != 5 || !slices.Equal(c.Options[:MaxOptions], []int64{2, 0, 0, 3}) {
		t.Errorf("loaded %+v, %v", c, err)
	}
	ps, err := c.Save()
	var again Count
	if err != nil || again.Load(ps) != nil || again != c {
		t.Errorf("saved and loaded: %+v, %v", again, err)
	}
}
