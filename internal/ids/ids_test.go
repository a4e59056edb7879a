package ids

import (
	"fmt"
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

func TestScatteredForm(t *testing.T) {
	g := New()
	for i := 0; i < 1000; i++ {
		id := g.Next()
		s := Format(id)
		if len(s) != 20 || !Scattered(s) {
			t.Fatalf("Format(%d) = %q: not 20 digits", id, s)
		}
		if got, ok := Parse(s); !ok || got != id {
			t.Fatalf("Parse(Format(%d)) = %d, %v", id, got, ok)
		}
		if plain := strconv.FormatInt(id, 10); Scattered(plain) {
			t.Fatalf("plain %q taken for scattered", plain)
		}
	}
	for _, bad := range []string{"18446744073709551616", "0000000000000000000a", "00000000000000000000"} {
		if n, ok := Parse(bad); ok {
			t.Errorf("Parse(%q) = %d, want refused", bad, n)
		}
	}
	// Half of the 20-digit numbers decode to a negative 64-bit number: not ids.
	refused := 0
	for u := uint64(1); u < 1<<63; u = u*3 + 7 {
		if _, ok := Parse(fmt.Sprintf("%020d", u)); !ok {
			refused++
		}
	}
	if refused == 0 {
		t.Error("every 20-digit number parsed: the negative ones should not")
	}
}

// The ids one instance mints in a burst, in their scattered form, fall
// evenly over the whole key range and in no order: sixteen equal ranges
// of the key space each take about a sixteenth, and about half of the
// consecutive pairs go down.
func TestScatteredKeysSpread(t *testing.T) {
	now := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	g := NewNode(3, func() time.Time { return now })
	const n = 16 * 1024
	var buckets [16]int
	down, prev := 0, ""
	for i := 0; i < n; i++ {
		if i%100 == 0 {
			now = now.Add(time.Millisecond)
		}
		s := Format(g.Next())
		u, _ := strconv.ParseUint(s, 10, 64)
		buckets[u>>60]++
		if s < prev {
			down++
		}
		prev = s
	}
	for b, c := range buckets {
		if c < n/16*3/4 || c > n/16*5/4 {
			t.Errorf("range %d of 16 holds %d of %d new keys, want about %d", b, c, n, n/16)
		}
	}
	if down < n*2/5 || down > n*3/5 {
		t.Errorf("%d of %d consecutive keys go down, want about half", down, n)
	}
	// The plain form, for contrast, only ever goes up.
	g2 := NewNode(3, func() time.Time { return now })
	a, b := strconv.FormatInt(g2.Next(), 10), strconv.FormatInt(g2.Next(), 10)
	if b < a {
		t.Errorf("plain ids %s, %s: expected increasing", a, b)
	}
}
