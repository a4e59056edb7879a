package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"socialstream/internal/accounts"
	"socialstream/internal/ids"
	"socialstream/internal/moderation"
	"socialstream/internal/store"
)

// makeAdmin names u an admin as the operator's command does.
func (e *env) makeAdmin(u user) {
	e.t.Helper()
	if err := moderation.SetRole(context.Background(), e.db, ids.New(), u.id, accounts.RoleAdmin); err != nil {
		e.t.Fatal(err)
	}
}

// act takes a moderator's action and returns the action's entry.
func (e *env) act(u user, action map[string]any) map[string]any {
	e.t.Helper()
	r := e.do("POST", "/social/rest/moderation/actions", u.token, action)
	if r.status != http.StatusCreated {
		e.t.Fatalf("%s acts %v: %d %s", u.name, action, r.status, r.raw)
	}
	return e.entry(r)
}

// A report keeps what it reported; the reporter sees its state and never
// who handled it; moderators list open reports newest first and resolve
// them: a removal takes the activities from every feed and by id at once;
// the account is told, with the reason, and every action is in the audit
// log admins read. Roles are checked on every call.
func TestReportsAndRemoval(t *testing.T) {
	e := newEnv(t)
	ada, mo, bob, alice, carol, dan := e.register("ada"), e.register("moe"), e.register("bob"), e.register("alice"), e.register("carol"), e.register("dan")
	e.makeAdmin(ada)

	// Roles: only an admin grants them, never to themselves.
	e.wantError(e.do("PUT", "/social/rest/moderation/roles/"+mo.id, mo.token, map[string]string{"role": "moderator"}), http.StatusForbidden)
	e.wantError(e.do("PUT", "/social/rest/moderation/roles/"+mo.id, ada.token, map[string]string{"role": "janitor"}), http.StatusBadRequest)
	e.wantError(e.do("PUT", "/social/rest/moderation/roles/"+ada.id, ada.token, map[string]string{"role": ""}), http.StatusBadRequest)
	e.wantError(e.do("PUT", "/social/rest/moderation/roles/"+mo.id, ada.token, map[string]any{}), http.StatusBadRequest)
	if p := e.entry(e.do("PUT", "/social/rest/moderation/roles/"+mo.id, ada.token, map[string]string{"role": "moderator"})); p["role"] != "moderator" {
		t.Fatalf("grant: %v", p)
	}
	for _, path := range []string{"/social/rest/moderation/reports", "/social/rest/moderation/actions"} {
		e.wantError(e.do("GET", path, alice.token, nil), http.StatusForbidden)
	}
	e.wantError(e.do("GET", "/social/rest/moderation/actions", mo.token, nil), http.StatusForbidden) // the log is for admins

	e.follow(carol, bob.id)
	spam := e.post(bob, "cheap watches #deals")
	r := e.do("POST", "/social/rest/activities/@me/@self", bob.token, map[string]string{"title": "for my followers", "visibility": "followers"})
	if r.status != 201 {
		t.Fatal(r.status, string(r.raw))
	}
	secret := e.entry(r)["id"].(string)
	e.Settle()

	// What a report may not be.
	report := func(u user, body map[string]any) resp {
		t.Helper()
		return e.do("POST", "/social/rest/reports/@me", u.token, body)
	}
	e.wantError(report(alice, map[string]any{"accountId": alice.id, "category": "spam"}), http.StatusBadRequest)
	e.wantError(report(alice, map[string]any{"accountId": bob.id, "category": "rude"}), http.StatusBadRequest)
	e.wantError(report(alice, map[string]any{"category": "spam"}), http.StatusBadRequest)
	e.wantError(report(alice, map[string]any{"accountId": "@username:nobody", "category": "spam"}), http.StatusNotFound)
	e.wantError(report(alice, map[string]any{"accountId": bob.id, "category": "spam", "activityIds": []string{secret}}), http.StatusNotFound) // not hers to see
	e.wantError(report(alice, map[string]any{"accountId": carol.id, "category": "spam", "activityIds": []string{spam}}), http.StatusNotFound)
	e.wantError(report(alice, map[string]any{"accountId": bob.id, "category": "spam", "activityIds": strings.Split(strings.Repeat(spam+",", 11), ",")[:11]}), http.StatusBadRequest)
	e.wantError(report(alice, map[string]any{"accountId": bob.id, "category": "spam", "comment": strings.Repeat("x", moderation.MaxComment+1)}), http.StatusBadRequest)
	e.wantError(e.do("POST", "/social/rest/reports/"+bob.id, alice.token, map[string]any{"accountId": carol.id, "category": "spam"}), http.StatusForbidden)
	if got := e.list(e.do("GET", "/social/rest/reports/@me", alice.token, nil)); len(got) != 0 {
		t.Fatalf("refused reports were kept: %v", got)
	}

	r = report(alice, map[string]any{"accountId": "@username:bob", "category": "spam", "activityIds": []string{spam}, "comment": "selling junk"})
	if r.status != http.StatusCreated {
		t.Fatalf("report: %d %s", r.status, r.raw)
	}
	filed := e.entry(r)
	reportID := filed["id"].(string)
	if filed["state"] != "open" || filed["accountId"] != bob.id || filed["category"] != "spam" {
		t.Errorf("filed: %v", filed)
	}
	// An edit after the report does not change what was reported.
	if r := e.do("PUT", "/social/rest/activities/@me/@self/@app/"+spam, bob.token, map[string]string{"title": "nothing to see"}); r.status != 200 {
		t.Fatalf("edit: %d %s", r.status, r.raw)
	}

	// Moderators see the queue, newest first, with the snapshot.
	later := e.entry(report(dan, map[string]any{"accountId": bob.id, "category": "other"}))["id"].(string)
	if got := e.list(e.do("GET", "/social/rest/moderation/reports", mo.token, nil)); !slices.Equal(got, []string{later, reportID}) {
		t.Errorf("open reports: %v, want %v", got, []string{later, reportID})
	}
	queued := e.entry(e.do("GET", "/social/rest/moderation/reports/"+reportID, mo.token, nil))
	acts, _ := queued["activities"].([]any)
	if queued["reporterId"] != alice.id || len(acts) != 1 || acts[0].(map[string]any)["title"] != "cheap watches #deals" ||
		queued["account"].(map[string]any)["preferredUsername"] != "bob" {
		t.Errorf("the moderator's report: %v", queued)
	}
	e.wantError(e.do("GET", "/social/rest/moderation/reports?state=closed", mo.token, nil), http.StatusBadRequest)
	e.wantError(e.do("GET", "/social/rest/moderation/reports/"+reportID, alice.token, nil), http.StatusForbidden)
	e.wantError(e.do("GET", "/social/rest/reports/@me/"+later, alice.token, nil), http.StatusNotFound) // dan's

	// What an action may not be.
	action := func(kind, account string) map[string]any {
		return map[string]any{"action": kind, "accountId": account, "reason": "rule 1"}
	}
	e.wantError(e.do("POST", "/social/rest/moderation/actions", alice.token, action("limit", bob.id)), http.StatusForbidden)
	e.wantError(e.do("POST", "/social/rest/moderation/actions", mo.token, action("limit", ada.id)), http.StatusForbidden) // an admin
	e.wantError(e.do("POST", "/social/rest/moderation/actions", mo.token, action("limit", mo.id)), http.StatusBadRequest)
	e.wantError(e.do("POST", "/social/rest/moderation/actions", mo.token, action("ban", bob.id)), http.StatusBadRequest)
	e.wantError(e.do("POST", "/social/rest/moderation/actions", mo.token, map[string]any{"action": "limit", "accountId": bob.id}), http.StatusBadRequest) // no reason
	e.wantError(e.do("POST", "/social/rest/moderation/actions", mo.token, map[string]any{"action": "dismiss", "accountId": bob.id}), http.StatusBadRequest)
	e.wantError(e.do("POST", "/social/rest/moderation/actions", mo.token, map[string]any{"action": "remove", "accountId": carol.id, "activityIds": []string{spam}, "reason": "x"}), http.StatusNotFound)
	e.wantError(e.do("POST", "/social/rest/moderation/actions", mo.token, map[string]any{"action": "remove", "reportId": reportID, "accountId": carol.id, "reason": "x"}), http.StatusBadRequest)

	// The removal, resolving alice's report.
	removal := map[string]any{"action": "remove", "reportId": reportID, "reason": "spam is not allowed"}
	done := e.act(mo, removal)
	if done["accountId"] != bob.id || done["moderatorId"] != mo.id || !slices.Equal(done["activityIds"].([]any), []any{spam}) {
		t.Errorf("removal: %v", done)
	}
	if again := e.do("POST", "/social/rest/moderation/actions", mo.token, removal); again.status != 201 || e.entry(again)["id"] != done["id"] {
		t.Errorf("the same resolution again: %d %s, want action %v", again.status, again.raw, done["id"])
	}
	for _, u := range []user{bob, carol, dan} {
		e.wantError(e.do("GET", "/social/rest/activities/"+bob.id+"/@self/@app/"+spam, u.token, nil), http.StatusNotFound)
		for _, feed := range []string{"@me/@friends", bob.id + "/@self", "@me/@all", "@me/@tag:deals"} {
			if slices.Contains(e.feed(u, feed), spam) {
				t.Errorf("%s reads the removed activity in %s", u.name, feed)
			}
		}
	}
	e.wantError(e.do("POST", "/social/rest/likes/"+spam, carol.token, nil), http.StatusNotFound)
	e.wantError(e.do("PUT", "/social/rest/activities/@me/@self/@app/"+spam, bob.token, map[string]string{"title": "back"}), http.StatusNotFound)
	if !slices.Contains(e.feed(carol, "@me/@friends"), secret) {
		t.Errorf("carol lost bob's other post")
	}

	// The reporter sees the state, never who handled it.
	mine := e.entry(e.do("GET", "/social/rest/reports/@me/"+reportID, alice.token, nil))
	if mine["state"] != "actioned" || mine["resolved"] == nil || mine["handledBy"] != nil || mine["actionId"] != nil {
		t.Errorf("alice's resolved report: %v", mine)
	}
	// The account is told, with the reason, and not by whom.
	if got := e.notificationTypes(bob); !slices.Contains(got, "moderation") {
		t.Errorf("bob's notifications: %v", got)
	}
	notices := e.do("GET", "/social/rest/moderation/notices/@me", bob.token, nil)
	if got := e.list(notices); !slices.Equal(got, []string{done["id"].(string)}) {
		t.Fatalf("bob's notices: %v", got)
	}
	if n := notices.body["list"].([]any)[0].(map[string]any); n["reason"] != "spam is not allowed" || n["moderatorId"] != nil || n["action"] != "remove" {
		t.Errorf("bob's notice: %v", n)
	}
	e.wantError(e.do("GET", "/social/rest/moderation/notices/"+bob.id, alice.token, nil), http.StatusForbidden)

	// A dismissal resolves the other report and tells bob nothing.
	e.act(mo, map[string]any{"action": "dismiss", "reportId": later})
	e.wantError(e.do("POST", "/social/rest/moderation/actions", mo.token, map[string]any{"action": "limit", "reportId": later, "reason": "x"}), http.StatusConflict)
	if got := e.list(e.do("GET", "/social/rest/moderation/reports", mo.token, nil)); len(got) != 0 {
		t.Errorf("open reports after both resolved: %v", got)
	}
	if got := e.list(e.do("GET", "/social/rest/moderation/reports?state=dismissed", mo.token, nil)); !slices.Equal(got, []string{later}) {
		t.Errorf("dismissed reports: %v", got)
	}
	if got := e.list(e.do("GET", "/social/rest/moderation/notices/@me", bob.token, nil)); len(got) != 1 {
		t.Errorf("bob's notices after a dismissal: %v", got)
	}

	// Restored, it is back where it was.
	e.act(mo, map[string]any{"action": "restore", "accountId": bob.id, "activityIds": []string{spam}, "reason": "appeal granted"})
	e.wantError(e.do("POST", "/social/rest/moderation/actions", mo.token, map[string]any{"action": "restore", "accountId": bob.id, "activityIds": []string{spam}, "reason": "again"}), http.StatusConflict)
	if !slices.Contains(e.feed(carol, "@me/@friends"), spam) || e.do("GET", "/social/rest/activities/"+bob.id+"/@self/@app/"+spam, dan.token, nil).status != 200 {
		t.Errorf("the restored activity is not back")
	}

	// The audit log: every action, newest first, with who took it.
	logged := e.do("GET", "/social/rest/moderation/actions", ada.token, nil)
	var kinds []string
	for _, it := range logged.body["list"].([]any) {
		a := it.(map[string]any)
		kinds = append(kinds, a["action"].(string))
		if a["action"] != "grant" && a["moderatorId"] != mo.id {
			t.Errorf("log entry without its moderator: %v", a)
		}
	}
	if want := []string{"restore", "dismiss", "remove", "grant", "grant"}; !slices.Equal(kinds, want) {
		t.Errorf("audit log: %v, want %v", kinds, want)
	}

	// JSON-RPC: the same operations.
	batch := e.doBatch(alice, `[{"method":"reports.get","id":"mine","params":{"userId":"@me"}},
		{"method":"reports.create","id":"new","params":{"report":{"accountId":"`+bob.id+`","category":"abuse"}}},
		{"method":"moderation.reports","id":"queue","params":{}}]`)
	if len(batch) != 3 || batch[0]["error"] != nil || batch[1]["error"] != nil || batch[2]["error"] == nil {
		t.Errorf("rpc: %v", batch)
	}
	batch = e.doBatch(mo, `[{"method":"moderation.reports","id":"queue","params":{"state":"open"}},
		{"method":"moderation.act","id":"act","params":{"action":{"action":"limit","accountId":"`+bob.id+`","reason":"rpc"}}},
		{"method":"moderation.log","id":"log","params":{}},
		{"method":"moderation.notices","id":"mine","params":{}}]`)
	if len(batch) != 4 || batch[0]["error"] != nil || batch[1]["error"] != nil || batch[2]["error"] == nil || batch[3]["error"] != nil {
		t.Errorf("rpc as a moderator: %v", batch)
	}
	if p := e.doBatch(ada, `[{"method":"moderation.grant","id":"g","params":{"userId":"`+mo.id+`","role":""}}]`); p[0]["error"] != nil {
		t.Errorf("rpc grant: %v", p)
	}
	e.wantError(e.do("GET", "/social/rest/moderation/reports", mo.token, nil), http.StatusForbidden) // at once

	// Reports are rate limited; the export lists one's reports and
	// notices.
	for i := 0; ; i++ {
		r := report(alice, map[string]any{"accountId": bob.id, "category": "other"})
		if r.status == http.StatusTooManyRequests {
			if i+2 != moderation.ReportsPerHour {
				t.Errorf("refused after %d more reports, want %d", i, moderation.ReportsPerHour-2)
			}
			break
		}
		if r.status != http.StatusCreated || i > moderation.ReportsPerHour {
			t.Fatalf("report %d: %d %s", i, r.status, r.raw)
		}
	}
	var exported struct {
		Reports []struct{ ID, State string } `json:"reports"`
		Notices []struct{ Action string }    `json:"moderationNotices"`
	}
	if r := e.do("GET", "/auth/account/export", alice.token, nil); r.status != 200 || json.Unmarshal(r.raw, &exported) != nil || len(exported.Reports) != moderation.ReportsPerHour {
		t.Errorf("alice's export: %d %.300s", r.status, r.raw)
	}
	if r := e.do("GET", "/auth/account/export", bob.token, nil); r.status != 200 || json.Unmarshal(r.raw, &exported) != nil || len(exported.Notices) != 3 {
		t.Errorf("bob's export: %d %.300s", r.status, r.raw)
	}
}

// A limited account's posts leave @all and tag feeds and reach its
// followers alone: at home, on its page, and by id.
func TestLimitedAccount(t *testing.T) {
	e := newEnv(t)
	ada, bob, carol, dan := e.register("ada"), e.register("bob"), e.register("carol"), e.register("dan")
	e.makeAdmin(ada)
	e.follow(carol, bob.id)
	if r := e.do("POST", "/social/rest/tags/@me", dan.token, map[string]string{"name": "news"}); r.status != 201 {
		t.Fatal(r.status, string(r.raw))
	}
	news := e.post(bob, "hello #news")
	mention := e.post(bob, "hey @dan")
	e.Settle()
	if !slices.Contains(e.feed(dan, "@me/@all"), news) || !slices.Contains(e.feed(dan, "@me/@friends"), news) {
		t.Fatalf("before the limit dan reads bob's post")
	}
	e.act(ada, map[string]any{"action": "limit", "accountId": bob.id, "reason": "brigading"})
	e.wantError(e.do("POST", "/social/rest/moderation/actions", ada.token, map[string]any{"action": "limit", "accountId": bob.id, "reason": "again"}), http.StatusConflict)

	for _, feed := range []string{"@me/@all", "@me/@tag:news", "@me/@friends", bob.id + "/@self", "@me/@mentions"} {
		if got := e.feed(dan, feed); slices.Contains(got, news) || slices.Contains(got, mention) {
			t.Errorf("dan, no follower, reads the limited account's posts in %s: %v", feed, got)
		}
	}
	e.wantError(e.do("GET", "/social/rest/activities/"+bob.id+"/@self/@app/"+news, dan.token, nil), http.StatusNotFound)
	for _, feed := range []string{"@me/@friends", bob.id + "/@self"} {
		if !slices.Contains(e.feed(carol, feed), news) {
			t.Errorf("carol, a follower, lost bob's post in %s", feed)
		}
	}
	if slices.Contains(e.feed(carol, "@me/@all"), news) {
		t.Errorf("the limited account's post is in @all for its follower")
	}
	if !slices.Contains(e.feed(bob, "@me/@all"), news) {
		t.Errorf("bob does not see his own post in @all")
	}
	// No one but a follower may share it, and a repost carries it no
	// further.
	e.wantError(e.do("POST", "/social/rest/reposts/"+news, dan.token, nil), http.StatusNotFound)
	if r := e.do("POST", "/social/rest/reposts/"+news, carol.token, nil); r.status != 201 {
		t.Fatal(r.status, string(r.raw))
	}
	e.follow(dan, carol.id)
	e.Settle()
	for _, feed := range []string{"@me/@friends", carol.id + "/@self"} {
		for _, v := range e.feedItems(dan, feed) {
			if v["repostOf"] != nil {
				t.Errorf("dan reads carol's repost of the limited account in %s", feed)
			}
		}
	}

	e.act(ada, map[string]any{"action": "unlimit", "accountId": bob.id, "reason": "served"})
	if !slices.Contains(e.feed(dan, "@me/@all"), news) || !slices.Contains(e.feed(dan, "@me/@mentions"), mention) {
		t.Errorf("after the limit ends dan does not read bob's posts")
	}
}

// A suspension ends sign-in and every token at once, hides the account's
// activities, comments, likes and notifications everywhere, and is
// reversible; the grace over, the account is erased as a deleted one is.
func TestSuspension(t *testing.T) {
	e := newEnv(t)
	ada, mo, bob, alice, carol := e.register("ada"), e.register("moe"), e.register("bob"), e.register("alice"), e.register("carol")
	e.makeAdmin(ada)
	e.do("PUT", "/social/rest/moderation/roles/"+mo.id, ada.token, map[string]string{"role": "moderator"})
	e.follow(carol, bob.id)
	post := e.post(bob, "bob was here")
	hers := e.post(alice, "alice's post")
	if r := e.do("POST", "/social/rest/comments/"+hers, bob.token, map[string]string{"text": "nice"}); r.status != 201 {
		t.Fatal(r.status, string(r.raw))
	}
	if r := e.do("POST", "/social/rest/likes/"+hers, bob.token, nil); r.status != 200 {
		t.Fatal(r.status, string(r.raw))
	}
	e.Settle()

	e.act(mo, map[string]any{"action": "suspend", "accountId": bob.id, "reason": "threats"})
	e.wantError(e.do("GET", "/social/rest/people/@me/@self", bob.token, nil), http.StatusUnauthorized)
	r := e.do("POST", "/auth/login", "", map[string]string{"username": "bob", "password": "password-bob"})
	if r.status != http.StatusForbidden || !strings.Contains(r.errMessage(), "threats") {
		t.Errorf("bob's login: %d %s", r.status, r.raw)
	}
	hidden := func() {
		t.Helper()
		for _, feed := range []string{"@me/@friends", bob.id + "/@self", "@me/@all"} {
			if slices.Contains(e.feed(carol, feed), post) {
				t.Errorf("carol reads the suspended account's post in %s", feed)
			}
		}
		e.wantError(e.do("GET", "/social/rest/activities/"+bob.id+"/@self/@app/"+post, carol.token, nil), http.StatusNotFound)
		e.wantError(e.do("GET", "/social/rest/people/"+bob.id+"/@self", carol.token, nil), http.StatusNotFound)
		if got := e.list(e.do("GET", "/social/rest/comments/"+hers, alice.token, nil)); len(got) != 0 {
			t.Errorf("alice reads the suspended account's comment: %v", got)
		}
		if got := e.list(e.do("GET", "/social/rest/likes/"+hers, alice.token, nil)); len(got) != 0 {
			t.Errorf("alice reads the suspended account's like: %v", got)
		}
		if got := e.list(e.do("GET", "/social/rest/people/@me/@friends", carol.token, nil)); len(got) != 0 {
			t.Errorf("carol follows the suspended account in her list: %v", got)
		}
		for _, n := range e.do("GET", "/social/rest/notifications/@me", alice.token, nil).body["list"].([]any) {
			if a, _ := n.(map[string]any)["actor"].(map[string]any); a != nil && a["id"] == bob.id {
				t.Errorf("alice has a notification of the suspended account's: %v", n)
			}
		}
	}
	hidden()
	counts := func(likes, comments float64) {
		t.Helper()
		e.Settle() // the withholding job
		got := e.activity(alice, alice.id, hers)
		if got["likesCount"] != likes || got["commentsCount"] != comments {
			t.Errorf("alice's post counts %v likes and %v comments, want %v and %v", got["likesCount"], got["commentsCount"], likes, comments)
		}
	}
	counts(0, 0)
	if e.tasks.Server.Scheduled() != 1 {
		t.Errorf("scheduled tasks: %d, want the end of the grace", e.tasks.Server.Scheduled())
	}
	e.wantError(e.do("POST", "/social/rest/moderation/actions", mo.token, map[string]any{"action": "suspend", "accountId": bob.id, "reason": "again"}), http.StatusConflict)

	// Lifted, all is back.
	e.act(mo, map[string]any{"action": "unsuspend", "accountId": bob.id, "reason": "appeal"})
	if r := e.do("POST", "/auth/login", "", map[string]string{"username": "bob", "password": "password-bob"}); r.status != 200 {
		t.Fatalf("bob's login after: %d %s", r.status, r.raw)
	}
	if !slices.Contains(e.feed(carol, "@me/@friends"), post) || len(e.list(e.do("GET", "/social/rest/comments/"+hers, alice.token, nil))) != 1 {
		t.Errorf("the lifted suspension left bob hidden")
	}
	counts(1, 1)
	ctx := context.Background()
	// The end of a lifted suspension's grace does nothing.
	var first moderation.ExpiryTask
	if ended, err := e.svc.Lifecycle.EndSuspension(ctx, moderation.ExpiryTask{UserID: bob.id, At: 1}); err != nil || ended {
		t.Errorf("the end of a lifted suspension: %v %v", ended, err)
	}

	// Suspended again, and the grace over: the account goes.
	e.act(mo, map[string]any{"action": "suspend", "accountId": bob.id, "reason": "threats again"})
	began := time.Now().Add(-moderation.Grace - time.Hour)
	err := e.db.Update(ctx, func(tx *store.Tx) error {
		_, err := accounts.SetStanding(ctx, tx, bob.id, func(st *accounts.Standing) error {
			first = moderation.ExpiryTask{UserID: bob.id, At: st.Suspended.UnixMicro()}
			st.Suspended = began
			return nil
		})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if ended, err := e.svc.Lifecycle.EndSuspension(ctx, first); err != nil || ended {
		t.Errorf("the end of a suspension since replaced: %v %v", ended, err)
	}
	e.wantError(e.do("POST", "/social/rest/moderation/actions", mo.token, map[string]any{"action": "unsuspend", "accountId": bob.id, "reason": "late"}), http.StatusConflict)
	if ended, err := e.svc.Lifecycle.EndSuspension(ctx, moderation.ExpiryTask{UserID: bob.id, At: began.UnixMicro()}); err != nil || !ended {
		t.Fatalf("the end of the grace: %v %v", ended, err)
	}
	e.Settle()
	e.wantError(e.do("GET", "/social/rest/people/"+bob.id+"/@self", ada.token, nil), http.StatusNotFound)
	if got := e.list(e.do("GET", "/social/rest/people/@me/@friends", carol.token, nil)); len(got) != 0 {
		t.Errorf("carol still follows the erased account: %v", got)
	}
	if r := e.do("POST", "/auth/register", "", map[string]string{"username": "bob", "password": "password-bob2"}); r.status != http.StatusCreated {
		t.Errorf("the erased account's name is not free: %d %s", r.status, r.raw)
	}
}

// feedItems returns the activities of a feed page as the API shows them.
func (e *env) feedItems(u user, path string) []map[string]any {
	e.t.Helper()
	r := e.do("GET", "/social/rest/activities/"+path, u.token, nil)
	if r.status != 200 {
		e.t.Fatalf("%s: %d %s", path, r.status, r.raw)
	}
	var out []map[string]any
	for _, it := range r.body["list"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out
}

// The withholding job waits for its suspension (or its lifting) to
// commit, and ends without a change for one that never did or that a
// later one replaced; run again, it changes nothing.
func TestWithholdingWaitsForItsChange(t *testing.T) {
	e := newEnv(t)
	bob, alice := e.register("bob"), e.register("alice")
	hers := e.post(alice, "alice's post")
	if r := e.do("POST", "/social/rest/likes/"+hers, bob.token, nil); r.status != 200 {
		t.Fatal(r.status, string(r.raw))
	}
	ctx := context.Background()
	now := time.Now()
	job := moderation.WithholdTask{UserID: bob.id, At: now.UnixMicro(), On: true, Kind: "likes"}
	if _, err := e.svc.Moderation.Withhold(ctx, job); !errors.Is(err, moderation.ErrNotYet) {
		t.Errorf("a withholding before its suspension commits: %v, want a retry", err)
	}
	job.At = now.Add(-time.Hour).UnixMicro()
	if stopped, err := e.svc.Moderation.Withhold(ctx, job); err != nil || stopped == "" {
		t.Errorf("a withholding of a suspension that never came: %q %v, want it to stop", stopped, err)
	}
	// A later step that finds the standing changed back stops at once:
	// its first step found the suspension, so a later change replaced it
	// (a lifting whose own job does the work). It used to wait for the
	// give-up, which outlasted a test's wait for the queues on a busy
	// machine.
	later := moderation.WithholdTask{UserID: bob.id, At: now.UnixMicro(), On: true, Kind: "comments", Step: 1}
	if stopped, err := e.svc.Moderation.Withhold(ctx, later); err != nil || stopped == "" {
		t.Errorf("a later step of a replaced suspension: %q %v, want it to stop at once", stopped, err)
	}
	if got := e.activity(alice, alice.id, hers)["likesCount"]; got != 1.0 {
		t.Errorf("likesCount %v after withholdings that did nothing, want 1", got)
	}
	// Lifted, a job of the suspension before stops; the lifting's counts
	// them, however many times it runs.
	lift := moderation.WithholdTask{UserID: bob.id, At: now.UnixMicro(), On: false, Kind: "likes"}
	for range 2 {
		if _, err := e.svc.Moderation.Withhold(ctx, lift); err != nil {
			t.Fatal(err)
		}
	}
	e.Settle()
	if got := e.activity(alice, alice.id, hers)["likesCount"]; got != 1.0 {
		t.Errorf("likesCount %v after a lifting's job ran twice, want 1", got)
	}
}

// A suspension lifted before its withholding's first run (which comes
// half a second after it, queue.AheadDelay): that run stops at once, the
// lifting having replaced it, where it would wait out the give-up for a
// commit it cannot tell from one not made yet.
func TestWithholdingOfASuspensionLiftedStops(t *testing.T) {
	e := newEnv(t)
	ada, bob := e.register("ada"), e.register("bob")
	e.makeAdmin(ada)
	before := time.Now().Add(-time.Second)
	e.act(ada, map[string]any{"action": "suspend", "accountId": bob.id, "reason": "spam"})
	e.act(ada, map[string]any{"action": "unsuspend", "accountId": bob.id, "reason": "appeal"})
	ctx := context.Background()
	job := moderation.WithholdTask{UserID: bob.id, At: before.UnixMicro(), On: true, Kind: "likes"}
	if stopped, err := e.svc.Moderation.Withhold(ctx, job); err != nil || stopped == "" {
		t.Errorf("the withholding of a suspension lifted since: %q %v, want it to stop at once", stopped, err)
	}
	// A lifting's job that finds a suspension made since stops too.
	lift := moderation.WithholdTask{UserID: bob.id, At: before.UnixMicro(), On: false, Kind: "likes"}
	e.act(ada, map[string]any{"action": "suspend", "accountId": bob.id, "reason": "again"})
	if stopped, err := e.svc.Moderation.Withhold(ctx, lift); err != nil || stopped == "" {
		t.Errorf("the withholding of a lifting replaced since: %q %v, want it to stop at once", stopped, err)
	}
	e.Settle()
}

// A suspension whose call committed and failed before it ended the
// tokens leaves them working; suspending again is a 409 that ends them.
func TestSuspendingAgainEndsTokens(t *testing.T) {
	e := newEnv(t)
	ada, bob := e.register("ada"), e.register("bob")
	e.makeAdmin(ada)
	ctx := context.Background()
	err := e.db.Update(ctx, func(tx *store.Tx) error { // the commit of a call that failed after it
		_, err := accounts.Suspend(ctx, tx, bob.id, time.Now(), "spam")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	e.wantError(e.do("POST", "/social/rest/moderation/actions", ada.token, map[string]any{"action": "suspend", "accountId": bob.id, "reason": "spam"}), http.StatusConflict)
	if r := e.do("GET", "/social/rest/notifications/@me", bob.token, nil); r.status != http.StatusUnauthorized {
		t.Errorf("bob's token after the second suspension: %d, want 401", r.status)
	}
}
