package tasksemu

import "time"

// Hurry makes due now every task that was created with a delay of at most
// within and has not been dispatched yet, but only when the queues are
// idle: no task running, none due, no queue paused. It returns how many
// it hurried.
//
// It is for a test that waits for the queues to empty once the requests
// it made have answered (their commits done or failed for good): a job
// enqueued ahead of its commit waits for a commit no longer under way,
// and a pruning's window only gathers prunings. A retry's backoff is
// never shortened, nor a task scheduled further off than within (the end
// of a suspension's grace), so what a test shows of retries and
// schedules holds. A task named for its time (a pruning's window) runs
// before that time, so a later task of the same name is refused as a
// duplicate: what counts tasks (the bill) does not hurry. Cloud Tasks
// itself never runs a task early; the fault mode's checker never
// hurries.
func (s *Server) Hurry(within time.Duration) int {
	now := time.Now()
	for _, q := range s.queues {
		q.mu.Lock()
		busy := q.paused.Load()
		for _, t := range q.tasks {
			if t.running || !t.deleted && !t.due.After(now) {
				busy = true
				break
			}
		}
		q.mu.Unlock()
		if busy {
			return 0
		}
	}
	n := 0
	for _, q := range s.queues {
		q.mu.Lock()
		hurried := 0
		for _, t := range q.tasks {
			if !t.deleted && t.pb.DispatchCount == 0 && t.due.After(now) && !t.due.After(now.Add(within)) {
				t.due = now
				hurried++
			}
		}
		q.mu.Unlock()
		if hurried > 0 {
			q.poke()
		}
		n += hurried
	}
	return n
}
