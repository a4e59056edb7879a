package activities

import (
	"slices"
	"testing"
)

// An erased person leaves an activity's mentions with what it keeps of
// each of the others still theirs: when, and as whom, they were named.
func TestDropMention(t *testing.T) {
	a := &Activity{MentionIDs: []string{"1", "2", "3"}, MentionedAt: []int{0, 2, 1}, MentionNames: []string{"ann", "bob", "cat"}}
	a.dropMention("2")
	if !slices.Equal(a.MentionIDs, []string{"1", "3"}) || !slices.Equal(a.MentionedAt, []int{0, 1}) || !slices.Equal(a.MentionNames, []string{"ann", "cat"}) {
		t.Fatalf("after dropping 2: %v %v %v", a.MentionIDs, a.MentionedAt, a.MentionNames)
	}
	// A post never edited keeps no MentionedAt.
	b := &Activity{MentionIDs: []string{"1", "2"}, MentionNames: []string{"ann", "bob"}}
	b.dropMention("1")
	if !slices.Equal(b.MentionIDs, []string{"2"}) || len(b.MentionedAt) != 0 || !slices.Equal(b.MentionNames, []string{"bob"}) {
		t.Fatalf("after dropping 1: %v %v %v", b.MentionIDs, b.MentionedAt, b.MentionNames)
	}
	if at := mentionedAt(a); at["3"] != 1 {
		t.Fatalf("3 was mentioned by edit %d, want 1", at["3"])
	}
}

func TestNamesOf(t *testing.T) {
	if got := namesOf([]string{"1", "9"}, map[string]string{"1": "ann"}); !slices.Equal(got, []string{"ann", ""}) {
		t.Fatalf("namesOf = %v", got)
	}
	if namesOf(nil, nil) != nil {
		t.Fatal("no mentions, no names")
	}
}
