package api

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"socialstream/internal/activities"
	"socialstream/internal/derrors"
	"socialstream/internal/graph"
	"socialstream/internal/lifecycle"
	"socialstream/internal/media"
	"socialstream/internal/moderation"
	"socialstream/internal/notifications"
	"socialstream/internal/queue"
	"socialstream/internal/rebuild"
)

// Task handlers answer 2xx when the job is done or can never succeed (a
// malformed body: retrying would not help), and 5xx when Cloud Tasks should
// retry it.

func (s *Server) taskFanout(c *gin.Context) {
	var t activities.FanoutTask
	if !s.readTask(c, &t) {
		return
	}
	res, err := s.activities.Fanout(c.Request.Context(), t)
	s.finishTask(c, err, "fanout",
		"activityId", t.ActivityID, "chunk", t.Chunk,
		"chunksEnqueued", res.Enqueued, "idsWritten", res.Written, "skipped", res.Skipped)
}

// taskTags brings a tagged activity to its tags' followers' home feeds,
// or takes it from those of a tag an edit dropped.
func (s *Server) taskTags(c *gin.Context) {
	var t activities.TagTask
	if !s.readTask(c, &t) {
		return
	}
	res, err := s.activities.TagJob(c.Request.Context(), t)
	s.finishTask(c, err, "tags",
		"activityId", t.ActivityID, "edit", t.Edit, "tag", t.Tag, "page", t.Page,
		"enqueued", res.Enqueued, "idsWritten", res.Written, "pagesRemoved", res.Removed, "skipped", res.Skipped)
}

func (s *Server) taskRebuild(c *gin.Context) {
	var j rebuild.Job
	if !s.readTask(c, &j) {
		return
	}
	res, err := s.rebuild.Run(c.Request.Context(), j)
	s.finishTask(c, err, "rebuild",
		"kind", j.Kind, "owner", j.Owner, "follower", j.Follower, "group", j.Group, "gen", j.Gen, "step", j.Step,
		"activitiesScanned", res.Scanned, "activitiesChanged", len(res.Changed), "changedIds", res.Changed,
		"stopped", res.Stopped, "backfillNext", res.NextStep)
}

// taskCleanup removes what a deleted activity leaves: its remaining
// audience chunks, counts, likes, comments, and the notifications that
// point at it.
func (s *Server) taskCleanup(c *gin.Context) {
	var t activities.CleanupTask
	if !s.readTask(c, &t) {
		return
	}
	gone, deleted, err := s.activities.Cleanup(c.Request.Context(), t)
	s.finishTask(c, err, "cleanup", "activityId", t.ActivityID, "gone", gone, "deleted", deleted)
}

func (s *Server) taskNotify(c *gin.Context) {
	var e notifications.Event
	if !s.readTask(c, &e) {
		return
	}
	made, err := s.notifications.Run(c.Request.Context(), e)
	s.finishTask(c, err, "notify", "type", e.Type, "event", e.ID, "actor", e.ActorID,
		"recipients", len(e.Recipients), "made", made)
}

// taskTrim deletes the audience chunks past the home feed's edge.
func (s *Server) taskTrim(c *gin.Context) {
	n, err := s.activities.Trim(c.Request.Context())
	s.finishTask(c, err, "trim", "deleted", n)
}

// taskErase runs one step of the erasure of a deleted account.
func (s *Server) taskErase(c *gin.Context) {
	var t lifecycle.EraseTask
	if !s.readTask(c, &t) {
		return
	}
	res, err := s.lifecycle.Erase(c.Request.Context(), t)
	s.finishTask(c, err, "erase", "userId", t.UserID, "phase", t.Phase, "step", t.Step,
		"erased", res.Erased, "stopped", res.Stopped, "next", res.Next, "done", res.Done)
}

// taskSuspension ends a suspension's grace: the account goes, unless the
// suspension was lifted.
func (s *Server) taskSuspension(c *gin.Context) {
	var t moderation.ExpiryTask
	if !s.readTask(c, &t) {
		return
	}
	ended, err := s.lifecycle.EndSuspension(c.Request.Context(), t)
	s.finishTask(c, err, "suspension", "userId", t.UserID, "at", t.At, "ended", ended)
}

// taskWithhold brings the counts of a suspended person's likes and
// comments in step with the suspension.
func (s *Server) taskWithhold(c *gin.Context) {
	var t moderation.WithholdTask
	if !s.readTask(c, &t) {
		return
	}
	stopped, err := s.moderation.Withhold(c.Request.Context(), t)
	s.finishTask(c, err, "withhold", "userId", t.UserID, "on", t.On, "kind", t.Kind, "step", t.Step, "stopped", stopped)
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

// taskUnlock approves, a batch at a time, the follow requests an unlocked
// person had pending.
func (s *Server) taskUnlock(c *gin.Context) {
	var t graph.UnlockTask
	if !s.readTask(c, &t) {
		return
	}
	n, err := s.graph.Unlocked(c.Request.Context(), t)
	s.finishTask(c, err, "unlock", "user", t.User, "step", t.Step, "approved", n)
}

func (s *Server) taskMedia(c *gin.Context) {
	var t media.Task
	if !s.readTask(c, &t) {
		return
	}
	did, err := s.media.Run(c.Request.Context(), t)
	s.finishTask(c, err, "media", "op", t.Op, "id", t.ID, "did", did)
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
	n, err := 0, error(nil)
	if s.media != nil {
		n, err = s.media.CollectLoose(c.Request.Context(), looseBatch)
	}
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
