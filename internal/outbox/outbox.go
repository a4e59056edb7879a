// Package outbox holds the jobs that tell other servers what people here
// did: a follow and its undoing, a decision on a remote person's
// request, a block, a post, its edits and its deletion, a like, a
// report, a profile's change. The domain services
// that make those changes enqueue them (each ahead of the commit it
// follows, through queue.Ahead) with Jobs, which they are built with;
// package federation runs them. So the domain never calls federation,
// and federation is built last, with everything its inbox acts through:
// dependencies point one way at run time as in the import graph. A
// deployment that does not federate builds no Jobs, and its services
// enqueue none.
package outbox

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"socialstream/internal/ids"
	"socialstream/internal/queue"
)

// FollowJob sends a Follow or its Undo.
var FollowJob = queue.Job[FollowTask]{Name: "federate-follow", Queue: queue.Federation,
	TaskName: func(t FollowTask) string { return "follow-" + t.Follower + "-" + t.Followee + "-" + t.Ring }}

// FollowTask is the body of a follow job.
type FollowTask struct {
	Follower string `json:"follower"` // here
	Followee string `json:"followee"` // of another server
	Undo     bool   `json:"undo,omitempty"`
	At       int64  `json:"at"`
	Ring     string `json:"ring"`
}

// AnswerJob tells a remote requester of a locked person's decision.
var AnswerJob = queue.Job[AnswerTask]{Name: "federate-answer", Queue: queue.Federation,
	TaskName: func(t AnswerTask) string { return "answer-" + t.Requester + "-" + t.Target + "-" + t.Ring }}

// AnswerTask is the body of an answer job.
type AnswerTask struct {
	Requester string `json:"requester"`
	Target    string `json:"target"`
	Approved  bool   `json:"approved"`
	At        int64  `json:"at"`   // when it was enqueued (Unix seconds)
	Ring      string `json:"ring"` // names the decision
}

// BlockJob sends a Block of a remote person, or its Undo.
var BlockJob = queue.Job[BlockTask]{Name: "federate-block", Queue: queue.Federation,
	TaskName: func(t BlockTask) string {
		return fmt.Sprintf("block-%s-%s-%t-%d", t.Blocker, t.Blocked, t.Undo, t.At)
	}}

// BlockTask is the body of a block job.
type BlockTask struct {
	Blocker string `json:"blocker"` // here
	Blocked string `json:"blocked"` // of another server
	Undo    bool   `json:"undo,omitempty"`
	At      int64  `json:"at"` // Unix microseconds
}

// PublishJob sends a post to the servers of its author's remote
// followers (and of what it names).
var PublishJob = queue.Job[PublishTask]{Name: "federate-post", Queue: queue.Federation,
	TaskName: func(t PublishTask) string {
		if t.Edit > 0 {
			return fmt.Sprintf("publish-%s-edit-%d", t.Activity, t.Edit)
		}
		return "publish-" + t.Activity
	}}

// PublishTask is the body of a publish job.
type PublishTask struct {
	Author   string `json:"author"`
	Activity string `json:"activity"`
	At       int64  `json:"at"`
	// Edit, when set, is the edit whose commit the job waits for, to
	// send the Update of the post's Note rather than its Create.
	Edit int `json:"edit,omitempty"`
	// Plain: the post names nothing of another server's (no one it
	// mentions, nothing it shares or answers), so only its author's
	// followers there may want it: with none, the job ends at once.
	Plain bool `json:"plain,omitempty"`
}

// UnpublishJob sends the Delete of a deleted post's Note (for a repost,
// the Undo of its Announce) to the servers that had it.
var UnpublishJob = queue.Job[UnpublishTask]{Name: "federate-unpublish", Queue: queue.Federation,
	TaskName: func(t UnpublishTask) string { return "unpublish-" + t.Activity }}

// UnpublishTask is the body of an unpublish job.
type UnpublishTask struct {
	Author   string `json:"author"`
	Activity string `json:"activity"`
	Shared   string `json:"shared,omitempty"` // what a repost shared
}

// LikeJob sends a Like of a post of another server's, or its Undo.
var LikeJob = queue.Job[LikeTask]{Name: "federate-like", Queue: queue.Federation,
	TaskName: func(t LikeTask) string {
		return "like-" + t.User + "-" + t.Activity + "-" + t.Ring
	}}

// LikeTask is the body of a like job.
type LikeTask struct {
	User     string `json:"user"`     // here
	Activity string `json:"activity"` // the post here of the Note
	Author   string `json:"author"`   // of another server
	Note     string `json:"note"`
	Undo     bool   `json:"undo,omitempty"`
	At       int64  `json:"at"`
	Ring     string `json:"ring"`
}

// VoteJob sends a vote of a person here in a poll of another server's
// to its server: a Note of each choice, named by its option.
var VoteJob = queue.Job[VoteTask]{Name: "federate-vote", Queue: queue.Federation,
	TaskName: func(t VoteTask) string { return "vote-" + t.User + "-" + t.Activity + "-" + t.Ring }}

// VoteTask is the body of a vote job: the voter here, the post here of
// the Question, its author there, and the Question's address.
type VoteTask struct {
	User     string `json:"user"`
	Activity string `json:"activity"`
	Author   string `json:"author"`
	Note     string `json:"note"`
	At       int64  `json:"at"`
	Ring     string `json:"ring"`
}

// FlagJob sends a report to the reported person's server.
var FlagJob = queue.Job[FlagTask]{Name: "federate-flag", Queue: queue.Federation,
	TaskName: func(t FlagTask) string { return "flag-" + t.Report }}

// FlagTask is the body of a flag job.
type FlagTask struct {
	Report     string   `json:"report"`
	Account    string   `json:"account"` // of another server
	Activities []string `json:"activities,omitempty"`
	Comment    string   `json:"comment,omitempty"`
	At         int64    `json:"at"`
}

// ProfileJob tells other servers that a person here changed what they
// show of themselves (their name, note, fields, avatar, header, lock):
// enqueued ahead of the change's commit, it sends the Update of their
// actor once the change shows (accounts' User.Changed) to the servers
// that follow them and those they follow.
var ProfileJob = queue.Job[ProfileTask]{Name: "federate-profile", Queue: queue.Federation,
	TaskName: func(t ProfileTask) string { return fmt.Sprintf("profile-%s-%d", t.User, t.At) }}

// ProfileTask is the body of a ProfileJob: the change of user's at (µs).
type ProfileTask struct {
	User string `json:"user"`
	At   int64  `json:"at"`
}

// Jobs makes the jobs, for the services that enqueue them.
type Jobs struct {
	q   queue.Queue
	gen *ids.Generator
	now func() time.Time
}

// New returns the Jobs that enqueue on q, named by gen.
func New(q queue.Queue, gen *ids.Generator) *Jobs {
	return &Jobs{q: q, gen: gen, now: time.Now}
}

// Asking is the job that sends follower's Follow of followee, a remote
// person (every follow of one is a request their server answers).
func (j *Jobs) Asking(follower, followee string) queue.Pending {
	return j.follow(FollowTask{Follower: follower, Followee: followee})
}

// Ending is the job that sends the Undo of follower's Follow of
// followee, a remote person.
func (j *Jobs) Ending(follower, followee string) queue.Pending {
	return j.follow(FollowTask{Follower: follower, Followee: followee, Undo: true})
}

func (j *Jobs) follow(t FollowTask) queue.Pending {
	t.At, t.Ring = j.now().Unix(), j.gen.NextString()
	name := "follow/"
	if t.Undo {
		name = "unfollow/"
	}
	return queue.PendingFunc(name+t.Follower+"/"+t.Followee, func(ctx context.Context) error {
		return FollowJob.Enqueue(ctx, j.q, t, 0)
	})
}

// Answering is the job that tells requester of target's decision on
// their request; it finds out itself whether the requester is remote.
func (j *Jobs) Answering(requester, target string, approved bool) queue.Pending {
	t := AnswerTask{Requester: requester, Target: target, Approved: approved, At: j.now().Unix(), Ring: j.gen.NextString()}
	return queue.PendingFunc("answer/"+requester+"/"+target+"/"+strconv.FormatBool(approved), func(ctx context.Context) error {
		return AnswerJob.Enqueue(ctx, j.q, t, 0)
	})
}

// Blocking is the job that sends blocker's Block of blocked, a remote
// person (undo: its Undo).
func (j *Jobs) Blocking(blocker, blocked string, undo bool) queue.Pending {
	return BlockJob.Pending(j.q, BlockTask{Blocker: blocker, Blocked: blocked, Undo: undo, At: j.now().UnixMicro()}, 0)
}

// Publishing is the job that sends author's post id once it is
// committed; named says the post names something of another server's
// (someone it mentions, what it shares or answers), else only the
// author's followers there may want it.
func (j *Jobs) Publishing(author, id string, named bool) queue.Pending {
	return PublishJob.Pending(j.q, PublishTask{Author: author, Activity: id, At: j.now().Unix(), Plain: !named}, 0)
}

// Republishing is the job that sends author's post id again, as its edit
// number edit made it.
func (j *Jobs) Republishing(author, id string, edit int, named bool) queue.Pending {
	return PublishJob.Pending(j.q, PublishTask{Author: author, Activity: id, At: j.now().Unix(), Edit: edit, Plain: !named}, 0)
}

// Unpublished enqueues the job that tells the servers that had author's
// post id that it is deleted (a repost of shared: undone); the cleanup of
// the post runs it once the post is gone.
func (j *Jobs) Unpublished(ctx context.Context, author, id, shared string) error {
	return UnpublishJob.Enqueue(ctx, j.q, UnpublishTask{Author: author, Activity: id, Shared: shared}, 0)
}

// Liking is the job that tells the server of a post of another's (note,
// by author) of user's like of it, or its undoing.
func (j *Jobs) Liking(user, activity, author, note string, undo bool) queue.Pending {
	t := LikeTask{User: user, Activity: activity, Author: author, Note: note, Undo: undo, At: j.now().Unix(), Ring: j.gen.NextString()}
	return queue.PendingFunc("like/"+user+"/"+activity, func(ctx context.Context) error { return LikeJob.Enqueue(ctx, j.q, t, 0) })
}

// Voting is the job that sends user's vote in the poll of a post of
// another server's (note, by author) to its server, once it shows.
func (j *Jobs) Voting(user, activity, author, note string) queue.Pending {
	t := VoteTask{User: user, Activity: activity, Author: author, Note: note, At: j.now().Unix(), Ring: j.gen.NextString()}
	return queue.PendingFunc("vote/"+user+"/"+activity, func(ctx context.Context) error { return VoteJob.Enqueue(ctx, j.q, t, 0) })
}

// Forwarding is the job that sends report, of account (a remote person),
// to their server.
func (j *Jobs) Forwarding(report, account string, activityIDs []string, comment string) queue.Pending {
	t := FlagTask{Report: report, Account: account, Activities: activityIDs, Comment: comment, At: j.now().Unix()}
	return FlagJob.Pending(j.q, t, 0)
}

// Profiled is the job that tells other servers of user's change of
// their profile or lock made at (µs).
func (j *Jobs) Profiled(user string, at int64) queue.Pending {
	return ProfileJob.Pending(j.q, ProfileTask{User: user, At: at}, 0)
}
