package federation

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"socialstream/internal/accounts"
	"socialstream/internal/blocks"
	"socialstream/internal/outbox"
	"socialstream/internal/queue"
)

// Blocks across servers. A person here who blocks a person of another
// server blocks them as anyone (package graph: the follows between them
// end, and the policy keeps each from the other), and the block's commit
// enqueues, ahead of it, the job that sends the Block to their server
// (Blocking), which ends the follows there too; an unblock sends the
// Undo of it. A remote person's Block of a person here is their block of
// them here, and its Undo their unblock.

// blockID is the id of blocker's Block of the remote person blocked.
// One id for every block of one by the other: an Undo names it whole.
func (s *Service) blockID(blocker, blocked string) string {
	sum := sha256.Sum256([]byte(blocked))
	return s.cfg.Actor(blocker) + "#blocks/" + hex.EncodeToString(sum[:12])
}

// Block runs a block job: once the block shows (a Block), or is gone (an
// Undo), it sends the activity to the blocked person's inbox.
func (s *Service) Block(ctx context.Context, t outbox.BlockTask) (string, error) {
	actor, remote, err := s.ActorOf(ctx, t.Blocked)
	if err != nil || !remote {
		return "not remote", err
	}
	l := s.db.Lookup()
	between := blocks.ReadBetween(l, t.Blocker, t.Blocked)
	if err := l.Run(ctx); err != nil {
		return "", err
	}
	if between.First() == t.Undo { // not yet, or no longer
		if s.now().Sub(time.UnixMicro(t.At)) < queue.GiveUpOf(s.q) {
			return "", queue.NotYet("the block's change")
		}
		return "changed back since: not sent", nil
	}
	id := s.blockID(t.Blocker, t.Blocked)
	block := map[string]any{"id": id, "type": "Block", "actor": s.cfg.Actor(t.Blocker), "object": actor.URI}
	if !t.Undo {
		// The delivery is named for this job: a block again, after an
		// unblock, is delivered again, though its id is the same.
		block["@context"] = "https://www.w3.org/ns/activitystreams"
		return "block sent", s.Send(ctx, t.Blocker, fmt.Sprintf("%s@%d", id, t.At), block, actor.Inbox)
	}
	undo := id + "/undo/" + fmt.Sprint(t.At)
	return "undo sent", s.Send(ctx, t.Blocker, undo, map[string]any{
		"@context": "https://www.w3.org/ns/activitystreams", "id": undo, "type": "Undo",
		"actor": s.cfg.Actor(t.Blocker), "object": block,
	}, actor.Inbox)
}

// blockedBy takes a remote person's Block (undo: the Undo of one) of a
// person here.
func (s *Service) blockedBy(ctx context.Context, actor Actor, object json.RawMessage, undo bool) (string, error) {
	target := s.local(ref(object))
	if target == "" {
		return "", errNotOurs
	}
	if undo {
		if err := s.graph.Unblock(ctx, actor.UserID, target); err != nil {
			return "", err
		}
		return "unblocked", nil
	}
	if _, err := s.graph.Block(ctx, actor.UserID, target); errors.Is(err, accounts.ErrNoSuchPerson) {
		return "", errNotOurs
	} else if err != nil {
		return "", err
	}
	return "blocked", nil
}
