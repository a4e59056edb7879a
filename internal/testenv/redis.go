package testenv

import (
	"context"
	"sync"
	"testing"

	"socialstream/internal/redisserver"
)

var (
	redisOnce sync.Once
	redisSrv  *redisserver.Server
	redisErr  error
)

// Redis returns the address (PAGE_CACHE_REDIS's form) of the test
// binary's redis-server, started on first use and stopped by Main. Tests
// share it: what they keep is named by their namespaces. Without
// redis-server the test fails: CI installs it.
func Redis(t testing.TB) string {
	t.Helper()
	redisOnce.Do(func() { redisSrv, redisErr = redisserver.Start(context.Background(), 256<<20) })
	if redisErr != nil {
		t.Fatalf("testenv: %v", redisErr)
	}
	return redisSrv.URL
}

// stopRedis stops the binary's redis-server, if it started one.
func stopRedis() {
	if redisSrv != nil {
		redisSrv.Stop()
	}
}
