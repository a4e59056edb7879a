package wired_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"socialstream/internal/activities"
	"socialstream/internal/notifications"
	"socialstream/internal/polls"
	"socialstream/internal/queue"
	"socialstream/internal/store"
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
	voters := f.users(t, "voter", n)
	at(t, n, func(i int) error {
		choices := []int{i % 3}
		if i%4 == 0 {
			choices = []int{0, 2}
		}
		got, err := f.act.Vote(ctx, voters[i], v.ID, choices)
		if err == nil && (!got.Poll.Voted || len(got.Poll.OwnVotes) != len(choices)) {
			err = fmt.Errorf("%s's answer: %+v", voters[i], got.Poll)
		}
		return err
	})
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

	// One person voting twice at once, for different options: one vote
	// counts, the other is refused.
	late := f.user(t, "late")
	var voted, refused sync.Map
	at(t, 2, func(i int) error {
		_, err := f.act.Vote(ctx, late, v.ID, []int{i})
		switch {
		case err == nil:
			voted.Store(i, true)
		case errors.Is(err, polls.ErrVoted):
			refused.Store(i, true)
		default:
			return err
		}
		return nil
	})
	n1, r1 := 0, 0
	voted.Range(func(any, any) bool { n1++; return true })
	refused.Range(func(any, any) bool { r1++; return true })
	if n1 != 1 || r1 != 1 {
		t.Errorf("two votes of one person at once: %d counted, %d refused; want 1 and 1", n1, r1)
	}
	list, err := f.act.Get(ctx, author, author, "", []string{v.ID})
	if err != nil || list[0].Poll.VotersCount != n+1 || list[0].Poll.VotesCount != votes+1 {
		t.Errorf("after one person's two votes at once: %+v, %v", list, err)
	}
}

// A poll's end tells its voters and its author, once however often its
// job runs, and not before the end; a voter who blocked the author since
// is not told.
func TestPollEndTellsVotersAndAuthor(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	author, ann, ben := f.user(t, "author"), f.user(t, "ann"), f.user(t, "ben")
	v, _, err := f.act.Post(ctx, author, activities.PostInput{Title: "soon over",
		Poll: &polls.Input{Options: []string{"yes", "no"}, ExpiresIn: polls.MinExpiry}})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{ann, ben} {
		if _, err := f.act.Vote(ctx, u, v.ID, []int{0}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.graph.Block(ctx, ben, author); err != nil {
		t.Fatal(err)
	}
	task := polls.CloseTask{ActivityID: v.ID, PollID: v.ID, Author: author, Expires: time.Now().Add(time.Minute).UnixMicro()}
	if _, err := f.svc.Polls.Close(ctx, task); !errors.Is(err, queue.ErrNotYet) {
		t.Errorf("closing before the end: %v, want a retry", err)
	}
	task.Expires = time.Now().Add(-time.Second).UnixMicro()
	for i := range 2 {
		told, err := f.svc.Polls.Close(ctx, task)
		if want := []int{2, 0}[i]; err != nil || told != want {
			t.Errorf("closing, time %d: told %d, %v; want %d", i+1, told, err, want)
		}
	}
	for who, want := range map[string]int{author: 1, ann: 1, ben: 0} {
		list, _, _, err := f.svc.Notifications.List(ctx, who, notifications.Query{Page: store.PageRequest{Count: 20}, Types: []string{notifications.Poll}})
		if err != nil || len(list) != want || want == 1 && list[0].ActivityID != v.ID {
			t.Errorf("%s's poll notifications: %+v, %v; want %d", who, list, err, want)
		}
	}
}

// An edit to other options starts the poll anew: the old votes count no
// more (the voter may vote again), the old poll's end tells no one, and
// the new poll's end tells its author.
func TestPollEditStartsAnew(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	author, ann := f.user(t, "author"), f.user(t, "ann")
	v, _, err := f.act.Post(ctx, author, activities.PostInput{Title: "which?",
		Poll: &polls.Input{Options: []string{"a", "b"}, ExpiresIn: polls.MinExpiry}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.act.Vote(ctx, ann, v.ID, []int{0}); err != nil {
		t.Fatal(err)
	}
	title := "which, then?"
	e, err := f.act.Edit(ctx, author, v.ID, activities.EditInput{Title: &title, Poll: &polls.Input{Options: []string{"a", "c"}, ExpiresIn: polls.MinExpiry}})
	if err != nil || e.Poll == nil || e.Poll.VotesCount != 0 || e.Poll.Options[1].Title != "c" || e.Poll.ID == v.Poll.ID {
		t.Fatalf("the edited poll: %+v, %v", e.Poll, err)
	}
	again, err := f.act.Vote(ctx, ann, v.ID, []int{1})
	if err != nil || !again.Poll.Voted || again.Poll.VotesCount != 1 {
		t.Fatalf("ann's vote in the new poll: %+v, %v", again.Poll, err)
	}
	past := time.Now().Add(-time.Second).UnixMicro()
	for _, c := range []struct {
		poll string
		want int
	}{{v.Poll.ID, 0}, {e.Poll.ID, 2}} {
		told, err := f.svc.Polls.Close(ctx, polls.CloseTask{ActivityID: v.ID, PollID: c.poll, Author: author, Expires: past})
		if err != nil || told != c.want {
			t.Errorf("closing poll %s: told %d, %v; want %d", c.poll, told, err, c.want)
		}
	}
	// The post's cleanup takes every poll's counts and votes with it.
	if err := f.act.Delete(ctx, author, v.ID); err != nil {
		t.Fatal(err)
	}
	if n, err := (polls.Records{DB: f.db}).ForgetActivity(ctx, v.ID); err != nil || n != 2 {
		t.Errorf("the votes forgotten: %d, %v; want 2", n, err)
	}
}
