package mastodon

import (
	"socialstream/internal/oauth"
	"strings"
	"testing"
)

// The sign-in page's forms may send the person on to their app's
// redirect alone (a browser holds a form's redirects to form-action):
// its origin for a web address, its scheme for an app's own, nothing
// more for the out-of-band code or for what must never be a redirect.
func TestSigninCSPFormAction(t *testing.T) {
	for redirect, want := range map[string]string{
		"https://app.example/callback?x=1": "form-action 'self' https://app.example;",
		"http://127.0.0.1:9000/cb":         "form-action 'self' http://127.0.0.1:9000;",
		"com.example.app://oauth":          "form-action 'self' com.example.app:;",
		"urn:ietf:wg:oauth:2.0:oob":        "form-action 'self';",
		"":                                 "form-action 'self';",
		"javascript:alert(1)":              "form-action 'self';",
	} {
		csp := signinCSP(redirect)
		if !strings.Contains(csp, want) || !strings.HasPrefix(csp, "default-src 'none'; style-src 'sha256-") || strings.Contains(csp, "unsafe") {
			t.Errorf("signinCSP(%q) = %q, want %q in it", redirect, csp, want)
		}
	}
}

// Every scope an app may ask for is said in words.
func TestScopesInWords(t *testing.T) {
	for _, sc := range append([]string{"read", "write", "follow", "profile", "push"}, oauth.Granular()...) {
		w := describeScopes([]string{sc})[0].Words
		if w == "" || w == sc || !strings.HasSuffix(w, ".") || strings.Contains(w, "read:") || strings.Contains(w, "write:") {
			t.Errorf("%s is said as %q", sc, w)
		}
	}
}
