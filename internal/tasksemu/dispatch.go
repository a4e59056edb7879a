package tasksemu

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/cloudtasks/apiv2/cloudtaskspb"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// run dispatches the queue's due tasks, oldest due first, until ctx is done.
func (q *queue) run(ctx context.Context) {
	for {
		q.mu.Lock()
		t, wait := q.next(time.Now())
		if t != nil {
			t.running = true // leased: not picked again while it waits for a slot
		}
		q.mu.Unlock()

		if t == nil {
			timer := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				timer.Stop()
				return
			case <-q.wake:
			case <-timer.C:
			}
			timer.Stop()
			continue
		}
		if err := q.limiter.Wait(ctx); err != nil {
			return
		}
		select {
		case q.slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		q.s.wg.Add(1)
		go func() {
			defer q.s.wg.Done()
			defer func() { <-q.slots }()
			q.dispatch(ctx, t)
		}()
	}
}

// next returns the due task that is oldest due, or how long to wait for one.
func (q *queue) next(now time.Time) (*task, time.Duration) {
	if q.paused.Load() {
		return nil, time.Minute // until ResumeQueue wakes it
	}
	var best *task
	for _, t := range q.tasks {
		if t.running || t.deleted {
			continue
		}
		if best == nil || t.due.Before(best.due) || t.due.Equal(best.due) && t.pb.Name < best.pb.Name {
			best = t
		}
	}
	if best == nil {
		return nil, time.Minute
	}
	if d := best.due.Sub(now); d > 0 {
		return nil, d
	}
	return best, 0
}

// dispatch makes one attempt of t and settles it: done, retried later, or
// dropped when its retry limits are spent.
func (q *queue) dispatch(ctx context.Context, t *task) {
	q.mu.Lock()
	if t.deleted { // deleted while it waited for a slot
		delete(q.tasks, t.pb.Name)
		q.mu.Unlock()
		return
	}
	pb := t.pb
	ae := pb.GetAppEngineHttpRequest()
	target := strings.TrimRight(q.s.cfg.Target, "/")
	deadline := pb.GetDispatchDeadline().AsDuration()
	_, id, _ := strings.Cut(pb.Name, "/tasks/")
	headers := http.Header{}
	for k, v := range ae.GetHeaders() {
		headers.Set(k, v)
	}
	for k, v := range q.s.cfg.Proof {
		headers[http.CanonicalHeaderKey(k)] = v
	}
	headers.Set("X-AppEngine-QueueName", q.cfg.Name)
	headers.Set("X-AppEngine-TaskName", id)
	headers.Set("X-AppEngine-TaskRetryCount", strconv.Itoa(int(pb.DispatchCount)))
	headers.Set("X-AppEngine-TaskExecutionCount", strconv.Itoa(int(pb.ResponseCount)))
	eta := pb.GetScheduleTime().AsTime()
	headers.Set("X-AppEngine-TaskETA", fmt.Sprintf("%d.%06d", eta.Unix(), eta.Nanosecond()/1000))
	method := ae.GetHttpMethod().String()
	uri := ae.GetRelativeUri()
	body := ae.GetBody()
	q.mu.Unlock()

	start := time.Now()
	f := q.s.faults
	var code int
	var err error
	if f.hit(FaultFail, f.cfg.Fail) {
		code = http.StatusInternalServerError
	} else {
		code, err = q.send(ctx, method, target+uri, headers, body, deadline)
		if err == nil && f.hit(FaultTimeout, f.cfg.Timeout) {
			code, err = 0, fmt.Errorf("injected fault: no answer within the deadline")
		}
	}
	if ctx.Err() != nil {
		// Shutting down: the attempt does not count.
		q.mu.Lock()
		t.running = false
		q.mu.Unlock()
		return
	}
	now := time.Now()

	q.mu.Lock()
	defer q.mu.Unlock()
	attempt := &cloudtaskspb.Attempt{
		ScheduleTime: pb.ScheduleTime,
		DispatchTime: timestamppb.New(start),
	}
	q.s.dispatched.Add(1)
	if pb.DispatchCount > 0 {
		q.s.redispatched.Add(1)
	}
	pb.DispatchCount++
	if err == nil {
		pb.ResponseCount++
		attempt.ResponseTime = timestamppb.New(now)
		attempt.ResponseStatus = &status.Status{Code: int32(httpToCode(code)), Message: http.StatusText(code)}
	} else {
		attempt.ResponseStatus = &status.Status{Code: int32(codes.DeadlineExceeded), Message: err.Error()}
	}
	if pb.FirstAttempt == nil {
		pb.FirstAttempt = attempt
	}
	pb.LastAttempt = attempt
	t.running = false
	if err == nil {
		q.congestion(code)
	}

	log := q.s.log.With("queue", q.cfg.Name, "task", id, "path", uri, "retryCount", pb.DispatchCount-1)
	switch {
	case t.deleted:
		delete(q.tasks, pb.Name)
	case err == nil && code >= 200 && code < 300 && t.again:
		// Delivered at least once: once more, a little later.
		t.again = false
		t.due = now.Add(f.delay())
		log.Debug("task done; a fault delivers it again", "status", code)
	case err == nil && code >= 200 && code < 300:
		delete(q.tasks, pb.Name)
		q.tombstones[pb.Name] = now
		log.Debug("task done", "status", code, "elapsed", now.Sub(start))
	case q.spent(pb.DispatchCount, now.Sub(t.created)):
		delete(q.tasks, pb.Name)
		q.tombstones[pb.Name] = now
		log.Error("task dropped: retry limits reached", "status", code, "err", errString(err))
	default:
		wait := q.cfg.Retry.Backoff(int(pb.DispatchCount))
		t.due = now.Add(wait)
		pb.ScheduleTime = timestamppb.New(t.due)
		log.Warn("task failed; will retry", "status", code, "err", errString(err), "backoff", wait)
	}
	q.poke()
}

// spent reports whether a task that failed for the attempts-th time may not
// be retried. With both a retry limit and an age limit, both must be reached,
// as on App Engine.
func (q *queue) spent(attempts int32, age time.Duration) bool {
	r := q.cfg.Retry
	byCount := r.RetryLimit >= 0 && int(attempts) > r.RetryLimit
	byAge := r.AgeLimit > 0 && age >= r.AgeLimit
	switch {
	case r.RetryLimit >= 0 && r.AgeLimit > 0:
		return byCount && byAge
	default:
		return byCount || byAge
	}
}

func (q *queue) send(ctx context.Context, method, url string, h http.Header, body []byte, deadline time.Duration) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header = h
	resp, err := q.s.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, nil
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func httpToCode(status int) codes.Code {
	switch {
	case status >= 200 && status < 300:
		return codes.OK
	case status == http.StatusNotFound:
		return codes.NotFound
	case status == http.StatusForbidden:
		return codes.PermissionDenied
	case status == http.StatusTooManyRequests:
		return codes.ResourceExhausted
	case status >= 500:
		return codes.Unavailable
	default:
		return codes.FailedPrecondition
	}
}
