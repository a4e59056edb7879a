package app

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"socialstream/internal/forwarded"
	"socialstream/internal/ratelimit"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestFromEnv(t *testing.T) {
	got, err := FromEnv(env(map[string]string{
		"GOOGLE_CLOUD_PROJECT": "p1", "CLOUD_TASKS_LOCATION": "us-central1",
		"GAE_ENV": "standard", "GAE_SERVICE": "api", "LOG_LEVEL": "warn",
		"BCRYPT_COST": "12", "TOKEN_TTL": "72h", "DATASTORE_NAMESPACE": "staging",
		"TOKEN_CACHE_TTL": "10s", "RATE_LIMIT_LOGIN": "5/10m", "HOME_RETENTION": "2160h",
		"RATE_LIMIT_UPLOAD": "10/1h", "PUBLIC_URL": "https://p1.example.com/",
		"CORS_ORIGINS": "https://Gadgets.example.com, http://localhost:3000", "UPLOAD_MEMORY": "400",
		"TRACE_SAMPLE": "0.25", "PAGE_CACHE_TTL": "30s", "PAGE_CACHE_ENTRIES": "5000", "TRENDS_REVIEW": "off",
		"PAGE_CACHE_SYNC": "1s", "PAGE_CACHE_SHARDS": "8", "PAGE_CACHE_REDIS": "redis://127.0.0.1:6379", "PAGE_CACHE_LOCAL": "off",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Port: "8080", Project: "p1", Namespace: "staging", TasksLocation: "us-central1",
		OnAppEngine: true, Service: "api", LogLevel: slog.LevelWarn, BcryptCost: 12, TokenTTL: 72 * time.Hour,
		TokenCacheTTL: 10 * time.Second, PageCacheTTL: 30 * time.Second, PageCacheEntries: 5000, CopyLimit: 200, BackfillMax: 1000, HomeRetention: 90 * 24 * time.Hour, RateLimits: ratelimit.Defaults(),
		PageCacheSync: time.Second, PageCacheShards: 8, PageCacheRedis: "redis://127.0.0.1:6379", PageCacheLocalOff: true,
		MediaBucket: "p1.appspot.com", PublicURL: "https://p1.example.com",
		CORSOrigins: []string{"https://gadgets.example.com", "http://localhost:3000"}, UploadMemory: 400, TraceSample: 0.25,
		Forwarded:       forwarded.Trust{Proto: true}, // App Engine's front end, unless FORWARDED_HEADERS says otherwise
		TrendsReviewOff: true}
	want.RateLimits.Login = ratelimit.Rule{Quota: 5, Window: 10 * time.Minute}
	want.RateLimits.Upload = ratelimit.Rule{Quota: 10, Window: time.Hour}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

func TestFromEnvRejects(t *testing.T) {
	base := map[string]string{"GOOGLE_CLOUD_PROJECT": "p", "CLOUD_TASKS_LOCATION": "l", "TASKS_SECRET": strings.Repeat("s", MinTasksSecret)}
	tests := map[string]map[string]string{
		"no project":                          {"CLOUD_TASKS_LOCATION": "l"},
		"no location":                         {"GOOGLE_CLOUD_PROJECT": "p"},
		"bad port":                            {"PORT": "http"},
		"bad level":                           {"LOG_LEVEL": "loud"},
		"bad cost":                            {"BCRYPT_COST": "40"},
		"bad ttl":                             {"TOKEN_TTL": "soon"},
		"zero ttl":                            {"TOKEN_TTL": "0"},
		"trace sample over 1":                 {"TRACE_SAMPLE": "2"},
		"trace sample not a number":           {"TRACE_SAMPLE": "all"},
		"negative trace sample":               {"TRACE_SAMPLE": "-0.1"},
		"origin with a path":                  {"CORS_ORIGINS": "https://a.example/gadgets"},
		"wildcard origin":                     {"CORS_ORIGINS": "*"},
		"a forwarded header not known":        {"FORWARDED_HEADERS": "X-Real-IP"},
		"origin of another scheme":            {"CORS_ORIGINS": "ftp://a.example"},
		"upload memory under the least":       {"UPLOAD_MEMORY": "100"},
		"negative ttl":                        {"TOKEN_TTL": "-1h"},
		"bad cache ttl":                       {"TOKEN_CACHE_TTL": "later"},
		"negative cache ttl":                  {"TOKEN_CACHE_TTL": "-1s"},
		"emulator on App Engine":              {"GAE_ENV": "standard", "DATASTORE_EMULATOR_HOST": "localhost:1"},
		"bad namespace":                       {"DATASTORE_NAMESPACE": "a/b"},
		"copy limit too big":                  {"COPY_LIMIT": "1001"},
		"copy limit zero":                     {"COPY_LIMIT": "0"},
		"negative backfill":                   {"BACKFILL_MAX": "-1"},
		"bad retention":                       {"HOME_RETENTION": "90d"},
		"short retention":                     {"HOME_RETENTION": "1h"},
		"negative retention":                  {"HOME_RETENTION": "-24h"},
		"no task secret":                      {"TASKS_SECRET": ""},
		"short task secret":                   {"TASKS_SECRET": "short"},
		"rate limits maybe":                   {"RATE_LIMITS": "maybe"},
		"trends' review maybe":                {"TRENDS_REVIEW": "maybe"},
		"link previews maybe":                 {"LINK_PREVIEWS": "maybe"},
		"bad account limit":                   {"RATE_LIMIT_ACCOUNT": "300"},
		"zero login limit":                    {"RATE_LIMIT_LOGIN": "0/1m"},
		"tiny register window":                {"RATE_LIMIT_REGISTER": "5/1ms"},
		"no upload limit":                     {"RATE_LIMIT_UPLOAD": "0/1h"},
		"public URL with a path":              {"PUBLIC_URL": "https://example.com/app"},
		"public URL not http":                 {"PUBLIC_URL": "ftp://example.com"},
		"storage emulator on App Engine":      {"GAE_ENV": "standard", "STORAGE_EMULATOR_HOST": "localhost:1"},
		"push to loopback on App Engine":      {"GAE_ENV": "standard", "WEB_PUSH_ALLOW_LOOPBACK": "1"},
		"push to loopback, yes":               {"WEB_PUSH_ALLOW_LOOPBACK": "yes"},
		"federation loopback on App Engine":   {"GAE_ENV": "standard", "FEDERATION_ALLOW_LOOPBACK": "1"},
		"federation loopback, yes":            {"FEDERATION_ALLOW_LOOPBACK": "yes"},
		"federation domain with a scheme":     {"FEDERATION_DOMAIN": "https://social.example"},
		"federation domain in upper case":     {"FEDERATION_DOMAIN": "Social.example"},
		"federation domain of one label":      {"FEDERATION_DOMAIN": "social"},
		"federation domain with a path":       {"FEDERATION_DOMAIN": "social.example/x"},
		"federation domain with a port":       {"FEDERATION_DOMAIN": "social.example:8443"},
		"federation domain an address":        {"FEDERATION_DOMAIN": "203.0.113.9"},
		"federation on loopback, not allowed": {"FEDERATION_DOMAIN": "127.0.0.1:8090"},
	}
	for name, over := range tests {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range over {
			m[k] = v
		}
		if name == "no project" || name == "no location" {
			m = over
		}
		if _, err := FromEnv(env(m)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := FromEnv(env(base)); err != nil {
		t.Errorf("the base configuration: %v", err)
	}
}

// FEDERATION_DOMAIN turns federation on, under https; a loopback domain,
// over plain http, is for tests alone (FEDERATION_ALLOW_LOOPBACK=1).
func TestFederationConfig(t *testing.T) {
	for _, c := range []struct {
		env      map[string]string
		on       bool
		base     string
		loopback bool
	}{
		{map[string]string{}, false, "", false},
		{map[string]string{"FEDERATION_DOMAIN": "social.example"}, true, "https://social.example", false},
		{map[string]string{"FEDERATION_DOMAIN": "a-b.c.example"}, true, "https://a-b.c.example", false},
		{map[string]string{"FEDERATION_DOMAIN": "127.0.0.1:8090", "FEDERATION_ALLOW_LOOPBACK": "1"}, true, "http://127.0.0.1:8090", true},
		{map[string]string{"FEDERATION_DOMAIN": "localhost:8090", "FEDERATION_ALLOW_LOOPBACK": "1"}, true, "http://localhost:8090", true},
	} {
		cfg, err := ReadEnv(env(c.env))
		if err != nil {
			t.Errorf("%v: %v", c.env, err)
			continue
		}
		f := cfg.Federation
		if f.On() != c.on || f.AllowLoopback != c.loopback || c.on && f.Base() != c.base {
			t.Errorf("%v: on %v, base %q, loopback %v", c.env, f.On(), f.Base(), f.AllowLoopback)
		}
	}
}

// The local stack reads the same variables without what only a deployment
// needs, and RATE_LIMITS=off turns every limit off.
func TestReadEnvForTheLocalStack(t *testing.T) {
	c, err := ReadEnv(env(map[string]string{"RATE_LIMITS": "off", "COPY_LIMIT": "50", "WEB_PUSH_ALLOW_LOOPBACK": "1"}))
	if err != nil {
		t.Fatal(err)
	}
	if !c.RateLimits.Off || c.Rebuild().CopyLimit != 50 || !c.WebPushAllowLoopback {
		t.Errorf("ReadEnv: %+v", c)
	}
	if c.Deployable() == nil {
		t.Error("a configuration without project, location or task secret is deployable")
	}
	// "local" starts a redis-server of the stack's: no deployment has one.
	c, err = ReadEnv(env(map[string]string{"PAGE_CACHE_REDIS": "local", "GOOGLE_CLOUD_PROJECT": "p", "CLOUD_TASKS_LOCATION": "l",
		"TASKS_SECRET": strings.Repeat("s", MinTasksSecret)}))
	if err != nil || c.PageCacheRedis != LocalRedis {
		t.Fatalf("PAGE_CACHE_REDIS local: %q, %v", c.PageCacheRedis, err)
	}
	if err := c.Deployable(); err == nil || !strings.Contains(err.Error(), "PAGE_CACHE_REDIS") {
		t.Errorf("a deployment with PAGE_CACHE_REDIS local: %v", err)
	}
}

// A configuration built in code takes a zero TOKEN_TTL as the default,
// and a negative one is refused, saying what 0 means.
func TestValidateTokenTTL(t *testing.T) {
	c, err := ReadEnv(env(map[string]string{}))
	if err != nil {
		t.Fatal(err)
	}
	c.TokenTTL = 0
	if err := c.Validate(); err != nil {
		t.Errorf("TOKEN_TTL 0: %v", err)
	}
	c.TokenTTL = -time.Hour
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "TOKEN_TTL must not be negative (0: 720h)") {
		t.Errorf("TOKEN_TTL -1h: %v", err)
	}
}

// The page cache is on by default, for half an hour, its longest; 0
// turns it off; past that, what it keeps could outlive the marks of its
// changes.
func TestValidatePageCache(t *testing.T) {
	c, err := ReadEnv(env(map[string]string{}))
	if err != nil {
		t.Fatal(err)
	}
	if c.PageCacheTTL != 30*time.Minute {
		t.Errorf("PAGE_CACHE_TTL by default %v, want 30m", c.PageCacheTTL)
	}
	for ttl, bad := range map[time.Duration]bool{0: false, MaxPageCacheTTL: false, MaxPageCacheTTL + time.Second: true, -time.Second: true} {
		c.PageCacheTTL = ttl
		if err := c.Validate(); (err != nil) != bad || bad && !strings.Contains(err.Error(), "PAGE_CACHE_TTL") {
			t.Errorf("PAGE_CACHE_TTL %v: %v", ttl, err)
		}
	}
	c.PageCacheTTL, c.PageCacheEntries = time.Minute, -1
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "PAGE_CACHE_ENTRIES") {
		t.Errorf("PAGE_CACHE_ENTRIES -1: %v", err)
	}
	c.PageCacheEntries = 0

	// An ask serves the pages of 100 ms by default, of at most 10 s; the
	// marks are one range by default, 64 at most.
	if c.PageCacheSync != 100*time.Millisecond || c.PageCacheShards != 0 {
		t.Errorf("PAGE_CACHE_SYNC %v and PAGE_CACHE_SHARDS %d by default, want 100ms and 0 (one)", c.PageCacheSync, c.PageCacheShards)
	}
	for sync, bad := range map[time.Duration]bool{0: false, MaxPageCacheSync: false, MaxPageCacheSync + 1: true, -1: true} {
		c.PageCacheSync = sync
		if err := c.Validate(); (err != nil) != bad || bad && !strings.Contains(err.Error(), "PAGE_CACHE_SYNC") {
			t.Errorf("PAGE_CACHE_SYNC %v: %v", sync, err)
		}
	}
	c.PageCacheSync = DefaultPageCacheSync
	// The shared tier: an address Redis's client reads, only over a page
	// cache; "local" is the local stack's alone.
	for addr, bad := range map[string]bool{"redis://127.0.0.1:6379": false, "rediss://:secret@127.0.0.1:6378/1": false, "127.0.0.1:6379": true, "local": false} {
		c.PageCacheRedis = addr
		if err := c.Validate(); (err != nil) != bad || bad && !strings.Contains(err.Error(), "PAGE_CACHE_REDIS") {
			t.Errorf("PAGE_CACHE_REDIS %q: %v", addr, err)
		}
	}
	c.PageCacheTTL = 0
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "PAGE_CACHE_REDIS needs the page cache") {
		t.Errorf("PAGE_CACHE_REDIS with no page cache: %v", err)
	}
	c.PageCacheTTL, c.PageCacheRedis = time.Minute, ""
	c.PageCacheLocalOff = true
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "PAGE_CACHE_LOCAL=off needs PAGE_CACHE_REDIS") {
		t.Errorf("PAGE_CACHE_LOCAL=off alone: %v", err)
	}
	c.PageCacheRedis = "redis://127.0.0.1:6379"
	if err := c.Validate(); err != nil {
		t.Errorf("PAGE_CACHE_LOCAL=off over a tier: %v", err)
	}
	c.PageCacheLocalOff, c.PageCacheRedis = false, ""
	for shards, bad := range map[int]bool{1: false, MaxPageCacheShards: false, MaxPageCacheShards + 1: true, -1: true} {
		c.PageCacheShards = shards
		if err := c.Validate(); (err != nil) != bad || bad && !strings.Contains(err.Error(), "PAGE_CACHE_SHARDS") {
			t.Errorf("PAGE_CACHE_SHARDS %d: %v", shards, err)
		}
	}
}
