// Package redisserver starts Debian's redis-server on a loopback port of
// its own, for the shared page cache of the local stack and its tests:
// the real server, kept in memory only (no snapshot, no append-only file).
package redisserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is a running redis-server.
type Server struct {
	// URL is where it answers, as PAGE_CACHE_REDIS names it.
	URL string
	cmd *exec.Cmd
}

// ErrMissing says redis-server is not installed.
var ErrMissing = errors.New("redis-server not found on the PATH (Debian: apt-get install redis-server)")

// Start starts a redis-server on a free loopback port, holding at most
// maxMemory bytes (the least recently used keys leaving first, as a
// Memorystore instance configured for a cache does), and waits until it
// answers.
func Start(ctx context.Context, maxMemory int64) (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, ErrMissing
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	cmd := exec.Command(bin, "--bind", "127.0.0.1", "--port", port, "--save", "", "--appendonly", "no",
		"--maxmemory", strconv.FormatInt(maxMemory, 10), "--maxmemory-policy", "allkeys-lru", "--loglevel", "warning")
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("redisserver: %w", err)
	}
	s := &Server{URL: "redis://127.0.0.1:" + port, cmd: cmd}
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + port})
	defer rdb.Close()
	for deadline := time.Now().Add(10 * time.Second); ; {
		if err := rdb.Ping(ctx).Err(); err == nil {
			return s, nil
		} else if time.Now().After(deadline) || ctx.Err() != nil {
			s.Stop()
			return nil, fmt.Errorf("redisserver: redis-server did not answer: %w", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop stops the server.
func (s *Server) Stop() {
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
}
