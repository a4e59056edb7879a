package tasksemu

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// Faults makes the emulator misbehave the ways Cloud Tasks is allowed to,
// so that tests and the convergence checker can show the app copes: it
// delivers at least once, late, twice and out of order, and its API can
// fail, even after doing what it was asked. Shares are probabilities from
// 0 to 1; the zero Faults injects nothing (the default).
type Faults struct {
	Seed uint64
	// Duplicate is the share of tasks that, having succeeded, are
	// delivered once more, up to MaxDelay later.
	Duplicate float64
	// Delay is the share of tasks whose first delivery is put off by up to
	// MaxDelay, which also reorders them.
	Delay    float64
	MaxDelay time.Duration
	// Fail is the share of delivery attempts answered with a 500 of the
	// emulator's own, without reaching the app (a failed attempt, which
	// does not throttle the queue as a 503 would); Timeout the share that
	// reach the app but count as timed out, whatever it answered. Both
	// are retried with the queue's backoff.
	Fail, Timeout float64
	// CreateFail is the share of CreateTask calls refused with Unavailable,
	// creating nothing; CreateLost the share that create the task but
	// answer DeadlineExceeded.
	CreateFail, CreateLost float64
}

// Fault kinds, as FaultCounts names them.
const (
	FaultDuplicate  = "task delivered twice"
	FaultDelay      = "task delayed"
	FaultFail       = "delivery answered 500"
	FaultTimeout    = "delivery timed out after the app ran it"
	FaultCreateFail = "CreateTask failed"
	FaultCreateLost = "CreateTask failed after creating"
)

// faults draws faults and counts them.
type faults struct {
	cfg    Faults
	mu     sync.Mutex
	rng    *rand.Rand
	counts map[string]int64
}

func newFaults(cfg Faults) *faults {
	if cfg.MaxDelay <= 0 {
		cfg.MaxDelay = 2 * time.Second
	}
	return &faults{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x5eed)), counts: map[string]int64{}}
}

// hit reports, with probability p, that a fault of kind happens, and
// counts it.
func (f *faults) hit(kind string, p float64) bool {
	if p <= 0 {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rng.Float64() >= p {
		return false
	}
	f.counts[kind]++
	return true
}

// delay returns a random delay up to MaxDelay.
func (f *faults) delay() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return time.Duration(f.rng.Int64N(int64(f.cfg.MaxDelay)))
}

// FaultCounts returns how many faults of each kind were injected.
func (s *Server) FaultCounts() map[string]int64 {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	out := make(map[string]int64, len(s.faults.counts))
	for k, v := range s.faults.counts {
		out[k] = v
	}
	return out
}

// Horizon is how far ahead a task may be due and still count as pending:
// one scheduled further (the end of a suspension's grace, a month out)
// is not work the queues have under way, and waiting for it would never
// end.
const Horizon = time.Hour

// Pending returns how many tasks are waiting or running in all queues,
// leaving out those due past Horizon (Scheduled counts them).
func (s *Server) Pending() int {
	n, _ := s.count()
	return n
}

// Scheduled returns how many tasks are due past Horizon.
func (s *Server) Scheduled() int {
	_, far := s.count()
	return far
}

// Describe returns a line for each task Pending counts: its name, the
// path it is delivered to, how many times it was dispatched and when it
// is due. For a report of what never finished.
func (s *Server) Describe() []string {
	horizon := time.Now().Add(Horizon)
	var out []string
	for _, q := range s.queues {
		q.mu.Lock()
		for _, t := range q.tasks {
			if t.due.After(horizon) {
				continue
			}
			path := ""
			if r := t.pb.GetAppEngineHttpRequest(); r != nil {
				path = r.GetRelativeUri()
			}
			out = append(out, fmt.Sprintf("%s to %s, dispatched %d times, running %v, due %s",
				t.pb.GetName(), path, t.pb.GetDispatchCount(), t.running, t.due.Format("15:04:05.000")))
		}
		q.mu.Unlock()
	}
	slices.Sort(out)
	return out
}

func (s *Server) count() (pending, far int) {
	horizon := time.Now().Add(Horizon)
	for _, q := range s.queues {
		q.mu.Lock()
		for _, t := range q.tasks {
			if t.due.After(horizon) {
				far++
			} else {
				pending++
			}
		}
		q.mu.Unlock()
	}
	return pending, far
}
