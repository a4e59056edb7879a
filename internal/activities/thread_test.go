package activities

import (
	"slices"
	"strings"
	"testing"

	"cloud.google.com/go/datastore"
)

// A thread's descendants, depth first, each after what it answers,
// siblings oldest first; one whose parent is gone goes under its nearest
// ancestor left.
func TestThreadOrder(t *testing.T) {
	type node struct{ id, ancestors string }
	// root 10: 11 and 15 answer it; 12 answers 11; 13 answers 12; 14
	// answers 16, which is gone (deleted), which answered 11.
	nodes := []node{{"15", "10"}, {"13", "12 11 10"}, {"11", "10"}, {"14", "16 11 10"}, {"12", "11 10"}}
	var keys []*datastore.Key
	var acts []*Activity
	for _, n := range nodes {
		keys = append(keys, datastore.NameKey(KindActivity, n.id, nil))
		a := &Activity{}
		a.Ancestors = strings.Fields(n.ancestors)
		acts = append(acts, a)
	}
	k, a := threadOrder("10", keys, acts)
	var got []string
	for i, key := range k {
		got = append(got, key.Name)
		if a[i] != acts[slices.IndexFunc(keys, func(x *datastore.Key) bool { return x.Name == key.Name })] {
			t.Errorf("%s: keys and activities out of step", key.Name)
		}
	}
	if want := []string{"11", "12", "13", "14", "15"}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

// A reply reaches, at home, those of its author's followers who follow the
// person answered, and that person; any other post reaches them all.
func TestReplyAudience(t *testing.T) {
	followers := []string{"a", "b", "bob", "c"}
	if got := replyAudience(followers, "ann", "", nil); !slices.Equal(got, followers) {
		t.Errorf("no reply: %v", got)
	}
	if got := replyAudience(followers, "ann", "ann", nil); !slices.Equal(got, followers) {
		t.Errorf("a reply to oneself: %v", got)
	}
	if got := replyAudience(followers, "ann", "bob", map[string]bool{"b": true, "c": false}); !slices.Equal(got, []string{"b", "bob"}) {
		t.Errorf("a reply to bob: %v", got)
	}
}
