// Package jobs routes the service's jobs. Each owner defines its kinds
// of job (queue.Job: name, queue, body, task name) and the operation that
// runs one; this package serves each at the path its definition names:
// it decodes the task, runs it with its attempt in the context, logs what
// it did, and answers Cloud Tasks as it expects (2xx done, or never to
// be done: a body that does not read; 5xx to be tried again). The API
// mounts the routes behind the guard that lets only the queues in.
package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"socialstream/internal/accounts"
	"socialstream/internal/activities"
	"socialstream/internal/derrors"
	"socialstream/internal/federation"
	"socialstream/internal/graph"
	"socialstream/internal/lifecycle"
	"socialstream/internal/media"
	"socialstream/internal/moderation"
	"socialstream/internal/notifications"
	"socialstream/internal/outbox"
	"socialstream/internal/polls"
	"socialstream/internal/push"
	"socialstream/internal/queue"
	"socialstream/internal/rebuild"
	"socialstream/internal/scheduled"
)

// Runners are the services that run the jobs. Federation is nil when the
// deployment does not federate: its jobs are then done at once, with
// nothing to do.
type Runners struct {
	Activities    *activities.Service
	Rebuild       *rebuild.Service
	Notifications *notifications.Service
	Lifecycle     *lifecycle.Service
	Moderation    *moderation.Service
	Graph         *graph.Service
	Push          *push.Service
	Media         *media.Service
	Federation    *federation.Service
	Polls         *polls.Closer
	Scheduled     *scheduled.Service
}

// Router serves every job.
type Router struct {
	run Runners
	log *slog.Logger
}

// New returns the router of the jobs run by run, logging to log.
func New(run Runners, log *slog.Logger) (*Router, error) {
	if run.Activities == nil || run.Rebuild == nil || run.Notifications == nil || run.Lifecycle == nil || run.Moderation == nil ||
		run.Graph == nil || run.Push == nil || run.Media == nil || run.Polls == nil || run.Scheduled == nil || log == nil {
		return nil, errors.New("jobs.New: nil dependency")
	}
	return &Router{run: run, log: log}, nil
}

// Route is a job's handler at the job's path.
type Route struct {
	Path    string
	Handler gin.HandlerFunc
}

// serve returns the route of job j: it decodes the task's body and hands
// it to run, which does the job and says what it did for the log line.
func serve[T any](r *Router, j queue.Job[T], run func(context.Context, T) ([]any, error)) Route {
	return Route{j.Path(), func(c *gin.Context) {
		var t T
		if !r.readTask(c, &t) {
			return
		}
		retries, _ := strconv.Atoi(c.GetHeader("X-AppEngine-TaskRetryCount"))
		ctx := queue.WithAttempt(c.Request.Context(), c.GetHeader("X-AppEngine-QueueName"), retries)
		attrs, err := run(ctx, t)
		r.finish(c, err, j.Name, attrs...)
	}}
}

// federated is run for a job of federation's: done at once, with
// nothing to do, when the deployment does not federate.
func federated[T any](r *Router, run func(context.Context, T) ([]any, error)) func(context.Context, T) ([]any, error) {
	return func(ctx context.Context, t T) ([]any, error) {
		if r.run.Federation == nil {
			return []any{"outcome", "federation off"}, nil
		}
		return run(ctx, t)
	}
}

// told is the route of a job of federation's whose run answers what came
// of it: the task's attrs (of t), and that outcome, logged.
func told[T any](r *Router, j queue.Job[T], run func(*federation.Service, context.Context, T) (string, error), attrs func(t T) []any) Route {
	return serve(r, j, federated(r, func(ctx context.Context, t T) ([]any, error) {
		outcome, err := run(r.run.Federation, ctx, t)
		return append(attrs(t), "outcome", outcome), err
	}))
}

// Routes are the routes of every job: each owner's definition, and what
// runs it.
func (r *Router) Routes() []Route {
	return []Route{
		// A celebrity's post kept among their newest.
		serve(r, activities.KeepJob, func(ctx context.Context, t activities.KeepTask) ([]any, error) {
			skipped, err := r.run.Activities.Keep(ctx, t)
			return []any{"activityId", t.ActivityID, "skipped", skipped}, err
		}),
		serve(r, activities.FanoutJob, func(ctx context.Context, t activities.FanoutTask) ([]any, error) {
			res, err := r.run.Activities.Fanout(ctx, t)
			return []any{"activityId", t.ActivityID, "chunk", t.Chunk,
				"chunksEnqueued", res.Enqueued, "idsWritten", res.Written, "skipped", res.Skipped}, err
		}),
		// A tagged activity to its tags' followers' home feeds, or out of
		// those of a tag an edit dropped.
		serve(r, activities.TagJob, func(ctx context.Context, t activities.TagTask) ([]any, error) {
			res, err := r.run.Activities.TagJob(ctx, t)
			return []any{"activityId", t.ActivityID, "edit", t.Edit, "tag", t.Tag, "page", t.Page,
				"enqueued", res.Enqueued, "idsWritten", res.Written, "pagesRemoved", res.Removed, "skipped", res.Skipped}, err
		}),
		serve(r, rebuild.RunJob, func(ctx context.Context, j rebuild.Job) ([]any, error) {
			res, err := r.run.Rebuild.Run(ctx, j)
			return []any{"kind", j.Kind, "owner", j.Owner, "follower", j.Follower, "group", j.Group, "gen", j.Gen, "step", j.Step,
				"activitiesScanned", res.Scanned, "activitiesChanged", len(res.Changed), "changedIds", res.Changed,
				"stopped", res.Stopped, "backfillNext", res.NextStep}, err
		}),
		// What a deleted activity leaves: its remaining audience chunks,
		// likes, comments, and the notifications that point at it.
		serve(r, activities.CleanupJob, func(ctx context.Context, t activities.CleanupTask) ([]any, error) {
			gone, deleted, err := r.run.Activities.Cleanup(ctx, t)
			return []any{"activityId", t.ActivityID, "gone", gone, "deleted", deleted}, err
		}),
		serve(r, notifications.Job, func(ctx context.Context, e notifications.Event) ([]any, error) {
			made, err := r.run.Notifications.Run(ctx, e)
			return []any{"type", e.Type, "event", e.ID, "actor", e.ActorID, "recipients", len(e.Recipients), "made", made}, err
		}),
		// The audience chunks past the home feed's edge.
		serve(r, activities.TrimJob, func(ctx context.Context, _ activities.TrimTask) ([]any, error) {
			n, err := r.run.Activities.Trim(ctx)
			return []any{"deleted", n}, err
		}),
		// One step of the erasure of a deleted account.
		serve(r, accounts.EraseJob, func(ctx context.Context, t accounts.EraseTask) ([]any, error) {
			res, err := r.run.Lifecycle.Erase(ctx, t)
			return []any{"userId", t.UserID, "phase", t.Phase, "step", t.Step,
				"erased", res.Erased, "stopped", res.Stopped, "next", res.Next, "done", res.Done}, err
		}),
		// The end of a suspension's grace: the account goes, unless the
		// suspension was lifted.
		serve(r, moderation.ExpiryJob, func(ctx context.Context, t moderation.ExpiryTask) ([]any, error) {
			ended, err := r.run.Lifecycle.EndSuspension(ctx, t)
			return []any{"userId", t.UserID, "at", t.At, "ended", ended}, err
		}),
		// A poll's end, told to its voters and its author.
		serve(r, polls.CloseJob, func(ctx context.Context, t polls.CloseTask) ([]any, error) {
			told, err := r.run.Polls.Close(ctx, t)
			return []any{"activityId", t.ActivityID, "pollId", t.PollID, "told", told}, err
		}),
		// The preview card of a post's link, copied onto it.
		serve(r, activities.CardJob, func(ctx context.Context, t activities.CardTask) ([]any, error) {
			outcome, err := r.run.Activities.Preview(ctx, t)
			return []any{"activityId", t.ActivityID, "edit", t.Edit, "outcome", outcome}, err
		}),
		// A direct post, added to its people's conversation.
		serve(r, activities.ConversationJob, func(ctx context.Context, t activities.ConversationTask) ([]any, error) {
			outcome, err := r.run.Activities.Converse(ctx, t)
			return []any{"activityId", t.ActivityID, "outcome", outcome}, err
		}),
		// What a post makes trend: its uses, marked.
		serve(r, activities.TrendJob, func(ctx context.Context, t activities.TrendTask) ([]any, error) {
			outcome, err := r.run.Activities.Trend(ctx, t)
			return []any{"activityId", t.ActivityID, "edit", t.Edit, "outcome", outcome}, err
		}),
		// A scheduled post, published at its time.
		serve(r, scheduled.PublishJob, func(ctx context.Context, t scheduled.PublishTask) ([]any, error) {
			outcome, err := r.run.Scheduled.Publish(ctx, t)
			return []any{"id", t.ID, "user", t.User, "at", t.At, "outcome", outcome}, err
		}),
		// The notifications of a person whose standing changed, weighed
		// again.
		serve(r, moderation.WithholdJob, func(ctx context.Context, t moderation.WithholdTask) ([]any, error) {
			stopped, err := r.run.Moderation.Withhold(ctx, t)
			return []any{"userId", t.UserID, "on", t.On, "kind", t.Kind, "step", t.Step, "stopped", stopped}, err
		}),
		// A batch of the follow requests an unlocked person had pending.
		serve(r, graph.UnlockJob, func(ctx context.Context, t graph.UnlockTask) ([]any, error) {
			n, err := r.run.Graph.Unlocked(ctx, t)
			return []any{"user", t.User, "step", t.Step, "approved", n}, err
		}),
		// A person made a celebrity, or the follows of a chunk of theirs
		// marked.
		serve(r, graph.CelebrityJob, func(ctx context.Context, t graph.CelebrityTask) ([]any, error) {
			n, err := r.run.Graph.Celebrate(ctx, t)
			return []any{"user", t.User, "chunk", t.Chunk, "marked", n}, err
		}),
		// The follows between a person and a domain they block, ended.
		serve(r, graph.DomainCutJob, func(ctx context.Context, t graph.DomainCutTask) ([]any, error) {
			n, err := r.run.Graph.DomainCut(ctx, t)
			return []any{"user", t.User, "domain", t.Domain, "step", t.Step, "ended", n}, err
		}),
		// One notification to one device's push subscription.
		serve(r, push.DeliverJob, func(ctx context.Context, d push.Delivery) ([]any, error) {
			outcome, err := r.run.Push.Deliver(ctx, d)
			return []any{"event", d.Event, "type", d.Type, "user", d.User, "outcome", outcome}, err
		}),
		serve(r, media.Job, func(ctx context.Context, t media.Task) ([]any, error) {
			did, err := r.run.Media.Run(ctx, t)
			return []any{"op", t.Op, "id", t.ID, "did", did}, err
		}),
		// One activity to one inbox of another server.
		told(r, federation.DeliverJob, (*federation.Service).Deliver, func(d federation.Delivery) []any {
			return []any{"from", d.From, "inbox", d.Inbox, "activity", d.ID}
		}),
		// One activity to the inboxes of other servers, at once; those
		// that fail each tried again as a delivery of its own.
		told(r, federation.BatchJob, (*federation.Service).DeliverBatch, func(b federation.Batch) []any {
			return []any{"from", b.From, "inboxes", len(b.Inboxes), "activity", b.ID}
		}),
		// A Follow of a person of another server, or its Undo.
		told(r, outbox.FollowJob, (*federation.Service).Follow, func(t outbox.FollowTask) []any {
			return []any{"follower", t.Follower, "followee", t.Followee, "undo", t.Undo}
		}),
		// A remote person's delivery inbox, changed, written onto their
		// Follows of people here.
		told(r, federation.InboxesJob, (*federation.Service).CopyInboxes, func(t federation.InboxesTask) []any {
			return []any{"uri", t.URI, "fetched", t.Fetched}
		}),
		// A post sent to the servers of its author's remote followers.
		told(r, outbox.PublishJob, (*federation.Service).Publish, func(t outbox.PublishTask) []any {
			return []any{"author", t.Author, "activity", t.Activity}
		}),
		// A favourite of a post of another server's, or its undoing.
		told(r, outbox.LikeJob, (*federation.Service).Like, func(t outbox.LikeTask) []any {
			return []any{"user", t.User, "activity", t.Activity, "undo", t.Undo}
		}),
		// A vote in a poll of another server's, sent to its server.
		told(r, outbox.VoteJob, (*federation.Service).Vote, func(t outbox.VoteTask) []any {
			return []any{"user", t.User, "activity", t.Activity}
		}),
		// A deleted person's key pair, erased once their farewell is sent.
		serve(r, federation.ForgetKeyJob, federated(r, func(ctx context.Context, t federation.ForgetKeyTask) ([]any, error) {
			return []any{"user", t.User}, r.run.Federation.ForgetKey(ctx, t)
		})),
		// A deleted post's Delete (or a repost's Undo) sent to the servers
		// that had it.
		serve(r, outbox.UnpublishJob, federated(r, func(ctx context.Context, t outbox.UnpublishTask) ([]any, error) {
			return []any{"author", t.Author, "activity", t.Activity}, r.run.Federation.Unpublish(ctx, t)
		})),
		// A report sent to the reported person's server.
		told(r, outbox.FlagJob, (*federation.Service).Flag, func(t outbox.FlagTask) []any {
			return []any{"report", t.Report, "account", t.Account}
		}),
		// A Block of a person of another server, or its Undo.
		told(r, outbox.BlockJob, (*federation.Service).Block, func(t outbox.BlockTask) []any {
			return []any{"blocker", t.Blocker, "blocked", t.Blocked, "undo", t.Undo}
		}),
		// A profile's change told to other servers.
		told(r, outbox.ProfileJob, (*federation.Service).SendProfile, func(t outbox.ProfileTask) []any {
			return []any{"user", t.User, "at", t.At}
		}),
		// A remote requester told of a locked person's decision.
		told(r, outbox.AnswerJob, (*federation.Service).Answer, func(t outbox.AnswerTask) []any {
			return []any{"requester", t.Requester, "target", t.Target, "approved", t.Approved}
		}),
	}
}

func (r *Router) readTask(c *gin.Context, dst any) bool {
	data, err := io.ReadAll(c.Request.Body)
	if err == nil {
		err = json.Unmarshal(data, dst)
	}
	if err != nil {
		r.log.ErrorContext(c.Request.Context(), "task dropped: malformed body", "path", c.Request.URL.Path,
			"task", c.GetHeader("X-AppEngine-TaskName"), "err", err)
		c.Status(http.StatusNoContent)
		return false
	}
	return true
}

func (r *Router) finish(c *gin.Context, err error, job string, attrs ...any) {
	ctx := c.Request.Context()
	attrs = append(attrs, "job", job, "task", c.GetHeader("X-AppEngine-TaskName"),
		"queue", c.GetHeader("X-AppEngine-QueueName"), "retryCount", c.GetHeader("X-AppEngine-TaskRetryCount"))
	if err != nil && ctx.Err() != nil {
		// The queue stopped waiting (its dispatch deadline) and will try
		// again: no one can fix that, and no one reads the answer.
		r.log.InfoContext(ctx, "task abandoned by its queue, which tries it again", append(attrs, "err", err)...)
		c.AbortWithStatus(derrors.StatusClientClosed)
		return
	}
	if err != nil {
		// A 500, which Cloud Tasks retries with the queue's backoff; a 503
		// would be taken for a system error and throttle the whole queue.
		retries, _ := strconv.Atoi(c.GetHeader("X-AppEngine-TaskRetryCount"))
		if queue.LastAttempt(c.GetHeader("X-AppEngine-QueueName"), retries) {
			r.log.ErrorContext(ctx, "task gave up: its queue's retry limit is reached, and what it would have done is not done", append(attrs, "err", err)...)
		} else {
			level := "error"
			if errors.Is(err, derrors.Unavailable) {
				level = "retry"
			}
			r.log.WarnContext(ctx, "task failed; the queue retries it", append(attrs, "err", err, "kind", level)...)
		}
		c.JSON(http.StatusInternalServerError, gin.H{"error": gin.H{"code": http.StatusInternalServerError, "message": "the job failed; its queue retries it"}})
		return
	}
	r.log.InfoContext(ctx, "task done", attrs...)
	c.Status(http.StatusNoContent)
}
