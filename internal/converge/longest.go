package converge

import (
	"fmt"
	"net/http"
	"sync"
	"time"
)

// longest keeps the longest request the stacks served, jobs' included.
// A job waits Config.GiveUpAfter for the change it follows, counted from
// when it was enqueued, which is during the request that makes the
// change, before its commit: so long as every request ends within it, no
// job gives up on a change that then commits, and a run with a short
// give-up tells as much as one with the service's. One that does not is
// a violation (checkLongest): the give-up is too short for the machine.
type longest struct {
	mu   sync.Mutex
	d    time.Duration
	path string
}

func (l *longest) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		defer func() {
			d := time.Since(start)
			l.mu.Lock()
			if d > l.d {
				l.d, l.path = d, r.Method+" "+r.URL.Path
			}
			l.mu.Unlock()
		}()
		h.ServeHTTP(w, r)
	})
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
		r.m.violate(fmt.Sprintf("a request (%s) took %s, not less than the %s its jobs wait for its change: one may have given up on a change that then committed; run with a longer -give-up", path, d.Round(time.Millisecond), r.cfg.GiveUpAfter))
	}
}
