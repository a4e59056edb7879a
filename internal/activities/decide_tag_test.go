package activities

import "testing"

func TestDecideTagPage(t *testing.T) {
	public := &Activity{Tags: []string{"go"}, Visibility: Public}
	for _, c := range []struct {
		name  string
		found bool
		a     *Activity
		still []string
		want  string
	}{
		{"written", true, public, []string{"ann"}, ""},
		{"deleted", false, &Activity{}, []string{"ann"}, "activity deleted"},
		{"its tag edited away", true, &Activity{Tags: []string{"rust"}, Visibility: Public}, []string{"ann"}, "tag edited away"},
		{"for followers alone", true, &Activity{Tags: []string{"go"}, Visibility: FollowersOnly}, []string{"ann"}, "not public"},
		{"no one follows the tag still", true, public, nil, "no followers"},
	} {
		if got := decideTagPage(c.found, c.a, "go", c.still); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
