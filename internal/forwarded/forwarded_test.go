package forwarded

import (
	"crypto/tls"
	"net/http"
	"testing"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]Trust{
		"":                                      {},
		"X-Forwarded-Proto":                     {Proto: true},
		" x-forwarded-proto , X-FORWARDED-HOST": {Proto: true, Host: true},
		"Forwarded,":                            {Forwarded: true},
		"none":                                  {},
	} {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		if again, err := Parse(got.String()); err != nil || again != got {
			t.Errorf("Parse(%q) = %+v, %v", got.String(), again, err)
		}
	}
	for _, in := range []string{"X-Real-IP", "X-Forwarded-For", "proto", "*"} {
		if _, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) took it", in)
		}
	}
}

// Only the headers trusted count; of a list, the last value (the nearest
// proxy's); TLS on the connection is https whatever a header says; a
// host that is not one is left alone.
func TestOrigin(t *testing.T) {
	all := Trust{Proto: true, Host: true, Forwarded: true}
	for _, c := range []struct {
		name    string
		trust   Trust
		tls     bool
		headers map[string]string
		want    string
	}{
		{"plain", Trust{}, false, nil, "http://svc.example"},
		{"tls", Trust{}, true, nil, "https://svc.example"},
		{"untrusted headers", Trust{}, false, map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "evil.example",
			"Forwarded": "proto=https;host=evil.example"}, "http://svc.example"},
		{"proto", Trust{Proto: true}, false, map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "evil.example"}, "https://svc.example"},
		{"proto, appended by a chain", Trust{Proto: true}, false, map[string]string{"X-Forwarded-Proto": "http, https"}, "https://svc.example"},
		{"proto not a scheme", Trust{Proto: true}, false, map[string]string{"X-Forwarded-Proto": "gopher"}, "http://svc.example"},
		{"a header cannot undo TLS", all, true, map[string]string{"X-Forwarded-Proto": "http"}, "https://svc.example"},
		{"host", Trust{Host: true}, false, map[string]string{"X-Forwarded-Host": "social.example:8443"}, "http://social.example:8443"},
		{"host not a host", Trust{Host: true}, false, map[string]string{"X-Forwarded-Host": "a/b@c"}, "http://svc.example"},
		{"Forwarded", Trust{Forwarded: true}, false, map[string]string{"Forwarded": `for=192.0.2.1;proto=http, for="[2001:db8::1]";proto=https;host="social.example"`},
			"https://social.example"},
	} {
		r, _ := http.NewRequest("GET", "http://svc.example/api/v1/instance", nil)
		if c.tls {
			r.TLS = &tls.ConnectionState{}
		}
		for k, v := range c.headers {
			r.Header.Set(k, v)
		}
		if got := c.trust.Origin(r); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
