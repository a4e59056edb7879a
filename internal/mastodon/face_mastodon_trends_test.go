package mastodon_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/mattn/go-mastodon"

	"socialstream/internal/accounts"
	"socialstream/internal/api"
	"socialstream/internal/app"
	"socialstream/internal/ids"
	"socialstream/internal/localstack"
	"socialstream/internal/moderation"
	"socialstream/internal/stacktest"
	"socialstream/internal/testenv"
)

// Trends through a Mastodon client library nobody here wrote: what most
// people used (a hashtag), reacted to (a status) and linked, ranked by
// the hour's cron; nothing shown until a moderator approves it through
// the admin API (review is on by default), which asks for its own scopes
// and a moderator; a rejected hashtag never trends; a hashtag's page has
// its history.
func TestMastodonTrends(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><head><meta property="og:title" content="The story"></head><body>...`)
	}))
	defer site.Close()
	e := stacktest.New(t, localstack.Options{DB: testenv.DB(t), Config: app.Config{LinkPreviewsAllowLoopback: true}})
	ctx := context.Background()
	ada, bob, cat := e.Register("ada"), e.Register("bob"), e.Register("cat")
	if err := moderation.SetRole(ctx, e.DB, ids.New(), ada.ID, accounts.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	ca, cb, cc := e.MastoClient(ada, "read write follow"), e.MastoClient(bob, "read write follow"), e.MastoClient(cat, "read write follow")
	post := func(c *mastodon.Client, text string) *mastodon.Status {
		t.Helper()
		st, err := c.PostStatus(ctx, &mastodon.Toot{Status: text})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	post(ca, "#Fediverse is fun")
	post(cb, "#fediverse, and a story "+site.URL+"/story")
	post(cb, "#Fediverse again, the same day")
	post(cc, "#fediverse and #spam and "+site.URL+"/story")
	post(cc, "#spam")
	post(cb, "buy #spam")
	worth := post(ca, "worth a favourite")
	for _, c := range []*mastodon.Client{cb, cc} {
		if _, err := c.Favourite(ctx, worth.ID); err != nil {
			t.Fatal(err)
		}
	}
	e.Settle()
	if r := e.Do(http.MethodGet, api.CronTrendsPath, "", nil, api.TaskSecretHeader, e.Stack.TaskSecret); r.Status != http.StatusNoContent {
		t.Fatalf("the trends' cron: %d %s", r.Status, r.Raw)
	}

	var tags []mastodon.FollowedTag
	getJSON := func(path, token string, into any) {
		t.Helper()
		r := e.Do(http.MethodGet, path, token, nil)
		if r.Status != http.StatusOK || json.Unmarshal(r.Raw, into) != nil {
			t.Fatalf("GET %s: %d %s", path, r.Status, r.Raw)
		}
	}
	getJSON("/api/v1/trends/tags", "", &tags)
	if len(tags) != 0 {
		t.Fatalf("trending tags before review: %+v, want none", tags)
	}
	if st, err := cb.GetTrendingStatuses(ctx, nil); err != nil || len(st) != 0 {
		t.Fatalf("trending statuses before review: %v, %v", st, err)
	}

	// The admin API: a moderator's token with admin:read sees what waits.
	admin := e.MastoClient(ada, "read admin:read admin:write").Config.AccessToken
	var waiting []struct {
		ID             string `json:"id"`
		Name           string `json:"name"`
		Trendable      bool   `json:"trendable"`
		RequiresReview bool   `json:"requires_review"`
		History        []mastodon.FollowedTagHistory
	}
	getJSON("/api/v1/admin/trends/tags", admin, &waiting)
	if len(waiting) != 2 || waiting[0].Name != "fediverse" || !waiting[0].RequiresReview || waiting[0].Trendable ||
		waiting[0].History[0].Accounts != 3 || waiting[0].History[0].Uses != 4 || waiting[1].Name != "spam" {
		t.Fatalf("the tags waiting for review: %+v", waiting)
	}
	// Neither a token without the admin scopes nor a person who is not
	// staff may.
	if r := e.Do(http.MethodGet, "/api/v1/admin/trends/tags", ca.Config.AccessToken, nil); r.Status != http.StatusForbidden {
		t.Errorf("the admin API with read alone: %d %s", r.Status, r.Raw)
	}
	notStaff := e.MastoClient(bob, "admin:read admin:write").Config.AccessToken
	if r := e.Do(http.MethodPost, "/api/v1/admin/trends/tags/spam/approve", notStaff, nil); r.Status != http.StatusForbidden {
		t.Errorf("an approval by one who is not staff: %d %s", r.Status, r.Raw)
	}
	review := func(path string) map[string]any {
		t.Helper()
		r := e.Do(http.MethodPost, path, admin, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("POST %s: %d %s", path, r.Status, r.Raw)
		}
		return r.Body
	}
	if got := review("/api/v1/admin/trends/tags/Fediverse/approve"); got["trendable"] != true || got["requires_review"] != false {
		t.Errorf("the approved tag: %v", got)
	}
	review("/api/v1/admin/trends/tags/spam/reject")
	review("/api/v1/admin/trends/statuses/" + string(worth.ID) + "/approve")
	var links []struct {
		ID  string `json:"id"`
		URL string `json:"url"`
	}
	getJSON("/api/v1/admin/trends/links", admin, &links)
	if len(links) != 1 || links[0].URL != site.URL+"/story" {
		t.Fatalf("the links waiting for review: %+v", links)
	}
	review("/api/v1/admin/trends/links/" + links[0].ID + "/approve")
	if r := e.Do(http.MethodPost, "/api/v1/admin/trends/links/0123abcd/approve", admin, nil); r.Status != http.StatusNotFound {
		t.Errorf("an approval of a link that never trended: %d %s", r.Status, r.Raw)
	}

	// Approved, they trend for everyone; the rejected tag does not.
	getJSON("/api/v1/trends/tags?limit=5", "", &tags)
	if len(tags) != 1 || tags[0].Name != "fediverse" || len(tags[0].History) != 7 || tags[0].History[0].Accounts != 3 ||
		tags[0].History[0].Day.Time.UTC().Format(time.DateOnly) != time.Now().UTC().Format(time.DateOnly) {
		t.Fatalf("trending tags: %+v", tags)
	}
	st, err := cc.GetTrendingStatuses(ctx, nil)
	if err != nil || len(st) != 1 || st[0].ID != worth.ID || st[0].FavouritesCount != 2 {
		t.Fatalf("trending statuses: %+v, %v", st, err)
	}
	var cards []struct {
		URL     string                        `json:"url"`
		Title   string                        `json:"title"`
		History []mastodon.FollowedTagHistory `json:"history"`
	}
	getJSON("/api/v1/trends/links", "", &cards)
	if len(cards) != 1 || cards[0].Title != "The story" || cards[0].History[0].Accounts != 2 {
		t.Fatalf("trending links: %+v", cards)
	}
	// A hashtag's page has its history, trending or not.
	info, err := cb.TagInfo(ctx, "spam")
	if err != nil || len(info.History) != 7 || info.History[0].Uses != 3 || info.History[0].Accounts != 2 {
		t.Fatalf("#spam's page: %+v, %v", info, err)
	}
	// Bad input is a 4xx.
	for _, path := range []string{"/api/v1/trends/tags?limit=x", "/api/v1/trends/statuses?offset=-1", "/api/v1/trends/links?offset=" + strconv.Itoa(1000)} {
		if r := e.Do(http.MethodGet, path, "", nil); r.Status != http.StatusBadRequest && r.Status != http.StatusUnprocessableEntity {
			t.Errorf("GET %s: %d %s", path, r.Status, r.Raw)
		}
	}
}
