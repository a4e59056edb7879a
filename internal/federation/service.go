package federation

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"socialstream/internal/accounts"
	"socialstream/internal/derrors"
	"socialstream/internal/egress"
	"socialstream/internal/ids"
	"socialstream/internal/queue"
	"socialstream/internal/store"
)

// InstanceKey names the key pair of the deployment itself, its instance
// actor (Config.InstanceActor), which signs what it fetches from other
// servers: many of them answer signed requests alone. No person's id is
// a word.
const InstanceKey = "instance"

// InstancePath is the instance actor's address, and InstanceName its
// name (WebFinger finds it as acct:instance.actor@domain): a name with a
// dot, which no person here can have.
const (
	InstancePath = "/actor"
	InstanceName = "instance.actor"
)

// InstanceActor is the address of the deployment's own actor.
func (c Config) InstanceActor() string { return c.Base() + InstancePath }

// Service is federation's side of the domain: remote people (Resolve,
// KeyOwner) and what is sent to other servers (Send, Deliver).
type Service struct {
	cfg    Config
	db     *store.DB
	gen    *ids.Generator
	keys   *Keys
	q      queue.Queue
	client *http.Client
	now    func() time.Time
	// What an inbox acts on (Deps), and what writes what is sent.
	graph      Graph
	follows    Follows
	activities Activities
	pictures   Pictures
	render     Renderers
	likes      Likes
	reposts    Reposts
	liked      Liked
	accounts   *accounts.Service
	reporter   Reporter
	// blocks are the blocked domains, read again every BlockRefresh.
	blocks *store.Refreshed[[]string]
}

// Deps are the services the inbox acts through, and what renders what
// is sent; a nil one is a part of the inbox that answers that it is off
// (a service that serves no API builds none).
type Deps struct {
	// Graph and Follows are the follow graph: follows and requests, and
	// whether one holds.
	Graph   Graph
	Follows Follows
	// Activities are the posts (Notes, their edits and deletes), Reposts
	// and Likes the reactions, Liked whether a like holds.
	Activities Activities
	Reposts    Reposts
	Likes      Likes
	Liked      Liked
	// Pictures keeps the pictures of other servers' posts (nil without
	// a bucket).
	Pictures Pictures
	// Accounts end the accounts of remote people whose servers tell of
	// their deletion; Reporter files the reports other servers send.
	Accounts *accounts.Service
	Reporter Reporter
	Render   Renderers
}

// New returns the service, whose fetches and deliveries go through the
// one guarded client (package egress), to loopback too when
// cfg.AllowLoopback.
func New(cfg Config, db *store.DB, gen *ids.Generator, keys *Keys, q queue.Queue, d Deps) *Service {
	return &Service{cfg: cfg, db: db, gen: gen, keys: keys, q: q, now: time.Now, render: d.Render,
		graph: d.Graph, follows: d.Follows, activities: d.Activities, pictures: d.Pictures, likes: d.Likes, reposts: d.Reposts,
		liked: d.Liked, accounts: d.Accounts, reporter: d.Reporter,
		client: egress.New(egress.Config{AllowLoopback: cfg.AllowLoopback, MaxBody: MaxActorBytes, Timeout: DeliveryTimeout}),
		blocks: store.NewRefreshed(cmp.Or(cfg.BlockRefresh, BlockRefresh), func(ctx context.Context) ([]string, error) { return readBlocked(ctx, db) }, nil)}
}

// Config returns where the deployment federates.
func (s *Service) Config() Config { return s.cfg }

// Keys returns people's keys.
func (s *Service) Keys() *Keys { return s.keys }

func (s *Service) userAgent() string { return "socialstream (+" + s.cfg.Base() + "/)" }

// DeliveryTimeout bounds one delivery or fetch, its answer included.
const DeliveryTimeout = 20 * time.Second

// DeliverJob delivers one activity to one inbox, signed by the person it
// is from: retried with the federation queue's back-off (queue.yaml), so
// that a server down delays only what goes to it. An activity to one
// inbox is one; one to more goes first as a BatchJob, whose inboxes that
// fail are each retried as one.
var DeliverJob = queue.Job[Delivery]{Name: "federate", Queue: queue.Federation, TaskName: Delivery.name}

// Delivery is the body of a delivery job.
type Delivery struct {
	From     string          `json:"from"` // the local person who signs it
	Inbox    string          `json:"inbox"`
	ID       string          `json:"id"` // the activity's id, or another that names this delivery of it (the task's name)
	Activity json.RawMessage `json:"activity"`
}

func (d Delivery) name() string {
	sum := sha256.Sum256([]byte(d.ID + "\n" + d.Inbox))
	return "federate-" + hex.EncodeToString(sum[:16])
}

// BatchJob delivers one activity to up to BatchInboxes inboxes at once,
// BatchAtOnce at a time: one task, where a task an inbox cost two Cloud
// Tasks operations each. An inbox whose delivery fails in a way worth
// trying again is handed to a DeliverJob of its own, which retries it
// with the queue's back-off as if it had been one from the start.
var BatchJob = queue.Job[Batch]{Name: "federate-batch", Queue: queue.Federation, TaskName: Batch.name}

// Batch is the body of a BatchJob: a Delivery but for its inboxes.
type Batch struct {
	From     string          `json:"from"`
	Inboxes  []string        `json:"inboxes"`
	ID       string          `json:"id"`
	Activity json.RawMessage `json:"activity"`
}

func (b Batch) name() string {
	h := sha256.New()
	h.Write([]byte(b.ID))
	for _, inbox := range b.Inboxes {
		h.Write([]byte("\n" + inbox))
	}
	return "federate-batch-" + hex.EncodeToString(h.Sum(nil)[:16])
}

// BatchInboxes is the most inboxes one BatchJob delivers to, and
// BatchAtOnce how many of its deliveries are under way at once: each
// waits DeliveryTimeout at most, so a batch of servers all down takes
// BatchInboxes / BatchAtOnce times that.
const (
	BatchInboxes = 50
	BatchAtOnce  = 10
)

// Send enqueues the delivery of activity (with its id, which names the
// deliveries: one sent again under the same id is one delivery) from the
// local person from to each inbox: a DeliverJob for one inbox, a
// BatchJob for each BatchInboxes of more.
func (s *Service) Send(ctx context.Context, from, id string, activity any, inboxes ...string) error {
	raw, err := json.Marshal(activity)
	if err != nil {
		return fmt.Errorf("federation.Send(%s): %w", id, err)
	}
	if len(inboxes) == 1 {
		if err := DeliverJob.Enqueue(ctx, s.q, Delivery{From: from, Inbox: inboxes[0], ID: id, Activity: raw}, 0); err != nil {
			return fmt.Errorf("federation.Send(%s): %w", id, err)
		}
		return nil
	}
	for i := 0; i < len(inboxes); i += BatchInboxes {
		b := Batch{From: from, Inboxes: inboxes[i:min(len(inboxes), i+BatchInboxes)], ID: id, Activity: raw}
		if err := BatchJob.Enqueue(ctx, s.q, b, 0); err != nil {
			return fmt.Errorf("federation.Send(%s): %w", id, err)
		}
	}
	return nil
}

// DeliverBatch runs a BatchJob: it delivers the activity to each inbox,
// BatchAtOnce at a time, and hands each that fails in a way worth trying
// again (ErrRetry, or any error of ours) to a DeliverJob of its own,
// first run after the queue's least back-off. It fails, to run again
// whole, only when it cannot enqueue those: a delivery made twice is one
// the other server takes as one (an activity's id names it).
func (s *Service) DeliverBatch(ctx context.Context, b Batch) (string, error) {
	// Its deliveries' own attempts are their first: a batch run again
	// never gives up on an inbox for it.
	run := queue.WithAttempt(ctx, queue.Federation, 0)
	outcomes := make([]string, len(b.Inboxes))
	errs := make([]error, len(b.Inboxes))
	g := new(errgroup.Group)
	g.SetLimit(BatchAtOnce)
	for i, inbox := range b.Inboxes {
		g.Go(func() error {
			outcomes[i], errs[i] = s.Deliver(run, Delivery{From: b.From, Inbox: inbox, ID: b.ID, Activity: b.Activity})
			return nil
		})
	}
	_ = g.Wait()
	counts := map[string]int{}
	for i, inbox := range b.Inboxes {
		if errs[i] == nil {
			counts[outcomes[i]]++
			continue
		}
		counts["tried again"]++
		d := Delivery{From: b.From, Inbox: inbox, ID: b.ID, Activity: b.Activity}
		if err := DeliverJob.Enqueue(ctx, s.q, d, RetryAfter); err != nil {
			return "", fmt.Errorf("federation: a retry of %s to %s: %w", b.ID, inbox, err)
		}
	}
	return outcomeCounts(counts), nil
}

// RetryAfter is when a delivery of a batch that failed is first tried
// again: the federation queue's least back-off (queue.yaml, which a test
// holds it to).
const RetryAfter = 10 * time.Second

// outcomeCounts writes counts of outcomes in their names' order.
func outcomeCounts(counts map[string]int) string {
	var parts []string
	for _, o := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%s %d", o, counts[o]))
	}
	return strings.Join(parts, ", ")
}

// signingKey returns the key that signs for user: theirs, made now if
// they have none and are a person here (a delivery left for someone
// since deleted makes none, which their erasure would not find).
func (s *Service) signingKey(ctx context.Context, user string) (Key, bool, error) {
	if user == InstanceKey {
		key, err := s.keys.Of(ctx, user)
		return key, err == nil, err
	}
	if key, ok, err := s.keys.Stored(ctx, user); err != nil || ok {
		return key, ok, err
	}
	p, ok, err := accounts.Load(ctx, s.db, user)
	if err != nil || !ok || p.Remote() {
		return Key{}, false, err
	}
	key, err := s.keys.Of(ctx, user)
	return key, err == nil, err
}

// Outcomes of a delivery, for its log line.
const (
	Delivered = "delivered"
	Refused   = "refused"   // the other server refused it for good (a 4xx but 408 and 429)
	Abandoned = "abandoned" // the other server kept failing past the retry limit
)

// ErrRetry is another server's answer worth trying again (408, 429,
// 5xx), or one that never came: the queue retries it.
var ErrRetry = derrors.New(derrors.Unavailable, "the other server did not take the activity")

// Deliver runs a delivery job: it signs the activity as its sender and
// posts it to the inbox, and returns what came of it.
func (s *Service) Deliver(ctx context.Context, d Delivery) (string, error) {
	if s.checkRemoteURL(d.Inbox) != nil || len(d.Activity) == 0 {
		return Refused + " (malformed)", nil
	}
	if blocked, err := s.blocked(ctx, d.Inbox); err != nil || blocked {
		return Refused + " (its domain is blocked)", err
	}
	key, ok, err := s.signingKey(ctx, d.From)
	if err != nil {
		return "", err
	}
	if !ok {
		return Refused + " (its sender is gone)", nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.Inbox, bytes.NewReader(d.Activity))
	if err != nil {
		return Refused + " (malformed)", nil
	}
	req.Header.Set("Content-Type", `application/activity+json`)
	req.Header.Set("User-Agent", s.userAgent())
	keyID := s.cfg.KeyID(d.From)
	if d.From == InstanceKey {
		keyID = s.cfg.InstanceActor() + "#main-key"
	}
	if err := Sign(req, d.Activity, keyID, key.Private(), s.now()); err != nil {
		return "", err
	}
	resp, err := s.client.Do(req)
	status := 0
	if err == nil {
		status = resp.StatusCode
		egress.Drain(resp)
	}
	switch {
	case errors.Is(err, egress.ErrRefused):
		return Refused + " (address)", nil
	case err == nil && status >= 200 && status < 300:
		return Delivered, nil
	case err == nil && status != http.StatusRequestTimeout && status != http.StatusTooManyRequests && status < 500:
		return Refused + " " + strconv.Itoa(status), nil
	case queue.LastAttemptOf(ctx):
		return Abandoned, nil
	case err != nil:
		return "", fmt.Errorf("%w: %w", ErrRetry, err)
	}
	return "", fmt.Errorf("%w: status %d", ErrRetry, status)
}
