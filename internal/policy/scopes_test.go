package policy

import "testing"

func TestScoped(t *testing.T) {
	for _, c := range []struct {
		name    string
		app     bool
		granted []string
		need    string
		want    bool
	}{
		{"the service's own sign-in", false, nil, "write:statuses", true},
		{"nothing needed", true, nil, "", true},
		{"the scope itself", true, []string{"write:statuses"}, "write:statuses", true},
		{"write covers what is under it", true, []string{"write"}, "write:favourites", true},
		{"read does not cover a write", true, []string{"read"}, "write:statuses", false},
		{"a granular scope covers no other", true, []string{"write:statuses"}, "write:favourites", false},
		{"a granular scope does not cover its top", true, []string{"read:statuses"}, "read", false},
		{"follow covers follows", true, []string{"follow"}, "write:follows", true},
		{"follow covers mutes", true, []string{"follow"}, "read:mutes", true},
		{"follow does not cover statuses", true, []string{"follow"}, "read:statuses", false},
		{"profile by read", true, []string{"read"}, "profile", true},
		{"profile by read:accounts", true, []string{"read:accounts"}, "profile", true},
		{"profile alone", true, []string{"profile"}, "profile", true},
		{"profile is no read", true, []string{"profile"}, "read:accounts", false},
		{"no scopes", true, nil, "read", false},
	} {
		if got := Scoped(c.app, c.granted, c.need); got != c.want {
			t.Errorf("%s: Scoped(%v, %v, %q) = %v, want %v", c.name, c.app, c.granted, c.need, got, c.want)
		}
	}
}
