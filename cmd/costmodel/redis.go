package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"socialstream/internal/costmodel"
)

// measureRedis starts a redis-server of its own, fills homes of
// costmodel.HomeSize entries as Mastodon does (a sorted set per home, the
// activity id as member and score), and reports the memory each entry
// takes and how many add-and-trim pairs one connection runs a second.
func measureRedis(ctx context.Context, w io.Writer) error {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return errors.New("-measure-redis needs redis-server on the PATH (Debian: apt-get install redis-server)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.CommandContext(ctx, bin, "--port", strconv.Itoa(port), "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	var conn net.Conn
	for i := 0; ; i++ {
		if conn, err = net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err == nil {
			break
		}
		if i == 50 {
			return fmt.Errorf("redis-server did not start: %w", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	defer conn.Close()
	c := &resp{w: bufio.NewWriter(conn), r: bufio.NewReader(conn)}
	version, err := c.info("server", "redis_version")
	if err != nil {
		return err
	}
	before, err := c.usedMemory()
	if err != nil {
		return err
	}
	const homes = 500
	id := int64(1_500_000_000_000_000_000) // 19 digits, as an id is
	for h := 0; h < homes; h++ {
		for i := 0; i < costmodel.HomeSize; i++ {
			id += 7919
			s := strconv.FormatInt(id, 10)
			c.send("ZADD", fmt.Sprintf("home:%d", h), s, s)
		}
		if err := c.replies(costmodel.HomeSize); err != nil {
			return err
		}
	}
	after, err := c.usedMemory()
	if err != nil {
		return err
	}
	perEntry := float64(after-before) / (homes * costmodel.HomeSize)
	// Deliveries: add to a full home and trim it back, pipelined 1,000
	// pairs at a time on one connection.
	const pairs = 200_000
	start := time.Now()
	for i := 0; i < pairs; i += 1000 {
		for j := 0; j < 1000; j++ {
			id += 7919
			s, key := strconv.FormatInt(id, 10), fmt.Sprintf("home:%d", (i+j)%homes)
			c.send("ZADD", key, s, s)
			c.send("ZREMRANGEBYRANK", key, "0", strconv.Itoa(-costmodel.HomeSize-1))
		}
		if err := c.replies(2000); err != nil {
			return err
		}
	}
	rate := pairs / time.Since(start).Seconds()
	fmt.Fprintf(w, "redis %s: %d homes of %d entries: %.1f bytes an entry; %.0f deliveries (ZADD + ZREMRANGEBYRANK) a second on one pipelined connection\n",
		version, homes, costmodel.HomeSize, perEntry, rate)
	return nil
}

// resp speaks just enough of Redis's protocol for the measurement.
type resp struct {
	w *bufio.Writer
	r *bufio.Reader
}

func (c *resp) send(args ...string) {
	fmt.Fprintf(c.w, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(c.w, "$%d\r\n%s\r\n", len(a), a)
	}
}

// replies flushes what was sent and reads n replies, failing on an error.
func (c *resp) replies(n int) error {
	if err := c.w.Flush(); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		if _, err := c.reply(); err != nil {
			return err
		}
	}
	return nil
}

func (c *resp) reply() (string, error) {
	line, err := c.r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	switch line[0] {
	case '-':
		return "", errors.New("redis: " + line[1:])
	case '$':
		n, _ := strconv.Atoi(line[1:])
		if n < 0 {
			return "", nil
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(c.r, b); err != nil {
			return "", err
		}
		return string(b[:n]), nil
	}
	return line[1:], nil
}

func (c *resp) info(section, field string) (string, error) {
	c.send("INFO", section)
	if err := c.w.Flush(); err != nil {
		return "", err
	}
	s, err := c.reply()
	if err != nil {
		return "", err
	}
	for _, l := range strings.Split(s, "\r\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			return v, nil
		}
	}
	return "", fmt.Errorf("redis INFO %s has no %s", section, field)
}

func (c *resp) usedMemory() (int64, error) {
	s, err := c.info("memory", "used_memory")
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(s, 10, 64)
}
