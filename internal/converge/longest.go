package converge

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"socialstream/internal/queue"
)

// longest keeps the longest time a request the stacks served (jobs'
// included) went on after it enqueued its first job. A job waits
// Config.GiveUpAfter for the change it follows, counted from when it was
// enqueued, during the request that makes the change and before its
// commit: so long as every request ends sooner after its first job, no
// job gives up on a change that then commits, and a run with a short
// give-up tells as much as one with the service's. One that does not is
// a violation (checkLongest): the give-up is too short for the machine.
type longest struct {
	mu   sync.Mutex
	d    time.Duration
	path string
}

type enqueuedKey struct{}

// wrap has each request note when it first enqueued a job (wrapQueue),
// and keeps the longest time from then to its end.
func (l *longest) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first := new(atomic.Int64)
		defer func() {
			at := first.Load()
			if at == 0 {
				return
			}
			d := time.Since(time.Unix(0, at))
			l.mu.Lock()
			if d > l.d {
				l.d, l.path = d, r.Method+" "+r.URL.Path
			}
			l.mu.Unlock()
		}()
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), enqueuedKey{}, first)))
	})
}

// wrapQueue returns q, noting on the request's context when it first
// enqueues.
func (l *longest) wrapQueue(q queue.Queue) queue.Queue { return noting{q} }

type noting struct{ queue.Queue }

func (n noting) Enqueue(ctx context.Context, t queue.Task) error {
	if first, ok := ctx.Value(enqueuedKey{}).(*atomic.Int64); ok {
		first.CompareAndSwap(0, time.Now().UnixNano())
	}
	return n.Queue.Enqueue(ctx, t)
}

func (l *longest) get() (time.Duration, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.d, l.path
}

// checkLongest holds the longest request to the jobs' give-up.
func (r *runner) checkLongest(st *stack, rep *Report) {
	d, path := st.longest.get()
	rep.Longest, rep.LongestPath = d, path
	if d >= r.cfg.GiveUpAfter {
		r.m.violate(fmt.Sprintf("a request (%s) went on %s after it enqueued a job, not less than the %s its jobs wait for its change: one may have given up on a change that then committed; run with a longer -give-up", path, d.Round(time.Millisecond), r.cfg.GiveUpAfter))
	}
}
