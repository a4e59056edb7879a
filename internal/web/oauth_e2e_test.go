package web_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestMastodonConsentPage walks the page where a person approves a
// Mastodon app, as they would: the app sends them to it with PKCE, a
// wrong password is told on the page, Deny sends the app access_denied,
// and Authorize sends it a code it trades for a token that works.
func TestMastodonConsentPage(t *testing.T) {
	t.Parallel()
	base := startStack(t)
	browserCtx := startBrowser(t)
	shots := screenshotDir(t)
	ann := newTab(t, browserCtx, "ann", shots)
	ann.signUp(base)

	// The app's own page, where the person lands back.
	landed := make(chan url.Values, 4)
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r) // the browser's own asks (a favicon)
			return
		}
		landed <- r.URL.Query()
		_, _ = w.Write([]byte(`<!doctype html><title>back in the app</title><p id="back">back in the app</p>`))
	}))
	t.Cleanup(app.Close)
	callback := app.URL + "/callback"
	var reg struct {
		ClientID string `json:"client_id"`
	}
	postJSON(t, base+"/api/v1/apps", url.Values{"client_name": {"Pocket Client"}, "redirect_uris": {callback}, "scopes": {"read write"}}, &reg)

	verifier := strings.Repeat("pkce-verifier-", 4)
	sum := sha256.Sum256([]byte(verifier))
	authorize := base + "/oauth/authorize?" + url.Values{"response_type": {"code"}, "client_id": {reg.ClientID}, "redirect_uri": {callback},
		"scope": {"read write"}, "state": {"s-1"}, "code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])},
		"code_challenge_method": {"S256"}}.Encode()

	// The page names the app and what it asks for.
	ann.do(chromedp.Navigate(authorize), chromedp.WaitVisible(chromedp.CSS(`#approve`)))
	ann.checkLabels()
	ann.checkFitsWidth()
	if h := ann.text(`h1`); h != "Authorize Pocket Client" {
		t.Errorf("heading %q", h)
	}
	if got := ann.text(`#scopes`); !strings.Contains(got, "read") || !strings.Contains(got, "write") {
		t.Errorf("scopes shown: %q", got)
	}
	ann.shot("consent")

	// A wrong password is told, and nothing goes to the app.
	ann.do(
		chromedp.SendKeys(chromedp.CSS(`#username`), "ann"),
		chromedp.SendKeys(chromedp.CSS(`#password`), "not-her-password"),
		chromedp.Click(chromedp.CSS(`#approve`)),
		chromedp.WaitVisible(chromedp.CSS(`#error`)),
	)
	if msg := ann.text(`#error`); msg == "" {
		t.Error("no message for a wrong password")
	}
	select {
	case q := <-landed:
		t.Fatalf("the app was sent %v after a wrong password", q)
	default:
	}
	ann.shot("wrong-password")

	// Deny: the app hears access_denied, with its state.
	ann.do(chromedp.Click(chromedp.CSS(`#deny`)), chromedp.WaitVisible(chromedp.CSS(`#back`)))
	if q := <-landed; q.Get("error") != "access_denied" || q.Get("state") != "s-1" || q.Get("code") != "" {
		t.Fatalf("denied: the app got %v", q)
	}

	// Authorize, from the keyboard: the app gets a code and its state.
	ann.do(chromedp.Navigate(authorize), chromedp.WaitVisible(chromedp.CSS(`#approve`)))
	ann.do(
		chromedp.SendKeys(chromedp.CSS(`#username`), "ann"),
		chromedp.SendKeys(chromedp.CSS(`#password`), "password-ann"+kb.Enter),
	)
	q := <-landed
	if q.Get("code") == "" || q.Get("state") != "s-1" {
		t.Fatalf("approved: the app got %v", q)
	}
	// The app heard the request before the browser has its page: read
	// the page once it is there.
	ann.do(chromedp.WaitVisible(chromedp.CSS(`#back`)))
	ann.shot("back-in-the-app")
	var tok struct {
		AccessToken string `json:"access_token"`
		Scope       string `json:"scope"`
	}
	postJSON(t, base+"/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {q.Get("code")}, "client_id": {reg.ClientID},
		"redirect_uri": {callback}, "code_verifier": {verifier}}, &tok)
	if tok.Scope != "read write" {
		t.Errorf("scope %q", tok.Scope)
	}
	req, _ := http.NewRequest("GET", base+"/api/v1/accounts/verify_credentials", nil)
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var me struct{ Username string }
	err = json.NewDecoder(res.Body).Decode(&me)
	res.Body.Close()
	if err != nil || me.Username != "ann" {
		t.Fatalf("verify_credentials: %d %+v %v", res.StatusCode, me, err)
	}
	ann.checkConsole()
}

// postJSON posts a form and decodes its 200 JSON answer into out.
func postJSON(t *testing.T, u string, form url.Values, out any) {
	t.Helper()
	res, err := http.PostForm(u, form)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %d", u, res.StatusCode)
	}
	if err := json.NewDecoder(res.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
}
