package api_test

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"socialstream/internal/app"
	"socialstream/internal/forwarded"
	"socialstream/internal/localstack"
)

// The Mastodon face's links are absolute, and start where the client
// reached the service: through an https door that says what it
// terminated (X-Forwarded-Proto, trusted as FORWARDED_HEADERS names it),
// https on the door's port: avatars, headers, account and status urls,
// the Link of a page and the NodeInfo link. A header the operator did not
// name is a client's word, and changes nothing.
func TestMastodonLinksThroughTheHTTPSDoor(t *testing.T) {
	e := newEnvFrom(t, localstack.Options{Config: app.Config{Forwarded: forwarded.Trust{Proto: true}}})
	door, err := localstack.FrontDoor(t.Context(), "127.0.0.1:0", strings.TrimSuffix(e.url, "/"))
	if err != nil {
		t.Fatal(err)
	}
	ann := e.register("ann")
	for i := range 2 {
		if st, r := e.MastoForm("POST", "/api/v1/statuses", ann.token, map[string][]string{"status": {fmt.Sprint("post ", i)}}); st != 200 {
			t.Fatalf("post: %d %v", st, r)
		}
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // the door's own certificate
	get := func(root, path, token string, headers ...string) (http.Header, any) {
		t.Helper()
		req, _ := http.NewRequest("GET", root+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		var v any
		if res.StatusCode != 200 || json.Unmarshal(raw, &v) != nil {
			t.Fatalf("GET %s%s: %d %s", root, path, res.StatusCode, raw)
		}
		return res.Header, v
	}
	// links reports those of an account or a status (and its account) that
	// do not start with root.
	links := func(root string, header http.Header, v any) []string {
		var bad []string
		check := func(what, link string) {
			if !strings.HasPrefix(link, root+"/") {
				bad = append(bad, what+" "+link)
			}
		}
		var walk func(m map[string]any)
		walk = func(m map[string]any) {
			for _, k := range []string{"avatar", "avatar_static", "header", "header_static", "url", "uri"} {
				if s, ok := m[k].(string); ok {
					check(k, s)
				}
			}
			if a, ok := m["account"].(map[string]any); ok {
				walk(a)
			}
		}
		switch v := v.(type) {
		case map[string]any:
			walk(v)
		case []any:
			for _, it := range v {
				walk(it.(map[string]any))
			}
		}
		if l := header.Get("Link"); l != "" {
			check("Link", strings.TrimPrefix(l, "<"))
		}
		return bad
	}

	for _, path := range []string{"/api/v1/accounts/verify_credentials", "/api/v1/accounts/" + ann.id + "/statuses?limit=1"} {
		h, v := get(door, path, ann.token)
		if bad := links(door, h, v); len(bad) > 0 {
			t.Errorf("through the door, %s: links %v, want them to start with %s", path, bad, door)
		}
		if path != "/api/v1/accounts/verify_credentials" && h.Get("Link") == "" {
			t.Errorf("%s has no Link", path)
		}
	}
	if _, v := get(door, "/.well-known/nodeinfo", ann.token); !strings.HasPrefix(fmt.Sprint(v), "map[links:[map[href:"+door+"/nodeinfo/2.0") {
		t.Errorf("the NodeInfo link through the door: %v", v)
	}

	// Straight to the API, over plain http: http links.
	plain := strings.TrimSuffix(e.url, "/")
	if h, v := get(plain, "/api/v1/accounts/verify_credentials", ann.token); len(links(plain, h, v)) > 0 {
		t.Errorf("straight to the API: links %v", links(plain, h, v))
	}
	// A header the operator did not name is not believed.
	if h, v := get(plain, "/api/v1/accounts/verify_credentials", ann.token, "X-Forwarded-Host", "evil.example"); len(links(plain, h, v)) > 0 {
		t.Errorf("with X-Forwarded-Host, not trusted: links %v", links(plain, h, v))
	}
	other := newEnv(t)
	bob := other.register("bob")
	root := strings.TrimSuffix(other.url, "/")
	if h, v := get(root, "/api/v1/accounts/verify_credentials", bob.token, "X-Forwarded-Proto", "https"); len(links(root, h, v)) > 0 {
		t.Errorf("with X-Forwarded-Proto, not trusted: links %v", links(root, h, v))
	}
}

// A deployment that federates links as its domain, whatever Host a
// request came with.
func TestMastodonLinksUseTheFederationDomain(t *testing.T) {
	e, _, base := federatedBeside(t)
	ann := e.register("ann")
	_, port, _ := strings.Cut(strings.TrimPrefix(base, "http://"), ":")
	req, _ := http.NewRequest("GET", base+"/api/v1/accounts/verify_credentials", nil)
	req.Host = "localhost:" + port
	req.Header.Set("Authorization", "Bearer "+ann.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var a map[string]any
	if err := json.NewDecoder(res.Body).Decode(&a); err != nil || res.StatusCode != 200 {
		t.Fatalf("verify_credentials: %d %v", res.StatusCode, err)
	}
	for _, k := range []string{"avatar", "url"} {
		if s, _ := a[k].(string); !strings.HasPrefix(s, base+"/") {
			t.Errorf("%s = %q, want it under %s", k, s, base)
		}
	}
}
