package mastodon_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mattn/go-mastodon"

	"socialstream/internal/app"
	"socialstream/internal/localstack"
	"socialstream/internal/ratelimit"
	"socialstream/internal/stacktest"
)

// The Mastodon face, driven by a Mastodon client library nobody here
// wrote (github.com/mattn/go-mastodon), over real HTTP.

func wantStatus(t *testing.T, err error, status int) {
	t.Helper()
	var ae *mastodon.APIError
	if !errors.As(err, &ae) || ae.StatusCode != status {
		t.Fatalf("got %v, want a %d", err, status)
	}
}

func TestMastodonSignIn(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	alice := e.Register("alice")
	c := e.MastoClient(alice, "read write follow")
	me, err := c.GetAccountCurrentUser(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if string(me.ID) != alice.ID || me.Username != "alice" || me.Acct != "alice" || me.Avatar == "" {
		t.Fatalf("verify_credentials: %+v", me)
	}
	if v, err := c.VerifyAppCredentials(ctx); err != nil || v.Name != "test app" {
		t.Fatalf("apps/verify_credentials: %+v %v", v, err)
	}

	// The app's token works on the service's own API, within its scopes.
	if r := e.Do("GET", "/social/rest/people/@me/@self", c.Config.AccessToken, nil); r.Status != http.StatusOK {
		t.Fatalf("an app's token on the REST API: %d %s", r.Status, r.Raw)
	}
	// A token of the service's own sign-in works on /api.
	own := mastodon.NewClient(&mastodon.Config{Server: e.URL, AccessToken: alice.Token})
	if _, err := own.GetAccountCurrentUser(ctx); err != nil {
		t.Fatal(err)
	}

	// Scopes are enforced, coarse and granular.
	reader := e.MastoClient(alice, "read")
	_, err = reader.PostStatus(ctx, &mastodon.Toot{Status: "not allowed"})
	wantStatus(t, err, http.StatusForbidden)
	if r := e.Do("POST", "/social/rest/activities/@me/@self", reader.Config.AccessToken, map[string]any{"title": "no"}); r.Status != http.StatusForbidden {
		t.Fatalf("a read token writing on the REST API: %d %s", r.Status, r.Raw)
	}
	statusesOnly := e.MastoClient(alice, "write:statuses read:statuses")
	if _, err := statusesOnly.PostStatus(ctx, &mastodon.Toot{Status: "granular"}); err != nil {
		t.Fatal(err)
	}
	_, err = statusesOnly.GetNotifications(ctx, nil)
	wantStatus(t, err, http.StatusForbidden)

	// An app may not ask a person for more than it registered.
	app := e.MastoApp("read")
	if page := e.GetPage("/oauth/authorize?" + url.Values{"client_id": {app.ClientID}, "redirect_uri": {stacktest.OOB},
		"response_type": {"code"}, "scope": {"read write"}}.Encode()); !strings.Contains(page, "invalid_scope") {
		t.Fatalf("asking beyond the app's scopes: %s", page)
	}
	// The consent page may not be framed, cached, referred or sniffed.
	page, err := http.Get(e.URL + "/oauth/authorize?" + url.Values{"client_id": {app.ClientID}, "redirect_uri": {stacktest.OOB},
		"response_type": {"code"}, "scope": {"read"}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	page.Body.Close()
	for h, want := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Cache-Control": "no-store", "Referrer-Policy": "no-referrer"} {
		if got := page.Header.Get(h); got != want {
			t.Errorf("the consent page's %s: %q, want %q", h, got, want)
		}
	}
	// Its CSP allows its own stylesheet alone: no script, nothing inline
	// but what its hash names, nothing from elsewhere, forms to itself.
	if csp := page.Header.Get("Content-Security-Policy"); !strings.HasPrefix(csp, "default-src 'none'; style-src 'sha256-") ||
		strings.Contains(csp, "unsafe") || !strings.Contains(csp, "form-action 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("the consent page's CSP: %q", csp)
	}
	// A code is traded once; traded again (stolen), it gives nothing and
	// the token of its first trade stops (RFC 6749 section 4.1.2).
	code := e.Approve(app, alice, "read")
	first := mastodon.NewClient(&mastodon.Config{Server: e.URL, ClientID: app.ClientID, ClientSecret: app.ClientSecret})
	if err := first.AuthenticateToken(ctx, code, stacktest.OOB); err != nil {
		t.Fatal(err)
	}
	if _, err := first.GetAccountCurrentUser(ctx); err != nil {
		t.Fatal(err)
	}
	thief := mastodon.NewClient(&mastodon.Config{Server: e.URL, ClientID: app.ClientID, ClientSecret: app.ClientSecret})
	if err := thief.AuthenticateToken(ctx, code, stacktest.OOB); err == nil {
		t.Fatal("a code traded twice")
	}
	_, err = first.GetAccountCurrentUser(ctx)
	wantStatus(t, err, http.StatusUnauthorized)
	// The redirect the authorization named must be named again.
	code = e.Approve(app, alice, "read")
	if status := e.FormStatus("/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {app.ClientID},
		"client_secret": {app.ClientSecret}}); status != http.StatusBadRequest {
		t.Fatalf("a trade without the redirect named: %d", status)
	}
	// A verifier for a code that had no challenge is refused.
	code = e.Approve(app, alice, "read")
	if status := e.FormStatus("/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {app.ClientID},
		"client_secret": {app.ClientSecret}, "redirect_uri": {stacktest.OOB}, "code_verifier": {strings.Repeat("v", 50)}}); status != http.StatusBadRequest {
		t.Fatalf("a verifier for a code without a challenge: %d", status)
	}
	// What an app may register as its redirect: never a scheme that runs
	// code.
	for _, bad := range []string{"vbscript:msgbox(1)", "javascript:alert(1)", "data:text/html,x", "http://app.example.com/cb"} {
		if status := e.FormStatus("/api/v1/apps", url.Values{"client_name": {"evil"}, "redirect_uris": {bad}}); status != http.StatusUnprocessableEntity {
			t.Errorf("an app registering %q: %d", bad, status)
		}
	}

	// A code approved by someone deleted since gives no token.
	gone := e.Register("gone")
	goneCode := e.Approve(app, gone, "read")
	if r := e.Do("DELETE", "/auth/account", gone.Token, map[string]string{"password": "password-gone"}); r.Status >= 300 {
		t.Fatalf("delete: %d %s", r.Status, r.Raw)
	}
	late := mastodon.NewClient(&mastodon.Config{Server: e.URL, ClientID: app.ClientID, ClientSecret: app.ClientSecret})
	if err := late.AuthenticateToken(ctx, goneCode, stacktest.OOB); err == nil {
		t.Fatal("a token for someone deleted")
	}

	// Revoked, the token stops at once.
	if err := c.RevokeToken(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetAccountCurrentUser(ctx)
	wantStatus(t, err, http.StatusUnauthorized)

	// A wrong password shows the page again, with no code.
	resp, err := http.PostForm(e.URL+"/oauth/authorize", url.Values{"client_id": {app.ClientID}, "redirect_uri": {stacktest.OOB},
		"scope": {"read"}, "username": {"alice"}, "password": {"wrong"}, "decision": {"approve"}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || strings.Contains(string(body), `id="code"`) {
		t.Fatalf("a wrong password: %d %s", resp.StatusCode, body)
	}
}

func TestMastodonPKCEAndRegistration(t *testing.T) {
	e := newEnv(t)
	alice := e.Register("alice")
	r := e.FormPost("/api/v1/apps", "", url.Values{"client_name": {"pkce app"}, "redirect_uris": {"com.example.app://callback"}, "scopes": {"read write"}})
	var app struct{ ClientID, ClientSecret string }
	app.ClientID, app.ClientSecret = r["client_id"].(string), r["client_secret"].(string)

	verifier := strings.Repeat("v", 50)
	sum := sha256.Sum256([]byte(verifier))
	challenge := base64.RawURLEncoding.EncodeToString(sum[:])
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.PostForm(e.URL+"/oauth/authorize", url.Values{"client_id": {app.ClientID}, "redirect_uri": {"com.example.app://callback"},
		"scope": {"read"}, "state": {"xyz"}, "code_challenge": {challenge}, "code_challenge_method": {"S256"},
		"username": {"alice"}, "password": {"password-alice"}, "decision": {"approve"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || err != nil || loc.Scheme != "com.example.app" || loc.Query().Get("state") != "xyz" {
		t.Fatalf("the redirect: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	code := loc.Query().Get("code")
	// A public client proves itself by the verifier: a wrong one fails
	// (and spends the code).
	bad := e.FormStatus("/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {app.ClientID},
		"redirect_uri": {"com.example.app://callback"}, "code_verifier": {strings.Repeat("w", 50)}})
	if bad != http.StatusBadRequest {
		t.Fatalf("a wrong verifier: %d", bad)
	}

	// Registration: an app's token of its own signs a person up.
	appToken := e.FormPost("/oauth/token", "", url.Values{"grant_type": {"client_credentials"}, "client_id": {app.ClientID},
		"client_secret": {app.ClientSecret}, "scope": {"read write"}})["access_token"].(string)
	if r := e.Do("GET", "/social/rest/people/@me/@self", appToken, nil); r.Status != http.StatusUnauthorized {
		t.Fatalf("an app's token of its own speaks for no one: %d", r.Status)
	}
	reg := e.FormPost("/api/v1/accounts", appToken, url.Values{"username": {"newcomer"}, "password": {"password-newcomer"},
		"email": {"n@example.com"}, "agreement": {"true"}, "locale": {"en"}})
	c := mastodon.NewClient(&mastodon.Config{Server: e.URL, AccessToken: reg["access_token"].(string)})
	me, err := c.GetAccountCurrentUser(context.Background())
	if err != nil || me.Username != "newcomer" {
		t.Fatalf("the registered: %+v %v", me, err)
	}
	_ = alice
}

func TestMastodonStatusesAndTimelines(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	alice, bob := e.Register("alice"), e.Register("bob")
	ca, cb := e.MastoClient(alice, "read write follow"), e.MastoClient(bob, "read write follow")

	if rel, err := cb.AccountFollow(ctx, mastodon.ID(alice.ID)); err != nil || !rel.Following {
		t.Fatalf("follow: %+v %v", rel, err)
	}
	if rels, err := ca.GetAccountRelationships(ctx, []string{bob.ID, "999999999"}); err != nil || len(rels) != 1 || !rels[0].FollowedBy || rels[0].Following {
		t.Fatalf("relationships: %+v %v", rels, err)
	}
	if rel, err := ca.AccountMute(ctx, mastodon.ID(bob.ID)); err != nil || !rel.Muting || !rel.FollowedBy {
		t.Fatalf("mute: %+v %v", rel, err)
	}
	if rel, err := ca.AccountUnmute(ctx, mastodon.ID(bob.ID)); err != nil || rel.Muting {
		t.Fatalf("unmute: %+v %v", rel, err)
	}
	st, err := ca.PostStatus(ctx, &mastodon.Toot{Status: "hello @bob #golang <b>\nsee https://example.com/a", Visibility: "public", SpoilerText: "cw"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`class="u-url mention"`, `class="mention hashtag"`, `&lt;b&gt;`, `<br />`, `href="https://example.com/a"`} {
		if !strings.Contains(st.Content, want) {
			t.Errorf("content lacks %s: %s", want, st.Content)
		}
	}
	if st.SpoilerText != "cw" || !st.Sensitive || len(st.Mentions) != 1 || string(st.Mentions[0].ID) != bob.ID || len(st.Tags) != 1 {
		t.Errorf("status: %+v", st)
	}
	e.Eventually("the post at bob's home", func() bool {
		home, err := cb.GetTimelineHome(ctx, nil)
		return err == nil && len(home) > 0 && home[0].ID == st.ID
	})

	// Reactions, each the operation the REST face calls.
	if s, err := cb.Favourite(ctx, st.ID); err != nil || s.Favourited != true || s.FavouritesCount != 1 {
		t.Fatalf("favourite: %+v %v", s, err)
	}
	if s, err := cb.Reblog(ctx, st.ID); err != nil || s.Reblog == nil || s.Reblog.ID != st.ID {
		t.Fatalf("reblog: %+v %v", s, err)
	}
	if s, err := cb.Bookmark(ctx, st.ID); err != nil || s.Bookmarked != true {
		t.Fatalf("bookmark: %+v %v", s, err)
	}
	if marks, err := cb.GetBookmarks(ctx, nil); err != nil || len(marks) != 1 || marks[0].ID != st.ID {
		t.Fatalf("bookmarks: %+v %v", marks, err)
	}
	if by, err := ca.GetFavouritedBy(ctx, st.ID, nil); err != nil || len(by) != 1 || string(by[0].ID) != bob.ID {
		t.Fatalf("favourited_by: %+v %v", by, err)
	}

	// A reply, and its thread.
	reply, err := cb.PostStatus(ctx, &mastodon.Toot{Status: "@alice agreed", InReplyToID: st.ID})
	if err != nil || reply.InReplyToID != string(st.ID) {
		t.Fatalf("reply: %+v %v", reply, err)
	}
	if c, err := ca.GetStatusContext(ctx, st.ID); err != nil || len(c.Descendants) != 1 || c.Descendants[0].ID != reply.ID {
		t.Fatalf("context: %+v %v", c, err)
	}

	// Notifications: the follow, the favourite, the reblog, the reply.
	e.Eventually("alice's notifications", func() bool {
		ns, err := ca.GetNotifications(ctx, nil)
		if err != nil {
			return false
		}
		var types []string
		for _, n := range ns {
			types = append(types, n.Type)
		}
		return slices.Contains(types, "follow") && slices.Contains(types, "favourite") && slices.Contains(types, "reblog") && slices.Contains(types, "mention")
	})

	// Edit, with history and source; delete answers the text.
	edited, err := ca.UpdateStatus(ctx, &mastodon.Toot{Status: "hello again"}, st.ID)
	if err != nil || !strings.Contains(edited.Content, "hello again") || edited.EditedAt.IsZero() {
		t.Fatalf("edit: %+v %v", edited, err)
	}
	if h, err := ca.GetStatusHistory(ctx, st.ID); err != nil || len(h) != 2 {
		t.Fatalf("history: %+v %v", h, err)
	}
	if src, err := ca.GetStatusSource(ctx, st.ID); err != nil || src.Text != "hello again" {
		t.Fatalf("source: %+v %v", src, err)
	}

	// A direct post is not there for whoever it does not name.
	carol := e.Register("carol")
	cc := e.MastoClient(carol, "read write")
	dm, err := ca.PostStatus(ctx, &mastodon.Toot{Status: "just @bob", Visibility: "direct"})
	if err != nil || dm.Visibility != "direct" {
		t.Fatalf("direct: %+v %v", dm, err)
	}
	if _, err := cb.GetStatus(ctx, dm.ID); err != nil {
		t.Fatal(err)
	}
	_, err = cc.GetStatus(ctx, dm.ID)
	wantStatus(t, err, http.StatusNotFound)
	_, err = cc.Favourite(ctx, dm.ID)
	wantStatus(t, err, http.StatusNotFound)

	// Paging by Link.
	for i := range 3 {
		if _, err := ca.PostStatus(ctx, &mastodon.Toot{Status: "page " + string(rune('a'+i))}); err != nil {
			t.Fatal(err)
		}
	}
	pg := &mastodon.Pagination{Limit: 2}
	first, err := cc.GetAccountStatuses(ctx, mastodon.ID(alice.ID), pg)
	if err != nil || len(first) != 2 || pg.MaxID == "" {
		t.Fatalf("first page: %d %+v %v", len(first), pg, err)
	}
	second, err := cc.GetAccountStatuses(ctx, mastodon.ID(alice.ID), &mastodon.Pagination{MaxID: pg.MaxID, Limit: 2})
	if err != nil || len(second) == 0 || second[0].ID == first[1].ID || second[0].ID > first[1].ID && len(second[0].ID) == len(first[1].ID) {
		t.Fatalf("second page: %+v %v", second, err)
	}

	// min_id is the page just above it; since_id the newest above it.
	all, err := cc.GetAccountStatuses(ctx, mastodon.ID(alice.ID), &mastodon.Pagination{Limit: 40})
	if err != nil || len(all) < 4 {
		t.Fatalf("all of alice's: %d %v", len(all), err)
	}
	oldest := all[len(all)-1].ID
	above, err := cc.GetAccountStatuses(ctx, mastodon.ID(alice.ID), &mastodon.Pagination{MinID: oldest, Limit: 2})
	if err != nil || len(above) != 2 || above[0].ID != all[len(all)-3].ID || above[1].ID != all[len(all)-2].ID {
		t.Fatalf("min_id: %v %v; all %v", statusIDs(above), err, statusIDs(all))
	}
	newest, err := cc.GetAccountStatuses(ctx, mastodon.ID(alice.ID), &mastodon.Pagination{SinceID: oldest, Limit: 2})
	if err != nil || len(newest) != 2 || newest[0].ID != all[0].ID || newest[1].ID != all[1].ID {
		t.Fatalf("since_id: %v %v; all %v", statusIDs(newest), err, statusIDs(all))
	}
	// The same on the home feed (its audience) and the public one (its
	// shards, merged).
	for name, read := range map[string]func(*mastodon.Pagination) ([]*mastodon.Status, error){
		"home":   func(pg *mastodon.Pagination) ([]*mastodon.Status, error) { return cb.GetTimelineHome(ctx, pg) },
		"public": func(pg *mastodon.Pagination) ([]*mastodon.Status, error) { return cb.GetTimelinePublic(ctx, false, pg) },
	} {
		e.Eventually(name+" min_id", func() bool {
			all, err := read(&mastodon.Pagination{Limit: 40})
			if err != nil || len(all) < 4 {
				return false
			}
			above, err := read(&mastodon.Pagination{MinID: all[len(all)-1].ID, Limit: 2})
			return err == nil && len(above) == 2 && above[0].ID == all[len(all)-3].ID && above[1].ID == all[len(all)-2].ID
		})
	}

	// Delete answers the text, for a redraft.
	if err := ca.DeleteStatus(ctx, st.ID); err != nil {
		t.Fatal(err)
	}
	_, err = cb.GetStatus(ctx, st.ID)
	wantStatus(t, err, http.StatusNotFound)
}

// What a client sends wrong is a 422 (a 400 on OAuth's routes) and
// changes nothing; a retried post with its Idempotency-Key makes one
// status.
func TestMastodonBadInputAndRetries(t *testing.T) {
	e := newEnv(t)
	alice := e.Register("alice")
	post := func(body map[string]any, headers ...string) stacktest.Resp {
		return e.Do("POST", "/api/v1/statuses", alice.Token, body, append(headers, stacktest.JSON...)...)
	}
	first := post(map[string]any{"status": "once"}, "Idempotency-Key", "k-1")
	again := post(map[string]any{"status": "once"}, "Idempotency-Key", "k-1")
	if first.Status != http.StatusOK || again.Status != http.StatusOK || first.Body["id"] != again.Body["id"] {
		t.Fatalf("a retried post: %d %v, %d %v", first.Status, first.Body["id"], again.Status, again.Body["id"])
	}
	for _, c := range []struct {
		Name    string
		Body    map[string]any
		headers []string
	}{
		{"no text", map[string]any{"status": " "}, nil},
		{"an unknown visibility", map[string]any{"status": "x", "visibility": "friends"}, nil},
		{"a poll ending too soon", map[string]any{"status": "x", "poll": map[string]any{"options": []string{"a", "b"}, "expires_in": 60}}, nil},
		{"a poll of one option", map[string]any{"status": "x", "poll": map[string]any{"options": []string{"a"}, "expires_in": 3600}}, nil},
		{"a poll ending in no time", map[string]any{"status": "x", "poll": map[string]any{"options": []string{"a", "b"}}}, nil},
		{"a schedule in the past", map[string]any{"status": "x", "scheduled_at": "2020-01-01T00:00:00Z"}, nil},
		{"a schedule in a minute", map[string]any{"status": "x", "scheduled_at": time.Now().Add(time.Minute).Format(time.RFC3339)}, nil},
		{"a schedule that is no time", map[string]any{"status": "x", "scheduled_at": "tomorrow"}, nil},
		{"sensitive not a boolean", map[string]any{"status": "x", "sensitive": "maybe"}, nil},
		{"too long", map[string]any{"status": strings.Repeat("x", 5001)}, nil},
		{"a media id that is none", map[string]any{"status": "x", "media_ids": []string{"abc"}}, nil},
		{"an Idempotency-Key too long", map[string]any{"status": "x"}, []string{"Idempotency-Key", strings.Repeat("k", 300)}},
	} {
		r := post(c.Body, c.headers...)
		if r.Status != http.StatusUnprocessableEntity || r.Body["error"] == nil {
			t.Errorf("%s: %d %s", c.Name, r.Status, r.Raw)
		}
	}
	if r := e.Do("GET", "/api/v1/timelines/home?max_id=abc", alice.Token, nil); r.Status != http.StatusUnprocessableEntity {
		t.Errorf("a max_id that is no status: %d %s", r.Status, r.Raw)
	}
	if r := e.Do("GET", "/api/v1/accounts/"+alice.ID+"/statuses", "", nil); r.Status != http.StatusOK || strings.Count(string(r.Raw), `"id":`) < 2 {
		t.Errorf("alice's statuses: %d %s", r.Status, r.Raw)
	} else if n := strings.Count(string(r.Raw), `"content":"\u003cp\u003eonce`); n != 1 {
		t.Errorf("the retried post made %d statuses: %s", n, r.Raw)
	}
	if r := e.Do("POST", "/api/v1/apps", "", map[string]any{"client_name": "x", "redirect_uris": "javascript:alert(1)"}, stacktest.JSON...); r.Status != http.StatusUnprocessableEntity {
		t.Errorf("an app with a script for its redirect: %d %s", r.Status, r.Raw)
	}
	if code := e.FormStatus("/oauth/token", url.Values{"grant_type": {"password"}, "username": {"alice"}, "password": {"password-alice"}}); code != http.StatusBadRequest {
		t.Errorf("a password grant: %d", code)
	}
	// A profile's change with a bad lock is refused whole: the name it
	// names is not saved first.
	if st, r := e.MastoForm("PATCH", "/api/v1/accounts/update_credentials", alice.Token, url.Values{"display_name": {"Renamed"}, "locked": {"maybe"}}); st != http.StatusUnprocessableEntity {
		t.Errorf("a lock that is no boolean: %d %s", st, r)
	}
	if r := e.Do("GET", "/api/v1/accounts/verify_credentials", alice.Token, nil); r.Body["display_name"] == "Renamed" || r.Body["locked"] != false {
		t.Errorf("after a refused change: %s", r.Raw)
	}
}

func TestMastodonListsFiltersTagsReportsMedia(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	alice, bob := e.Register("alice"), e.Register("bob")
	ca, cb := e.MastoClient(alice, "read write follow"), e.MastoClient(bob, "read write follow")

	// Lists: alice's, of people she follows (more in TestMastodonLists).
	if _, err := ca.AccountFollow(ctx, mastodon.ID(bob.ID)); err != nil {
		t.Fatal(err)
	}
	list, err := ca.CreateList(ctx, "friends")
	if err != nil || list.Title != "friends" {
		t.Fatalf("create list: %+v %v", list, err)
	}
	if err := ca.AddToList(ctx, list.ID, mastodon.ID(bob.ID)); err != nil {
		t.Fatal(err)
	}
	st, err := cb.PostStatus(ctx, &mastodon.Toot{Status: "in the list #listed"})
	if err != nil {
		t.Fatal(err)
	}
	e.Eventually("bob's post in alice's list", func() bool {
		l, err := ca.GetTimelineList(ctx, list.ID, nil)
		return err == nil && len(l) > 0 && l[0].ID == st.ID
	})

	// Followed tags.
	if tag, err := ca.TagFollow(ctx, "Listed"); err != nil || tag.Name != "listed" || !tag.Following {
		t.Fatalf("follow tag: %+v %v", tag, err)
	}
	if tags, err := ca.TagsFollowed(ctx, nil); err != nil || len(tags) != 1 || tags[0].Name != "listed" {
		t.Fatalf("followed tags: %+v %v", tags, err)
	}
	if tag, err := ca.TagUnfollow(ctx, "listed"); err != nil || tag.Following {
		t.Fatalf("unfollow tag: %+v %v", tag, err)
	}

	// Filters v2 over the service's filters: a hide filter takes the post
	// out of alice's list timeline.
	f := e.FormPost("/api/v2/filters", alice.Token, url.Values{"title": {"no lists"}, "context[]": {"home"}, "filter_action": {"hide"},
		"keywords_attributes[0][keyword]": {"list"}, "keywords_attributes[0][whole_word]": {"false"}})
	if f["filter_action"] != "hide" || len(f["keywords"].([]any)) != 1 || !slices.Equal(toStrings(f["context"]), []string{"home"}) {
		t.Fatalf("filter: %v", f)
	}
	// The form Mastodon documents, its array's elements unnumbered.
	r := e.Do("POST", "/api/v2/filters", alice.Token, "title=unnumbered&context[]=public&keywords_attributes[][keyword]=one&keywords_attributes[][whole_word]=true"+
		"&keywords_attributes[][keyword]=two&keywords_attributes[][whole_word]=false", "Content-Type", "application/x-www-form-urlencoded")
	rails := r.Body
	if kws, _ := rails["keywords"].([]any); r.Status != http.StatusOK || len(kws) != 2 || kws[1].(map[string]any)["keyword"] != "two" || kws[1].(map[string]any)["whole_word"] != false {
		t.Fatalf("a filter of unnumbered keywords: %v", rails)
	}
	kw := f["keywords"].([]any)[0].(map[string]any)["id"].(string)
	if l, err := ca.GetTimelineList(ctx, list.ID, nil); err != nil || len(l) != 0 {
		t.Fatalf("the filtered list: %+v %v", l, err)
	}
	fid := f["id"].(string)
	up := e.Do("PUT", "/api/v2/filters/"+fid, alice.Token, map[string]any{"keywords_attributes": []map[string]any{
		{"id": kw, "_destroy": true}, {"keyword": "nothing-matches"}}}, stacktest.JSON...)
	if up.Status != http.StatusOK || len(up.Body["keywords"].([]any)) != 1 || up.Body["keywords"].([]any)[0].(map[string]any)["keyword"] != "nothing-matches" {
		t.Fatalf("filter update: %d %s", up.Status, up.Raw)
	}
	if l, err := ca.GetTimelineList(ctx, list.ID, nil); err != nil || len(l) != 1 {
		t.Fatalf("the list once the filter changed: %+v %v", l, err)
	}
	exp := e.Do("PUT", "/api/v2/filters/"+fid, alice.Token, url.Values{"expires_in": {"3600"}}.Encode(), "Content-Type", "application/x-www-form-urlencoded").Body
	if at, err := time.Parse(time.RFC3339, fmt.Sprint(exp["expires_at"])); err != nil || at.Before(time.Now().Add(50*time.Minute)) || at.After(time.Now().Add(70*time.Minute)) {
		t.Fatalf("a filter's expiry: %v", exp)
	}
	if r := e.Do("GET", "/api/v2/filters", alice.Token, nil); r.Status != http.StatusOK || !strings.Contains(string(r.Raw), `"expires_at":"`) {
		t.Fatalf("filters: %d %s", r.Status, r.Raw)
	}
	if r := e.Do("DELETE", "/api/v2/filters/"+fid, alice.Token, nil); r.Status != http.StatusOK {
		t.Fatalf("filter delete: %d %s", r.Status, r.Raw)
	}

	// Markers.
	mk := e.FormPost("/api/v1/markers", alice.Token, url.Values{"home[last_read_id]": {string(st.ID)}})
	if got := mk["home"].(map[string]any)["last_read_id"]; got != string(st.ID) {
		t.Fatalf("marker: %v", mk)
	}
	if r := e.Do("GET", "/api/v1/markers?timeline[]=home", alice.Token, nil); r.Body["home"].(map[string]any)["last_read_id"] != string(st.ID) {
		t.Fatalf("markers: %s", r.Raw)
	}

	// Media: an upload, its description, and a post that carries it.
	att, err := ca.UploadMediaFromMedia(ctx, &mastodon.Media{File: bytes.NewReader(stacktest.Picture(t, "png", 40, 30)), Description: "a square"})
	if err != nil || att.Type != "image" || att.Meta.Original.Width != 40 {
		t.Fatalf("upload: %+v %v", att, err)
	}
	if r := e.Do("PUT", "/api/v1/media/"+string(att.ID), alice.Token, map[string]any{"description": "a grey square"}, stacktest.JSON...); r.Status != http.StatusOK || r.Body["description"] != "a grey square" {
		t.Fatalf("describe: %d %s", r.Status, r.Raw)
	}
	if r := e.Do("GET", "/api/v1/media/"+string(att.ID), bob.Token, nil); r.Status != http.StatusNotFound {
		t.Fatalf("another's upload: %d %s", r.Status, r.Raw)
	}
	pic, err := ca.PostStatus(ctx, &mastodon.Toot{Status: "a picture", MediaIDs: []mastodon.ID{att.ID}, Sensitive: true})
	if err != nil || len(pic.MediaAttachments) != 1 || pic.MediaAttachments[0].Description != "a grey square" {
		t.Fatalf("post with a picture: %+v %v", pic, err)
	}
	if only, err := cb.GetAccountStatusesParams(ctx, mastodon.ID(alice.ID), url.Values{"only_media": {"true"}}, nil); err != nil || len(only) != 1 || only[0].ID != pic.ID {
		t.Fatalf("only_media: %+v %v", only, err)
	}
	// Pictures alone, no words, are a status too.
	if att, err = ca.UploadMediaFromMedia(ctx, &mastodon.Media{File: bytes.NewReader(stacktest.Picture(t, "png", 20, 20))}); err != nil {
		t.Fatal(err)
	}
	if bare, err := ca.PostStatus(ctx, &mastodon.Toot{MediaIDs: []mastodon.ID{att.ID}}); err != nil || len(bare.MediaAttachments) != 1 {
		t.Fatalf("a status of a picture alone: %+v %v", bare, err)
	}

	// Reports.
	rep, err := ca.Report(ctx, mastodon.ID(bob.ID), []mastodon.ID{st.ID}, "spam, in a list")
	if err != nil || string(rep.ID) == "" {
		t.Fatalf("report: %+v %v", rep, err)
	}

	// Grouped notifications: bob's favourites of alice's post, grouped.
	for _, c := range []*mastodon.Client{cb, e.MastoClient(e.Register("carol"), "read write")} {
		if _, err := c.Favourite(ctx, pic.ID); err != nil {
			t.Fatal(err)
		}
	}
	e.Eventually("the grouped favourites", func() bool {
		r := e.Do("GET", "/api/v2/notifications?types[]=favourite", alice.Token, nil)
		gs, _ := r.Body["notification_groups"].([]any)
		return r.Status == http.StatusOK && len(gs) == 1 && gs[0].(map[string]any)["notifications_count"] == float64(2) &&
			len(r.Body["accounts"].([]any)) == 2 && len(r.Body["statuses"].([]any)) == 1
	})

	// An endpoint the face has not: Mastodon's error shape.
	if r := e.Do("GET", "/api/v1/nothing", alice.Token, nil); r.Status != http.StatusNotFound || r.Body["error"] != "no such endpoint" {
		t.Fatalf("no such endpoint: %d %s", r.Status, r.Raw)
	}
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// The people side of the face: lookup, search, a locked account's
// requests, followers, blocks and mutes lists, public and tag timelines,
// pins, and notifications' dismiss, clear and unread count; and the rate
// limit's headers, as Mastodon sends them.
func TestMastodonPeopleAndNotifications(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	alice, bob, carol := e.Register("alice"), e.Register("bob"), e.Register("carol")
	ca, cb, cc := e.MastoClient(alice, "read write follow"), e.MastoClient(bob, "read write follow"), e.MastoClient(carol, "read write follow")

	if a, err := cb.AccountLookup(ctx, "@Alice"); err != nil || string(a.ID) != alice.ID {
		t.Fatalf("lookup: %+v %v", a, err)
	}
	if as, err := cb.AccountsSearch(ctx, "alice", 5); err != nil || len(as) != 1 || string(as[0].ID) != alice.ID {
		t.Fatalf("search: %+v %v", as, err)
	}

	// A locked account: a follow is a request, approved by the client.
	locked := true
	if me, err := ca.AccountUpdate(ctx, &mastodon.Profile{Locked: &locked}); err != nil || !me.Locked {
		t.Fatalf("lock: %+v %v", me, err)
	}
	if rel, err := cb.AccountFollow(ctx, mastodon.ID(alice.ID)); err != nil || rel.Following || !rel.Requested {
		t.Fatalf("follow of a locked account: %+v %v", rel, err)
	}
	if reqs, err := ca.GetFollowRequests(ctx, nil); err != nil || len(reqs) != 1 || string(reqs[0].ID) != bob.ID {
		t.Fatalf("follow requests: %+v %v", reqs, err)
	}
	if err := ca.FollowRequestAuthorize(ctx, mastodon.ID(bob.ID)); err != nil {
		t.Fatal(err)
	}
	if fs, err := cc.GetAccountFollowers(ctx, mastodon.ID(alice.ID), nil); err != nil || len(fs) != 1 || string(fs[0].ID) != bob.ID {
		t.Fatalf("followers: %+v %v", fs, err)
	}

	// Blocks and mutes, listed.
	if _, err := ca.AccountBlock(ctx, mastodon.ID(carol.ID)); err != nil {
		t.Fatal(err)
	}
	if bs, err := ca.GetBlocks(ctx, nil); err != nil || len(bs) != 1 || string(bs[0].ID) != carol.ID {
		t.Fatalf("blocks: %+v %v", bs, err)
	}
	_, err := cc.AccountFollow(ctx, mastodon.ID(alice.ID))
	wantStatus(t, err, http.StatusForbidden) // the blocked may not follow
	if r := e.FormPost("/api/v1/accounts/"+carol.ID+"/unblock", alice.Token, url.Values{}); r["blocking"] != false {
		t.Fatalf("unblock: %v", r)
	}
	if r := e.FormPost("/api/v1/accounts/"+carol.ID+"/mute", alice.Token, url.Values{"duration": {"3600"}}); r["muting"] != true {
		t.Fatalf("mute for an hour: %v", r)
	}
	if ms, err := ca.GetMutes(ctx, nil); err != nil || len(ms) != 1 {
		t.Fatalf("mutes: %+v %v", ms, err)
	}

	// Public and tag timelines; a pin.
	st, err := cc.PostStatus(ctx, &mastodon.Toot{Status: "hello #World", Visibility: "public"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cc.PostStatus(ctx, &mastodon.Toot{Status: "quietly #World", Visibility: "unlisted"}); err != nil {
		t.Fatal(err)
	}
	e.Eventually("the public and tag timelines", func() bool {
		pub, err1 := cb.GetTimelinePublic(ctx, false, nil)
		tag, err2 := cb.GetTimelineHashtag(ctx, "world", false, nil)
		return err1 == nil && err2 == nil && len(pub) == 1 && pub[0].ID == st.ID && len(tag) == 1 && tag[0].ID == st.ID
	})
	if p, err := mastoStatus(e, carol, "POST", "/api/v1/statuses/"+string(st.ID)+"/pin"); err != nil || p["pinned"] != true {
		t.Fatalf("pin: %v %v", p, err)
	}
	if pinned, err := cb.GetAccountPinnedStatuses(ctx, mastodon.ID(carol.ID)); err != nil || len(pinned) != 1 || pinned[0].ID != st.ID {
		t.Fatalf("pinned: %+v %v", pinned, err)
	}

	// Notifications: alice's follow request and bob's favourite; dismiss
	// one, then clear.
	if _, err := cb.Favourite(ctx, st.ID); err != nil {
		t.Fatal(err)
	}
	var ns []*mastodon.Notification
	e.Eventually("carol's favourite notification", func() bool {
		ns, err = cc.GetNotificationsExclude(ctx, &[]string{"follow"}, nil)
		return err == nil && len(ns) == 1 && ns[0].Type == "favourite" && ns[0].Status != nil && ns[0].Status.ID == st.ID
	})
	unread := func(c stacktest.User) float64 {
		r := e.Do("GET", "/api/v1/notifications/unread_count", c.Token, nil)
		return r.Body["count"].(float64)
	}
	if unread(carol) != 1 {
		t.Fatalf("unread: %v", unread(carol))
	}
	if err := cc.DismissNotification(ctx, ns[0].ID); err != nil {
		t.Fatal(err)
	}
	if unread(carol) != 0 {
		t.Fatalf("unread after dismiss: %v", unread(carol))
	}
	if err := ca.ClearNotifications(ctx); err != nil {
		t.Fatal(err)
	}
	if unread(alice) != 0 {
		t.Fatalf("alice's unread after clear: %v", unread(alice))
	}
	err = cc.DismissNotification(ctx, "12345")
	wantStatus(t, err, http.StatusNotFound)

	// Rate limits: Mastodon's headers, and its error shape past them.
	tight := stacktest.New(t, localstack.Options{DB: e.DB, Config: app.Config{RateLimits: ratelimit.Config{Account: ratelimit.Rule{Quota: 2, Window: time.Hour}, Address: ratelimit.Rule{Quota: 100, Window: time.Hour},
		Login: ratelimit.Rule{Quota: 100, Window: time.Hour}, Register: ratelimit.Rule{Quota: 100, Window: time.Hour}, Upload: ratelimit.Rule{Quota: 100, Window: time.Hour}}}})
	r := tight.Do("GET", "/api/v1/accounts/verify_credentials", alice.Token, nil)
	if r.Header.Get("X-RateLimit-Limit") != "2" || r.Header.Get("X-RateLimit-Remaining") != "1" {
		t.Fatalf("rate limit headers: %v", r.Header)
	}
	if _, err := time.Parse(time.RFC3339, r.Header.Get("X-RateLimit-Reset")); err != nil {
		t.Fatalf("X-RateLimit-Reset: %v", err)
	}
	var last stacktest.Resp
	for range 2 {
		last = tight.Do("GET", "/api/v1/accounts/verify_credentials", alice.Token, nil)
	}
	if last.Status != http.StatusTooManyRequests || last.Body["error"] == nil || last.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("past the limit: %d %v %s", last.Status, last.Header, last.Raw)
	}
}

// mastoStatus posts to a status's path with u's token and decodes the
// status answered.
func mastoStatus(e *stacktest.Env, u stacktest.User, method, path string) (map[string]any, error) {
	r := e.Do(method, path, u.Token, nil)
	if r.Status != http.StatusOK {
		return nil, fmt.Errorf("%s %s: %d %s", method, path, r.Status, r.Raw)
	}
	return r.Body, nil
}

func statusIDs(list []*mastodon.Status) []mastodon.ID {
	var out []mastodon.ID
	for _, s := range list {
		out = append(out, s.ID)
	}
	return out
}

// update_credentials takes an avatar and a header as files, through the
// picture pipeline, as Mastodon's apps send them, and a display name.
func TestMastodonProfilePictures(t *testing.T) {
	e := newEnv(t)
	alice := e.Register("alice")
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	for _, which := range []string{"avatar", "header"} {
		f, err := w.CreateFormFile(which, which+".png")
		if err != nil {
			t.Fatal(err)
		}
		f.Write(stacktest.Picture(t, "png", 64, 64))
	}
	w.WriteField("note", "hello\nworld")
	w.Close()
	r := e.Do("PATCH", "/api/v1/accounts/update_credentials", alice.Token, body.Bytes(), "Content-Type", w.FormDataContentType())
	if r.Status != http.StatusOK {
		t.Fatalf("update_credentials: %d %s", r.Status, r.Raw)
	}
	avatar, header := r.Body["avatar"].(string), r.Body["header"].(string)
	if strings.HasSuffix(avatar, "missing.png") || strings.HasSuffix(header, "missing.png") || !strings.Contains(r.Body["note"].(string), "<br />") {
		t.Fatalf("the profile: %s", r.Raw)
	}
	if code, kind, _ := e.Fetch(avatar); code != http.StatusOK || !strings.HasPrefix(kind, "image/") {
		t.Fatalf("the avatar by its link: %d %s", code, kind)
	}
	if r := e.Do("PATCH", "/api/v1/accounts/update_credentials", alice.Token, map[string]any{"display_name": "Alice A."}, stacktest.JSON...); r.Status != http.StatusOK || r.Body["display_name"] != "Alice A." {
		t.Fatalf("a display name: %d %s", r.Status, r.Raw)
	}
	// Every face shows it: the card is changed with the User.
	if r := e.Do("GET", "/social/rest/people/"+alice.ID+"/@self", alice.Token, nil); e.Entry(r)["displayName"] != "Alice A." {
		t.Fatalf("the person on REST: %s", r.Raw)
	}
	if r := e.Do("PATCH", "/api/v1/accounts/update_credentials", alice.Token, map[string]any{"display_name": strings.Repeat("a", 65)}, stacktest.JSON...); r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("a display name too long: %d %s", r.Status, r.Raw)
	}
	if r := e.Do("PATCH", "/api/v1/accounts/update_credentials", alice.Token, map[string]any{"display_name": ""}, stacktest.JSON...); r.Body["display_name"] != "alice" {
		t.Fatalf("an empty display name is the username: %s", r.Raw)
	}
}
