package app

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"socialstream/internal/accounts"
	"socialstream/internal/activities"
	"socialstream/internal/notifications"
	"socialstream/internal/store"
	"socialstream/internal/viewer"
)

// The page cache's settings: what each instance keeps of what its pages
// read (PAGE_CACHE_TTL, _ENTRIES), how the marks of changes reach it
// (PAGE_CACHE_SYNC, _SHARDS), and the tier the instances may share
// (PAGE_CACHE_REDIS, _LOCAL). docs/performance.md, "What an instance
// keeps".

// LocalRedis is the PAGE_CACHE_REDIS of a local stack that starts a
// redis-server of its own.
const LocalRedis = "local"

// PAGE_CACHE_TTL's default and its longest: the marks of changes
// (store.KindChange) must outlive what they name.
const (
	DefaultPageCacheTTL = 30 * time.Minute
	MaxPageCacheTTL     = store.MaxCacheTTL
)

// PAGE_CACHE_SYNC's default and its longest, and PAGE_CACHE_SHARDS'
// most.
const (
	DefaultPageCacheSync = 100 * time.Millisecond
	MaxPageCacheSync     = 10 * time.Second
	MaxPageCacheShards   = 64
)

// pageCacheShare is how long before a request began an ask for the marks
// of changes may have begun and serve it (store.CacheConfig.Share).
func (c Config) pageCacheShare() time.Duration {
	if c.PageCacheAskAlways {
		return 0
	}
	return c.PageCacheSync
}

// DefaultPageCacheEntries is PAGE_CACHE_ENTRIES' default.
const DefaultPageCacheEntries = 20000

// validatePageCache checks the page cache's settings.
func (c Config) validatePageCache() []error {
	var errs []error
	for _, check := range []struct {
		bad bool
		err string
	}{
		{c.PageCacheTTL < 0 || c.PageCacheTTL > MaxPageCacheTTL, fmt.Sprintf("PAGE_CACHE_TTL %v is not 0 to %v", c.PageCacheTTL, MaxPageCacheTTL)},
		{c.PageCacheEntries < 0, "PAGE_CACHE_ENTRIES must not be negative"},
		{c.PageCacheSync < 0 || c.PageCacheSync > MaxPageCacheSync, fmt.Sprintf("PAGE_CACHE_SYNC %v is not 0 to %v", c.PageCacheSync, MaxPageCacheSync)},
		{c.PageCacheShards < 0 || c.PageCacheShards > MaxPageCacheShards,
			fmt.Sprintf("PAGE_CACHE_SHARDS %d is not 1 to %d", c.PageCacheShards, MaxPageCacheShards)},
		{c.PageCacheRedis != "" && c.PageCacheTTL == 0, "PAGE_CACHE_REDIS needs the page cache (PAGE_CACHE_TTL is 0)"},
		{c.PageCacheLocalOff && c.PageCacheRedis == "", "PAGE_CACHE_LOCAL=off needs PAGE_CACHE_REDIS: with neither, nothing is kept"},
	} {
		if check.bad {
			errs = append(errs, errors.New(check.err))
		}
	}
	if c.PageCacheRedis != "" && c.PageCacheRedis != LocalRedis {
		if err := store.ParseSharedURL(c.PageCacheRedis); err != nil {
			errs = append(errs, fmt.Errorf("PAGE_CACHE_REDIS: %w", err))
		}
	}
	return errs
}

// PageCache is the cache the settings ask for, over shared (nil: no
// tier): what Wire gives the instance, and a test its instances.
func (c Config) PageCache(shared *store.Shared) store.CacheConfig {
	return store.CacheConfig{
		Kinds:       slices.Concat(activities.PageKinds(), accounts.PageKinds(), notifications.PageKinds(), viewer.PageKinds()),
		TTL:         c.PageCacheTTL,
		Entries:     cmp.Or(c.PageCacheEntries, DefaultPageCacheEntries),
		Share:       c.pageCacheShare(),
		Shards:      c.PageCacheShards,
		Shared:      shared,
		SharedOnly:  c.PageCacheLocalOff,
		RemarkAfter: c.PageCacheRemarkAfter,
		Derived:     notifications.Derived,
		Answers:     activities.PageAnswers(),
	}
}
