// Package ids makes time-ordered 64-bit ids in the manner of Twitter's
// snowflake (seed design 003): 41 bits of milliseconds since 2024-01-01 UTC,
// 10 bits of node and 12 bits of sequence within the millisecond.
//
// An App Engine instance cannot learn a unique node number cheaply, so each
// Generator draws its node at random. Two instances that draw the same node
// and mint in the same millisecond can collide; callers that need uniqueness
// across instances therefore write the new entity with an insert that fails
// when the key exists, and mint again (see store.Insert). Within one
// Generator ids never repeat and always increase, even if the clock steps back.
package ids

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"strconv"
	"sync"
	"time"
)

const (
	nodeBits = 10
	seqBits  = 12
	maxNode  = 1<<nodeBits - 1
	maxSeq   = 1<<seqBits - 1
)

// Epoch is the zero of the id clock.
var Epoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// Generator mints ids. The zero value is not usable; use New.
type Generator struct {
	mu   sync.Mutex
	node int64
	last int64 // milliseconds since Epoch of the last id
	seq  int64
	now  func() time.Time
}

// New returns a Generator with a random node.
func New() *Generator {
	var b [2]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("ids: crypto/rand: %v", err)) // never fails on supported platforms
	}
	return NewNode(int64(binary.BigEndian.Uint16(b[:]))&maxNode, time.Now)
}

// NewNode returns a Generator with the given node (0..1023) and clock.
func NewNode(node int64, now func() time.Time) *Generator {
	if node < 0 || node > maxNode {
		panic(fmt.Sprintf("ids: node %d out of range", node))
	}
	return &Generator{node: node, now: now, last: -1}
}

// Next returns a new id, greater than every id this Generator made before.
func (g *Generator) Next() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	ms := g.now().Sub(Epoch).Milliseconds()
	if ms < g.last {
		ms = g.last // the clock stepped back: keep counting in the last millisecond
	}
	if ms == g.last {
		g.seq++
		if g.seq > maxSeq {
			// Sequence exhausted: borrow the next millisecond rather than sleep.
			ms++
			g.seq = 0
		}
	} else {
		g.seq = 0
	}
	g.last = ms
	return ms<<(nodeBits+seqBits) | g.node<<seqBits | g.seq
}

// NextString returns Next in decimal, the form ids take in the API.
func (g *Generator) NextString() string { return strconv.FormatInt(g.Next(), 10) }

// Time returns the time at which id was minted, to the millisecond.
func Time(id int64) time.Time {
	return Epoch.Add(time.Duration(id>>(nodeBits+seqBits)) * time.Millisecond)
}

// MintedBefore reports whether id was surely minted before t: its
// millisecond ended by t.
func MintedBefore(id int64, t time.Time) bool {
	return !Time(id).Add(time.Millisecond).After(t)
}

// Parse parses a decimal id. It reports false for anything that is not a
// positive 64-bit integer in canonical form.
func Parse(s string) (int64, bool) {
	if s == "" || len(s) > 19 || s[0] == '0' {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}

// First returns the least id minted at t: every id minted at or after t
// is at least it.
func First(t time.Time) int64 {
	return max(0, t.Sub(Epoch).Milliseconds()) << (nodeBits + seqBits)
}
