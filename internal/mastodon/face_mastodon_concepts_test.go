package mastodon_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mattn/go-mastodon"

	"socialstream/internal/stacktest"
)

// Favourites, counts and language, as a Mastodon app reads them: the
// domain keeps each, and both faces answer it.
func TestMastodonFavouritesCountsAndLanguage(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	alice, bob := e.Register("alice"), e.Register("bob")
	ca, cb := e.MastoClient(alice, "read write follow"), e.MastoClient(bob, "read write follow")

	var posts []*mastodon.Status
	for _, text := range []string{"first", "second", "third"} {
		st, err := ca.PostStatus(ctx, &mastodon.Toot{Status: text, Language: "en"})
		if err != nil {
			t.Fatal(err)
		}
		if st.Language != "en" {
			t.Errorf("language: %q", st.Language)
		}
		posts = append(posts, st)
	}
	if _, err := ca.PostStatus(ctx, &mastodon.Toot{Status: "to bob alone @bob", Visibility: "direct"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ca.PostStatus(ctx, &mastodon.Toot{Status: "no such language", Language: "zz"}); err == nil {
		t.Error("a status in language zz posted")
	} else {
		wantStatus(t, err, http.StatusUnprocessableEntity)
	}
	reply, err := cb.PostStatus(ctx, &mastodon.Toot{Status: "a reply", InReplyToID: posts[0].ID})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := cb.GetStatus(ctx, posts[0].ID); err != nil || st.RepliesCount != 1 {
		t.Errorf("replies_count after a reply: %+v, %v", st, err)
	}
	me, err := ca.GetAccountCurrentUser(ctx)
	if err != nil || me.StatusesCount != 3 {
		t.Errorf("statuses_count (the direct one uncounted): %+v, %v", me, err)
	}
	var raw map[string]any
	if r := e.Do("GET", "/api/v1/accounts/"+alice.ID, alice.Token, nil); r.Status != http.StatusOK {
		t.Fatalf("account: %d %s", r.Status, r.Raw)
	} else {
		raw = r.Body
	}
	if d, _ := raw["last_status_at"].(string); len(d) != len(time.DateOnly) {
		t.Errorf("last_status_at: %v", raw["last_status_at"])
	}
	if err := cb.DeleteStatus(ctx, reply.ID); err != nil {
		t.Fatal(err)
	}
	if st, err := ca.GetStatus(ctx, posts[0].ID); err != nil || st.RepliesCount != 0 {
		t.Errorf("replies_count after the reply's delete: %+v, %v", st, err)
	}
	if a, err := ca.GetAccount(ctx, mastodon.ID(bob.ID)); err != nil || a.StatusesCount != 0 {
		t.Errorf("bob's statuses_count after his one delete: %+v, %v", a, err)
	}

	// Favourites, newest favourite first, paged; an unfavourite leaves.
	for _, st := range []*mastodon.Status{posts[1], posts[0], posts[2]} {
		if _, err := cb.Favourite(ctx, st.ID); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cb.Unfavourite(ctx, posts[2].ID); err != nil {
		t.Fatal(err)
	}
	pg := &mastodon.Pagination{Limit: 1}
	var got []mastodon.ID
	for range 4 {
		page, err := cb.GetFavourites(ctx, pg)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range page {
			if !st.Favourited.(bool) {
				t.Errorf("a favourite not favourited: %+v", st)
			}
			got = append(got, st.ID)
		}
		if pg.MaxID == "" {
			break
		}
		pg = &mastodon.Pagination{Limit: 1, MaxID: pg.MaxID}
	}
	if want := []mastodon.ID{posts[0].ID, posts[1].ID}; !equalIDs(got, want) {
		t.Errorf("favourites: %v, want %v", got, want)
	}
	// And REST's, the same list.
	if r := e.Do("GET", "/social/rest/likes", bob.Token, nil); r.Status != http.StatusOK || len(r.Body["list"].([]any)) != 2 {
		t.Errorf("REST's likes: %d %s", r.Status, r.Raw)
	}
	if list, err := ca.GetFavourites(ctx, nil); err != nil || len(list) != 0 {
		t.Errorf("alice's favourites: %v, %v", list, err)
	}
}

func equalIDs(a, b []mastodon.ID) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Notifications as Mastodon apps have them: one by id, dismissed and
// cleared, gone from the list and the unread count at once; a page of a
// type is full though other types come between.
func TestMastodonNotificationsDismissAndClear(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	alice, bob := e.Register("alice"), e.Register("bob")
	ca, cb := e.MastoClient(alice, "read write follow"), e.MastoClient(bob, "read write follow")
	st, err := ca.PostStatus(ctx, &mastodon.Toot{Status: "like me"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cb.AccountFollow(ctx, mastodon.ID(alice.ID)); err != nil {
		t.Fatal(err)
	}
	if _, err := cb.Favourite(ctx, st.ID); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := cb.PostStatus(ctx, &mastodon.Toot{Status: fmt.Sprintf("@alice hello %d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	var list []*mastodon.Notification
	e.Eventually("alice's five notifications", func() bool {
		list, err = ca.GetNotifications(ctx, nil)
		return err == nil && len(list) == 5
	})
	// A page of one type, full: the favourite under three mentions.
	if page, err := ca.GetNotificationsExclude(ctx, &[]string{"mention", "follow"}, &mastodon.Pagination{Limit: 1}); err != nil || len(page) != 1 || page[0].Type != "favourite" {
		t.Errorf("a page of favourites alone: %+v, %v", page, err)
	}
	one, err := ca.GetNotification(ctx, list[0].ID)
	if err != nil || one.ID != list[0].ID || one.Type != "mention" {
		t.Fatalf("one by id: %+v, %v", one, err)
	}
	if _, err := cb.GetNotification(ctx, list[0].ID); err == nil {
		t.Error("bob read alice's notification")
	} else {
		wantStatus(t, err, http.StatusNotFound)
	}
	if err := ca.DismissNotification(ctx, list[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := ca.GetNotification(ctx, list[0].ID); err == nil {
		t.Error("a dismissed notification is still there by id")
	} else {
		wantStatus(t, err, http.StatusNotFound)
	}
	if r := e.Do("GET", "/api/v1/notifications/unread_count", alice.Token, nil); r.Body["count"] != float64(4) {
		t.Errorf("unread after a dismissal: %s", r.Raw)
	}
	if after, err := ca.GetNotifications(ctx, nil); err != nil || len(after) != 4 {
		t.Errorf("after a dismissal: %d, %v", len(after), err)
	}
	// Mastodon counts unread what is newer than the notifications
	// marker: moved past the second newest, one is left, on REST too.
	if after, err := ca.GetNotifications(ctx, nil); err == nil && len(after) == 4 {
		if r := e.Do("POST", "/api/v1/markers", alice.Token, map[string]any{"notifications": map[string]string{"last_read_id": string(after[1].ID)}}, "Content-Type", "application/json"); r.Status != 200 {
			t.Fatalf("markers: %d %s", r.Status, r.Raw)
		}
		if r := e.Do("GET", "/api/v1/notifications/unread_count", alice.Token, nil); r.Body["count"] != float64(1) {
			t.Errorf("unread after the marker moved past all but one: %s", r.Raw)
		}
		if r := e.Do("GET", "/social/rest/notifications/@me/unread", alice.Token, nil); e.Entry(r)["unreadCount"] != float64(1) {
			t.Errorf("REST's unread after the marker moved: %s", r.Raw)
		}
	}
	if err := ca.ClearNotifications(ctx); err != nil {
		t.Fatal(err)
	}
	if after, err := ca.GetNotifications(ctx, nil); err != nil || len(after) != 0 {
		t.Errorf("after a clear: %d, %v", len(after), err)
	}
	if r := e.Do("GET", "/api/v1/notifications/unread_count", alice.Token, nil); r.Body["count"] != float64(0) {
		t.Errorf("unread after a clear: %s", r.Raw)
	}
	// REST's: one by id, dismissed, and all cleared.
	if _, err := cb.PostStatus(ctx, &mastodon.Toot{Status: "@alice again"}); err != nil {
		t.Fatal(err)
	}
	var id string
	e.Eventually("a new mention on REST", func() bool {
		r := e.Do("GET", "/social/rest/notifications/@me", alice.Token, nil)
		l, _ := r.Body["list"].([]any)
		if len(l) == 1 {
			id, _ = l[0].(map[string]any)["id"].(string)
		}
		return id != ""
	})
	if r := e.Do("GET", "/social/rest/notifications/@me/"+id, alice.Token, nil); r.Status != http.StatusOK {
		t.Errorf("REST's one by id: %d %s", r.Status, r.Raw)
	}
	if r := e.Do("DELETE", "/social/rest/notifications/@me/"+id, alice.Token, nil); r.Status != http.StatusNoContent {
		t.Errorf("REST's dismissal: %d %s", r.Status, r.Raw)
	}
	if r := e.Do("GET", "/social/rest/notifications/@me/"+id, alice.Token, nil); r.Status != http.StatusNotFound {
		t.Errorf("REST's one dismissed: %d %s", r.Status, r.Raw)
	}
	if r := e.Do("DELETE", "/social/rest/notifications/@me", alice.Token, nil); r.Status != http.StatusNoContent {
		t.Errorf("REST's clear: %d %s", r.Status, r.Raw)
	}
}

// A timed mute says when it ends in the caller's mutes; one without end
// says nothing.
func TestMastodonMuteExpiresAt(t *testing.T) {
	e := newEnv(t)
	alice, bob, carol := e.Register("alice"), e.Register("bob"), e.Register("carol")
	e.FormPost("/api/v1/accounts/"+bob.ID+"/mute", alice.Token, url.Values{"duration": {"3600"}})
	e.FormPost("/api/v1/accounts/"+carol.ID+"/mute", alice.Token, url.Values{})
	r := e.Do("GET", "/api/v1/mutes", alice.Token, nil)
	var list []map[string]any
	if err := json.Unmarshal(r.Raw, &list); err != nil || len(list) != 2 {
		t.Fatalf("mutes: %s, %v", r.Raw, err)
	}
	for _, a := range list {
		exp, timed := a["mute_expires_at"].(string)
		switch a["id"] {
		case bob.ID:
			at, err := time.Parse(time.RFC3339, exp)
			if !timed || err != nil || at.Before(time.Now().Add(59*time.Minute)) || at.After(time.Now().Add(61*time.Minute)) {
				t.Errorf("bob's mute ends at %v", a["mute_expires_at"])
			}
		case carol.ID:
			if timed {
				t.Errorf("carol's mute, without end, ends at %s", exp)
			}
		}
	}
}

// NodeInfo 2.0 is where /.well-known/nodeinfo says.
func TestNodeInfo(t *testing.T) {
	e := newEnv(t)
	r := e.Do("GET", "/.well-known/nodeinfo", "", nil)
	links, _ := r.Body["links"].([]any)
	if r.Status != http.StatusOK || len(links) != 1 {
		t.Fatalf("/.well-known/nodeinfo: %d %s", r.Status, r.Raw)
	}
	link := links[0].(map[string]any)
	href, _ := link["href"].(string)
	if link["rel"] != "http://nodeinfo.diaspora.software/ns/schema/2.0" || !strings.HasPrefix(href, e.URL) {
		t.Fatalf("link: %v", link)
	}
	ni := e.Do("GET", strings.TrimPrefix(href, e.URL), "", nil)
	sw, _ := ni.Body["software"].(map[string]any)
	if ni.Status != http.StatusOK || ni.Body["version"] != "2.0" || sw["name"] != "socialstream" || ni.Body["openRegistrations"] != true {
		t.Errorf("nodeinfo: %d %s", ni.Status, ni.Raw)
	}
	if ct := ni.Header.Get("Content-Type"); !strings.Contains(ct, "schema/2.0#") {
		t.Errorf("Content-Type %q", ct)
	}
}

// A bookmarked status says so wherever it shows, as favourited and
// reblogged do: in timelines, a person's statuses and by id.
func TestMastodonBookmarkedEverywhere(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	alice, bob := e.Register("alice"), e.Register("bob")
	ca, cb := e.MastoClient(alice, "read write follow"), e.MastoClient(bob, "read write follow")
	if _, err := cb.AccountFollow(ctx, mastodon.ID(alice.ID)); err != nil {
		t.Fatal(err)
	}
	st, err := ca.PostStatus(ctx, &mastodon.Toot{Status: "keep me"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cb.Bookmark(ctx, st.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := cb.Favourite(ctx, st.ID); err != nil {
		t.Fatal(err)
	}
	check := func(want bool) {
		t.Helper()
		e.Eventually("the status at bob's home", func() bool {
			home, err := cb.GetTimelineHome(ctx, nil)
			return err == nil && len(home) == 1
		})
		home, _ := cb.GetTimelineHome(ctx, nil)
		mine, err := cb.GetAccountStatuses(ctx, mastodon.ID(alice.ID), nil)
		if err != nil || len(mine) != 1 {
			t.Fatalf("alice's statuses: %v, %v", mine, err)
		}
		one, err := cb.GetStatus(ctx, st.ID)
		if err != nil {
			t.Fatal(err)
		}
		for where, s := range map[string]*mastodon.Status{"home": home[0], "statuses": mine[0], "by id": one} {
			if s.Bookmarked != any(want) || s.Favourited != any(true) {
				t.Errorf("%s: bookmarked %v, favourited %v; want %v, true", where, s.Bookmarked, s.Favourited, want)
			}
		}
	}
	check(true)
	if _, err := cb.Unbookmark(ctx, st.ID); err != nil {
		t.Fatal(err)
	}
	check(false)
	// Alice sees it as hers: not bookmarked by her.
	if s, err := ca.GetStatus(ctx, st.ID); err != nil || s.Bookmarked != any(false) {
		t.Errorf("alice's view: %+v, %v", s, err)
	}
}

// A page of a person's statuses that leaves out replies or reblogs, or
// keeps those with media, is full when that many are there, however many
// it leaves out between them.
func TestMastodonFilteredPagesAreFull(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	alice, bob := e.Register("alice"), e.Register("bob")
	ca, cb := e.MastoClient(alice, "read write follow"), e.MastoClient(bob, "read write follow")
	other, err := cb.PostStatus(ctx, &mastodon.Toot{Status: "bob's"})
	if err != nil {
		t.Fatal(err)
	}
	var originals []mastodon.ID
	for i := range 3 {
		st, err := ca.PostStatus(ctx, &mastodon.Toot{Status: fmt.Sprint("original ", i)})
		if err != nil {
			t.Fatal(err)
		}
		originals = append(originals, st.ID)
		for j := range 3 { // replies and reblogs between them
			if _, err := ca.PostStatus(ctx, &mastodon.Toot{Status: fmt.Sprint("@bob reply ", i, j), InReplyToID: other.ID}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := ca.Reblog(ctx, other.ID); err != nil {
		t.Fatal(err)
	}
	page, err := ca.GetAccountStatusesParams(ctx, mastodon.ID(alice.ID), url.Values{"exclude_replies": {"true"}, "exclude_reblogs": {"true"}}, &mastodon.Pagination{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := statusIDs(page); len(got) != 2 || got[0] != originals[2] || got[1] != originals[1] {
		t.Errorf("a page of 2 originals: %v, want %v", got, originals[1:])
	}
	page, err = ca.GetAccountStatusesParams(ctx, mastodon.ID(alice.ID), url.Values{"exclude_replies": {"true"}}, &mastodon.Pagination{Limit: 2})
	if err != nil || len(page) != 2 || page[0].Reblog == nil || page[1].ID != originals[2] {
		t.Errorf("a page without replies: %v, %v", statusIDs(page), err)
	}
}

// Following with notify tells of each post (an original or a thread of
// one's own, not a repost nor a reply to another); reblogs=false keeps
// the person's reposts out of home.
func TestMastodonNotifyAndReblogs(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	alice, bob, carol := e.Register("alice"), e.Register("bob"), e.Register("carol")
	ca, cb, cc := e.MastoClient(alice, "read write follow"), e.MastoClient(bob, "read write follow"), e.MastoClient(carol, "read write follow")
	rel := e.FormPost("/api/v1/accounts/"+alice.ID+"/follow", bob.Token, url.Values{"notify": {"true"}, "reblogs": {"false"}})
	if rel["following"] != true || rel["notifying"] != true || rel["showing_reblogs"] != false {
		t.Fatalf("follow with notify: %v", rel)
	}
	byCarol, err := cc.PostStatus(ctx, &mastodon.Toot{Status: "carol's"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ca.PostStatus(ctx, &mastodon.Toot{Status: "@carol a reply to carol", InReplyToID: byCarol.ID}); err != nil {
		t.Fatal(err)
	}
	repost, err := ca.Reblog(ctx, byCarol.ID)
	if err != nil {
		t.Fatal(err)
	}
	own, err := ca.PostStatus(ctx, &mastodon.Toot{Status: "alice's own"})
	if err != nil {
		t.Fatal(err)
	}
	statusOf := func() []mastodon.ID {
		ns, err := cb.GetNotifications(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []mastodon.ID
		for _, n := range ns {
			if n.Type == "status" {
				out = append(out, n.Status.ID)
			}
		}
		return out
	}
	e.Eventually("bob told of alice's post", func() bool { return len(statusOf()) > 0 })
	if got := statusOf(); len(got) != 1 || got[0] != own.ID {
		t.Errorf("status notifications: %v, want only %s", got, own.ID)
	}
	e.Eventually("alice's post at bob's home", func() bool {
		home, err := cb.GetTimelineHome(ctx, nil)
		return err == nil && len(home) > 0 && home[0].ID == own.ID
	})
	home, _ := cb.GetTimelineHome(ctx, nil)
	for _, s := range home {
		if s.ID == repost.ID {
			t.Error("alice's repost at bob's home with reblogs=false")
		}
	}
	// Off again: no more.
	rel = e.FormPost("/api/v1/accounts/"+alice.ID+"/follow", bob.Token, url.Values{"notify": {"false"}})
	if rel["notifying"] != false {
		t.Fatalf("notify=false: %v", rel)
	}
	quiet, err := ca.PostStatus(ctx, &mastodon.Toot{Status: "alice, unannounced"})
	if err != nil {
		t.Fatal(err)
	}
	e.Eventually("the unannounced post at bob's home", func() bool {
		home, err := cb.GetTimelineHome(ctx, nil)
		return err == nil && len(home) > 0 && home[0].ID == quiet.ID
	})
	if got := statusOf(); len(got) != 1 {
		t.Errorf("status notifications after notify=false: %v", got)
	}
}

// A status of max_characters in one line posts, and comes back as it was
// written: in its content, its source and its history.
func TestMastodonMaxCharactersInOneLine(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	alice := e.Register("alice")
	ca := e.MastoClient(alice, "read write follow")
	inst := e.Do("GET", "/api/v2/instance", "", nil)
	limit := int(inst.Body["configuration"].(map[string]any)["statuses"].(map[string]any)["max_characters"].(float64))
	words := strings.Repeat("word ", limit/5)
	text := strings.TrimSpace(words[:limit-1]) + "x" // one line of the limit, no space at the end
	if n := utf8.RuneCountInString(text); n > limit {
		t.Fatalf("the text is %d long", n)
	}
	st, err := ca.PostStatus(ctx, &mastodon.Toot{Status: text})
	if err != nil {
		t.Fatalf("a status of %d characters in one line: %v", utf8.RuneCountInString(text), err)
	}
	src := e.Do("GET", "/api/v1/statuses/"+string(st.ID)+"/source", alice.Token, nil)
	if src.Body["text"] != text {
		t.Errorf("its source is not what was written: %q", src.Body["text"])
	}
	if strings.Contains(st.Content, "<br") {
		t.Errorf("one line came back as two: %.200s", st.Content)
	}
	edited := text[:len(text)-1] + "y"
	if _, err := ca.UpdateStatus(ctx, &mastodon.Toot{Status: edited}, st.ID); err != nil {
		t.Fatal(err)
	}
	if src := e.Do("GET", "/api/v1/statuses/"+string(st.ID)+"/source", alice.Token, nil); src.Body["text"] != edited {
		t.Errorf("its edit is not what was written: %q", src.Body["text"])
	}
	hist, err := ca.GetStatusHistory(ctx, st.ID)
	if err != nil || len(hist) != 2 || strings.Contains(hist[0].Content, "<br") {
		t.Errorf("history: %d versions, %v", len(hist), err)
	}
	if _, err := ca.PostStatus(ctx, &mastodon.Toot{Status: text + "z"}); err == nil {
		t.Error("a status over max_characters posted")
	} else {
		wantStatus(t, err, http.StatusUnprocessableEntity)
	}
}

// A filter's keywords keep their ids across edits: one destroyed leaves
// the others' ids naming what they named.
func TestMastodonFilterKeywordIDsStay(t *testing.T) {
	e := newEnv(t)
	alice := e.Register("alice")
	f := e.FormPost("/api/v2/filters", alice.Token, url.Values{"title": {"words"}, "context[]": {"home"},
		"keywords_attributes[0][keyword]": {"alpha"}, "keywords_attributes[1][keyword]": {"beta"}, "keywords_attributes[2][keyword]": {"gamma"}})
	id := f["id"].(string)
	kws := f["keywords"].([]any)
	idOf := func(kws []any, word string) string {
		for _, k := range kws {
			if k.(map[string]any)["keyword"] == word {
				return k.(map[string]any)["id"].(string)
			}
		}
		return ""
	}
	alpha, gamma := idOf(kws, "alpha"), idOf(kws, "gamma")
	r := e.Do("PUT", "/api/v2/filters/"+id, alice.Token, url.Values{"keywords_attributes[0][id]": {alpha}, "keywords_attributes[0][_destroy]": {"true"}}.Encode(),
		"Content-Type", "application/x-www-form-urlencoded")
	if r.Status != http.StatusOK {
		t.Fatalf("destroy: %d %s", r.Status, r.Raw)
	}
	r = e.Do("PUT", "/api/v2/filters/"+id, alice.Token, url.Values{"keywords_attributes[0][id]": {gamma}, "keywords_attributes[0][keyword]": {"delta"}}.Encode(),
		"Content-Type", "application/x-www-form-urlencoded")
	if r.Status != http.StatusOK {
		t.Fatalf("edit: %d %s", r.Status, r.Raw)
	}
	kws = r.Body["keywords"].([]any)
	if len(kws) != 2 || idOf(kws, "beta") == "" || idOf(kws, "delta") != gamma || idOf(kws, "gamma") != "" {
		t.Errorf("keywords after destroying alpha and editing gamma by its id: %s", r.Raw)
	}
}

// familiar_followers answers, for each account asked in order, those of
// its followers the caller follows, newest first, five at most; none for
// someone who blocks the caller or whom no one familiar follows; at most
// 40 ids.
func TestMastodonFamiliarFollowers(t *testing.T) {
	e := newEnv(t)
	ann, zed, fay, eve := e.Register("ann"), e.Register("zed"), e.Register("fay"), e.Register("eve")
	var friends []stacktest.User
	for i := range 6 {
		u := e.Register(fmt.Sprintf("friend%d", i))
		e.Follow(ann, u.ID)
		e.Follow(u, zed.ID)
		friends = append(friends, u)
	}
	e.Follow(eve, zed.ID) // not followed by ann
	e.Follow(friends[0], fay.ID)
	if st, r := e.MastoForm("POST", "/api/v1/accounts/"+ann.ID+"/block", fay.Token, nil); st != 200 {
		t.Fatalf("block: %d %v", st, r)
	}
	r := e.Do("GET", "/api/v1/accounts/familiar_followers?id[]="+zed.ID+"&id[]="+fay.ID+"&id[]=12345&id[]="+eve.ID, ann.Token, nil)
	var got []struct {
		ID       string           `json:"id"`
		Accounts []map[string]any `json:"accounts"`
	}
	if r.Status != 200 || json.Unmarshal(r.Raw, &got) != nil || len(got) != 4 {
		t.Fatalf("familiar_followers: %d %s", r.Status, r.Raw)
	}
	var names []string
	for _, a := range got[0].Accounts {
		names = append(names, a["username"].(string))
	}
	if want := []string{"friend5", "friend4", "friend3", "friend2", "friend1"}; got[0].ID != zed.ID || !slices.Equal(names, want) {
		t.Errorf("zed's familiar followers: %v, want %v", names, want)
	}
	for i, id := range []string{fay.ID, "12345", eve.ID} {
		if got[i+1].ID != id || len(got[i+1].Accounts) != 0 {
			t.Errorf("entry %d: %+v, want %s with none", i+1, got[i+1], id)
		}
	}
	many := url.Values{}
	for range 41 {
		many.Add("id[]", zed.ID)
	}
	if r := e.Do("GET", "/api/v1/accounts/familiar_followers?"+many.Encode(), ann.Token, nil); r.Status != 422 {
		t.Errorf("41 ids: %d %s", r.Status, r.Raw)
	}
	if r := e.Do("GET", "/api/v1/accounts/familiar_followers?id[]="+zed.ID, "", nil); r.Status != 401 {
		t.Errorf("without a token: %d", r.Status)
	}
}
