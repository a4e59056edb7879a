package accounts

import (
	"fmt"

	"socialstream/internal/queue"
)

// EraseJob runs the erasure of a deleted account, a step at a time
// (package lifecycle runs it). It is defined here, below everything that
// removes an account (a person's own deletion, a moderator's, another
// server's word of a remote person's), so that each enqueues it through
// Remove without calling the erasure's owner.
var EraseJob = queue.Job[EraseTask]{Name: "erase", Queue: queue.Cleanup, TaskName: EraseTask.name}

// EraseTask is the body of one step of an erasure.
type EraseTask struct {
	UserID string `json:"userId"`
	At     int64  `json:"at"` // when the deletion was asked for, µs
	Phase  int    `json:"phase"`
	Step   int    `json:"step"`
}

func (t EraseTask) name() string { return fmt.Sprintf("erase-%s-%d-%d", t.UserID, t.At, t.Step) }
