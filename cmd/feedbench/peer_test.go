package main

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
)

// The peer mode runs its whole workload against a Mastodon-API server by
// URL (here the service itself, on loopback, its CPU this process's) and
// writes every operation's figures and the counts: the favourite storm's
// count exact.
func TestPeerMode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testStack(t)
	target, err := parsePeer("us=" + s.url + ",pid=" + strconv.Itoa(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	pc := peerConfig{targets: []peerTarget{target, target}, people: 6, posts: 20, reads: 8, readers: 2, storm: 5}
	pc.targets[1].name = "again"
	if err := peerMode(ctx, pc, &out, t.Logf); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"| operation | figure | us | again | us / again |",
		"| sign-up | p50 ms |", "| follow | p95 ms |", "| post | of which its own process |", "| post | per second |", "| home page, alone | server CPU ms each |",
		"| public page, 2 at once | p50 ms |", "| favourite, 5 at once | per second |",
		"| favourites_count after 5 at once (at once; 2 s later) |  | 5; 5 | 5; 5 |  |",
		"| fan-out: a post until every follower's home shows it, ms |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
}

// A -peer names a server by URL, with a pid and a sign-in file or not.
func TestPeerFlag(t *testing.T) {
	for _, bad := range []string{"http://x", "us=", "us=ftp://x", "us=http://x,pid=0", "us=http://x,pid=a", "us=http://x,port=1"} {
		if _, err := parsePeer(bad); err == nil {
			t.Errorf("parsePeer(%q): no error", bad)
		}
	}
	p, err := parsePeer("them=http://127.0.0.1:8081/,pid=12,signin=a.txt")
	if err != nil || p.name != "them" || p.base != "http://127.0.0.1:8081" || p.pid != 12 || p.signin != "a.txt" {
		t.Errorf("parsePeer: %+v, %v", p, err)
	}
	if _, err := parseFlags([]string{"-peer", "us=http://x", "-peer-posts", "10"}); err == nil {
		t.Error("-peer-posts 10: no error (a page needs 20)")
	}
}
