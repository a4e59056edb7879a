package api

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/rs/cors"
)

// CORS lets pages of the listed origins (exact: scheme, host and port)
// call the API from a browser: preflights are answered with the methods
// and headers the API takes, and the rate-limit headers and Retry-After
// are exposed to the page, with the Mastodon face's Link (its paging). Credentials are a bearer token the page sends
// itself, never cookies, so none are allowed. Any other origin's page is
// answered without CORS headers, and its browser keeps the answer from it.
// (github.com/rs/cors: a small, widely used net/http middleware that
// implements the Fetch standard's CORS protocol, preflight caching
// included.)
func CORS(origins []string, h http.Handler) http.Handler {
	return cors.New(cors.Options{
		AllowedOrigins: origins,
		AllowedMethods: []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete},
		// Idempotency-Key: a Mastodon web client's retried post.
		AllowedHeaders: []string{"Authorization", "Content-Type", "Idempotency-Key"},
		// Link: the Mastodon face's paging; X-RateLimit-*: its limits.
		ExposedHeaders: []string{"RateLimit", "RateLimit-Policy", "Retry-After", "Location", "Link",
			"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"},
		MaxAge: 600,
	}).Handler(h)
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
