package ids

import (
	"strconv"
	"sync"
	"testing"
	"time"
)

func TestNextIncreasesAndEncodesTime(t *testing.T) {
	base := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	now := base
	g := NewNode(7, func() time.Time { return now })
	var prev int64
	for i := 0; i < 10000; i++ {
		if i%1000 == 0 {
			now = now.Add(time.Millisecond)
		}
		id := g.Next()
		if id <= prev {
			t.Fatalf("id %d after %d: not increasing", id, prev)
		}
		prev = id
	}
	if got := Time(g.Next()); got.Before(base) || got.After(now.Add(time.Second)) {
		t.Errorf("Time = %v, want near %v", got, now)
	}
}

func TestClockStepsBack(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	g := NewNode(1, func() time.Time { return now })
	a := g.Next()
	now = now.Add(-time.Hour)
	b := g.Next()
	if b <= a {
		t.Errorf("after clock step back: %d <= %d", b, a)
	}
}

func TestSequenceExhaustionBorrowsNextMillisecond(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	g := NewNode(1, func() time.Time { return now })
	seen := map[int64]bool{}
	for i := 0; i < 3*(maxSeq+1); i++ { // three milliseconds' worth in one
		id := g.Next()
		if seen[id] {
			t.Fatalf("duplicate id %d at %d", id, i)
		}
		seen[id] = true
	}
}

// Many generators (instances) minting at once, each in many goroutines:
// distinct nodes never collide.
func TestConcurrentGeneratorsUnique(t *testing.T) {
	const gens, workers, per = 8, 4, 2000
	var mu sync.Mutex
	seen := make(map[int64]bool, gens*workers*per)
	var wg sync.WaitGroup
	for n := 0; n < gens; n++ {
		g := NewNode(int64(n), time.Now)
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				local := make([]int64, 0, per)
				for i := 0; i < per; i++ {
					local = append(local, g.Next())
				}
				mu.Lock()
				defer mu.Unlock()
				for _, id := range local {
					if seen[id] {
						t.Errorf("duplicate id %d", id)
					}
					seen[id] = true
				}
			}()
		}
	}
	wg.Wait()
	if len(seen) != gens*workers*per {
		t.Errorf("got %d ids, want %d", len(seen), gens*workers*per)
	}
}

func TestParse(t *testing.T) {
	g := New()
	id := g.Next()
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{strconv.FormatInt(id, 10), id, true},
		{"1", 1, true},
		{"", 0, false},
		{"0", 0, false},
		{"-5", 0, false},
		{"007", 0, false},
		{"12a", 0, false},
		{"99999999999999999999", 0, false},
		{"+5", 0, false},
	}
	for _, tt := range tests {
		got, ok := Parse(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Parse(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// An id minted in the same millisecond as t is not surely before it.
func TestMintedBefore(t *testing.T) {
	at := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	id := NewNode(1, func() time.Time { return at.Add(300 * time.Microsecond) }).Next()
	for _, c := range []struct {
		t    time.Time
		want bool
	}{
		{at, false},
		{at.Add(500 * time.Microsecond), false},
		{at.Add(time.Millisecond), true},
		{at.Add(time.Second), true},
		{at.Add(-time.Millisecond), false},
	} {
		if got := MintedBefore(id, c.t); got != c.want {
			t.Errorf("MintedBefore(id of %s, %s) = %v, want %v", at.Add(300*time.Microsecond).Format("15:04:05.000000"), c.t.Format("15:04:05.000000"), got, c.want)
		}
	}
}
