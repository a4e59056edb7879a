package activities

import (
	"errors"
	"slices"
	"testing"

	"socialstream/internal/policy"
)

// What a pin writes, decided without Datastore.
func TestDecidePin(t *testing.T) {
	own := &Activity{UserID: "ann", Visibility: Public}
	for _, c := range []struct {
		name    string
		f       pinFacts
		want    []string
		changed bool
		err     error
	}{
		{"a first pin", pinFacts{user: "ann", id: "a", on: true, found: true, activity: own}, []string{"a"}, true, nil},
		{"the last pinned first", pinFacts{user: "ann", id: "c", on: true, found: true, activity: own, pinned: []string{"b", "a"}},
			[]string{"c", "b", "a"}, true, nil},
		{"pinned again keeps its place", pinFacts{user: "ann", id: "a", on: true, found: true, activity: own, pinned: []string{"b", "a"}},
			[]string{"b", "a"}, false, nil},
		{"unlisted", pinFacts{user: "ann", id: "a", on: true, found: true, activity: &Activity{UserID: "ann", Visibility: Unlisted}},
			[]string{"a"}, true, nil},
		{"a sixth", pinFacts{user: "ann", id: "f", on: true, found: true, activity: own, pinned: []string{"1", "2", "3", "4", "5"}},
			nil, false, ErrTooManyPins},
		{"a sixth, one of five gone", pinFacts{user: "ann", id: "f", on: true, found: true, activity: own,
			pinned: []string{"1", "2", "3", "4", "5"}, gone: []string{"3"}}, []string{"f", "1", "2", "4", "5"}, true, nil},
		{"an unpin", pinFacts{user: "ann", id: "a", found: true, activity: own, pinned: []string{"b", "a"}}, []string{"b"}, true, nil},
		{"an unpin of what is not pinned", pinFacts{user: "ann", id: "a", found: true, activity: own, pinned: []string{"b"}},
			[]string{"b"}, false, nil},
		{"an unpin of what is gone", pinFacts{user: "ann", id: "a", pinned: []string{"a"}}, nil, true, nil},
		{"an unpin of someone else's", pinFacts{user: "bob", id: "a", found: true, activity: own}, nil, false, policy.ErrNotYours},
		{"an unpin of one's own followers-only post", pinFacts{user: "ann", id: "a", found: true,
			activity: &Activity{UserID: "ann", Visibility: FollowersOnly}}, nil, false, nil},
		{"a pin of what is gone", pinFacts{user: "ann", id: "a", on: true, activity: &Activity{}}, nil, false, ErrNoSuchActivity},
		{"a pin of what was taken down", pinFacts{user: "ann", id: "a", on: true, found: true, activity: &Activity{UserID: "ann", Removed: 1}},
			nil, false, ErrNoSuchActivity},
		{"someone else's", pinFacts{user: "bob", id: "a", on: true, found: true, activity: own}, nil, false, policy.ErrNotYours},
		{"followers-only", pinFacts{user: "ann", id: "a", on: true, found: true, activity: &Activity{UserID: "ann", Visibility: FollowersOnly}},
			nil, false, policy.ErrNotPinnable},
		{"a repost", pinFacts{user: "ann", id: "a", on: true, found: true, activity: &Activity{UserID: "ann", Visibility: Public, RepostOf: "x"}},
			nil, false, policy.ErrNotPinnable},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, changed, err := decidePin(c.f)
			if !errors.Is(err, c.err) {
				t.Fatalf("err %v, want %v", err, c.err)
			}
			if err == nil && (!slices.Equal(got, c.want) || changed != c.changed) {
				t.Errorf("pins %v (changed %v), want %v (%v)", got, changed, c.want, c.changed)
			}
		})
	}
}
