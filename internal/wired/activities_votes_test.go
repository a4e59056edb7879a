package wired_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"socialstream/internal/activities"
	"socialstream/internal/polls"
)

// Many people voting in one poll at once all succeed, and the counts are
// exact: each vote adds to them on the server, reading nothing the
// others write. A vote again answers as the first, and counts nothing
// more; another choice after it is refused.
func TestContendedVotesCountExactly(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	author := f.user(t, "author")
	v, _, err := f.act.Post(ctx, author, activities.PostInput{Title: "which?",
		Poll: &polls.Input{Options: []string{"red", "green", "blue"}, ExpiresIn: time.Hour, Multiple: true}})
	if err != nil {
		t.Fatal(err)
	}
	if v.Poll == nil || len(v.Poll.Options) != 3 || v.Poll.VotesCount != 0 || v.Poll.Voted {
		t.Fatalf("the new poll: %+v", v.Poll)
	}
	const n = 48
	voters := make([]string, n)
	for i := range voters {
		voters[i] = f.user(t, fmt.Sprint("voter", i))
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i, voter := range voters {
		choices := []int{i % 3}
		if i%4 == 0 {
			choices = []int{0, 2}
		}
		wg.Go(func() {
			got, err := f.act.Vote(ctx, voter, v.ID, choices)
			if err == nil && (!got.Poll.Voted || len(got.Poll.OwnVotes) != len(choices)) {
				err = fmt.Errorf("%s's answer: %+v", voter, got.Poll)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	want := [3]int64{}
	votes := int64(0)
	for i := range voters {
		if i%4 == 0 {
			want[0]++
			want[2]++
			votes += 2
		} else {
			want[i%3]++
			votes++
		}
	}
	check := func(when string) {
		t.Helper()
		list, err := f.act.Get(ctx, author, author, "", []string{v.ID})
		if err != nil || len(list) != 1 || list[0].Poll == nil {
			t.Fatalf("%s: %+v %v", when, list, err)
		}
		p := list[0].Poll
		if p.VotersCount != n || p.VotesCount != votes {
			t.Errorf("%s: %d voters, %d votes; want %d, %d", when, p.VotersCount, p.VotesCount, n, votes)
		}
		for i, o := range p.Options {
			if o.VotesCount == nil || *o.VotesCount != want[i] {
				t.Errorf("%s: option %d counted %v, want %d", when, i, o.VotesCount, want[i])
			}
		}
	}
	check("after the votes")
	if _, err := f.act.Vote(ctx, voters[1], v.ID, []int{1}); err != nil {
		t.Errorf("the same vote again: %v", err)
	}
	if _, err := f.act.Vote(ctx, voters[1], v.ID, []int{2}); !errors.Is(err, polls.ErrVoted) {
		t.Errorf("another vote after it: %v, want ErrVoted", err)
	}
	check("after a vote again")
}
