package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"socialstream/internal/testenv"
)

// A page of another origin calls the API through Chromium, with a bearer
// token: from an origin CORS_ORIGINS lists, the browser lets the page read
// the answer; from any other, it keeps it from the page.
func TestCORSThroughTheBrowser(t *testing.T) {
	t.Parallel()   // a stack, a namespace and tabs of its own
	var api string // the API's URL, once it runs
	page := func() *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, `<!doctype html><title>gadget</title><script>
window.result = 'pending';
fetch(%q, {headers: {'Authorization': 'Bearer ' + %q}})
  .then(r => r.json().then(b => { window.result = r.status + ' ' + b.entry.preferredUsername; }))
  .catch(() => { window.result = 'blocked'; });
</script>`, api+"/social/rest/people/@me/@self", r.URL.Query().Get("token"))
		}))
	}
	listed, other := page(), page()
	defer listed.Close()
	defer other.Close()
	api = startStackWith(t, testenv.DB(t), []string{listed.URL})

	res, err := http.Post(api+"/auth/register", "application/json", strings.NewReader(`{"username":"gadgeteer","password":"password-gadgeteer"}`))
	if err != nil {
		t.Fatal(err)
	}
	var session struct{ Token string }
	if err := json.NewDecoder(res.Body).Decode(&session); err != nil || res.StatusCode != http.StatusCreated {
		t.Fatalf("register: %d %v", res.StatusCode, err)
	}
	res.Body.Close()

	browser, shots := startBrowser(t), screenshotDir(t)
	for _, c := range []struct {
		name, url, want string
	}{
		{"listed", listed.URL, "200 gadgeteer"},
		{"other", other.URL, "blocked"},
	} {
		tab := newTab(t, browser, "cors-"+c.name, shots)
		tab.do(chromedp.Navigate(c.url + "/?token=" + session.Token))
		tab.waitFor(`window.result !== 'pending'`, "the page's call", nil)
		if got := tab.evalString(`window.result`); got != c.want {
			t.Errorf("a page of the %s origin calling the API: %q, want %q", c.name, got, c.want)
		}
	}
}
