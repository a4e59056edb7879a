package converge

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
)

// deliveries keeps what came of each Web Push delivery the stacks ran,
// from their log lines (a task of the push job, done or failed), so that
// a push violation tells what the deliveries to its reader did. It is a
// slog.Handler over the stacks' own, which it forwards to as they are.
type deliveries struct {
	base  slog.Handler
	state *deliveryState
}

type deliveryState struct {
	mu     sync.Mutex
	byUser map[string][]string // a reader's deliveries: "type event: outcome"
	jobs   []string            // every job's line that names an event
}

func newDeliveries(base slog.Handler) *deliveries {
	return &deliveries{base: base, state: &deliveryState{byUser: map[string][]string{}}}
}

func (d *deliveries) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelInfo || d.base.Enabled(ctx, l)
}

func (d *deliveries) Handle(ctx context.Context, r slog.Record) error {
	var job, user, typ, event, outcome, failure string
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "job":
			job = a.Value.String()
		case "user":
			user = a.Value.String()
		case "type":
			typ = a.Value.String()
		case "event":
			event = a.Value.String()
		case "outcome":
			outcome = a.Value.String()
		case "err":
			failure = a.Value.String()
		}
		return true
	})
	if event != "" {
		d.state.mu.Lock()
		d.state.jobs = append(d.state.jobs, fmt.Sprintf("%s %s at %s: %s %s", job, event, r.Time.UTC().Format("15:04:05.000"), outcome, failure))
		d.state.mu.Unlock()
	}
	if job == "push" && user != "" {
		if failure != "" {
			outcome = "failed: " + failure
		}
		d.state.mu.Lock()
		d.state.byUser[user] = append(d.state.byUser[user], fmt.Sprintf("%s %s at %s: %s", typ, event, r.Time.UTC().Format("15:04:05.000"), outcome))
		d.state.mu.Unlock()
	}
	if d.base.Enabled(ctx, r.Level) {
		return d.base.Handle(ctx, r)
	}
	return nil
}

func (d *deliveries) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &deliveries{base: d.base.WithAttrs(attrs), state: d.state}
}

func (d *deliveries) WithGroup(name string) slog.Handler {
	return &deliveries{base: d.base.WithGroup(name), state: d.state}
}

// of returns what the deliveries to user of type typ did.
func (d *deliveries) of(user, typ string) []string {
	d.state.mu.Lock()
	defer d.state.mu.Unlock()
	var out []string
	for _, l := range d.state.byUser[user] {
		if len(l) > len(typ) && l[:len(typ)+1] == typ+" " {
			out = append(out, l)
		}
	}
	return out
}

// about returns the lines of the jobs whose event names activity.
func (d *deliveries) about(activity string) []string {
	d.state.mu.Lock()
	defer d.state.mu.Unlock()
	var out []string
	for _, l := range d.state.jobs {
		if activity != "" && strings.Contains(l, activity) {
			out = append(out, l)
		}
	}
	return out
}
