package tasksemu

import (
	"net/http"

	"golang.org/x/time/rate"
)

// Cloud Tasks takes a 503 from an App Engine handler for a system error,
// not the app's: its congestion control throttles the whole queue's
// dispatches for a while. Any other failure (a 500, a 429, no answer) is
// the task's alone, retried with the queue's backoff, and the queue's rate
// is untouched. The emulator models that so a test sees the difference:
// each 503 halves the queue's dispatch rate, down to minThrottle of the
// rate queue.yaml sets, and each success doubles it back up to that rate.
// Google does not publish its algorithm; what matters is that a handler
// that answers 503 for its own failures slows every task of its queue.
const minThrottle = 1.0 / 64

// congestion adjusts the queue's rate to an attempt's answer: code is the
// status, 0 for none. The caller holds q.mu.
func (q *queue) congestion(code int) {
	switch {
	case code == http.StatusServiceUnavailable:
		q.throttle = max(q.throttle/2, minThrottle)
	case code >= 200 && code < 300 && q.throttle < 1:
		q.throttle = min(q.throttle*2, 1)
	default:
		return
	}
	q.limiter.SetLimit(rate.Limit(q.cfg.Rate * q.throttle))
}

// Rate returns the dispatch rate the named queue (its short name, as in
// queue.yaml) runs at now, in tasks a second: queue.yaml's, or less while
// 503s throttle it. 0 if there is no such queue.
func (s *Server) Rate(name string) float64 {
	for _, q := range s.queues {
		if q.cfg.Name == name {
			q.mu.Lock()
			defer q.mu.Unlock()
			return q.cfg.Rate * q.throttle
		}
	}
	return 0
}
