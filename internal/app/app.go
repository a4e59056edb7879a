// Package app wires the service together: configuration, the Datastore and
// Cloud Tasks clients, the domain services (NewServices, in the order of
// ownership: each gets the owners below it) and the HTTP server. cmd/server
// runs it on App Engine; package localstack runs it beside the local
// emulators. It owns no entity.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	cloudtasks "cloud.google.com/go/cloudtasks/apiv2"
	"cloud.google.com/go/datastore"
	"cloud.google.com/go/storage"
	"github.com/gin-gonic/gin"

	"socialstream/internal/accounts"
	"socialstream/internal/activities"
	"socialstream/internal/activitypub"
	"socialstream/internal/api"
	"socialstream/internal/appdata"
	"socialstream/internal/bookmarks"
	"socialstream/internal/cards"
	"socialstream/internal/comments"
	"socialstream/internal/conversations"
	"socialstream/internal/cursor"
	"socialstream/internal/egress"
	"socialstream/internal/federation"
	"socialstream/internal/filters"
	"socialstream/internal/forwarded"
	"socialstream/internal/graph"
	"socialstream/internal/groups"
	"socialstream/internal/ids"
	"socialstream/internal/jobs"
	"socialstream/internal/lifecycle"
	"socialstream/internal/likes"
	"socialstream/internal/markers"
	"socialstream/internal/mastodon"
	"socialstream/internal/media"
	"socialstream/internal/moderation"
	"socialstream/internal/mutes"
	"socialstream/internal/notifications"
	"socialstream/internal/oauth"
	"socialstream/internal/polls"
	"socialstream/internal/push"
	"socialstream/internal/queue"
	"socialstream/internal/ratelimit"
	"socialstream/internal/rebuild"
	"socialstream/internal/scheduled"
	"socialstream/internal/store"
	"socialstream/internal/tags"
	"socialstream/internal/tracing"
	"socialstream/internal/trends"
)

// Config is the service's configuration. FromEnv fills it from the
// environment; docs/deploy.md lists the variables.
type Config struct {
	Port      string // PORT
	Project   string // GOOGLE_CLOUD_PROJECT
	Namespace string // DATASTORE_NAMESPACE

	DatastoreEmulatorHost string // DATASTORE_EMULATOR_HOST
	TasksEmulatorHost     string // CLOUD_TASKS_EMULATOR_HOST
	TasksLocation         string // CLOUD_TASKS_LOCATION; on App Engine, empty: its region (Region)

	// MediaBucket is MEDIA_BUCKET, the Cloud Storage bucket of the
	// pictures (default: the project's default bucket, PROJECT.appspot.com).
	MediaBucket string
	// StorageEmulatorHost is STORAGE_EMULATOR_HOST: a Cloud Storage
	// emulator's host:port, instead of Cloud Storage.
	StorageEmulatorHost string
	// PublicURL is PUBLIC_URL, the service's own URL (https://host), that
	// the links to pictures start with; empty: they start at the root.
	PublicURL string
	// Forwarded is FORWARDED_HEADERS: the headers the proxy in front of
	// the service sets, which say the scheme and host a client reached it
	// at (the Mastodon face's links); on App Engine, X-Forwarded-Proto
	// unless it says otherwise, elsewhere none.
	Forwarded forwarded.Trust
	// CORSOrigins is CORS_ORIGINS: the origins whose pages may call the
	// REST and JSON-RPC faces (and /auth) from a browser, exact and
	// comma-separated; none by default. The Mastodon face's token routes
	// answer any origin (api.OpenRoute).
	CORSOrigins []string
	// UploadMemory is UPLOAD_MEMORY, the MiB an instance's uploads may
	// hold at once while they are decoded (media.Config.Memory); 0: the
	// default, for F2.
	UploadMemory int

	// TraceSample is TRACE_SAMPLE: the share (0 to 1) of requests traced
	// to Cloud Trace beside those whose caller asked for a trace (package
	// tracing); 0 traces none. Default: 0.1 on App Engine, else 0.
	TraceSample float64

	OnAppEngine bool   // GAE_ENV == "standard"
	Service     string // GAE_SERVICE: tasks are routed back to it

	CopyLimit   int // COPY_LIMIT: activities copied at once on follow or join
	BackfillMax int // BACKFILL_MAX: older activities the backfill covers; 0 is off
	// GiveUpAfter is how long a job waits for the change it is about to
	// commit (0: 2 minutes), and BackfillBatch how many activities one
	// backfill job covers (0: 50); no variable sets them: the
	// convergence checker does.
	GiveUpAfter   time.Duration
	BackfillBatch int
	// PruneWindow is how often, at most, one person's notifications are
	// pruned (0: 10 seconds); no variable sets it: the bill, which meters
	// each operation with the pruning it enqueues, does.
	PruneWindow time.Duration
	// CelebrityFollowers is CELEBRITY_FOLLOWERS: how many followers make
	// a person a celebrity at their next post, whose posts their
	// followers' homes then merge in as they are read instead of holding
	// copies (0, the default: nobody is one).
	CelebrityFollowers int
	// HomeRetention is HOME_RETENTION, a Go duration: how far back a home
	// feed reaches, and how long its audience copies are kept (0: for
	// ever; else at least MinHomeRetention).
	HomeRetention time.Duration

	LogLevel   slog.Level    // LOG_LEVEL: debug, info, warn, error
	BcryptCost int           // BCRYPT_COST
	TokenTTL   time.Duration // TOKEN_TTL, a Go duration
	// TokenCacheTTL is TOKEN_CACHE_TTL, a Go duration: how long an
	// instance trusts a token it has verified (default 30s; 0 disables).
	TokenCacheTTL time.Duration
	// PageCacheTTL is PAGE_CACHE_TTL, a Go duration: how long an
	// instance keeps the activities, people's cards, notifications and
	// readers' states its pages read (default 30m; 0 disables). A
	// change leaves every instance's cache before the first page begun
	// PageCacheSync after it answers (docs/performance.md).
	PageCacheTTL time.Duration
	// PageCacheSync is PAGE_CACHE_SYNC, a Go duration: how long before a
	// page began an instance's last ask for the marks of changes may
	// have begun and still serve it (default 100ms, at most
	// MaxPageCacheSync). An instance asks at most once in that time,
	// whatever its rate of pages, and a change shows on every instance
	// on the first page begun that long after its commit.
	PageCacheSync time.Duration
	// PageCacheShards is PAGE_CACHE_SHARDS: how many ranges of the
	// index the marks of changes are spread over (default 1, at most
	// MaxPageCacheShards), so that none takes more writes a second than
	// Firestore can; an ask reads one more entity for each.
	PageCacheShards int
	// PageCacheRedis is PAGE_CACHE_REDIS: the address of the cache tier
	// the instances share (Memorystore: redis://10.0.0.3:6379, with
	// :password@ or rediss:// as it is set up), under each instance's own
	// (store.Shared; docs/performance.md). Empty: none. The local stack
	// takes "local": a redis-server of its own.
	PageCacheRedis string
	// PageCacheLocalOff is PAGE_CACHE_LOCAL=off, with PageCacheRedis:
	// instances keep nothing of their own, the tier is the cache, and no
	// write marks its changes (store.CacheConfig.SharedOnly). Every
	// instance must say the same.
	PageCacheLocalOff bool
	// PageCacheAskAlways makes every page that answers from the cache
	// ask for the marks of changes, rather than share an ask begun up to
	// PageCacheSync before it: the most a page reads (the bill's).
	PageCacheAskAlways bool
	// PageCacheRemarkAfter is how long a write's commit may take before
	// its marks of changes are written again (0: a second;
	// store.CacheConfig.RemarkAfter): the bill's is longer than any.
	PageCacheRemarkAfter time.Duration
	// PageCacheEntries is PAGE_CACHE_ENTRIES: how many it keeps at most
	// (default 20,000, a few KB each).
	PageCacheEntries int

	// TasksSecret is TASKS_SECRET: off App Engine, the secret task
	// requests must carry (api.TaskSecretHeader); required there.
	TasksSecret string
	// WebPushAllowLoopback is WEB_PUSH_ALLOW_LOOPBACK=1: push endpoints
	// may be plain http to a loopback address, for tests and the local
	// stack; refused on App Engine.
	WebPushAllowLoopback bool
	// LinkPreviewsOff is LINK_PREVIEWS=off: posts get no preview cards of
	// their links (on by default, as Mastodon's are), and
	// LinkPreviewsAllowLoopback is LINK_PREVIEWS_ALLOW_LOOPBACK=1: the
	// pages may be on a loopback address, for tests and the local stack
	// alone; refused on App Engine.
	LinkPreviewsOff           bool
	LinkPreviewsAllowLoopback bool
	// TrendsReviewOff is TRENDS_REVIEW=off: what people use trends with
	// no moderator's approval (on by default, as Mastodon's review is).
	TrendsReviewOff bool
	// Federation is FEDERATION_DOMAIN, the domain the deployment federates
	// as (off when empty), and FEDERATION_ALLOW_LOOPBACK=1, for tests on
	// one machine alone; refused on App Engine.
	Federation federation.Config
	// RateLimits are RATE_LIMITS=off, or the defaults changed by
	// RATE_LIMIT_ACCOUNT, RATE_LIMIT_ADDRESS, RATE_LIMIT_LOGIN,
	// RATE_LIMIT_REGISTER and RATE_LIMIT_UPLOAD, each QUOTA/WINDOW (300/5m).
	RateLimits ratelimit.Config
}

// MinTasksSecret is the shortest TASKS_SECRET accepted.
const MinTasksSecret = 32

// FromEnv reads the configuration with getenv (os.Getenv in main) and
// checks it for a deployment (Deployable).
func FromEnv(getenv func(string) string) (Config, error) {
	c, err := ReadEnv(getenv)
	if err != nil {
		return c, err
	}
	return c, c.Deployable()
}

// ReadEnv reads the configuration with getenv and checks what it says
// (Validate), but not what a deployment needs besides: the local stack
// reads the same variables and fills in the rest.
func ReadEnv(getenv func(string) string) (Config, error) {
	c := Config{
		Port:                  getenv("PORT"),
		Project:               getenv("GOOGLE_CLOUD_PROJECT"),
		Namespace:             getenv("DATASTORE_NAMESPACE"),
		DatastoreEmulatorHost: getenv("DATASTORE_EMULATOR_HOST"),
		TasksEmulatorHost:     getenv("CLOUD_TASKS_EMULATOR_HOST"),
		TasksLocation:         getenv("CLOUD_TASKS_LOCATION"),
		OnAppEngine:           getenv("GAE_ENV") == "standard",
		Service:               getenv("GAE_SERVICE"),
		TasksSecret:           getenv("TASKS_SECRET"),
		MediaBucket:           getenv("MEDIA_BUCKET"),
		StorageEmulatorHost:   getenv("STORAGE_EMULATOR_HOST"),
		PublicURL:             strings.TrimSuffix(getenv("PUBLIC_URL"), "/"),
		PageCacheRedis:        getenv("PAGE_CACHE_REDIS"),
		RateLimits:            ratelimit.Defaults(),
	}
	var err error
	if c.CORSOrigins, err = api.ParseOrigins(getenv("CORS_ORIGINS")); err != nil {
		return c, fmt.Errorf("CORS_ORIGINS: %w", err)
	}
	if c.Forwarded, err = forwarded.Parse(getenv("FORWARDED_HEADERS")); err != nil {
		return c, fmt.Errorf("FORWARDED_HEADERS: %w", err)
	}
	if getenv("FORWARDED_HEADERS") == "" && c.OnAppEngine {
		c.Forwarded.Proto = true // App Engine's front end sets it, whatever a client sent
	}
	if c.Port == "" {
		c.Port = "8080"
	}
	if c.Project == "" {
		c.Project = getenv("DATASTORE_PROJECT_ID")
	}
	if c.MediaBucket == "" && c.Project != "" {
		c.MediaBucket = c.Project + ".appspot.com"
	}
	for _, v := range []struct {
		name string
		dst  *bool
	}{{"WEB_PUSH_ALLOW_LOOPBACK", &c.WebPushAllowLoopback}, {"FEDERATION_ALLOW_LOOPBACK", &c.Federation.AllowLoopback},
		{"LINK_PREVIEWS_ALLOW_LOOPBACK", &c.LinkPreviewsAllowLoopback}} {
		switch s := getenv(v.name); s {
		case "", "0":
		case "1":
			*v.dst = true
		default:
			return c, fmt.Errorf("%s %q: only 1 or unset", v.name, s)
		}
	}
	for _, v := range []struct {
		name string
		off  *bool
	}{{"LINK_PREVIEWS", &c.LinkPreviewsOff}, {"TRENDS_REVIEW", &c.TrendsReviewOff}, {"PAGE_CACHE_LOCAL", &c.PageCacheLocalOff}} {
		switch s := getenv(v.name); s {
		case "", "on":
		case "off":
			*v.off = true
		default:
			return c, fmt.Errorf("%s %q: on or off", v.name, s)
		}
	}
	if c.Federation.Domain, err = federation.ParseDomain(getenv("FEDERATION_DOMAIN"), c.Federation.AllowLoopback); err != nil {
		return c, err
	}
	for _, read := range []func(func(string) string) error{c.readRateLimits, c.readNumbers, c.readDurations} {
		if err := read(getenv); err != nil {
			return c, err
		}
	}
	return c, c.Validate()
}

// readRateLimits reads RATE_LIMITS and the RATE_LIMIT_... rules.
func (c *Config) readRateLimits(getenv func(string) string) error {
	switch v := getenv("RATE_LIMITS"); v {
	case "", "on":
	case "off":
		c.RateLimits.Off = true
	default:
		return fmt.Errorf("RATE_LIMITS %q: only off or on", v)
	}
	for _, v := range []struct {
		name string
		dst  *ratelimit.Rule
	}{
		{"RATE_LIMIT_ACCOUNT", &c.RateLimits.Account}, {"RATE_LIMIT_ADDRESS", &c.RateLimits.Address},
		{"RATE_LIMIT_LOGIN", &c.RateLimits.Login}, {"RATE_LIMIT_REGISTER", &c.RateLimits.Register},
		{"RATE_LIMIT_UPLOAD", &c.RateLimits.Upload},
	} {
		if s := getenv(v.name); s != "" {
			r, err := ratelimit.ParseRule(s)
			if err != nil {
				return fmt.Errorf("%s: %w", v.name, err)
			}
			*v.dst = r
		}
	}
	return nil
}

// readNumbers reads the numbers and levels: TRACE_SAMPLE, COPY_LIMIT,
// BACKFILL_MAX, UPLOAD_MEMORY, BCRYPT_COST, PAGE_CACHE_ENTRIES,
// PAGE_CACHE_SHARDS, CELEBRITY_FOLLOWERS and LOG_LEVEL.
func (c *Config) readNumbers(getenv func(string) string) error {
	if c.OnAppEngine {
		c.TraceSample = 0.1
	}
	if v := getenv("TRACE_SAMPLE"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f >= 0 && f <= 1) {
			return fmt.Errorf("TRACE_SAMPLE %q: a share from 0 to 1", v)
		}
		c.TraceSample = f
	}
	c.CopyLimit, c.BackfillMax = 200, 1000
	for _, v := range []struct {
		name string
		dst  *int
	}{{"COPY_LIMIT", &c.CopyLimit}, {"BACKFILL_MAX", &c.BackfillMax}, {"UPLOAD_MEMORY", &c.UploadMemory}, {"BCRYPT_COST", &c.BcryptCost}, {"PAGE_CACHE_ENTRIES", &c.PageCacheEntries},
		{"PAGE_CACHE_SHARDS", &c.PageCacheShards}, {"CELEBRITY_FOLLOWERS", &c.CelebrityFollowers}} {
		if s := getenv(v.name); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil {
				return fmt.Errorf("%s: %w", v.name, err)
			}
			*v.dst = n
		}
	}
	if least := media.MinMemory >> 20; c.UploadMemory != 0 && c.UploadMemory < least {
		return fmt.Errorf("UPLOAD_MEMORY %d: at least %d (MiB), what a phone's photo holds", c.UploadMemory, least)
	}
	if v := getenv("LOG_LEVEL"); v != "" {
		if err := c.LogLevel.UnmarshalText([]byte(v)); err != nil {
			return fmt.Errorf("LOG_LEVEL: %w", err)
		}
	}
	return nil
}

// readDurations reads TOKEN_CACHE_TTL, PAGE_CACHE_TTL, PAGE_CACHE_SYNC,
// HOME_RETENTION and TOKEN_TTL, Go durations.
func (c *Config) readDurations(getenv func(string) string) error {
	c.TokenCacheTTL, c.PageCacheTTL, c.PageCacheSync = 30*time.Second, DefaultPageCacheTTL, DefaultPageCacheSync
	for _, v := range []struct {
		name string
		dst  *time.Duration
	}{{"TOKEN_CACHE_TTL", &c.TokenCacheTTL}, {"PAGE_CACHE_TTL", &c.PageCacheTTL}, {"PAGE_CACHE_SYNC", &c.PageCacheSync},
		{"HOME_RETENTION", &c.HomeRetention}, {"TOKEN_TTL", &c.TokenTTL}} {
		if s := getenv(v.name); s != "" {
			d, err := time.ParseDuration(s)
			if err != nil {
				return fmt.Errorf("%s: %w", v.name, err)
			}
			*v.dst = d
		}
	}
	if v := getenv("TOKEN_TTL"); v != "" && c.TokenTTL <= 0 {
		return fmt.Errorf("TOKEN_TTL %q must be positive (unset: 720h)", v)
	}
	return nil
}

// Deployable checks the configuration for cmd/server: Validate, and off
// App Engine a TASKS_SECRET, without which no task could prove where it
// comes from and no job would run.
func (c Config) Deployable() error {
	errs := []error{c.Validate()}
	if c.Project == "" {
		errs = append(errs, errors.New("GOOGLE_CLOUD_PROJECT is required"))
	}
	if c.TasksLocation == "" && !c.OnAppEngine {
		errs = append(errs, errors.New("CLOUD_TASKS_LOCATION is required off App Engine (the region of the queues, e.g. us-central1)"))
	}
	if c.PageCacheRedis == LocalRedis {
		errs = append(errs, errors.New(`PAGE_CACHE_REDIS "local" is the local stack's: name the tier's address`))
	}
	if !c.OnAppEngine && len(c.TasksSecret) < MinTasksSecret {
		errs = append(errs, fmt.Errorf("TASKS_SECRET of at least %d characters is required off App Engine: task requests must prove they come from the task sender", MinTasksSecret))
	}
	return errors.Join(errs...)
}

// MinHomeRetention is the shortest HOME_RETENTION: a day, so that no job
// still at work on a post (its fan-out, a follow's copies, all retried for
// hours at most) meets the edge.
const MinHomeRetention = 24 * time.Hour

// Validate checks the configuration.
func (c Config) Validate() error {
	errs := c.validateServer()
	errs = append(errs, c.validateLimits()...)
	errs = append(errs, c.validatePageCache()...)
	if err := c.RateLimits.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// validateServer checks where the service listens and what it talks to.
func (c Config) validateServer() []error {
	var errs []error
	if n, err := strconv.Atoi(c.Port); err != nil || n < 0 || n > 65535 {
		errs = append(errs, fmt.Errorf("PORT %q is not a port number", c.Port))
	}
	if c.PublicURL != "" {
		if u, err := url.Parse(c.PublicURL); err != nil || u.Scheme != "https" && u.Scheme != "http" || u.Host == "" || u.Path != "" || u.RawQuery != "" {
			errs = append(errs, fmt.Errorf("PUBLIC_URL %q is not an http or https URL of a host, with no path", c.PublicURL))
		}
	}
	if c.OnAppEngine && (c.DatastoreEmulatorHost != "" || c.TasksEmulatorHost != "" || c.StorageEmulatorHost != "") {
		errs = append(errs, errors.New("emulator hosts must not be set on App Engine"))
	}
	for _, loopback := range []struct {
		on  bool
		err string
	}{
		{c.WebPushAllowLoopback, "WEB_PUSH_ALLOW_LOOPBACK must not be set on App Engine: push endpoints go to public addresses alone"},
		{c.LinkPreviewsAllowLoopback, "LINK_PREVIEWS_ALLOW_LOOPBACK must not be set on App Engine: the pages posts link are on public addresses alone"},
		{c.Federation.AllowLoopback, "FEDERATION_ALLOW_LOOPBACK must not be set on App Engine: other servers are on public addresses alone"},
	} {
		if c.OnAppEngine && loopback.on {
			errs = append(errs, errors.New(loopback.err))
		}
	}
	if strings.ContainsAny(c.Namespace, "/ ") {
		errs = append(errs, fmt.Errorf("DATASTORE_NAMESPACE %q is not a valid namespace", c.Namespace))
	}
	return errs
}

// validateLimits checks the numbers and durations.
func (c Config) validateLimits() []error {
	var errs []error
	for _, check := range []struct {
		bad bool
		err string
	}{
		{c.BcryptCost != 0 && (c.BcryptCost < 4 || c.BcryptCost > 31), fmt.Sprintf("BCRYPT_COST %d is not 4 to 31", c.BcryptCost)},
		{c.CopyLimit < 1 || c.CopyLimit > rebuild.MaxCopyLimit, fmt.Sprintf("COPY_LIMIT %d is not 1 to %d", c.CopyLimit, rebuild.MaxCopyLimit)},
		{c.BackfillMax < 0, "BACKFILL_MAX must not be negative"},
		{c.CelebrityFollowers < 0, "CELEBRITY_FOLLOWERS must not be negative (0: nobody is a celebrity)"},
		{c.HomeRetention != 0 && c.HomeRetention < MinHomeRetention,
			fmt.Sprintf("HOME_RETENTION %v is under %v (0 keeps every copy)", c.HomeRetention, MinHomeRetention)},
		{c.TokenCacheTTL < 0, "TOKEN_CACHE_TTL must not be negative"},
		{c.TokenTTL < 0, "TOKEN_TTL must not be negative (0: 720h)"},
	} {
		if check.bad {
			errs = append(errs, errors.New(check.err))
		}
	}
	return errs
}

// Accounts is the accounts part of the configuration.
func (c Config) Accounts() accounts.Config {
	return accounts.Config{BcryptCost: c.BcryptCost, TokenTTL: c.TokenTTL, TokenCacheTTL: c.TokenCacheTTL}
}

// Rebuild is the rebuild jobs' part of the configuration.
func (c Config) Rebuild() rebuild.Config {
	return rebuild.Config{CopyLimit: c.CopyLimit, BackfillMax: c.BackfillMax, HomeRetention: c.HomeRetention,
		GiveUpAfter: c.GiveUpAfter, BackfillBatch: c.BackfillBatch, PruneWindow: c.PruneWindow,
		CelebrityFollowers: int64(c.CelebrityFollowers)}
}

// App is the built service.
type App struct {
	Handler http.Handler
	closers []func() error
}

// New builds the service from cfg.
func New(ctx context.Context, cfg Config, log *slog.Logger) (_ *App, err error) {
	if err := cfg.Deployable(); err != nil {
		return nil, err
	}
	if cfg.TasksLocation == "" { // on App Engine: its queues are in its region
		if cfg.TasksLocation, err = Region(ctx); err != nil {
			return nil, err
		}
		log.Info("the queues' region, from the metadata server", "location", cfg.TasksLocation)
	}
	a := &App{}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()
	stopTracing, err := tracing.Start(ctx, cfg.Project, cfg.TraceSample)
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, func() error { return stopTracing(context.Background()) })

	dsClient, err := store.Open(ctx, cfg.Project, cfg.DatastoreEmulatorHost)
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, dsClient.Close)
	tasksClient, err := queue.Dial(ctx, cfg.TasksEmulatorHost)
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, tasksClient.Close)

	endpoint := ""
	if cfg.StorageEmulatorHost != "" {
		endpoint = "http://" + cfg.StorageEmulatorHost + "/storage/v1/"
	}
	storageClient, err := media.Dial(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, storageClient.Close)

	var shared *store.Shared
	if cfg.PageCacheRedis != "" {
		if shared, err = store.NewShared(ctx, cfg.PageCacheRedis, log); err != nil {
			return nil, err
		}
		a.closers = append(a.closers, shared.Close)
	}

	a.Handler, err = build(ctx, cfg, log, Parts{Gen: ids.New(), Storage: storageClient, Shared: shared}, dsClient, tasksClient)
	if err != nil {
		return nil, err
	}
	return a, nil
}

// build wires the service over p (its ids, pictures and shared cache)
// and the clients of the Datastore and Cloud Tasks.
func build(ctx context.Context, cfg Config, log *slog.Logger, p Parts, dsClient *datastore.Client, tasksClient *cloudtasks.Client) (http.Handler, error) {
	db, err := store.New(dsClient, cfg.Namespace)
	if err != nil {
		return nil, err
	}
	q, err := queue.NewCloudTasks(tasksClient, queue.Config{Project: cfg.Project, Location: cfg.TasksLocation, Service: cfg.Service})
	if err != nil {
		return nil, err
	}
	p.DB, p.Queue = db, q
	s, h, err := Wire(cfg, log, p)
	if err != nil {
		return nil, err
	}
	if err := s.Warm(ctx); err != nil {
		log.Warn("the keys were not read; the first page to need them will", "err", err)
	}
	return h, nil
}

// Parts are what the service runs on, opened by its caller from the
// configuration (cmd/server) or started beside it (the local stack): the
// store, the ids' generator, the queues, and the pictures' Cloud Storage
// client (nil: no pictures, for stacks that serve no API).
type Parts struct {
	DB      *store.DB
	Gen     *ids.Generator
	Queue   queue.Queue
	Storage *storage.Client
	// Shared is the cache tier the instances share (nil: none).
	Shared *store.Shared
}

// Wire builds the services over p and the API's handler, from every
// setting of cfg that is not about reaching the parts: accounts and
// tokens, the copies' limits and retention, the pictures' bucket, links
// and memory, the rate limits (none when cfg.RateLimits.Off), CORS, and
// the task requests' proof. It is the one function cmd/server and the
// local stack both call, so a setting cannot reach one and not the other.
func Wire(cfg Config, log *slog.Logger, p Parts) (*Services, http.Handler, error) {
	if cfg.PageCacheTTL > 0 {
		p.DB = p.DB.WithCache(store.NewCache(cfg.PageCache(p.Shared)))
	}
	acc, err := accounts.New(p.DB, p.Gen, cfg.Accounts())
	if err != nil {
		return nil, nil, err
	}
	pics := Pictures{Client: p.Storage, Bucket: cfg.MediaBucket, PublicURL: cfg.PublicURL, Memory: int64(cfg.UploadMemory) << 20}
	allowLoopback := cfg.Federation.AllowLoopback || cfg.LinkPreviewsAllowLoopback
	if !cfg.LinkPreviewsOff {
		pics.Previews = cards.NewClient(cfg.LinkPreviewsAllowLoopback)
	}
	if cfg.Federation.On() || pics.Previews != nil {
		pics.Elsewhere = egress.New(egress.Config{AllowLoopback: allowLoopback, MaxBody: media.MaxBytes, Timeout: media.FetchTimeout})
		// Pictures are often served by a redirect to where they are
		// stored: up to media.MaxRedirects are followed, each address
		// dialled checked as the first.
		pics.Elsewhere.CheckRedirect = func(_ *http.Request, via []*http.Request) error {
			if len(via) > media.MaxRedirects {
				return http.ErrUseLastResponse
			}
			return nil
		}
	}
	// Every job waits GiveUpAfter for the change it follows.
	p.Queue = queue.Patient(p.Queue, cfg.GiveUpAfter)
	s, err := NewServices(p.DB, p.Gen, acc, p.Queue, log, cfg.Rebuild(), pics, Push{AllowLoopback: cfg.WebPushAllowLoopback}, cfg.Federation,
		trends.Config{ReviewOff: cfg.TrendsReviewOff})
	if err != nil {
		return nil, nil, err
	}
	s.Cache = p.DB.Cache()
	guard := api.Guard{OnAppEngine: cfg.OnAppEngine, TaskSecret: cfg.TasksSecret, CORSOrigins: cfg.CORSOrigins, Forwarded: cfg.Forwarded}
	if guard.Limits, err = ratelimit.New(p.DB, cfg.RateLimits); err != nil {
		return nil, nil, err
	}
	h, err := Routes(s, log, guard)
	if err != nil {
		return nil, nil, err
	}
	return s, h, nil
}

// Services are the domain services, built in the order of ownership.
type Services struct {
	// Cache is what the instance's pages read through (nil: none).
	Cache         *store.Cache
	Accounts      *accounts.Service
	Notifications *notifications.Service
	Rebuild       *rebuild.Service
	Graph         *graph.Service
	Groups        *groups.Service
	Activities    *activities.Service
	Trends        *trends.Service
	Comments      *comments.Service
	Likes         *likes.Service
	Bookmarks     *bookmarks.Service
	OAuth         *oauth.Service
	Lifecycle     *lifecycle.Service
	AppData       *appdata.Service
	Mutes         *mutes.Service
	Markers       *markers.Service
	Conversations *conversations.Service
	Filters       *filters.Service
	Moderation    *moderation.Service
	Tags          *tags.Service
	Media         *media.Service // nil without Pictures
	Push          *push.Service
	// Polls closes polls at their end.
	Polls *polls.Closer
	// Scheduled keeps the posts to publish later, and publishes them.
	Scheduled *scheduled.Service
	// Keys are people's key pairs, and Federation the deployment's part
	// in the fediverse (off when its configuration's Domain is empty).
	Keys       *federation.Keys
	Federation *federation.Service
	// Cursors seals the cursors the API hands out.
	Cursors *cursor.Sealer
}

// Warm reads (or makes) the service's own keys as an instance starts:
// the cursors', the VAPID keys and the picture links'.
func (s *Services) Warm(ctx context.Context) error {
	if err := s.Cursors.Warm(ctx); err != nil {
		return err
	}
	if err := s.Push.Keys().Warm(ctx); err != nil {
		return err
	}
	if s.Media != nil {
		return s.Media.Links.Warm(ctx)
	}
	return nil
}

// Pictures says where pictures are kept: a Cloud Storage client and the
// bucket, and the service's public URL for the links to them ("" for
// links from the root). The zero Pictures is none, for services that
// serve no API.
type Pictures struct {
	Client    *storage.Client
	Bucket    string
	PublicURL string
	Memory    int64 // media.Config.Memory: 0 for the default
	// Elsewhere is media.Config.Client, the guarded client that fetches
	// pictures of posts from other servers and of link previews.
	Elsewhere *http.Client
	// Previews, when set, fetches the pages the posts link, for their
	// preview cards (cards.NewClient); nil: posts get none.
	Previews *http.Client
}

// Push is the Web Push part of the configuration.
type Push struct {
	// AllowLoopback lets endpoints be http to a loopback address.
	AllowLoopback bool
}

// Routes returns the HTTP handler of the services, behind guard: the
// router (Router), within CORS (open on the Mastodon face's token routes,
// for the origins guard names elsewhere), and traced.
func Routes(s *Services, log *slog.Logger, guard api.Guard) (http.Handler, error) {
	r, err := Router(s, log, guard)
	if err != nil {
		return nil, err
	}
	return tracing.Handler(api.CORS(guard.CORSOrigins, r)), nil
}

// Router returns the router of the services' faces, built side by side:
// the Mastodon face, and the ActivityPub face when the deployment
// federates, each borrowing the REST face's doors (api.NewHost), then
// the REST face, which serves them beside it, and the jobs' handlers.
func Router(s *Services, log *slog.Logger, guard api.Guard) (*gin.Engine, error) {
	host := api.NewHost(guard, log)
	fcfg := s.Federation.Config()
	var remote mastodon.Remote
	if fcfg.On() {
		remote = s.Federation
	}
	faces := []api.Face{mastodon.New(mastodon.Deps{Accounts: s.Accounts, Graph: s.Graph, Activities: s.Activities, Likes: s.Likes,
		Bookmarks: s.Bookmarks, OAuth: s.OAuth, Notifications: s.Notifications, Mutes: s.Mutes, Markers: s.Markers,
		Filters: s.Filters, Moderation: s.Moderation, Tags: s.Tags, Media: s.Media, Push: s.Push, Scheduled: s.Scheduled,
		Conversations: s.Conversations, Cursors: s.Cursors, Logger: log,
		Host: host, Forwarded: guard.Forwarded, NoRoute: api.ErrNoRoute, NoMethod: api.ErrNoMethod, MaxBody: api.MaxBody,
		Federation: fcfg, Remote: remote})}
	ap, err := activitypub.New(activitypub.Deps{Federation: s.Federation, Accounts: s.Accounts, Activities: s.Activities, Logger: log, Host: host})
	if err != nil {
		return nil, err
	}
	if ap != nil {
		faces = append(faces, ap)
	}
	routes, err := jobs.New(jobs.Runners{Activities: s.Activities, Rebuild: s.Rebuild, Notifications: s.Notifications,
		Lifecycle: s.Lifecycle, Moderation: s.Moderation, Graph: s.Graph, Push: s.Push, Media: s.Media, Federation: s.Federation,
		Polls: s.Polls, Scheduled: s.Scheduled}, log)
	if err != nil {
		return nil, err
	}
	srv, err := api.New(api.Deps{Accounts: s.Accounts, Graph: s.Graph, Groups: s.Groups, Activities: s.Activities, Rebuild: s.Rebuild,
		Comments: s.Comments, Likes: s.Likes, Bookmarks: s.Bookmarks, OAuth: s.OAuth, Notifications: s.Notifications, Lifecycle: s.Lifecycle,
		AppData: s.AppData, Mutes: s.Mutes, Markers: s.Markers, Filters: s.Filters, Moderation: s.Moderation, Tags: s.Tags, Media: s.Media,
		Push: s.Push, Scheduled: s.Scheduled, Conversations: s.Conversations, Cursors: s.Cursors, Logger: log, Guard: guard, Faces: faces, Jobs: routes})
	if err != nil {
		return nil, err
	}
	return srv.Routes(), nil
}

// Close releases the clients.
func (a *App) Close() error {
	var errs []error
	for i := len(a.closers) - 1; i >= 0; i-- {
		errs = append(errs, a.closers[i]())
	}
	a.closers = nil
	return errors.Join(errs...)
}

// Serve serves h on l until ctx is done, then shuts down gracefully,
// letting requests under way finish for up to 10 seconds.
func Serve(ctx context.Context, l net.Listener, h http.Handler, log *slog.Logger) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}
