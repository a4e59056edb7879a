package api

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/rs/cors"
)

// CORS lets pages of other origins call the API from a browser.
//
// The Mastodon face's token routes (OpenRoute: /api/, the token and
// revocation endpoints, the discovery documents) answer any origin, as
// Mastodon does: a web client runs on a site each person chooses, and
// what it sends is a bearer token of its own, never a cookie. The rest
// (the REST and JSON-RPC faces, /auth, pictures) answer the origins
// listed (exact: scheme, host and port) alone; any other origin's page is
// answered without CORS headers, and its browser keeps the answer from it.
//
// Preflights are answered with the methods and headers the API takes,
// and the rate-limit headers, Retry-After and the Mastodon face's Link
// (its paging) are exposed to the page. No cookie is used anywhere, and
// credentials are never allowed. (github.com/rs/cors: a small, widely
// used net/http middleware that implements the Fetch standard's CORS
// protocol, preflight caching included.)
func CORS(origins []string, h http.Handler) http.Handler {
	options := func(origins []string) cors.Options {
		return cors.Options{
			AllowedOrigins: origins,
			AllowedMethods: []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete},
			// Idempotency-Key: a Mastodon web client's retried post.
			AllowedHeaders: []string{"Authorization", "Content-Type", "Idempotency-Key"},
			// Link: the Mastodon face's paging; X-RateLimit-*: its limits.
			ExposedHeaders: []string{"RateLimit", "RateLimit-Policy", "Retry-After", "Location", "Link",
				"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"},
			MaxAge: 600,
		}
	}
	open, listed := cors.New(options([]string{"*"})).Handler(h), h
	if len(origins) > 0 {
		listed = cors.New(options(origins)).Handler(h)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if OpenRoute(r.URL.Path) {
			open.ServeHTTP(w, r)
			return
		}
		listed.ServeHTTP(w, r)
	})
}

// OpenRoute reports whether a path is one of the Mastodon face's routes
// that any origin's page may call: its API, the token and revocation
// endpoints, and the discovery documents. The sign-in page
// (/oauth/authorize) is a page of the deployment's own, not one of them.
func OpenRoute(path string) bool {
	switch {
	case strings.HasPrefix(path, "/api/v1/"), strings.HasPrefix(path, "/api/v2/"),
		path == "/oauth/token", path == "/oauth/revoke",
		strings.HasPrefix(path, "/.well-known/"), strings.HasPrefix(path, "/nodeinfo/"):
		return true
	}
	return false
}

// ParseOrigins reads CORS_ORIGINS: exact origins, comma-separated
// (https://gadgets.example.com,http://localhost:3000); empty is none.
func ParseOrigins(s string) ([]string, error) {
	var out []string
	for _, o := range strings.Split(s, ",") {
		o = strings.TrimSpace(o)
		if o == "" {
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil || strings.Contains(o, "*") {
			return nil, fmt.Errorf("%q is not an origin: scheme://host[:port], no path and no wildcard", o)
		}
		out = append(out, u.Scheme+"://"+strings.ToLower(u.Host))
	}
	return out, nil
}
