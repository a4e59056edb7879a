package api_test

import (
	"net/http"
	"strings"
	"testing"

	"socialstream/internal/app"
	"socialstream/internal/localstack"
)

// A listed origin's page may call the API: its preflight is answered with
// the methods and headers the API takes, no credentials, and its answers
// expose the rate-limit headers. Another origin's gets no CORS header,
// but on the Mastodon face's token routes, which answer any origin (a
// web client runs on a site of its own).
func TestCORSForListedOriginsOnly(t *testing.T) {
	const listed, other = "https://gadgets.example.com", "https://elsewhere.example.com"
	e := newEnvFrom(t, localstack.Options{Config: app.Config{CORSOrigins: []string{listed}}})
	preflight := func(origin string) resp {
		return e.do("OPTIONS", "/social/rest/activities/@me/@self", "", nil, "Origin", origin,
			"Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization,content-type")
	}
	r := preflight(listed)
	h := r.header
	if r.status/100 != 2 || h.Get("Access-Control-Allow-Origin") != listed || !strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") ||
		!strings.Contains(strings.ToLower(h.Get("Access-Control-Allow-Headers")), "authorization") || h.Get("Access-Control-Allow-Credentials") != "" {
		t.Errorf("a listed origin's preflight: %d %v", r.status, h)
	}
	// What Mastodon web clients send: PATCH, and a post's Idempotency-Key.
	r = e.do("OPTIONS", "/api/v1/accounts/update_credentials", "", nil, "Origin", listed,
		"Access-Control-Request-Method", "PATCH", "Access-Control-Request-Headers", "authorization,idempotency-key")
	if h := r.header; h.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(h.Get("Access-Control-Allow-Methods"), "PATCH") ||
		!strings.Contains(strings.ToLower(h.Get("Access-Control-Allow-Headers")), "idempotency-key") {
		t.Errorf("a Mastodon web client's preflight: %d %v", r.status, h)
	}
	if r := preflight(other); r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("another origin's preflight is allowed: %v", r.header)
	}
	ann := e.register("ann")
	r = e.do("GET", "/social/rest/people/@me/@self", ann.token, nil, "Origin", listed)
	expose := strings.ToLower(r.header.Get("Access-Control-Expose-Headers"))
	if r.status != http.StatusOK || r.header.Get("Access-Control-Allow-Origin") != listed || !strings.Contains(expose, "ratelimit") || !strings.Contains(expose, "retry-after") || !strings.Contains(expose, "link") {
		t.Errorf("a listed origin's call: %d %v", r.status, r.header)
	}
	if r := e.do("GET", "/social/rest/people/@me/@self", ann.token, nil, "Origin", other); r.status != http.StatusOK || r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("another origin's call: %d %v", r.status, r.header)
	}

	// Any origin, on the Mastodon face's token routes.
	for _, path := range []string{"/api/v1/accounts/verify_credentials", "/api/v2/instance", "/oauth/token", "/oauth/revoke", "/nodeinfo/2.0"} {
		r := e.do("OPTIONS", path, "", nil, "Origin", other, "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization")
		if h := r.header; r.status/100 != 2 || h.Get("Access-Control-Allow-Origin") != "*" || h.Get("Access-Control-Allow-Credentials") != "" ||
			!strings.Contains(strings.ToLower(h.Get("Access-Control-Allow-Headers")), "authorization") {
			t.Errorf("another origin's preflight of %s: %d %v", path, r.status, h)
		}
	}
	r = e.do("GET", "/api/v1/accounts/verify_credentials", ann.token, nil, "Origin", other)
	if expose := strings.ToLower(r.header.Get("Access-Control-Expose-Headers")); r.status != http.StatusOK || r.header.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(expose, "link") {
		t.Errorf("another origin's call of the Mastodon face: %d %v", r.status, r.header)
	}
	// Not the sign-in page, /auth or pictures.
	for _, path := range []string{"/oauth/authorize", "/auth/login", "/social/rpc"} {
		r := e.do("OPTIONS", path, "", nil, "Origin", other, "Access-Control-Request-Method", "POST")
		if r.header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("another origin's preflight of %s is allowed: %v", path, r.header)
		}
	}
}

// With no origin listed, the Mastodon face's token routes still answer
// any origin, and the rest none.
func TestCORSOpenOnTheMastodonFaceAlone(t *testing.T) {
	e := newEnv(t)
	const origin = "https://client.example"
	if r := e.do("OPTIONS", "/api/v1/timelines/home", "", nil, "Origin", origin, "Access-Control-Request-Method", "GET"); r.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("a web client's preflight: %d %v", r.status, r.header)
	}
	if r := e.do("OPTIONS", "/social/rest/activities/@me/@self", "", nil, "Origin", origin, "Access-Control-Request-Method", "GET"); r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("the REST face answers an origin not listed: %v", r.header)
	}
}
