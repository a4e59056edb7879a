package order

import (
	"slices"
	"sort"
	"testing"
)

// Values sort as their feeds read them: by prefix, then by seq; no value
// of another prefix falls in a prefix's range, whatever the prefixes share.
func TestValuesSortByPrefixThenSeq(t *testing.T) {
	prefixes := []string{"u:4", "u:42", "u:42:app", "u:420", "a:1", "a:10", "1", "10"}
	seqs := []int64{1, 9, 10, 61, 62, 1 << 40, 1<<63 - 1}
	var all []string
	for _, p := range prefixes {
		for _, s := range seqs {
			all = append(all, Value(p, s))
		}
	}
	sort.Strings(all)
	for _, p := range prefixes {
		var in []int64
		for _, v := range all {
			if v >= Value(p, 1) && v < p+end {
				got, seq, ok := Parse(v)
				if !ok || got != p {
					t.Errorf("range of %q holds %q", p, v)
				}
				in = append(in, seq)
			}
		}
		if !slices.Equal(in, seqs) {
			t.Errorf("range of %q: %v, want %v in order", p, in, seqs)
		}
	}
}

func TestParse(t *testing.T) {
	for _, bad := range []string{"", "u:1", "u:1/12", "u:1/0000000000x1", "u:1/-0000000001", "u:1/zzzzzzzzzzz"} {
		if _, _, ok := Parse(bad); ok {
			t.Errorf("Parse(%q) ok", bad)
		}
	}
	for _, seq := range []int64{0, 12, 61, 62, 1 << 40, 1<<63 - 1} {
		if p, s, ok := Parse(Value("7", seq)); !ok || p != "7" || s != seq {
			t.Errorf("Parse(Value(7, %d)) = %q %d %v", seq, p, s, ok)
		}
	}
}

func TestCursor(t *testing.T) {
	c := EncodeCursor("home:1", Place{Seq: 42})
	if p, err := DecodeCursor("home:1", c); err != nil || p.Seq != 42 {
		t.Errorf("DecodeCursor = %+v, %v", p, err)
	}
	for _, bad := range []string{c[:len(c)-1] + "!", EncodeCursor("home:2", Place{Seq: 42}), EncodeCursor("home:1", Place{Seq: 0}), "x"} {
		if _, err := DecodeCursor("home:1", bad); err != ErrBadCursor {
			t.Errorf("DecodeCursor(%q) = %v, want ErrBadCursor", bad, err)
		}
	}
	if p, err := DecodeCursor("home:1", ""); err != nil || p.Seq != 0 {
		t.Errorf("empty cursor = %+v, %v", p, err)
	}
}

// Shards spread consecutive seqs evenly.
func TestShardSpreadsConsecutiveSeqs(t *testing.T) {
	const n, count = 4, 4000
	seen := make([]int, n)
	for s := int64(1 << 40); s < 1<<40+count; s++ {
		seen[Shard(s, n)]++
	}
	for i, c := range seen {
		if c < count/n*3/4 || c > count/n*5/4 {
			t.Errorf("shard %d took %d of %d", i, c, count)
		}
	}
}
