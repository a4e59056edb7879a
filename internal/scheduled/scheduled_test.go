package scheduled

import (
	"errors"
	"slices"
	"testing"
	"time"

	"socialstream/internal/derrors"
	"socialstream/internal/ids"
)

func TestDecideLimits(t *testing.T) {
	day := time.Date(2031, 3, 2, 0, 0, 0, 0, time.UTC)
	full := func(n int, at func(i int) time.Time) *book {
		b := &book{}
		for i := range n {
			b.set(ids.Format(int64(1000+i)), at(i))
		}
		return b
	}
	spread := func(i int) time.Time { return day.Add(time.Duration(i) * 24 * time.Hour / MaxDaily) }
	sameDay := func(i int) time.Time { return day.Add(time.Duration(i) * time.Minute) }
	for _, c := range []struct {
		name   string
		b      *book
		at     time.Time
		except string
		ok     bool
	}{
		{"an empty book", &book{}, day, "", true},
		{"a day one short of full", full(MaxDaily-1, sameDay), day.Add(time.Hour), "", true},
		{"a full day", full(MaxDaily, sameDay), day.Add(23 * time.Hour), "", false},
		{"the day after a full one", full(MaxDaily, sameDay), day.Add(24 * time.Hour), "", true},
		{"a move within a full day", full(MaxDaily, sameDay), day.Add(time.Hour), ids.Format(1000), true},
		{"the most in all", full(MaxTotal, spread), day.Add(400 * 24 * time.Hour), "", false},
		{"one short of the most", full(MaxTotal-1, spread), day.Add(400 * 24 * time.Hour), "", true},
	} {
		err := decideLimits(c.b, c.at, c.except)
		if (err == nil) != c.ok || err != nil && !errors.Is(err, derrors.InvalidArgument) {
			t.Errorf("%s: %v, want ok %v", c.name, err, c.ok)
		}
	}
}

func TestWindow(t *testing.T) {
	var list []string // oldest made first, as a book keeps them
	for i := range 10 {
		list = append(list, ids.Format(int64(100+i)))
	}
	seq := func(page []string) []int64 {
		var out []int64
		for _, id := range page {
			out = append(out, seqOf(id, 0))
		}
		return out
	}
	for _, c := range []struct {
		name string
		w    Window
		want []int64
	}{
		{"the newest", Window{Limit: 3}, []int64{109, 108, 107}},
		{"below one", Window{Limit: 3, Below: ids.Format(107)}, []int64{106, 105, 104}},
		{"above one", Window{Limit: 3, Above: ids.Format(103)}, []int64{109, 108, 107}},
		{"just above one", Window{Limit: 3, Above: ids.Format(103), Nearest: true}, []int64{106, 105, 104}},
		{"between", Window{Limit: 10, Below: ids.Format(105), Above: ids.Format(102)}, []int64{104, 103}},
		{"past the oldest", Window{Limit: 3, Below: ids.Format(100)}, nil},
	} {
		if got := seq(window(list, c.w)); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
