// Package oauthclient signs a person in at a server of Mastodon's API
// through its own sign-in page, as a browser does, for the commands that
// drive another server (cmd/feedbench's peer mode, cmd/fedflows): an app
// registered once, then for each person /oauth/authorize (which sends to
// the sign-in page), the sign-in form, the consent form, and the code's
// exchange at /oauth/token. It owns no entity.
package oauthclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"strings"
	"time"
)

// Scopes are what the app asks for.
const Scopes = "read write follow"

// redirect is where the consent sends the code: never followed.
const redirect = "http://localhost/oauthclient-callback"

// App is an app registered at a server.
type App struct {
	base, userAgent        string
	clientID, clientSecret string
}

// Register registers an app named name at the server at base; userAgent
// names the caller (some servers refuse requests without one).
func Register(ctx context.Context, base, name, userAgent string) (App, error) {
	a := App{base: strings.TrimSuffix(base, "/"), userAgent: userAgent}
	var got struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	err := a.postJSON(ctx, "/api/v1/apps", map[string]string{"client_name": name, "redirect_uris": redirect, "scopes": Scopes}, &got)
	a.clientID, a.clientSecret = got.ClientID, got.ClientSecret
	return a, err
}

// SignIn returns an access token of the person email names, signed in
// with password.
func (a App) SignIn(ctx context.Context, email, password string) (string, error) {
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		if req.URL.Host == "localhost" {
			return http.ErrUseLastResponse
		}
		return nil
	}}
	form := func(method, path string, v url.Values) (*http.Response, error) {
		var body io.Reader
		if v != nil {
			body = strings.NewReader(v.Encode())
		}
		req, err := http.NewRequestWithContext(ctx, method, a.base+path, body)
		if err != nil {
			return nil, err
		}
		req.Header.Set("User-Agent", a.userAgent)
		if v != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := hc.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return resp, err
	}
	q := url.Values{"client_id": {a.clientID}, "redirect_uri": {redirect}, "response_type": {"code"}, "scope": {Scopes}}
	if _, err := form(http.MethodGet, "/oauth/authorize?"+q.Encode(), nil); err != nil {
		return "", err
	}
	if resp, err := form(http.MethodPost, "/auth/sign_in", url.Values{"username": {email}, "password": {password}}); err != nil {
		return "", err
	} else if resp.StatusCode/100 != 2 {
		return "", fmt.Errorf("sign-in of %s: %d", email, resp.StatusCode)
	}
	resp, err := form(http.MethodPost, "/oauth/authorize", url.Values{})
	if err != nil {
		return "", err
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || loc.Query().Get("code") == "" {
		return "", fmt.Errorf("consent of %s: %d, no code in %q", email, resp.StatusCode, resp.Header.Get("Location"))
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	err = a.postJSON(ctx, "/oauth/token", map[string]string{"grant_type": "authorization_code", "code": loc.Query().Get("code"),
		"client_id": a.clientID, "client_secret": a.clientSecret, "redirect_uri": redirect, "scope": Scopes}, &tok)
	return tok.AccessToken, err
}

func (a App) postJSON(ctx context.Context, path string, body, out any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.base+path, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", a.userAgent)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST %s: %d %s", path, resp.StatusCode, bytes.TrimSpace(raw[:min(len(raw), 300)]))
	}
	return json.Unmarshal(raw, out)
}

// Logins reads up to n "email password" lines of file (others are left
// out); fewer than n is an error.
func Logins(file string, n int) ([][2]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out [][2]string
	sc := bufio.NewScanner(f)
	for sc.Scan() && len(out) < n {
		if email, password, ok := strings.Cut(strings.TrimSpace(sc.Text()), " "); ok {
			out = append(out, [2]string{email, password})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) < n {
		return nil, fmt.Errorf("%s: %d accounts, want %d", file, len(out), n)
	}
	return out, nil
}
