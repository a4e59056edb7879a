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
// Mastodon app, as they would, at a phone's width: the app sends them to
// it with PKCE; it names the deployment, the app and its website, and
// says what each scope allows in words, styled under a CSP that allows
// no script and nothing inline but its own stylesheet; a wrong password
// is told on the page, Deny sends the app access_denied, and Authorize
// sends it a code it trades for a token that works. Someone new creates
// an account there and goes back to the app signed in.
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
	postJSON(t, base+"/api/v1/apps", url.Values{"client_name": {"Pocket Client"}, "redirect_uris": {callback}, "scopes": {"read write push"},
		"website": {"https://pocket.example/"}}, &reg)

	verifier := strings.Repeat("pkce-verifier-", 4)
	sum := sha256.Sum256([]byte(verifier))
	authorize := base + "/oauth/authorize?" + url.Values{"response_type": {"code"}, "client_id": {reg.ClientID}, "redirect_uri": {callback},
		"scope": {"read write push"}, "state": {"s-1"}, "code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])},
		"code_challenge_method": {"S256"}}.Encode()

	// The page names the app and what it asks for.
	ann.do(chromedp.Navigate(authorize), chromedp.WaitVisible(chromedp.CSS(`#approve`)))
	ann.checkLabels()
	ann.checkFitsWidth()
	if h := ann.text(`h1`); h != "Pocket Client wants to use your account" {
		t.Errorf("heading %q", h)
	}
	if d := ann.text(`#domain`); d != strings.TrimPrefix(base, "http://") {
		t.Errorf("the deployment is named %q, want %q", d, strings.TrimPrefix(base, "http://"))
	}
	if w := ann.attr(`#website`, "href"); w != "https://pocket.example/" {
		t.Errorf("the app's website: %q", w)
	}
	if got := ann.text(`#scopes`); !strings.Contains(got, "Read everything in your account") || !strings.Contains(got, "Act for you") ||
		!strings.Contains(got, "Send notifications to this device") {
		t.Errorf("scopes shown: %q", got)
	}
	// Its stylesheet applies (the CSP allows it by its hash), and nothing
	// runs: the page has no script.
	if !ann.eval(`getComputedStyle(document.querySelector('main')).maxWidth === '480px' && document.scripts.length === 0`) {
		t.Error("the page's stylesheet does not apply, or it has a script")
	}
	// By keyboard: the username field has the focus, and Tab goes on to
	// the password, then to the button that signs in.
	if !ann.eval(`document.activeElement && document.activeElement.id === 'username'`) {
		t.Errorf("the focus is on %q, want the username", ann.evalString(`document.activeElement ? document.activeElement.id : ''`))
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
	if tok.Scope != "push read write" {
		t.Errorf("scope %q", tok.Scope)
	}
	if me := whoAmI(t, base, tok.AccessToken); me != "ann" {
		t.Fatalf("verify_credentials: %q", me)
	}
	ann.checkConsole()

	// Someone new: a name taken is told by the sign-up form, in words;
	// then an account made there goes back to the app with its code.
	newcomer := newTab(t, browserCtx, "newcomer", shots)
	newcomer.do(chromedp.Navigate(authorize), chromedp.WaitVisible(chromedp.CSS(`#register`)))
	newcomer.checkLabels()
	newcomer.do(
		chromedp.SendKeys(chromedp.CSS(`#new-username`), "ann"),
		chromedp.SendKeys(chromedp.CSS(`#new-password`), "a-long-password"),
		chromedp.Click(chromedp.CSS(`#register`)),
		chromedp.WaitVisible(chromedp.CSS(`#error`)),
	)
	if msg := newcomer.text(`#error`); !strings.Contains(strings.ToLower(msg), "taken") ||
		!newcomer.eval(`document.querySelector('#error').closest('section').querySelector('#register') !== null`) {
		t.Errorf("a name taken is told as %q, or not by the sign-up form", msg)
	}
	newcomer.shot("name-taken")
	if newcomer.attr(`#new-username`, "value") != "ann" || !newcomer.eval(`(document.querySelector('#new-username').value = '') === ''`) {
		t.Error("the sign-up form does not keep the name it was sent")
	}
	newcomer.do(
		chromedp.SendKeys(chromedp.CSS(`#new-username`), "newcomer"),
		chromedp.SendKeys(chromedp.CSS(`#new-password`), "a-long-password"+kb.Enter),
	)
	q = <-landed
	if q.Get("code") == "" || q.Get("state") != "s-1" {
		t.Fatalf("signed up: the app got %v", q)
	}
	newcomer.do(chromedp.WaitVisible(chromedp.CSS(`#back`)))
	postJSON(t, base+"/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {q.Get("code")}, "client_id": {reg.ClientID},
		"redirect_uri": {callback}, "code_verifier": {verifier}}, &tok)
	if me := whoAmI(t, base, tok.AccessToken); me != "newcomer" {
		t.Fatalf("the new account's token is %q's", me)
	}
	newcomer.checkConsole()
}

// whoAmI returns the username a token of the Mastodon face is for.
func whoAmI(t *testing.T, base, token string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/api/v1/accounts/verify_credentials", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var me struct{ Username string }
	if err := json.NewDecoder(res.Body).Decode(&me); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("verify_credentials: %d %v", res.StatusCode, err)
	}
	return me.Username
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
