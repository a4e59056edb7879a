package api_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"socialstream/internal/ids"
	"socialstream/internal/stacktest"
)

// A removed activity is kept for the record: its author can neither
// delete nor edit it, nor read it, its history or its pictures (listing,
// by id, export); a moderator's restore brings it all back.
func TestRemovedActivityIsKept(t *testing.T) {
	e := newEnv(t)
	ada, bob := e.register("ada"), e.register("bob")
	e.makeAdmin(ada)
	pic := e.uploaded(bob, "a beach")
	r := e.do("POST", "/social/rest/activities/@me/@self", bob.token, map[string]any{"title": "first", "mediaItems": []string{pic["id"].(string)}})
	if r.status != http.StatusCreated {
		t.Fatalf("post: %d %s", r.status, r.raw)
	}
	id := e.entry(r)["id"].(string)
	if r := e.do("PUT", "/social/rest/activities/@me/@self/@app/"+id, bob.token, map[string]string{"title": "the secret words"}); r.status != 200 {
		t.Fatalf("edit: %d %s", r.status, r.raw)
	}
	e.act(ada, map[string]any{"action": "remove", "accountId": bob.id, "activityIds": []string{id}, "reason": "spam"})

	hidden := func() {
		t.Helper()
		for _, q := range []struct{ method, path string }{
			{"DELETE", "/social/rest/activities/@me/@self/@app/" + id},
			{"GET", "/social/rest/activities/@me/@self/@app/" + id + "/history"},
			{"GET", "/social/rest/mediaItems/@me/@self/@all/" + pic["id"].(string)},
		} {
			r := e.do(q.method, q.path, bob.token, nil)
			e.wantError(r, http.StatusNotFound)
			if strings.Contains(string(r.raw), "secret") || strings.Contains(string(r.raw), "beach") {
				t.Errorf("%s %s tells: %s", q.method, q.path, r.raw)
			}
		}
		e.wantError(e.do("PUT", "/social/rest/activities/@me/@self/@app/"+id, bob.token, map[string]string{"title": "again"}), http.StatusNotFound)
		if got := e.list(e.do("GET", "/social/rest/mediaItems/@me/@self", bob.token, nil)); len(got) != 0 {
			t.Errorf("bob lists the removed post's picture: %v", got)
		}
		export := e.do("GET", "/auth/account/export", bob.token, nil)
		if strings.Contains(string(export.raw), "secret") || strings.Contains(string(export.raw), pic["id"].(string)) {
			t.Errorf("the export holds the removed post or its picture")
		}
	}
	hidden()
	e.act(ada, map[string]any{"action": "restore", "accountId": bob.id, "activityIds": []string{id}, "reason": "appeal"})
	if got := e.activity(bob, bob.id, id); got["title"] != "the secret words" {
		t.Errorf("after the restore: %v", got)
	}
	if got := e.list(e.do("GET", "/social/rest/mediaItems/@me/@self", bob.token, nil)); !slices.Equal(got, []string{pic["id"].(string)}) {
		t.Errorf("bob's pictures after the restore: %v", got)
	}
}

// A moderator never sees a report about themselves, in the queue or by
// id; a plain user's moderation call is a 403 whatever it names.
func TestModerationTellsNothing(t *testing.T) {
	e := newEnv(t)
	ada, mo, alice, bob := e.register("ada"), e.register("moe"), e.register("alice"), e.register("bob")
	e.makeAdmin(ada)
	e.do("PUT", "/social/rest/moderation/roles/"+mo.id, ada.token, map[string]string{"role": "moderator"})
	about := e.entry(e.do("POST", "/social/rest/reports/@me", alice.token, map[string]any{"accountId": mo.id, "category": "other", "comment": "moe is rude"}))["id"].(string)
	other := e.entry(e.do("POST", "/social/rest/reports/@me", alice.token, map[string]any{"accountId": bob.id, "category": "spam"}))["id"].(string)
	if got := e.list(e.do("GET", "/social/rest/moderation/reports", mo.token, nil)); !slices.Equal(got, []string{other}) {
		t.Errorf("moe's queue: %v, want only %s", got, other)
	}
	e.wantError(e.do("GET", "/social/rest/moderation/reports/"+about, mo.token, nil), http.StatusNotFound)
	if got := e.list(e.do("GET", "/social/rest/moderation/reports", ada.token, nil)); len(got) != 2 {
		t.Errorf("ada's queue: %v", got)
	}
	// A plain user learns nothing of reports or accounts.
	for _, body := range []map[string]any{
		{"action": "dismiss", "reportId": about},
		{"action": "dismiss", "reportId": "0123456789abcdef"},
		{"action": "limit", "accountId": "@username:nobody"},
		{"action": "limit", "accountId": bob.id},
		{"action": "nonsense"},
	} {
		e.wantError(e.do("POST", "/social/rest/moderation/actions", bob.token, body), http.StatusForbidden)
	}
	e.wantError(e.do("PUT", "/social/rest/moderation/roles/@username:nobody", bob.token, map[string]string{"role": "admin"}), http.StatusForbidden)
}

// A picture's update or delete under an album it is not in, or one that
// does not exist, is a 404 that changes nothing.
func TestPictureRoutesHonourTheirAlbum(t *testing.T) {
	e := newEnv(t)
	ann := e.register("ann")
	album := e.entry(e.do("POST", "/social/rest/albums/@me/@self", ann.token, map[string]string{"title": "Trip"}))["id"].(string)
	other := e.entry(e.do("POST", "/social/rest/albums/@me/@self", ann.token, map[string]string{"title": "Home"}))["id"].(string)
	r := e.do("POST", "/social/rest/mediaItems/@me/@self/"+album+"?description=waves", ann.token, stacktest.Picture(t, "png", 10, 10), "Content-Type", "image/png")
	if r.status != http.StatusCreated {
		t.Fatalf("upload: %d %s", r.status, r.raw)
	}
	id := e.entry(r)["id"].(string)
	for _, in := range []string{other, "0123456789abcdef"} {
		e.wantError(e.do("PUT", "/social/rest/mediaItems/@me/@self/"+in+"/"+id, ann.token, map[string]string{"description": "changed"}), http.StatusNotFound)
		e.wantError(e.do("DELETE", "/social/rest/mediaItems/@me/@self/"+in+"/"+id, ann.token, nil), http.StatusNotFound)
	}
	got := e.entry(e.do("GET", "/social/rest/mediaItems/@me/@self/"+album+"/"+id, ann.token, nil))
	if got["description"] != "waves" {
		t.Errorf("after refused changes: %v", got)
	}
	if r := e.do("PUT", "/social/rest/mediaItems/@me/@self/"+album+"/"+id, ann.token, map[string]string{"description": "sea"}); r.status != 200 {
		t.Errorf("update in its album: %d %s", r.status, r.raw)
	}
	if r := e.do("DELETE", "/social/rest/mediaItems/@me/@self/@all/"+id, ann.token, nil); r.status != 204 {
		t.Errorf("delete under @all: %d %s", r.status, r.raw)
	}
}

// A stranger pages through a person's pictures in full pages of those on
// posts they may see, and the cursors name nothing in between.
func TestPictureListingPagesWhatTheReaderSees(t *testing.T) {
	e := newEnv(t)
	ann, bob := e.register("ann"), e.register("bob")
	var shown []string
	for i := range 3 {
		loose := e.uploaded(ann, "private")["id"].(string) // never on a post
		_ = loose
		pic := e.uploaded(ann, "shown")["id"].(string)
		r := e.do("POST", "/social/rest/activities/@me/@self", ann.token, map[string]any{"title": "post " + string(rune('a'+i)), "mediaItems": []string{pic}})
		if r.status != http.StatusCreated {
			t.Fatalf("post: %d %s", r.status, r.raw)
		}
		shown = append([]string{pic}, shown...)
		e.uploaded(ann, "private")
	}
	var got []string
	cursor := ""
	for range 10 {
		r := e.do("GET", "/social/rest/mediaItems/"+ann.id+"/@self?count=1"+cursor, bob.token, nil)
		page := e.list(r)
		if len(page) != 1 {
			t.Fatalf("a page of %d: %s", len(page), r.raw)
		}
		got = append(got, page...)
		next, _ := r.body["nextCursor"].(string)
		if next == "" {
			break
		}
		cursor = "&cursor=" + next
	}
	if !slices.Equal(got, shown) {
		t.Errorf("bob's pages: %v, want %v", got, shown)
	}
}

// Keyword filters are no oracle: a mention an edit drops takes its
// notification with it, and no filter matches the text of an activity the
// reader may no longer read (dropped from it, or removed by a moderator).
func TestFiltersMatchOnlyWhatTheReaderReads(t *testing.T) {
	e := newEnv(t)
	ada, alice, bob := e.register("ada"), e.register("alice"), e.register("bob")
	e.makeAdmin(ada)
	post := func(title, vis string) string {
		t.Helper()
		r := e.do("POST", "/social/rest/activities/@me/@self", bob.token, map[string]string{"title": title, "visibility": vis})
		if r.status != http.StatusCreated {
			t.Fatalf("post: %d %s", r.status, r.raw)
		}
		return e.entry(r)["id"].(string)
	}
	dropped := post("hi @alice", "mentioned")
	removed := post("hi @alice", "public")
	e.Settle()
	noted := func(id string) map[string]any {
		for _, it := range e.do("GET", "/social/rest/notifications/@me", alice.token, nil).body["list"].([]any) {
			if n := it.(map[string]any); n["activityId"] == id {
				return n
			}
		}
		return nil
	}
	if noted(dropped) == nil || noted(removed) == nil {
		t.Fatal("alice was not told of the mentions")
	}
	if r := e.do("POST", "/social/rest/filters/@me", alice.token, map[string]any{"title": "guess",
		"keywords": []map[string]any{{"keyword": "password"}}, "context": []string{"notifications"}, "action": "warn"}); r.status != 201 {
		t.Fatal(r.status, string(r.raw))
	}
	if r := e.do("PUT", "/social/rest/activities/@me/@self/@app/"+dropped, bob.token, map[string]string{"title": "the password is swordfish"}); r.status != 200 {
		t.Fatalf("edit: %d %s", r.status, r.raw)
	}
	if r := e.do("PUT", "/social/rest/activities/@me/@self/@app/"+removed, bob.token, map[string]string{"title": "@alice the password is swordfish"}); r.status != 200 {
		t.Fatalf("edit: %d %s", r.status, r.raw)
	}
	e.act(ada, map[string]any{"action": "remove", "accountId": bob.id, "activityIds": []string{removed}, "reason": "spam"})
	e.Settle()
	if n := noted(dropped); n != nil {
		t.Errorf("alice keeps the notification of a mention the edit dropped: %v", n)
	}
	if n := noted(removed); n != nil && n["filtered"] != nil {
		t.Errorf("alice's filter matched the text of a removed activity: %v", n)
	}
}

// Cursors are sealed: an edited one, one made by hand, or one of another
// list is a 400; the one a page gave works.
func TestCursorsAreSealed(t *testing.T) {
	e := newEnv(t)
	ann := e.register("ann")
	for i := range 3 {
		e.post(ann, "post "+string(rune('a'+i)))
	}
	r := e.do("GET", "/social/rest/activities/@me/@self?count=1", ann.token, nil)
	next, _ := r.body["nextCursor"].(string)
	if next == "" {
		t.Fatalf("no cursor: %s", r.raw)
	}
	if r := e.do("GET", "/social/rest/activities/@me/@self?count=1&cursor="+next, ann.token, nil); r.status != 200 || len(e.list(r)) != 1 {
		t.Fatalf("the page's cursor: %d %s", r.status, r.raw)
	}
	// One character changed anywhere is refused.
	for _, i := range []int{0, len(next) / 2, len(next) - 1} {
		b := []byte(next)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		e.wantError(e.do("GET", "/social/rest/activities/@me/@self?count=1&cursor="+string(b), ann.token, nil), http.StatusBadRequest)
	}
	e.wantError(e.do("GET", "/social/rest/activities/@me/@self?count=1&cursor=aGVsbG8", ann.token, nil), http.StatusBadRequest)
	e.wantError(e.do("GET", "/social/rest/people/@me/@followers?count=1&cursor="+next, ann.token, nil), http.StatusBadRequest)
	// Over JSON-RPC too.
	rpc := e.do("POST", "/social/rpc", ann.token, `{"method":"activities.get","id":"1","params":{"userId":"@me","groupId":"@self","count":1,"cursor":"`+next[:len(next)-2]+`"}}`)
	if rpcStatus(rpc) != http.StatusBadRequest {
		t.Errorf("an edited cursor over JSON-RPC: %s", rpc.raw)
	}
}

// Invalid UTF-8 and lone surrogate escapes are a 400 naming the field,
// and change nothing.
func TestInvalidTextRefused(t *testing.T) {
	e := newEnv(t)
	ann := e.register("ann")
	for _, body := range []string{
		"{\"title\":\"bad \xff byte\"}",
		`{"title":"lone \ud800 surrogate"}`,
	} {
		r := e.do("POST", "/social/rest/activities/@me/@self", ann.token, body)
		e.wantError(r, http.StatusBadRequest)
		if !strings.Contains(r.errMessage(), "/title") {
			t.Errorf("the refusal names no field: %s", r.raw)
		}
	}
	rpc := e.do("POST", "/social/rpc", ann.token, `{"method":"activities.create","id":"1","params":{"userId":"@me","groupId":"@self","activity":{"title":"x\udc00"}}}`)
	e.wantError(rpc, http.StatusBadRequest)
	if got := e.feed(ann, "@me/@self"); len(got) != 0 {
		t.Errorf("refused posts were stored: %v", got)
	}
}

// Liking again what one liked before it was hidden (its author limited
// since, and not followed) answers 404, not the activity. The convergence
// checker found it: the like's shortcut for one liked already came before
// the policy.
func TestLikeAgainOfWhatIsNowHidden(t *testing.T) {
	e := newEnv(t)
	ada, ann, bob := e.register("ada"), e.register("ann"), e.register("bob")
	e.makeAdmin(ada)
	id := e.post(ann, "liked, then hidden")
	if r := e.do("POST", "/social/rest/likes/"+id, bob.token, nil); r.status != 200 {
		t.Fatalf("like: %d %s", r.status, r.raw)
	}
	e.act(ada, map[string]any{"action": "limit", "accountId": ann.id, "reason": "spam"})
	r := e.do("POST", "/social/rest/likes/"+id, bob.token, nil)
	e.wantError(r, 404)
	if strings.Contains(string(r.raw), "liked, then hidden") {
		t.Errorf("the answer shows the hidden activity: %s", r.raw)
	}
}

// Whether a notification is there for its reader is decided by the
// policy over who did it and the post it is about, and kept on it, so
// every list and both unread counts agree, whatever hides the post
// since: a followers-only post edited to mention its reader no more, and
// again; a mention taken down and put back; mentions by someone limited
// since (carol does not follow bob); a followers-only reply after its
// reader unfollows and follows again.
func TestNotificationsOfAHiddenPostAgree(t *testing.T) {
	e := newEnv(t)
	ada, bob, carol, dan := e.register("ada"), e.register("bob"), e.register("carol"), e.register("dan")
	e.makeAdmin(ada)
	mention := e.post(bob, "hello @carol")
	whisper := e.postFor(bob, "psst @carol", "followers")
	own := e.post(carol, "a question")
	e.follow(carol, dan.id)
	r := e.do("POST", "/social/rest/activities/@me/@self", dan.token, map[string]any{"title": "an answer", "visibility": "followers", "inReplyTo": own})
	if r.status != http.StatusCreated {
		t.Fatalf("dan's reply: %d %s", r.status, r.raw)
	}
	reply := e.entry(r)["id"].(string)
	e.Settle()
	// shown says, of each post, whether carol's notification of it is in
	// each list, and checks the unread counts against the list.
	shown := func(when string, want map[string]bool) {
		t.Helper()
		rest := string(e.do("GET", "/social/rest/notifications/@me", carol.token, nil).raw)
		grouped := string(e.do("GET", "/social/rest/notifications/@me?grouped=true", carol.token, nil).raw)
		m := e.do("GET", "/api/v1/notifications", carol.token, nil)
		for id, w := range want {
			if got := strings.Contains(rest, id); got != w {
				t.Errorf("%s: the notification of %s in the REST list %v, want %v", when, id, got, w)
			}
			if got := strings.Contains(grouped, id); got != w {
				t.Errorf("%s: the notification of %s in the grouped list %v, want %v", when, id, got, w)
			}
			n, _ := ids.Parse(id)
			if got := strings.Contains(string(m.raw), `"id":"`+strconv.FormatInt(n, 10)+`"`); got != w {
				t.Errorf("%s: the status %s in Mastodon's notifications %v, want %v", when, id, got, w)
			}
		}
		var list struct {
			List   []map[string]any `json:"list"`
			Unread float64          `json:"unreadCount"`
		}
		if err := json.Unmarshal([]byte(rest), &list); err != nil {
			t.Fatal(err)
		}
		unread := 0.0
		for _, n := range list.List {
			if n["read"] != true {
				unread++
			}
		}
		var count struct {
			Count float64 `json:"count"`
		}
		if err := json.Unmarshal(e.do("GET", "/api/v1/notifications/unread_count", carol.token, nil).raw, &count); err != nil {
			t.Fatal(err)
		}
		if list.Unread != unread || count.Count != unread {
			t.Errorf("%s: unreadCount %v, Mastodon's %v; the list shows %v unread", when, list.Unread, count.Count, unread)
		}
	}
	all := map[string]bool{mention: true, reply: true, whisper: true}
	shown("at first", all)

	// An edit that no longer mentions carol takes her notification of
	// bob's followers-only post away; one that mentions her again tells
	// her again.
	edit := func(title string) {
		t.Helper()
		if r := e.do("PUT", "/social/rest/activities/@me/@self/@app/"+whisper, bob.token, map[string]any{"title": title}); r.status != http.StatusOK {
			t.Fatalf("edit: %d %s", r.status, r.raw)
		}
		e.Settle()
	}
	edit("psst")
	shown("the whisper no longer mentions carol", map[string]bool{mention: true, reply: true, whisper: false})
	edit("psst @carol")
	shown("the whisper mentions carol again", all)

	e.act(ada, map[string]any{"action": "remove", "accountId": bob.id, "activityIds": []string{mention}, "reason": "spam"})
	e.Settle()
	shown("the mention taken down", map[string]bool{mention: false, reply: true, whisper: true})
	e.act(ada, map[string]any{"action": "restore", "accountId": bob.id, "activityIds": []string{mention}, "reason": "appeal"})
	e.Settle()
	shown("the mention put back", all)

	e.act(ada, map[string]any{"action": "limit", "accountId": bob.id, "reason": "spam"})
	e.Settle()
	shown("bob limited", map[string]bool{mention: false, reply: true, whisper: false})
	e.act(ada, map[string]any{"action": "unlimit", "accountId": bob.id, "reason": "appeal"})
	e.Settle()
	shown("bob's limit lifted", all)

	if r := e.do("DELETE", "/social/rest/people/@me/@friends/"+dan.id, carol.token, nil); r.status != http.StatusNoContent {
		t.Fatalf("unfollow: %d %s", r.status, r.raw)
	}
	e.Settle()
	shown("carol unfollowed dan", map[string]bool{mention: true, reply: false, whisper: true})
	e.follow(carol, dan.id)
	e.Settle()
	shown("carol follows dan again", all)
}
