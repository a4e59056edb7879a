package activities

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"socialstream/internal/cards"
	"socialstream/internal/ids"
)

// A card job whose page gave no answer is tried again for cards.RetryFor
// from the post, or from the edit that set its link, and then ends with
// no card; any other failure is always tried again.
func TestDecideUnanswered(t *testing.T) {
	posted := time.Unix(1_800_000_000, 0)
	seq := ids.First(posted)
	noAnswer := fmt.Errorf("cards.Of: %w", cards.ErrNoAnswer)
	other := errors.New("the Datastore is down")
	edited := posted.Add(time.Hour)
	for _, c := range []struct {
		name string
		task CardTask
		now  time.Time
		err  error
		want string
	}{
		{name: "no answer, within the time", task: CardTask{At: posted.UnixMicro()}, now: posted.Add(cards.RetryFor - time.Second), err: noAnswer},
		{name: "no answer, past it", task: CardTask{At: posted.UnixMicro()}, now: posted.Add(cards.RetryFor), want: CardUnanswered},
		{name: "no answer, an edit's job within it", task: CardTask{Edit: 1, At: edited.UnixMicro()}, now: edited.Add(time.Minute), err: noAnswer},
		{name: "no answer, a task that gives no time, from the post's", task: CardTask{}, now: posted.Add(cards.RetryFor + time.Second), want: CardUnanswered},
		{name: "no answer, a task that gives no time, within it", task: CardTask{}, now: posted.Add(time.Second), err: noAnswer},
		{name: "another failure, long past", task: CardTask{At: posted.UnixMicro()}, now: posted.Add(24 * time.Hour), err: other},
	} {
		in := c.err
		if in == nil {
			in = noAnswer
		}
		got, err := unanswered(c.task, seq, c.now, in)
		if got != c.want || !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
			t.Errorf("%s: %q, %v; want %q, %v", c.name, got, err, c.want, c.err)
		}
	}
}
