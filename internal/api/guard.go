package api

import (
	"context"
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"socialstream/internal/accounts"
	"socialstream/internal/activities"
	"socialstream/internal/forwarded"
	"socialstream/internal/ratelimit"
)

// Guard is how the server keeps its doors: who may run task handlers,
// where a client's address comes from, and which transport headers it
// sends.
type Guard struct {
	// OnAppEngine trusts X-AppEngine-QueueName on /_tasks requests and
	// X-Appengine-Cron on /_cron ones (App Engine strips X-AppEngine-*
	// headers from outside traffic) and the
	// client address App Engine's front end reports, and sends HSTS.
	OnAppEngine bool
	// Forwarded are the forwarded headers trusted, for the Mastodon
	// face's links (FORWARDED_HEADERS).
	Forwarded forwarded.Trust
	// TaskSecret, off App Engine, is what a task or cron request must carry in
	// TaskSecretHeader: the task sender's proof (the local stack makes one
	// per run and gives it to its tasks emulator). Without it, and off App
	// Engine, every task request is refused.
	TaskSecret string
	// Limits are the rate limits; nil is none.
	Limits *ratelimit.Limits
	// CORSOrigins are the origins whose pages may call the API from a
	// browser (CORS); none by default.
	CORSOrigins []string
}

// TaskSecretHeader carries a task sender's secret off App Engine.
const TaskSecretHeader = "X-Socialstream-Task-Secret"

// CronPrefix is where the scheduled work of cron.yaml is sent.
const CronPrefix = "/_cron/"

// tasksOnly refuses /_tasks requests that did not come from the task
// sender, and /_cron requests that did not come from the scheduler: on
// App Engine, those without X-AppEngine-QueueName or X-Appengine-Cron;
// elsewhere, those without the configured secret (a header alone proves
// nothing where nothing strips it).
func (s doors) tasksOnly(c *gin.Context) {
	p := c.Request.URL.Path
	task := p == "/_tasks" || strings.HasPrefix(p, "/_tasks/")
	cron := p+"/" == CronPrefix || strings.HasPrefix(p, CronPrefix)
	if !task && !cron {
		c.Next()
		return
	}
	var ok bool
	switch {
	case s.guard.OnAppEngine && task:
		ok = c.GetHeader("X-AppEngine-QueueName") != ""
	case s.guard.OnAppEngine:
		ok = c.GetHeader("X-Appengine-Cron") == "true"
	default:
		got := c.GetHeader(TaskSecretHeader)
		ok = s.guard.TaskSecret != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.guard.TaskSecret)) == 1
	}
	if !ok {
		s.fail(c, errNotFromQueue)
		return
	}
	c.Next()
}

// hsts asks browsers to come back only over HTTPS, on App Engine, where
// the front end serves it.
func (s doors) hsts(c *gin.Context) {
	if s.guard.OnAppEngine {
		c.Header("Strict-Transport-Security", "max-age=63072000; includeSubDomains")
	}
	c.Next()
}

// A meter spends the units of one request from its bucket: the account's
// for an authenticated request, the client address's otherwise. Handlers
// reach it through the request's context (charge).
type meter struct {
	take   func(cost int) ratelimit.Decision
	header http.Header // the answer's
}

type meterKey struct{}

func (s doors) meterWith(c *gin.Context, bucket *ratelimit.Local, key string) {
	m := &meter{header: c.Writer.Header(), take: func(cost int) ratelimit.Decision { return bucket.Take(key, cost) }}
	c.Request = c.Request.WithContext(context.WithValue(c.Request.Context(), meterKey{}, m))
}

// meterAccount meters an authenticated request on the caller's account.
func (s doors) meterAccount(c *gin.Context) {
	if s.guard.Limits != nil {
		s.meterWith(c, s.guard.Limits.Account, caller(c))
	}
	c.Next()
}

// meterAddress meters an unauthenticated request on the client's address.
func (s doors) meterAddress(c *gin.Context) {
	if s.guard.Limits != nil {
		s.meterWith(c, s.guard.Limits.Address, c.ClientIP())
	}
	c.Next()
}

// charge spends cost units of the request's bucket; over the limit it is a
// 429 (derrors.RateLimited), and either way the answer carries the
// RateLimit headers. Without limits it does nothing.
func charge(ctx context.Context, cost int) error {
	m, _ := ctx.Value(meterKey{}).(*meter)
	if m == nil {
		return nil
	}
	d := m.take(cost)
	d.SetHeaders(m.header)
	return d.Err()
}

// Costs of operations, in units of the account's quota: one a call,
// more for what makes the service write on other people's behalf.
const (
	costCall      = 1
	costPassword  = 10 // a register or login attempt: a bcrypt hash
	costInvite    = 10 // adding someone else to a group: a notification to them
	costExport    = 30 // a whole account's data, read from every owner
	copiesPerUnit = 100
)

// coster is a call's parameters that know their cost; others cost
// costCall.
type coster interface{ cost() int }

func costOf(p any) int {
	if c, ok := p.(coster); ok {
		return c.cost()
	}
	return costCall
}

// cost of a post: one, and one per mention (each a notification).
func (p activityParams) cost() int {
	if p.Activity == nil {
		return costCall
	}
	return costCall + len(activities.ParseMentions(p.Activity.Title+"\n"+p.Activity.Body))
}

// cost of a search: three, for its five queries a range.
func (p searchParams) cost() int { return 3 * costCall }

// cost of a follow: one, and one per hundred activities it copies (the
// default copy is 200).
func (p followParams) cost() int {
	n := 200
	if p.CopyLimit != nil {
		n = max(0, *p.CopyLimit)
	}
	return costCall + (n+copiesPerUnit-1)/copiesPerUnit
}

// cost of a join: one for oneself, costInvite for adding someone else.
func (p memberParams) cost() int {
	if u := p.user(); u != "@me" && u != "@viewer" {
		return costInvite
	}
	return costCall
}

// loginAllowed meters a login: costPassword units of the address's quota,
// and one unit of the username's shared bucket of failed logins, taken
// before any hash is computed, so that logins at once cannot all pass a
// bucket that holds fewer (loginSucceeded gives the unit back).
func (s doors) loginAllowed(c *gin.Context, username string) error {
	ctx := c.Request.Context()
	if err := charge(ctx, costPassword); err != nil {
		return err
	}
	if s.guard.Limits == nil || accounts.ValidateUsername(username) != nil {
		return nil
	}
	d, err := s.guard.Limits.Login.Take(ctx, strings.ToLower(username), 1)
	return refusal(c, d, err)
}

// refusal is what a shared bucket's decision d (taken with err) makes of
// the request: nothing when it is allowed, else a 429 whose answer
// carries d's headers (a take that could not be made is such a refusal:
// ratelimit.Shared.Take).
func refusal(c *gin.Context, d ratelimit.Decision, err error) error {
	if err != nil || d.Allowed {
		return err
	}
	d.SetHeaders(c.Writer.Header())
	return d.Err()
}

// loginSucceeded gives back the unit loginAllowed took: only failed
// logins spend the bucket. A refund that fails leaves the unit spent.
func (s doors) loginSucceeded(ctx context.Context, username string) {
	if s.guard.Limits == nil || accounts.ValidateUsername(username) != nil {
		return
	}
	if err := s.guard.Limits.Login.Refund(ctx, strings.ToLower(username), 1); err != nil {
		s.log.WarnContext(ctx, "a login's unit not given back", "err", err)
	}
}

// registerAllowed spends a unit of the address's shared bucket of
// registrations (the handler has charged the address's quota first).
func (s doors) registerAllowed(c *gin.Context) error {
	ctx := c.Request.Context()
	if s.guard.Limits == nil {
		return nil
	}
	d, err := s.guard.Limits.Register.Take(ctx, c.ClientIP(), 1)
	return refusal(c, d, err)
}
