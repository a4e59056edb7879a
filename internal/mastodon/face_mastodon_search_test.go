package mastodon_test

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/mattn/go-mastodon"

	"socialstream/internal/localstack"
	"socialstream/internal/stacktest"
	"socialstream/internal/testenv"
)

// Post search through a Mastodon client library nobody here wrote:
// what Mastodon 4 lets a person search (their own posts, those that
// mention them, and the public posts of people who opted in), a
// Japanese sentence found by a two-character word inside it, accents
// and case folded, from:, an edit and a delete taking effect at once,
// and opting out hiding one's posts from strangers at once.
func TestMastodonPostSearch(t *testing.T) {
	e := stacktest.New(t, localstack.Options{DB: testenv.DB(t)})
	ctx := context.Background()
	alice, bob, carol := e.Register("alice"), e.Register("bob"), e.Register("carol")
	ca, cb, cc := e.MastoClient(alice, "read write follow"), e.MastoClient(bob, "read write follow"), e.MastoClient(carol, "read write follow")
	indexable := func(c *mastodon.Client, on bool) {
		t.Helper()
		status, out := e.MastoForm(http.MethodPatch, "/api/v1/accounts/update_credentials", c.Config.AccessToken, url.Values{"indexable": {strconvBool(on)}})
		if status != http.StatusOK || out["indexable"] != on {
			t.Fatalf("indexable=%v: %d %v", on, status, out)
		}
	}
	indexable(ca, true)
	post := func(c *mastodon.Client, text, visibility string) mastodon.ID {
		t.Helper()
		st, err := c.PostStatus(ctx, &mastodon.Toot{Status: text, Visibility: visibility})
		if err != nil {
			t.Fatalf("post %q: %v", text, err)
		}
		return st.ID
	}
	tokyo := post(ca, "昨日は東京都庁の展望台に行きました。", "public")
	cafe := post(ca, "Café au lait at the STATION", "public")
	bobs := post(cb, "東京 is big", "public")                 // bob is not indexable
	secret := post(cb, "a secret 東京 plan @carol", "direct") // found by carol, mentioned
	followers := post(ca, "東京 for my followers", "private") // found by alice alone
	find := func(c *mastodon.Client, q string) []mastodon.ID {
		t.Helper()
		res, err := c.Search(ctx, q, false)
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		var out []mastodon.ID
		for _, s := range res.Statuses {
			out = append(out, s.ID)
		}
		return out
	}
	expect := func(who string, c *mastodon.Client, q string, want ...mastodon.ID) {
		t.Helper()
		if got := find(c, q); !slices.Equal(got, want) {
			t.Errorf("%s searching %q: %v, want %v (newest first)", who, q, got, want)
		}
	}
	expect("carol", cc, "東京", secret, tokyo)
	expect("bob", cb, "東京", secret, bobs, tokyo)
	expect("alice", ca, "東京", followers, tokyo)
	expect("carol", cc, "都庁", tokyo)     // two characters inside a sentence
	expect("carol", cc, "展望台", tokyo)    // three: its bigrams, in order
	expect("carol", cc, "台展望")           // its bigrams, not in order
	expect("carol", cc, "cafe", cafe)    // accents folded
	expect("carol", cc, "ＳＴＡＴＩＯＮ", cafe) // width and case folded
	expect("carol", cc, `"au lait"`, cafe)
	expect("carol", cc, `"lait au"`)
	expect("carol", cc, "from:alice 東京", tokyo)
	expect("carol", cc, "from:bob 東京", secret)
	expect("carol", cc, "from:nobody 東京")
	expect("carol", cc, "東京 -展望台", secret)

	// A status's address finds that status, for whoever may see it.
	for _, c := range []struct {
		who    string
		client *mastodon.Client
		id     mastodon.ID
		found  bool
	}{{"carol", cc, tokyo, true}, {"carol", cc, secret, true}, {"alice", ca, secret, false}} {
		st, err := cb.GetStatus(ctx, c.id)
		if err != nil {
			t.Fatal(err)
		}
		want := []mastodon.ID{}
		if c.found {
			want = []mastodon.ID{c.id}
		}
		if got := find(c.client, st.URL); !slices.Equal(got, want) && (len(got) > 0 || len(want) > 0) {
			t.Errorf("%s searching the address %s: %v, want %v", c.who, st.URL, got, want)
		}
	}

	// A post of a picture alone is found by what it is.
	att, err := ca.UploadMediaFromMedia(ctx, &mastodon.Media{File: bytes.NewReader(stacktest.Picture(t, "png", 20, 20))})
	if err != nil {
		t.Fatal(err)
	}
	pictured, err := ca.PostStatus(ctx, &mastodon.Toot{MediaIDs: []mastodon.ID{att.ID}, Visibility: "public"})
	if err != nil {
		t.Fatal(err)
	}
	expect("carol", cc, "from:alice has:media", pictured.ID)

	// An edit changes what finds the post, and a delete takes it away, at once.
	if _, err := ca.UpdateStatus(ctx, &mastodon.Toot{Status: "今日は大阪城に行きました。"}, tokyo); err != nil {
		t.Fatal(err)
	}
	expect("carol", cc, "都庁")
	expect("carol", cc, "大阪", tokyo)
	if err := cb.DeleteStatus(ctx, secret); err != nil {
		t.Fatal(err)
	}
	expect("carol", cc, "東京")

	// A block hides both ways; opting out hides alice's posts from
	// strangers at once, not from herself.
	expect("bob", cb, "cafe", cafe)
	if _, err := cb.AccountBlock(ctx, mastodon.ID(alice.ID)); err != nil {
		t.Fatal(err)
	}
	expect("bob", cb, "cafe")
	indexable(ca, false)
	expect("carol", cc, "cafe")
	expect("alice", ca, "cafe", cafe)

	// type=statuses, limit and offset, and what a search refuses.
	for i := range 3 {
		post(cc, "paging word "+strings.Repeat("x", i+1), "public")
	}
	page := func(query string) (int, []any) {
		status, out := e.MastoForm(http.MethodGet, "/api/v2/search?"+query, cc.Config.AccessToken, nil)
		sts, _ := out["statuses"].([]any)
		return status, sts
	}
	if status, sts := page("q=paging&type=statuses&limit=2"); status != http.StatusOK || len(sts) != 2 {
		t.Errorf("limit=2: %d, %d statuses", status, len(sts))
	}
	if status, sts := page("q=paging&type=statuses&limit=2&offset=2"); status != http.StatusOK || len(sts) != 1 {
		t.Errorf("limit=2&offset=2: %d, %d statuses", status, len(sts))
	}
	if status, sts := page("q=paging&type=accounts"); status != http.StatusOK || len(sts) != 0 {
		t.Errorf("type=accounts: %d, %d statuses", status, len(sts))
	}
	for _, bad := range []string{"q=a+b+c+d+e+f+g+h+i+j+k+l+m+n+o+p+q", "q=" + strings.Repeat("x", 501), "q=x&type=posts", "q=x&offset=-1", "q=x&max_id=nope"} {
		if status, _ := page(bad); status != http.StatusUnprocessableEntity && status != http.StatusBadRequest {
			t.Errorf("%.40s: %d, want a 4xx", bad, status)
		}
	}
}

func strconvBool(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
