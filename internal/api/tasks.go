package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"socialstream/internal/accounts"
	"socialstream/internal/activities"
	"socialstream/internal/derrors"
	"socialstream/internal/federation"
	"socialstream/internal/graph"
	"socialstream/internal/media"
	"socialstream/internal/moderation"
	"socialstream/internal/notifications"
	"socialstream/internal/outbox"
	"socialstream/internal/push"
	"socialstream/internal/queue"
	"socialstream/internal/rebuild"
)

// Task handlers answer 2xx when the job is done or can never succeed (a
// malformed body: retrying would not help), and 5xx when Cloud Tasks should
// retry it.

// route is a job's handler at the job's path.
type route struct {
	path string
	h    gin.HandlerFunc
}

// serve returns the route of job j: it decodes the task's body and hands
// it to run, which does the job and says what it did for the log line.
func serve[T any](s *Server, j queue.Job[T], run func(context.Context, T) ([]any, error)) route {
	return route{j.Path(), func(c *gin.Context) {
		var t T
		if !s.readTask(c, &t) {
			return
		}
		retries, _ := strconv.Atoi(c.GetHeader("X-AppEngine-TaskRetryCount"))
		ctx := queue.WithAttempt(c.Request.Context(), c.GetHeader("X-AppEngine-QueueName"), retries)
		attrs, err := run(ctx, t)
		s.finishTask(c, err, j.Name, attrs...)
	}}
}

// jobs are the routes of every job: each owner's definition, and what
// runs it.
func (s *Server) jobs() []route {
	return []route{
		serve(s, activities.FanoutJob, func(ctx context.Context, t activities.FanoutTask) ([]any, error) {
			res, err := s.activities.Fanout(ctx, t)
			return []any{"activityId", t.ActivityID, "chunk", t.Chunk,
				"chunksEnqueued", res.Enqueued, "idsWritten", res.Written, "skipped", res.Skipped}, err
		}),
		// A tagged activity to its tags' followers' home feeds, or out of
		// those of a tag an edit dropped.
		serve(s, activities.TagJob, func(ctx context.Context, t activities.TagTask) ([]any, error) {
			res, err := s.activities.TagJob(ctx, t)
			return []any{"activityId", t.ActivityID, "edit", t.Edit, "tag", t.Tag, "page", t.Page,
				"enqueued", res.Enqueued, "idsWritten", res.Written, "pagesRemoved", res.Removed, "skipped", res.Skipped}, err
		}),
		serve(s, rebuild.RunJob, func(ctx context.Context, j rebuild.Job) ([]any, error) {
			res, err := s.rebuild.Run(ctx, j)
			return []any{"kind", j.Kind, "owner", j.Owner, "follower", j.Follower, "group", j.Group, "gen", j.Gen, "step", j.Step,
				"activitiesScanned", res.Scanned, "activitiesChanged", len(res.Changed), "changedIds", res.Changed,
				"stopped", res.Stopped, "backfillNext", res.NextStep}, err
		}),
		// What a deleted activity leaves: its remaining audience chunks,
		// likes, comments, and the notifications that point at it.
		serve(s, activities.CleanupJob, func(ctx context.Context, t activities.CleanupTask) ([]any, error) {
			gone, deleted, err := s.activities.Cleanup(ctx, t)
			return []any{"activityId", t.ActivityID, "gone", gone, "deleted", deleted}, err
		}),
		serve(s, notifications.Job, func(ctx context.Context, e notifications.Event) ([]any, error) {
			made, err := s.notifications.Run(ctx, e)
			return []any{"type", e.Type, "event", e.ID, "actor", e.ActorID, "recipients", len(e.Recipients), "made", made}, err
		}),
		// The audience chunks past the home feed's edge.
		serve(s, activities.TrimJob, func(ctx context.Context, _ activities.TrimTask) ([]any, error) {
			n, err := s.activities.Trim(ctx)
			return []any{"deleted", n}, err
		}),
		// One step of the erasure of a deleted account.
		serve(s, accounts.EraseJob, func(ctx context.Context, t accounts.EraseTask) ([]any, error) {
			res, err := s.lifecycle.Erase(ctx, t)
			return []any{"userId", t.UserID, "phase", t.Phase, "step", t.Step,
				"erased", res.Erased, "stopped", res.Stopped, "next", res.Next, "done", res.Done}, err
		}),
		// The end of a suspension's grace: the account goes, unless the
		// suspension was lifted.
		serve(s, moderation.ExpiryJob, func(ctx context.Context, t moderation.ExpiryTask) ([]any, error) {
			ended, err := s.lifecycle.EndSuspension(ctx, t)
			return []any{"userId", t.UserID, "at", t.At, "ended", ended}, err
		}),
		// The counts of a suspended person's likes and comments, in step
		// with the suspension.
		serve(s, moderation.WithholdJob, func(ctx context.Context, t moderation.WithholdTask) ([]any, error) {
			stopped, err := s.moderation.Withhold(ctx, t)
			return []any{"userId", t.UserID, "on", t.On, "kind", t.Kind, "step", t.Step, "stopped", stopped}, err
		}),
		// A batch of the follow requests an unlocked person had pending.
		serve(s, graph.UnlockJob, func(ctx context.Context, t graph.UnlockTask) ([]any, error) {
			n, err := s.graph.Unlocked(ctx, t)
			return []any{"user", t.User, "step", t.Step, "approved", n}, err
		}),
		// The follows between a person and a domain they block, ended.
		serve(s, graph.DomainCutJob, func(ctx context.Context, t graph.DomainCutTask) ([]any, error) {
			n, err := s.graph.DomainCut(ctx, t)
			return []any{"user", t.User, "domain", t.Domain, "step", t.Step, "ended", n}, err
		}),
		// One notification to one device's push subscription.
		serve(s, push.DeliverJob, func(ctx context.Context, d push.Delivery) ([]any, error) {
			outcome, err := s.push.Deliver(ctx, d)
			return []any{"event", d.Event, "type", d.Type, "user", d.User, "outcome", outcome}, err
		}),
		serve(s, media.Job, func(ctx context.Context, t media.Task) ([]any, error) {
			did, err := s.media.Run(ctx, t)
			return []any{"op", t.Op, "id", t.ID, "did", did}, err
		}),
		// One activity to one inbox of another server.
		serve(s, federation.DeliverJob, func(ctx context.Context, d federation.Delivery) ([]any, error) {
			if s.federation == nil {
				return []any{"outcome", "federation off"}, nil
			}
			outcome, err := s.federation.Deliver(ctx, d)
			return []any{"from", d.From, "inbox", d.Inbox, "activity", d.ID, "outcome", outcome}, err
		}),
		// A Follow of a person of another server, or its Undo.
		serve(s, outbox.FollowJob, func(ctx context.Context, t outbox.FollowTask) ([]any, error) {
			if s.federation == nil {
				return []any{"outcome", "federation off"}, nil
			}
			outcome, err := s.federation.Follow(ctx, t)
			return []any{"follower", t.Follower, "followee", t.Followee, "undo", t.Undo, "outcome", outcome}, err
		}),
		// A post sent to the servers of its author's remote followers.
		serve(s, outbox.PublishJob, func(ctx context.Context, t outbox.PublishTask) ([]any, error) {
			if s.federation == nil {
				return []any{"outcome", "federation off"}, nil
			}
			outcome, err := s.federation.Publish(ctx, t)
			return []any{"author", t.Author, "activity", t.Activity, "outcome", outcome}, err
		}),
		// A favourite of a post of another server's, or its undoing.
		serve(s, outbox.LikeJob, func(ctx context.Context, t outbox.LikeTask) ([]any, error) {
			if s.federation == nil {
				return []any{"outcome", "federation off"}, nil
			}
			outcome, err := s.federation.Like(ctx, t)
			return []any{"user", t.User, "activity", t.Activity, "undo", t.Undo, "outcome", outcome}, err
		}),
		// A deleted person's key pair, erased once their farewell is sent.
		serve(s, federation.ForgetKeyJob, func(ctx context.Context, t federation.ForgetKeyTask) ([]any, error) {
			if s.federation == nil {
				return []any{"outcome", "federation off"}, nil
			}
			return []any{"user", t.User}, s.federation.ForgetKey(ctx, t)
		}),
		// A deleted post's Delete (or a repost's Undo) sent to the servers
		// that had it.
		serve(s, outbox.UnpublishJob, func(ctx context.Context, t outbox.UnpublishTask) ([]any, error) {
			if s.federation == nil {
				return []any{"outcome", "federation off"}, nil
			}
			return []any{"author", t.Author, "activity", t.Activity}, s.federation.Unpublish(ctx, t)
		}),
		// A report sent to the reported person's server.
		serve(s, outbox.FlagJob, func(ctx context.Context, t outbox.FlagTask) ([]any, error) {
			if s.federation == nil {
				return []any{"outcome", "federation off"}, nil
			}
			outcome, err := s.federation.Flag(ctx, t)
			return []any{"report", t.Report, "account", t.Account, "outcome", outcome}, err
		}),
		// A Block of a person of another server, or its Undo.
		serve(s, outbox.BlockJob, func(ctx context.Context, t outbox.BlockTask) ([]any, error) {
			if s.federation == nil {
				return []any{"outcome", "federation off"}, nil
			}
			outcome, err := s.federation.Block(ctx, t)
			return []any{"blocker", t.Blocker, "blocked", t.Blocked, "undo", t.Undo, "outcome", outcome}, err
		}),
		// A profile's change told to other servers.
		serve(s, outbox.ProfileJob, func(ctx context.Context, t outbox.ProfileTask) ([]any, error) {
			if s.federation == nil {
				return []any{"outcome", "federation off"}, nil
			}
			outcome, err := s.federation.SendProfile(ctx, t)
			return []any{"user", t.User, "at", t.At, "outcome", outcome}, err
		}),
		// A remote requester told of a locked person's decision.
		serve(s, outbox.AnswerJob, func(ctx context.Context, t outbox.AnswerTask) ([]any, error) {
			if s.federation == nil {
				return []any{"outcome", "federation off"}, nil
			}
			outcome, err := s.federation.Answer(ctx, t)
			return []any{"requester", t.Requester, "target", t.Target, "approved", t.Approved, "outcome", outcome}, err
		}),
	}
}

func (s *Server) readTask(c *gin.Context, dst any) bool {
	data, err := io.ReadAll(c.Request.Body)
	if err == nil {
		err = json.Unmarshal(data, dst)
	}
	if err != nil {
		s.log.ErrorContext(c.Request.Context(), "task dropped: malformed body", "path", c.Request.URL.Path,
			"task", c.GetHeader("X-AppEngine-TaskName"), "err", err)
		c.Status(http.StatusNoContent)
		return false
	}
	return true
}

func (s *Server) finishTask(c *gin.Context, err error, job string, attrs ...any) {
	ctx := c.Request.Context()
	attrs = append(attrs, "job", job, "task", c.GetHeader("X-AppEngine-TaskName"),
		"queue", c.GetHeader("X-AppEngine-QueueName"), "retryCount", c.GetHeader("X-AppEngine-TaskRetryCount"))
	if err != nil && ctx.Err() != nil {
		// The queue stopped waiting (its dispatch deadline) and will try
		// again: no one can fix that, and no one reads the answer.
		s.log.InfoContext(ctx, "task abandoned by its queue, which tries it again", append(attrs, "err", err)...)
		c.AbortWithStatus(derrors.StatusClientClosed)
		return
	}
	if err != nil {
		// A 500, which Cloud Tasks retries with the queue's backoff; a 503
		// would be taken for a system error and throttle the whole queue.
		retries, _ := strconv.Atoi(c.GetHeader("X-AppEngine-TaskRetryCount"))
		if queue.LastAttempt(c.GetHeader("X-AppEngine-QueueName"), retries) {
			s.log.ErrorContext(ctx, "task gave up: its queue's retry limit is reached, and what it would have done is not done", append(attrs, "err", err)...)
		} else {
			level := "error"
			if errors.Is(err, derrors.Unavailable) {
				level = "retry"
			}
			s.log.WarnContext(ctx, "task failed; the queue retries it", append(attrs, "err", err, "kind", level)...)
		}
		c.JSON(http.StatusInternalServerError, errorBody{errorDetail{Code: http.StatusInternalServerError, Message: "the job failed; its queue retries it"}})
		return
	}
	s.log.InfoContext(ctx, "task done", attrs...)
	c.Status(http.StatusNoContent)
}

// The scheduled work of cron.yaml, which App Engine's cron sends as GETs
// to these paths.
const (
	CronTrimPath    = CronPrefix + "trim"
	CronCollectPath = CronPrefix + "collect"
)

// looseBatch is how many loose pictures one scheduled collection looks
// at: those whose own collection gave up, a handful an hour at most.
const looseBatch = 200

// cronTrim enqueues the hour's trim of the home feed's copies.
func (s *Server) cronTrim(c *gin.Context) {
	s.finishCron(c, s.activities.StartTrim(c.Request.Context()), "trim")
}

// cronCollect collects the pictures left loose past their day whose own
// collection gave up.
func (s *Server) cronCollect(c *gin.Context) {
	if s.media == nil { // a service with no pictures
		s.finishCron(c, nil, "collect", "collected", 0)
		return
	}
	n, err := s.media.CollectLoose(c.Request.Context(), looseBatch)
	s.finishCron(c, err, "collect", "collected", n)
}

// finishCron answers a scheduled request: 204, or a 500 that cron.yaml's
// retry parameters try again.
func (s *Server) finishCron(c *gin.Context, err error, job string, attrs ...any) {
	ctx := c.Request.Context()
	attrs = append(attrs, "cron", job)
	if err != nil {
		s.log.ErrorContext(ctx, "scheduled work failed; cron tries it again", append(attrs, "err", err)...)
		c.JSON(http.StatusInternalServerError, errorBody{errorDetail{Code: http.StatusInternalServerError, Message: "the scheduled work failed"}})
		return
	}
	s.log.InfoContext(ctx, "scheduled work done", attrs...)
	c.Status(http.StatusNoContent)
}
