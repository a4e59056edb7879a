package policy

import "testing"

func TestTrending(t *testing.T) {
	there := Account{ID: "ann", Exists: true}
	for _, c := range []struct {
		name      string
		post      Post
		sensitive bool
		author    Account
		want      bool
	}{
		{"public", Post{Author: "ann", Visibility: Public}, false, there, true},
		{"public by default", Post{Author: "ann"}, false, there, true},
		{"unlisted", Post{Author: "ann", Visibility: Unlisted}, false, there, false},
		{"followers-only", Post{Author: "ann", Visibility: FollowersOnly}, false, there, false},
		{"direct", Post{Author: "ann", Visibility: MentionedOnly, Mentions: []string{"bob"}}, false, there, false},
		{"sensitive", Post{Author: "ann"}, true, there, false},
		{"removed by a moderator", Post{Author: "ann", Removed: true}, false, there, false},
		{"limited author", Post{Author: "ann"}, false, Account{ID: "ann", Exists: true, Limited: true}, false},
		{"suspended author", Post{Author: "ann"}, false, Account{ID: "ann", Exists: true, Suspended: true}, false},
		{"author gone", Post{Author: "ann"}, false, Account{ID: "ann"}, false},
	} {
		if got := Trending(c.post, c.sensitive, c.author); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// The moderation API's scopes are asked for by name: read and write
// cover neither.
func TestAdminScopes(t *testing.T) {
	for _, c := range []struct {
		granted []string
		need    string
		want    bool
	}{
		{[]string{"read", "write"}, "admin:read", false},
		{[]string{"read", "write"}, "admin:write", false},
		{[]string{"admin:read"}, "admin:read", true},
		{[]string{"admin:read"}, "admin:write", false},
		{[]string{"admin:write"}, "admin:write", true},
	} {
		if got := Scoped(true, c.granted, c.need); got != c.want {
			t.Errorf("Scoped(%v, %s) = %v, want %v", c.granted, c.need, got, c.want)
		}
	}
}
