package converge

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/api/option"
	"google.golang.org/grpc"

	"socialstream/internal/queue"
)

// longest keeps the longest time a change of a request the stacks served
// (jobs' included) took to commit after the request enqueued its jobs. A
// job waits Config.GiveUpAfter for the change it follows, counted from
// when it was enqueued, just before the commit of that change (a request
// enqueues the jobs of each of its commits ahead of it): so long as every
// commit comes sooner after the jobs enqueued since the request's last
// commit, no job gives up on a change that then commits, and a run with a
// short give-up tells as much as one with the service's. One that does
// not is a violation (checkLongest): the give-up is too short for the
// machine. Jobs whose change never commits are counted to the request's
// end.
type longest struct {
	mu   sync.Mutex
	d    time.Duration
	path string
}

type trackedKey struct{}

// tracked is a request's: since when it has enqueued jobs whose commit
// has not come yet (0: none).
type tracked struct {
	path  string
	since atomic.Int64
}

func (l *longest) note(t *tracked) {
	at := t.since.Swap(0)
	if at == 0 {
		return
	}
	d := time.Since(time.Unix(0, at))
	l.mu.Lock()
	defer l.mu.Unlock()
	if d > l.d {
		l.d, l.path = d, t.path
	}
}

// wrap tracks each request's jobs and commits.
func (l *longest) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t := &tracked{path: r.Method + " " + r.URL.Path}
		defer l.note(t)
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), trackedKey{}, t)))
	})
}

// wrapQueue returns q, noting on the request's context when it enqueues.
func (l *longest) wrapQueue(q queue.Queue) queue.Queue { return noting{q} }

type noting struct{ queue.Queue }

func (n noting) Enqueue(ctx context.Context, task queue.Task) error {
	if t, ok := ctx.Value(trackedKey{}).(*tracked); ok {
		t.since.CompareAndSwap(0, time.Now().UnixNano())
	}
	return n.Queue.Enqueue(ctx, task)
}

// option notes each commit that succeeds, on the request's context.
func (l *longest) option() option.ClientOption {
	return option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		err := invoker(ctx, method, req, reply, cc, opts...)
		if t, ok := ctx.Value(trackedKey{}).(*tracked); ok && err == nil && strings.HasSuffix(method, "/Commit") {
			l.note(t)
		}
		return err
	}))
}

func (l *longest) get() (time.Duration, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.d, l.path
}

// checkLongest holds the longest wait of a commit to the jobs' give-up.
func (r *runner) checkLongest(st *stack, rep *Report) {
	d, path := st.longest.get()
	rep.Longest, rep.LongestPath = d, path
	if d >= r.cfg.GiveUpAfter {
		r.m.violate(fmt.Sprintf("a change of a request (%s) committed %s after it enqueued its jobs, not less than the %s they wait for it: one may have given up on a change that then committed; run with a longer -give-up", path, d.Round(time.Millisecond), r.cfg.GiveUpAfter))
	}
}
