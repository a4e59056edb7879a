package policy

import "testing"

func TestDomainBlocked(t *testing.T) {
	blocked := []string{"bad.example", "127.0.0.1:8081"}
	for _, c := range []struct {
		host string
		want bool
	}{
		{"bad.example", true},
		{"BAD.Example", true},
		{"sub.bad.example", true},
		{"notbad.example", false}, // a suffix is not a subdomain
		{"bad.example.org", false},
		{"good.example", false},
		{"127.0.0.1:8081", true},
		{"127.0.0.1:8082", false},
		{"", false}, // a person of this server
	} {
		if got := DomainBlocked(blocked, c.host); got != c.want {
			t.Errorf("DomainBlocked(%v, %q) = %v, want %v", blocked, c.host, got, c.want)
		}
	}
	if DomainBlocked(nil, "bad.example") {
		t.Error("no domain blocked, yet bad.example is")
	}
}

func TestHostOf(t *testing.T) {
	for name, want := range map[string]string{"ann": "", "bob@far.example": "far.example", "cy@127.0.0.1:8081": "127.0.0.1:8081"} {
		if got := HostOf(name); got != want {
			t.Errorf("HostOf(%q) = %q, want %q", name, got, want)
		}
	}
}
