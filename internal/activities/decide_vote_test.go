package activities

import (
	"errors"
	"slices"
	"testing"
	"time"

	"socialstream/internal/polls"
)

// Whether a vote is taken, decided without Datastore: the voter's
// standing and whether they may see the post come before anything of
// the poll, so a hidden poll tells nothing, not even that it ended.
func TestDecideVote(t *testing.T) {
	now := time.Unix(1000, 0)
	open := &polls.Poll{ID: "p", Options: []string{"a", "b", "c"}, Expires: now.Add(time.Hour)}
	several := &polls.Poll{ID: "p", Options: []string{"a", "b", "c"}, Multiple: true, Expires: now.Add(time.Hour)}
	ended := &polls.Poll{ID: "p", Options: []string{"a", "b"}, Expires: now}
	suspended, hidden := errors.New("suspended"), ErrNoSuchActivity
	for _, c := range []struct {
		name         string
		mayAct, seen error
		poll         *polls.Poll
		choices      []int
		want         []int64
		err          error
		invalid      bool
	}{
		{name: "one choice", poll: open, choices: []int{1}, want: []int64{1}},
		{name: "several, sorted", poll: several, choices: []int{2, 0}, want: []int64{0, 2}},
		{name: "the voter suspended", mayAct: suspended, seen: hidden, poll: ended, choices: []int{9}, err: suspended},
		{name: "hidden, ended", seen: hidden, poll: ended, choices: []int{0}, err: hidden},
		{name: "hidden, a bad choice", seen: hidden, poll: open, choices: []int{7}, err: hidden},
		{name: "no poll", choices: []int{0}, err: polls.ErrNoPoll},
		{name: "ended", poll: ended, choices: []int{0}, err: polls.ErrExpired},
		{name: "two of a poll of one", poll: open, choices: []int{0, 1}, invalid: true},
		{name: "none", poll: open, invalid: true},
		{name: "no such option", poll: open, choices: []int{3}, invalid: true},
		{name: "negative", poll: several, choices: []int{-1}, invalid: true},
		{name: "twice the same", poll: several, choices: []int{1, 1}, invalid: true},
	} {
		got, err := decideVote(c.mayAct, c.seen, c.poll, c.choices, now)
		switch {
		case c.invalid:
			if err == nil || errors.Is(err, polls.ErrExpired) || errors.Is(err, hidden) {
				t.Errorf("%s: %v, %v; want the choices refused", c.name, got, err)
			}
		case c.err != nil:
			if !errors.Is(err, c.err) {
				t.Errorf("%s: %v, want %v", c.name, err, c.err)
			}
		case err != nil || !slices.Equal(got, c.want):
			t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}
