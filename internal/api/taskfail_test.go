package api_test

import (
	"net/http"
	"strconv"
	"testing"

	"socialstream/internal/api"
	"socialstream/internal/dsfaults"
	"socialstream/internal/queue"
)

// A job that fails answers 500, which Cloud Tasks retries with its queue's
// backoff, never 503, which would throttle the whole queue; its last
// attempt (its queue's retry limit reached) logs at ERROR that it gave up.
func TestAFailedJobIsA500AndItsLastAttemptSaysSo(t *testing.T) {
	e, inj := newEnvWithFaults(t, dsfaults.Config{Before: 1})
	limit := queue.RetryLimits[queue.Cleanup]
	for _, retries := range []int{0, limit - 1, limit} {
		inj.SetEnabled(true)
		r := e.do("POST", "/_tasks/cleanup", "", `{"activityId":"1234567","at":1}`, api.TaskSecretHeader, e.stack.TaskSecret,
			"X-AppEngine-QueueName", queue.Cleanup, "X-AppEngine-TaskRetryCount", strconv.Itoa(retries))
		inj.SetEnabled(false)
		if r.status != http.StatusInternalServerError {
			t.Errorf("retry %d of a failing job: %d %s, want 500", retries, r.status, r.raw)
		}
		gaveUp := e.logs.Lines(giveUp)
		if want := retries >= limit; (len(gaveUp) > 0) != want {
			t.Errorf("retry %d of %d: logged a give-up %v, want %v", retries, limit, len(gaveUp) > 0, want)
		}
		for _, l := range gaveUp {
			if l["severity"] != "ERROR" || l["job"] != "cleanup" || l["err"] == nil {
				t.Errorf("the give-up's log line: %v", l)
			}
		}
	}
}

const giveUp = "task gave up: its queue's retry limit is reached, and what it would have done is not done"
