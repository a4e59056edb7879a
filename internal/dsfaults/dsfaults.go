// Package dsfaults injects faults into a Datastore client, as a gRPC
// interceptor around the real client and the real emulator: a share of
// calls fail before they are sent, and a share of commits fail after they
// were applied, so the caller sees an error for a write that happened.
// Cloud Datastore does both; every write of the service must be correct
// under them. It is for tests and the convergence checker, never for
// production.
package dsfaults

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Config says how often to fail. Shares are probabilities from 0 to 1.
type Config struct {
	Seed uint64
	// Before is the share of calls (lookups, queries, transactions,
	// commits) that fail with Unavailable, Aborted or DeadlineExceeded
	// without reaching the Datastore.
	Before float64
	// AfterCommit is the share of commits that are applied and then
	// answered with one of those errors.
	AfterCommit float64
	// SlowCommit is the share of commits held up to MaxDelay before they
	// are sent, as a loaded Datastore may be: the jobs a change enqueued
	// before its commit then run before it lands.
	SlowCommit float64
	MaxDelay   time.Duration
}

// Injector counts the faults it injected.
type Injector struct {
	cfg  Config
	off  atomic.Bool
	next atomic.Int32 // a code armed by FailNextCommit, 0 if none
	// rollback says the rollback after that commit answers OK unsent.
	rollback atomic.Bool
	// failRollback is a code armed by FailNextRollback, 0 if none.
	failRollback atomic.Int32
	mu           sync.Mutex
	rng          *rand.Rand
	counts       map[string]int64
}

// New returns an Injector.
func New(cfg Config) *Injector {
	return &Injector{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0xda7a)), counts: map[string]int64{}}
}

var errorCodes = []codes.Code{codes.Unavailable, codes.Aborted, codes.DeadlineExceeded}

// draw reports, with probability p, the code of a fault to inject, and
// counts it under what it did to the method.
func (in *Injector) draw(p float64, method, when string) (codes.Code, bool) {
	if p <= 0 || in.off.Load() {
		return codes.OK, false
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.rng.Float64() >= p {
		return codes.OK, false
	}
	c := errorCodes[in.rng.IntN(len(errorCodes))]
	in.counts[method+" "+c.String()+" "+when]++
	return c, true
}

// delay draws whether to hold a commit, and for how long.
func (in *Injector) delay() (time.Duration, bool) {
	if in.cfg.SlowCommit <= 0 || in.cfg.MaxDelay <= 0 || in.off.Load() {
		return 0, false
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.rng.Float64() >= in.cfg.SlowCommit {
		return 0, false
	}
	in.counts["Commit held before the call"]++
	return time.Duration(in.rng.Int64N(int64(in.cfg.MaxDelay))), true
}

// Option returns the client option that installs the interceptor.
func (in *Injector) Option() option.ClientOption {
	return option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(in.intercept))
}

func (in *Injector) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	name := method[strings.LastIndex(method, "/")+1:]
	if name == "Rollback" && in.rollback.Swap(false) {
		return nil
	}
	if c := codes.Code(in.failRollback.Swap(0)); name == "Rollback" && c != codes.OK {
		in.count(name + " " + c.String() + " before the call")
		return status.Errorf(c, "injected fault: %s before %s", c, name)
	} else if c != codes.OK {
		in.failRollback.Store(int32(c)) // armed for a rollback, not this call
	}
	if c, ok := in.draw(in.cfg.Before, name, "before the call"); ok {
		return status.Errorf(c, "injected fault: %s before %s", c, name)
	}
	if name == "Commit" {
		if d, ok := in.delay(); ok {
			select {
			case <-time.After(d):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	err := invoker(ctx, method, req, reply, cc, opts...)
	if err != nil || name != "Commit" {
		return err
	}
	if c := codes.Code(in.next.Swap(0)); c != codes.OK {
		in.rollback.Store(true)
		in.count(name + " " + c.String() + " after it applied")
		return status.Errorf(c, "injected fault: %s after the commit applied", c)
	}
	if c, ok := in.draw(in.cfg.AfterCommit, name, "after it applied"); ok {
		return status.Errorf(c, "injected fault: %s after the commit applied", c)
	}
	return nil
}

// FailNextCommit makes the next commit apply and then answer code, and
// the rollback that follows answer OK without reaching the Datastore (the
// emulator refuses to roll back a committed transaction, and the client
// library then gives up). With Aborted, the library runs the transaction
// again: a deterministic test that a write recognises its own commit.
func (in *Injector) FailNextCommit(code codes.Code) { in.next.Store(int32(code)) }

// FailNextRollback makes the next Rollback fail with code without
// reaching the Datastore, as a network may: the transaction stays open,
// holding its locks, unless the caller tries again.
func (in *Injector) FailNextRollback(code codes.Code) { in.failRollback.Store(int32(code)) }

func (in *Injector) count(what string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.counts[what]++
}

// SetEnabled turns the faults on (the start) or off.
func (in *Injector) SetEnabled(on bool) { in.off.Store(!on) }

// Counts returns how many faults were injected, by method, code and when.
func (in *Injector) Counts() map[string]int64 {
	in.mu.Lock()
	defer in.mu.Unlock()
	out := make(map[string]int64, len(in.counts))
	for k, v := range in.counts {
		out[k] = v
	}
	return out
}
