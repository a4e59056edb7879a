package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// The scheduled work of cron.yaml, which App Engine's cron sends as GETs
// to these paths.
const (
	CronTrimPath    = CronPrefix + "trim"
	CronCollectPath = CronPrefix + "collect"
	CronTrendsPath  = CronPrefix + "trends"
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

// cronTrends ranks what trends, of each kind, for the hour.
func (s *Server) cronTrends(c *gin.Context) {
	s.finishCron(c, s.activities.RefreshTrends(c.Request.Context()), "trends")
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
