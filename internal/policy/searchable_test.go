package policy

import "testing"

// A search of posts finds one's own, those that mention one, and the
// listed posts of people who let anyone's search find theirs; nothing
// for no one signed in.
func TestSearchable(t *testing.T) {
	for _, c := range []struct {
		name      string
		reader    string
		post      Post
		indexable bool
		want      bool
	}{
		{"own, followers-only", "ann", Post{Author: "ann", Visibility: FollowersOnly}, false, true},
		{"mentioning the reader", "bob", Post{Author: "ann", Visibility: MentionedOnly, Mentions: []string{"bob"}}, false, true},
		{"public, indexable", "bob", Post{Author: "ann", Visibility: Public}, true, true},
		{"public, not indexable", "bob", Post{Author: "ann", Visibility: Public}, false, false},
		{"unlisted, indexable", "bob", Post{Author: "ann", Visibility: Unlisted}, true, false},
		{"followers-only, indexable", "bob", Post{Author: "ann", Visibility: FollowersOnly}, true, false},
		{"no one signed in", "", Post{Author: "ann", Visibility: Public}, true, false},
	} {
		if got := Searchable(c.reader, c.post, c.indexable); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
