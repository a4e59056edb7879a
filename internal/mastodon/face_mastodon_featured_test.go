package mastodon_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mattn/go-mastodon"

	"socialstream/internal/localstack"
	"socialstream/internal/stacktest"
	"socialstream/internal/testenv"
)

// Featured hashtags: a person features up to 10, each shown with the
// count of their public posts that carry it and the day of the newest,
// on their own list and their profile's; suggestions are the tags of
// their newest posts; what is refused.
func TestMastodonFeaturedTags(t *testing.T) {
	e := stacktest.New(t, localstack.Options{DB: testenv.DB(t)})
	ctx := context.Background()
	alice, bob := e.Register("alice"), e.Register("bob")
	ca := e.MastoClient(alice, "read write follow")
	cb := e.MastoClient(bob, "read write follow")
	for _, text := range []string{"one #Go", "two #go #rust", "three #GO, for followers"} {
		vis := "public"
		if strings.Contains(text, "followers") {
			vis = "private"
		}
		if _, err := ca.PostStatus(ctx, &mastodon.Toot{Status: text, Visibility: vis}); err != nil {
			t.Fatal(err)
		}
	}
	token := ca.Config.AccessToken
	feature := func(name string) (int, map[string]any) {
		return e.MastoForm(http.MethodPost, "/api/v1/featured_tags", token, url.Values{"name": {name}})
	}
	if status, f := feature("#GO"); status != http.StatusOK || f["name"] != "go" || f["statuses_count"] != float64(2) ||
		f["last_status_at"] != time.Now().UTC().Format(time.DateOnly) || f["id"] != "go" {
		t.Fatalf("featuring #GO: %d %v", status, f)
	}
	if status, f := feature("elixir"); status != http.StatusOK || f["statuses_count"] != float64(0) || f["last_status_at"] != nil {
		t.Errorf("featuring a tag never used: %d %v", status, f)
	}
	list := func(path, tok string) []any {
		t.Helper()
		r := e.Do(http.MethodGet, path, tok, nil)
		var out []any
		if r.Status != http.StatusOK || json.Unmarshal(r.Raw, &out) != nil {
			t.Fatalf("GET %s: %d %s", path, r.Status, r.Raw)
		}
		return out
	}
	if got := list("/api/v1/featured_tags", token); len(got) != 2 || got[0].(map[string]any)["name"] != "go" {
		t.Errorf("alice's featured tags: %v", got)
	}
	if got := list("/api/v1/accounts/"+alice.ID+"/featured_tags", cb.Config.AccessToken); len(got) != 2 {
		t.Errorf("alice's, as bob sees them: %v", got)
	}
	if got := list("/api/v1/featured_tags/suggestions", token); len(got) != 1 || got[0].(map[string]any)["name"] != "rust" {
		t.Errorf("suggestions: %v", got)
	}
	if r := e.Do(http.MethodDelete, "/api/v1/featured_tags/elixir", token, nil); r.Status != http.StatusOK {
		t.Errorf("unfeaturing: %d %s", r.Status, r.Raw)
	}
	if r := e.Do(http.MethodDelete, "/api/v1/featured_tags/elixir", token, nil); r.Status != http.StatusNotFound {
		t.Errorf("unfeaturing again: %d %s", r.Status, r.Raw)
	}
	for i := range 9 {
		if status, f := feature("t" + strings.Repeat("x", i)); status != http.StatusOK {
			t.Fatalf("featuring the %dth: %d %v", i+2, status, f)
		}
	}
	if status, f := feature("one_more"); status != http.StatusUnprocessableEntity {
		t.Errorf("an 11th: %d %v", status, f)
	}
	if status, f := feature("not a tag!"); status != http.StatusUnprocessableEntity {
		t.Errorf("a name that is no tag: %d %v", status, f)
	}
	if got := list("/api/v1/featured_tags", token); len(got) != 10 {
		t.Errorf("10 featured: %d", len(got))
	}
}
