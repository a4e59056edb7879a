package web_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"socialstream/internal/web"
)

func TestHandler(t *testing.T) {
	ts := httptest.NewServer(web.Handler())
	defer ts.Close()
	for _, tc := range []struct {
		method, path string
		status       int
		ctype        string
		body         string
	}{
		{"GET", "/", 200, "text/html; charset=utf-8", `<script type="module" src="/static/app.js">`},
		{"HEAD", "/", 200, "text/html; charset=utf-8", ""},
		{"GET", "/static/app.js", 200, "text/javascript; charset=utf-8", "function api("},
		{"GET", "/static/app.css", 200, "text/css; charset=utf-8", ":root"},
		{"GET", "/static/", 404, "", ""},
		{"GET", "/static/nope.js", 404, "", ""},
		{"GET", "/static/../web.go", 404, "", ""},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, ts.URL+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", res.StatusCode, tc.status)
			}
			if tc.status != 200 {
				return
			}
			if got := res.Header.Get("Content-Type"); got != tc.ctype {
				t.Errorf("Content-Type %q, want %q", got, tc.ctype)
			}
			if got := res.Header.Get("Content-Security-Policy"); !strings.Contains(got, "script-src 'self'") || !strings.Contains(got, "frame-ancestors 'none'") {
				t.Errorf("Content-Security-Policy %q", got)
			}
			if got := res.Header.Get("X-Frame-Options"); got != "DENY" {
				t.Errorf("X-Frame-Options %q", got)
			}
			if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options %q", got)
			}
			if !strings.Contains(string(body), tc.body) {
				t.Errorf("body lacks %q", tc.body)
			}
		})
	}
}
