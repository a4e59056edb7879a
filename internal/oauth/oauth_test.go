package oauth

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"
)

// Redirects an app may register: an allow-list, not a list of what is
// refused. Only strings are checked: nothing here connects anywhere (the
// service never fetches a redirect; the browser follows it).
func TestCheckRedirect(t *testing.T) {
	for raw, ok := range map[string]bool{
		OOB:                                       true,
		"https://app.example.com/callback":        true,
		"http://127.0.0.1:8765/callback":          true,
		"http://[::1]:8765/cb":                    true,
		"http://localhost/cb":                     true,
		"com.example.app:/callback":               true,
		"com.example.app://callback":              true,
		"oauth2redirect://com.keylesspalace.app/": true,
		"ivory://callback":                        true,
		"http://app.example.com/callback":         false, // plain http off this machine
		"http://10.0.0.1/callback":                false,
		"javascript:alert(1)":                     false,
		"JavaScript:alert(1)":                     false,
		"vbscript:msgbox(1)":                      false,
		"data:text/html,<script>1</script>":       false,
		"file:///etc/passwd":                      false,
		"blob:https://a.example/1":                false,
		"about:blank":                             false,
		"https://app.example.com/cb#frag":         false,
		"https://user:pw@app.example.com/cb":      false,
		"https:///no-host":                        false,
		"/relative":                               false,
		"x:1":                                     false, // a one-letter scheme is a drive letter
		"https://" + strings.Repeat("a", MaxURI):  false,
	} {
		if err := checkRedirect(raw); (err == nil) != ok {
			t.Errorf("checkRedirect(%q) = %v, want allowed %v", raw, err, ok)
		}
	}
}

// Whether a code not traded before may be traded, decided without
// Datastore: RFC 6749's redirect rule and RFC 7636's proof, with no
// downgrade of PKCE.
func TestDecideTrade(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	verifier := strings.Repeat("v", 50)
	sum := sha256.Sum256([]byte(verifier))
	challenge := base64.RawURLEncoding.EncodeToString(sum[:])
	app := App{ClientID: "app1"}
	base := code{App: "app1", User: "u1", RedirectURI: "https://a.example/cb", Named: true, Challenge: challenge, Expires: now.Add(time.Minute)}
	cases := []struct {
		name string
		code func(*code)
		x    Exchange
		want error
	}{
		{"PKCE, the redirect named", nil, Exchange{RedirectURI: "https://a.example/cb", Verifier: verifier}, nil},
		{"another app's code", func(c *code) { c.App = "app2" }, Exchange{RedirectURI: "https://a.example/cb", Verifier: verifier}, ErrInvalidGrant},
		{"expired", func(c *code) { c.Expires = now }, Exchange{RedirectURI: "https://a.example/cb", Verifier: verifier}, ErrInvalidGrant},
		{"the named redirect left out", nil, Exchange{Verifier: verifier}, ErrInvalidGrant},
		{"another redirect", nil, Exchange{RedirectURI: "https://a.example/other", Verifier: verifier}, ErrInvalidGrant},
		{"no redirect named, none sent", func(c *code) { c.Named = false }, Exchange{Verifier: verifier}, nil},
		{"no redirect named, the app's sent", func(c *code) { c.Named = false }, Exchange{RedirectURI: "https://a.example/cb", Verifier: verifier}, nil},
		{"a wrong verifier", nil, Exchange{RedirectURI: "https://a.example/cb", Verifier: strings.Repeat("w", 50)}, ErrInvalidGrant},
		{"no verifier for a challenge", nil, Exchange{RedirectURI: "https://a.example/cb", ClientSecret: "s"}, ErrInvalidGrant},
		{"a verifier for a code without a challenge", func(c *code) { c.Challenge = "" },
			Exchange{RedirectURI: "https://a.example/cb", ClientSecret: "s", Verifier: verifier}, ErrInvalidGrant},
		{"the secret, no challenge", func(c *code) { c.Challenge = "" }, Exchange{RedirectURI: "https://a.example/cb", ClientSecret: "s"}, nil},
		{"neither proof", func(c *code) { c.Challenge = "" }, Exchange{RedirectURI: "https://a.example/cb"}, ErrInvalidClient},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := base
			if tc.code != nil {
				tc.code(&c)
			}
			if err := decideTrade(c, tc.x, app, now); !errors.Is(err, tc.want) {
				t.Errorf("decideTrade = %v, want %v", err, tc.want)
			}
		})
	}
}
