// Package ids makes time-ordered 64-bit ids in the manner of Twitter's
// snowflake (seed design 003): 41 bits of milliseconds since 2024-01-01 UTC,
// 10 bits of node and 12 bits of sequence within the millisecond.
//
// An id has two written forms. The plain form is its decimal (at most 19
// digits, no leading zero): people and groups are named so. The scattered form
// (Format) is 20 decimal digits of a fixed mixing of the id, a bijection
// of 64-bit numbers: consecutive ids are far apart in it, so the entities
// written at the rate of posts, named by it, spread over the whole key
// range instead of all landing at its end (Firestore's guidance on
// monotonically increasing key names). Parse reads both; the order of ids
// is the order of the numbers Parse returns, never that of the strings.
//
// An App Engine instance cannot learn a unique node number cheaply, so each
// Generator draws its node at random. Two instances that draw the same node
// and mint in the same millisecond can collide; callers that need uniqueness
// across instances therefore write the new entity with an insert that fails
// when the key exists, and mint again (see store.Insert). Within one
// Generator ids never repeat and always increase, even if the clock steps back.
package ids

import (
	"cmp"
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

// NextString returns Next in its plain form.
func (g *Generator) NextString() string { return strconv.FormatInt(g.Next(), 10) }

// scatteredLen is the length of an id in its scattered form: every 64-bit
// number has 20 digits or fewer, and a plain id at most 19.
const scatteredLen = 20

// The odd multipliers of the mixing, and their inverses modulo 2^64.
const (
	mixK1 = 0xbf58476d1ce4e5b9
	mixK2 = 0x94d049bb133111eb
)

var mixInv1, mixInv2 = inverse(mixK1), inverse(mixK2)

// inverse returns the inverse of odd k modulo 2^64 (Newton's iteration:
// each step doubles the bits that are right).
func inverse(k uint64) uint64 {
	x := k // right to 3 bits for any odd k
	for range 5 {
		x *= 2 - k*x
	}
	return x
}

// unshift inverts x ^= x >> s.
func unshift(y uint64, s uint) uint64 {
	x := y
	for range 64 / s {
		x = y ^ x>>s
	}
	return x
}

// mix is the finalizer of splitmix64: every bit of the result depends on
// every bit of x, and each step is invertible.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= mixK1
	x ^= x >> 27
	x *= mixK2
	x ^= x >> 31
	return x
}

func unmix(x uint64) uint64 {
	x = unshift(x, 31)
	x *= mixInv2
	x = unshift(x, 27)
	x *= mixInv1
	x = unshift(x, 30)
	return x
}

// Format returns id in its scattered form.
func Format(id int64) string {
	return fmt.Sprintf("%020d", mix(uint64(id)))
}

// Time returns the time at which id was minted, to the millisecond.
func Time(id int64) time.Time {
	return Epoch.Add(time.Duration(id>>(nodeBits+seqBits)) * time.Millisecond)
}

// MintedBefore reports whether id was surely minted before t: its
// millisecond ended by t.
func MintedBefore(id int64, t time.Time) bool {
	return !Time(id).Add(time.Millisecond).After(t)
}

// Parse returns the id written s, in either form. It reports false for
// anything that is not a positive 64-bit id written in one of them.
func Parse(s string) (int64, bool) {
	if s == "" || len(s) > scatteredLen {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	if len(s) == scatteredLen {
		u, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, false
		}
		n := int64(unmix(u))
		if n <= 0 {
			return 0, false
		}
		return n, true
	}
	if s[0] == '0' {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}

// Scattered reports whether s is an id in its scattered form.
func Scattered(s string) bool {
	_, ok := Parse(s)
	return ok && len(s) == scatteredLen
}

// First returns the least id minted at t: every id minted at or after t
// is at least it.
func First(t time.Time) int64 {
	return max(0, t.Sub(Epoch).Milliseconds()) << (nodeBits + seqBits)
}

// Spread returns id's place in the scattered order: consecutive ids give
// values spread evenly over 64 bits, for picking a shard.
func Spread(id int64) uint64 { return mix(uint64(id)) }

// Compare orders two ids, in either form, by the numbers they stand for:
// -1 if a is older, 1 if newer, 0 if the same (an id that does not parse
// stands for 0).
func Compare(a, b string) int {
	x, _ := Parse(a)
	y, _ := Parse(b)
	return cmp.Compare(x, y)
}
