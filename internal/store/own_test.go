package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A value is read again once older than its period; a failed read keeps
// the value read before, and fails only when there is none.
func TestRefreshed(t *testing.T) {
	ctx := context.Background()
	clock := time.Unix(1000, 0)
	reads, fail := 0, false
	r := NewRefreshed(time.Minute, func(context.Context) (int, error) {
		if fail {
			return 0, errors.New("down")
		}
		reads++
		return reads, nil
	}, func() time.Time { return clock })
	fail = true
	if _, err := r.Get(ctx); err == nil {
		t.Fatal("a first read that fails: no error")
	}
	fail = false
	for _, step := range []struct {
		advance time.Duration
		fail    bool
		want    int
	}{
		{0, false, 1},
		{30 * time.Second, false, 1}, // within the period: no read
		{31 * time.Second, false, 2}, // past it: read again
		{2 * time.Minute, true, 2},   // a failed read keeps the last value
		{0, false, 3},                // and the next call reads again
	} {
		clock = clock.Add(step.advance)
		fail = step.fail
		if got, err := r.Get(ctx); err != nil || got != step.want {
			t.Errorf("after %v (fail %v): %d, %v; want %d", step.advance, step.fail, got, err, step.want)
		}
	}
}
