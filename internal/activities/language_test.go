package activities

import "testing"

func TestLanguage(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"", "", true},
		{"en", "en", true},
		{"pt-br", "pt-BR", true},
		{"ja", "ja", true},
		{"zz", "", false},
		{"und", "", false},
		{"english", "", false},
		{"e", "", false},
		{"en-", "", false},
		{"en-US-x-" + "aaaaaaaa-bbbbbbbb-cccccccc-dddddddd", "", false},
	} {
		got, err := Language(c.in)
		if got != c.want || (err == nil) != c.ok {
			t.Errorf("Language(%q) = %q, %v; want %q, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
}
