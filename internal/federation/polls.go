package federation

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"socialstream/internal/activities"
	"socialstream/internal/derrors"
	"socialstream/internal/outbox"
	"socialstream/internal/polls"
	"socialstream/internal/queue"
)

// Polls across servers, as Mastodon federates them. A poll is a
// Question: its options are Notes named by their titles under oneOf
// (one choice) or anyOf (several), each with the count of its votes
// (replies.totalItems), and it says its endTime, closed once it ended,
// and votersCount.
//
//   - A Question of another server's is taken as a Note is, its post
//     carrying the poll (polls.Elsewhere) with its counts there; its
//     Updates bring the counts (activities.Recount).
//   - A vote of a person here in it is sent to its server (outbox's
//     VoteJob): a Create of a Note named by each option chosen, in reply
//     to the Question, to its author alone.
//   - A vote of a person of another server in a poll here is such a
//     Note: it counts as their vote (activities.VoteElsewhere), and makes
//     no post.

// pollOption is one of a Question's options.
type pollOption struct {
	Type    string `json:"type"`
	Name    string `json:"name"`
	Replies struct {
		TotalItems int64 `json:"totalItems"`
	} `json:"replies"`
}

// questionPoll is the poll of a Question (nil when it is none the
// service keeps).
func questionPoll(n note) *polls.Poll {
	opts, multiple := n.OneOf, false
	if len(opts) == 0 {
		opts, multiple = n.AnyOf, true
	}
	end, err := time.Parse(time.RFC3339, n.EndTime)
	if err != nil {
		if end, err = time.Parse(time.RFC3339, n.Closed); err != nil {
			return nil
		}
	}
	names := make([]string, len(opts))
	counts := make([]int64, len(opts))
	var voters int64
	for i, o := range opts {
		names[i], counts[i] = o.Name, o.Replies.TotalItems
		voters = max(voters, counts[i]) // a poll of one choice: its voters are its votes
	}
	if !multiple {
		voters = 0
		for _, c := range counts {
			voters += c
		}
	}
	if n.VotersCount != nil {
		voters = *n.VotersCount
	}
	p, ok := polls.Elsewhere(names, multiple, end, counts, voters)
	if !ok {
		return nil
	}
	return p
}

// voteFor reports whether a Note is a vote in a poll here, and its post:
// named by an option, with no text, in reply to a post here.
func (s *Service) voteFor(n note) (string, bool) {
	if n.Type != "Note" || n.Name == "" || strings.TrimSpace(plainText(n.Content)) != "" {
		return "", false
	}
	post := s.localNote(ref(n.InReplyTo))
	return post, post != ""
}

// voted takes a vote of actor's in the poll of post (a Note of theirs
// named by the option they chose).
func (s *Service) voted(ctx context.Context, actor Actor, n note, post string) (string, error) {
	counted, err := s.activities.VoteElsewhere(ctx, actor.UserID, post, n.Name)
	var de *derrors.Error
	switch {
	case errors.Is(err, activities.ErrNoSuchActivity), errors.Is(err, polls.ErrNoPoll):
		return "", errNotOurs // not there, hidden from them, or no poll
	case errors.As(err, &de) && errors.Is(err, derrors.InvalidArgument):
		return "refused vote: " + de.Message, nil // an option it does not have, a poll that ended: taken, and dropped
	case err != nil:
		return "", err
	case !counted:
		return "vote taken before", nil
	}
	return "vote counted in " + post, nil
}

// recounted keeps the counts of a Question's Update on its post here.
func (s *Service) recounted(ctx context.Context, actor Actor, n note, post string) error {
	if n.Type != "Question" {
		return nil
	}
	p := questionPoll(n)
	if p == nil {
		return nil
	}
	return s.activities.Recount(ctx, actor.UserID, post, p.Counts, p.Voters)
}

// Vote runs a vote job: the Notes of a person here's choices in a poll
// of another server's, once their vote shows, to its author's inbox.
func (s *Service) Vote(ctx context.Context, t outbox.VoteTask) (string, error) {
	actor, remote, err := s.ActorOf(ctx, t.Author)
	if err != nil || !remote {
		return "not another server's", err
	}
	titles, err := s.activities.BallotOf(ctx, t.User, t.Activity)
	if err != nil {
		return "", err
	}
	if len(titles) == 0 {
		if s.now().Sub(time.Unix(t.At, 0)) < queue.GiveUpOf(s.q) {
			return "", queue.NotYet("the vote")
		}
		return "never voted", nil
	}
	voter := s.cfg.Actor(t.User)
	for i, title := range titles {
		id := fmt.Sprintf("%s#votes/%s/%d", voter, t.Activity, i)
		create := map[string]any{"@context": "https://www.w3.org/ns/activitystreams", "id": id + "/activity", "type": "Create",
			"actor": voter, "to": []string{actor.URI},
			"object": map[string]any{"id": id, "type": "Note", "name": title, "attributedTo": voter, "inReplyTo": t.Note,
				"to": []string{actor.URI}}}
		if err := s.Send(ctx, t.User, id+"/"+t.Ring, create, actor.DeliveryInbox()); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("%d choices sent", len(titles)), nil
}
