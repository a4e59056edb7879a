package api_test

import (
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"socialstream/internal/api"
	"socialstream/internal/app"
	"socialstream/internal/localstack"
	"socialstream/internal/ratelimit"
	"socialstream/internal/stacktest"
)

// limited starts another instance of the service on the store of
// setup, with rate limits lim.
func limited(t *testing.T, setup *env, lim ratelimit.Config) *env {
	t.Helper()
	return newEnvFrom(t, localstack.Options{DB: setup.db, Config: app.Config{RateLimits: lim}})
}

func retryAfter(t *testing.T, r resp) int {
	t.Helper()
	n, err := strconv.Atoi(r.header.Get("Retry-After"))
	if err != nil || n < 1 {
		t.Fatalf("Retry-After %q on %d %s", r.header.Get("Retry-After"), r.status, r.raw)
	}
	return n
}

func TestRateLimitsPerAccountAndPerCall(t *testing.T) {
	setup := newEnv(t) // no limits: the accounts are made here
	alice, bob := setup.register("alice"), setup.register("bob")
	e := limited(t, setup, ratelimit.Config{
		Account: ratelimit.Rule{Quota: 5, Window: time.Minute}, Address: ratelimit.Rule{Quota: 1000, Window: time.Minute},
		Login: ratelimit.Rule{Quota: 3, Window: 15 * time.Minute}, Register: ratelimit.Rule{Quota: 2, Window: time.Hour}, Upload: ratelimit.Rule{Quota: 30, Window: time.Hour},
	})

	for i := 0; i < 5; i++ {
		r := e.do("GET", "/social/rest/people/@me/@self", alice.token, nil)
		if r.status != 200 {
			t.Fatalf("call %d: %d %s", i, r.status, r.raw)
		}
		if got, want := r.header.Get("RateLimit"), `"account";r=`+strconv.Itoa(4-i)+`;t=`; !strings.HasPrefix(got, want) {
			t.Errorf("call %d: RateLimit %q, want %s...", i, got, want)
		}
		if got := r.header.Get("RateLimit-Policy"); got != `"account";q=5;w=60` {
			t.Errorf("RateLimit-Policy %q", got)
		}
	}
	r := e.do("GET", "/social/rest/people/@me/@self", alice.token, nil)
	e.wantError(r, http.StatusTooManyRequests)
	if n := retryAfter(t, r); n > 12 {
		t.Errorf("Retry-After %d s for one unit of 5 a minute", n)
	}
	if r := e.do("GET", "/social/rest/people/@me/@self", bob.token, nil); r.status != 200 {
		t.Errorf("bob pays for alice: %d %s", r.status, r.raw)
	}

	// A batch counts each call, at its cost: bob has 4 units left; the
	// post mentions three people (4 units) and does not fit after the
	// first call, the last call does.
	batch := `[{"id":"1","method":"people.get","params":{"userId":"@me"}},` +
		`{"id":"2","method":"activities.create","params":{"activity":{"title":"hi @alice @bob @carol"}}},` +
		`{"id":"3","method":"people.get","params":{"userId":"@me"}},` +
		`{"id":"4","method":"people.get","params":{"userId":"@me"}},` +
		`{"id":"5","method":"people.get","params":{"userId":"@me"}},` +
		`{"id":"6","method":"people.get","params":{"userId":"@me"}}]`
	rb := e.doBatch(bob, batch)
	codes := []float64{}
	for _, slot := range rb {
		code := 200.0
		if er, ok := slot["error"].(map[string]any); ok {
			code = er["code"].(float64)
		}
		codes = append(codes, code)
	}
	if diff := cmp.Diff([]float64{200, 429, 200, 200, 200, 429}, codes); diff != "" {
		t.Errorf("batch slots (-want +got):\n%s", diff)
	}
	if got := setup.feed(bob, "@me/@self"); len(got) != 0 {
		t.Errorf("the refused post was made: %v", got)
	}
}

func (e *env) doBatch(u user, batch string) []map[string]any {
	e.t.Helper()
	req, _ := http.NewRequest("POST", e.url+"/social/rpc", strings.NewReader(batch))
	req.Header.Set("Authorization", "Bearer "+u.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	var out []map[string]any
	if res.StatusCode != 200 || json.NewDecoder(res.Body).Decode(&out) != nil {
		e.t.Fatalf("batch: %d", res.StatusCode)
	}
	return out
}

// Failed logins are counted per username in Datastore: spread over two
// instances, they still stop at the quota, and the real password waits
// one refill (not a lockout) before it is let in.
func TestLoginsLimitedAcrossInstances(t *testing.T) {
	setup := newEnv(t)
	setup.register("carol")
	lim := ratelimit.Config{
		Account: ratelimit.Rule{Quota: 100, Window: time.Minute}, Address: ratelimit.Rule{Quota: 1000, Window: time.Minute},
		Login: ratelimit.Rule{Quota: 3, Window: 15 * time.Minute}, Register: ratelimit.Rule{Quota: 2, Window: time.Hour}, Upload: ratelimit.Rule{Quota: 30, Window: time.Hour},
	}
	one, two := limited(t, setup, lim), limited(t, setup, lim)
	wrong := map[string]string{"username": "Carol", "password": "not-the-password"}
	for i, e := range []*env{one, two, one} {
		if r := e.do("POST", "/auth/login", "", wrong); r.status != 401 {
			t.Fatalf("failed login %d: %d %s", i, r.status, r.raw)
		}
	}
	right := map[string]string{"username": "carol", "password": "password-carol"}
	r := two.do("POST", "/auth/login", "", right)
	two.wantError(r, http.StatusTooManyRequests)
	if n := retryAfter(t, r); n > 300 {
		t.Errorf("the real user waits %d s, more than one refill (300 s)", n)
	}
	if r.header.Get("RateLimit-Policy") != `"login";q=3;w=900` {
		t.Errorf("RateLimit-Policy %q", r.header.Get("RateLimit-Policy"))
	}
	// Another username is not affected.
	setup.register("dave")
	if r := one.do("POST", "/auth/login", "", map[string]string{"username": "dave", "password": "password-dave"}); r.status != 200 {
		t.Errorf("dave's login: %d %s", r.status, r.raw)
	}

	// Registrations per address, across instances: two an hour here.
	for i, e := range []*env{one, two} {
		if r := e.do("POST", "/auth/register", "", map[string]string{"username": "new" + strconv.Itoa(i), "password": "password1"}); r.status != 201 {
			t.Fatalf("registration %d: %d %s", i, r.status, r.raw)
		}
	}
	r = one.do("POST", "/auth/register", "", map[string]string{"username": "new9", "password": "password1"})
	one.wantError(r, http.StatusTooManyRequests)
	retryAfter(t, r)
	// A taken name is refused before the shared bucket is spent or anything
	// hashed: the full bucket still answers 409, not 429.
	one.wantError(one.do("POST", "/auth/register", "", map[string]string{"username": "CAROL", "password": "password1"}), http.StatusConflict)
}

// Requests without a valid token spend their address's quota; once it is
// spent they are 429s, while authenticated requests from the same address
// go on.
func TestUnauthenticatedLimitedPerAddress(t *testing.T) {
	setup := newEnv(t)
	erin := setup.register("erin")
	e := limited(t, setup, ratelimit.Config{
		Account: ratelimit.Rule{Quota: 100, Window: time.Minute}, Address: ratelimit.Rule{Quota: 3, Window: time.Minute},
		Login: ratelimit.Rule{Quota: 3, Window: 15 * time.Minute}, Register: ratelimit.Rule{Quota: 2, Window: time.Hour}, Upload: ratelimit.Rule{Quota: 30, Window: time.Hour},
	})
	bad := strings.Repeat("x", len(erin.token))
	for i, h := range []string{"X-Forwarded-For", api.UserIPHeader, "X-Appengine-Remote-Addr"} {
		// A header anyone can send names no new address off App Engine
		// (the address is a header's value: nothing dials it; and this
		// package's tests run confined to loopback, stacktest.Main).
		e.wantError(e.do("GET", "/social/rest/people/@me/@self", bad, nil, h, "203.0.113."+strconv.Itoa(i)), http.StatusUnauthorized)
	}
	r := e.do("GET", "/social/rest/people/@me/@self", bad, nil)
	e.wantError(r, http.StatusTooManyRequests)
	retryAfter(t, r)
	e.wantError(e.do("POST", "/auth/login", "", map[string]string{"username": "erin", "password": "password-erin"}), http.StatusTooManyRequests)
	if r := e.do("GET", "/social/rest/people/@me/@self", erin.token, nil); r.status != 200 {
		t.Errorf("authenticated request after the address's quota: %d %s", r.status, r.raw)
	}
}

func TestTaskRequestsNeedTheSendersProof(t *testing.T) {
	e := newEnv(t)
	for _, h := range [][]string{
		{"X-AppEngine-QueueName", "notifications"},
		{api.TaskSecretHeader, "guess"},
		{api.TaskSecretHeader, e.stack.TaskSecret + "x"},
		{},
	} {
		e.wantError(e.do("POST", "/_tasks/notify", "", `{}`, h...), http.StatusForbidden)
	}
	if r := e.do("POST", "/_tasks/notify", "", `{}`, api.TaskSecretHeader, e.stack.TaskSecret); r.status != 204 {
		t.Errorf("the sender's own request: %d %s", r.status, r.raw)
	}
	if r := e.do("POST", "/_tasks/trim", "", `{}`, api.TaskSecretHeader, e.stack.TaskSecret); r.status != 204 {
		t.Errorf("the trim: %d %s", r.status, r.raw)
	}
	e.wantError(e.do("GET", api.CronCollectPath, "", nil, "X-Appengine-Cron", "true"), http.StatusForbidden)
	if r := e.do("GET", api.CronCollectPath, "", nil, api.TaskSecretHeader, e.stack.TaskSecret); r.status != 204 {
		t.Errorf("the scheduled collection: %d %s", r.status, r.raw)
	}
	if r := e.do("GET", "/healthz", "", nil); r.header.Get("Strict-Transport-Security") != "" {
		t.Error("HSTS off App Engine, over plain HTTP")
	}

	// On App Engine: the header App Engine strips from outside traffic,
	// and a secret alone proves nothing there; HSTS on every answer; the
	// client address is the one App Engine's front end reports.
	limits, err := ratelimit.New(e.db, ratelimit.Config{
		Account: ratelimit.Rule{Quota: 100, Window: time.Minute}, Address: ratelimit.Rule{Quota: 1, Window: time.Minute},
		Login: ratelimit.Rule{Quota: 3, Window: 15 * time.Minute}, Register: ratelimit.Rule{Quota: 2, Window: time.Hour}, Upload: ratelimit.Rule{Quota: 30, Window: time.Hour},
	})
	if err != nil {
		t.Fatal(err)
	}
	h, err := app.Routes(e.svc, slog.New(slog.DiscardHandler), api.Guard{OnAppEngine: true, Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	gae := &env{Env: &stacktest.Env{T: t, URL: srv.URL, Check: checkContract}, t: t, url: srv.URL}
	gae.wantError(gae.do("POST", "/_tasks/notify", "", `{}`, api.TaskSecretHeader, e.stack.TaskSecret), http.StatusForbidden)
	r := gae.do("POST", "/_tasks/notify", "", `{}`, "X-AppEngine-QueueName", "notifications")
	if r.status != 204 {
		t.Errorf("App Engine task: %d %s", r.status, r.raw)
	}
	// The scheduled work: cron's header, and nothing else, there.
	gae.wantError(gae.do("GET", api.CronCollectPath, "", nil, "X-AppEngine-QueueName", "cleanup"), http.StatusForbidden)
	gae.wantError(gae.do("GET", api.CronCollectPath, "", nil, api.TaskSecretHeader, e.stack.TaskSecret), http.StatusForbidden)
	gae.wantError(gae.do("GET", api.CronCollectPath, "", nil, "X-Appengine-Cron", "false"), http.StatusForbidden)
	if r := gae.do("GET", api.CronCollectPath, "", nil, "X-Appengine-Cron", "true"); r.status != 204 {
		t.Errorf("App Engine cron: %d %s", r.status, r.raw)
	}
	if !strings.HasPrefix(r.header.Get("Strict-Transport-Security"), "max-age=") {
		t.Errorf("no HSTS on App Engine: %v", r.header)
	}
	bad := strings.Repeat("x", 43)
	for _, addr := range []string{"203.0.113.1", "203.0.113.2"} {
		gae.wantError(gae.do("GET", "/social/rest/people/@me/@self", bad, nil, api.UserIPHeader, addr), http.StatusUnauthorized)
	}
	gae.wantError(gae.do("GET", "/social/rest/people/@me/@self", bad, nil, api.UserIPHeader, "203.0.113.1"), http.StatusTooManyRequests)
	// Another header names no address there either: the address is the
	// front end's, a third one.
	gae.wantError(gae.do("GET", "/social/rest/people/@me/@self", bad, nil, api.UserIPHeader, "203.0.113.3", "X-Appengine-Remote-Addr", "203.0.113.1"), http.StatusUnauthorized)
}

// Follow, unfollow and follow again, five times: one notification a day.
func TestFollowNotifiesOnceADay(t *testing.T) {
	e := newEnv(t)
	fan, star := e.register("fan"), e.register("star")
	for i := 0; i < 5; i++ {
		e.follow(fan, star.id)
		if r := e.do("DELETE", "/social/rest/people/@me/@friends/"+star.id, fan.token, nil); r.status != 204 {
			t.Fatalf("unfollow: %d %s", r.status, r.raw)
		}
	}
	e.follow(fan, star.id)
	e.Settle()
	if got := e.notificationTypes(star); !cmp.Equal(got, []string{"follow"}) {
		t.Errorf("star's notifications: %v, want one follow", got)
	}
}

func (e *env) notificationTypes(u user) []string {
	e.t.Helper()
	r := e.do("GET", "/social/rest/notifications/@me", u.token, nil)
	if r.status != 200 {
		e.t.Fatalf("notifications: %d %s", r.status, r.raw)
	}
	out := []string{}
	for _, it := range r.body["list"].([]any) {
		n := it.(map[string]any)
		out = append(out, n["type"].(string))
	}
	return out
}

// A closed group's owner invites; the invitee is told and decides; an
// invitation takes none of the invitee's quota.
func TestInvitations(t *testing.T) {
	e := newEnv(t)
	owner, guest, other := e.register("owner"), e.register("guest"), e.register("other")
	closed := e.createGroup(owner, "Inner circle", "closed")
	members := "/social/rest/groups/@all/" + closed + "/members"

	e.wantError(e.do("POST", members, guest.token, map[string]string{"id": "@me"}), http.StatusForbidden)
	e.wantError(e.do("POST", members, other.token, map[string]string{"id": guest.id}), http.StatusForbidden)
	for i := 0; i < 2; i++ { // inviting twice is one invitation
		if r := e.do("POST", members, owner.token, map[string]string{"id": guest.id}); r.status != http.StatusAccepted {
			t.Fatalf("invite: %d %s", r.status, r.raw)
		}
	}
	if got := e.entry(e.do("GET", "/social/rest/groups/@all/"+closed, guest.token, nil)); got["membersCount"] != 1.0 {
		t.Errorf("the invitee sees the group as %v", got)
	}
	e.Eventually("the invitation's notification", func() bool { return len(e.notificationTypes(guest)) == 1 })
	r := e.do("GET", "/social/rest/notifications/@me", guest.token, nil)
	n := r.body["list"].([]any)[0].(map[string]any)
	if n["type"] != "group_invite" || n["groupId"] != closed || n["actor"].(map[string]any)["id"] != owner.id {
		t.Errorf("invitation notification: %v", n)
	}
	if got := e.notificationTypes(owner); len(got) != 0 {
		t.Errorf("the owner was notified of their own invitation: %v", got)
	}

	// Declining ends the invitation; joining then is refused again.
	if r := e.do("DELETE", members+"/@me", guest.token, nil); r.status != 204 {
		t.Fatalf("decline: %d %s", r.status, r.raw)
	}
	e.wantError(e.do("POST", members, guest.token, map[string]string{"id": "@me"}), http.StatusForbidden)
	e.wantError(e.do("GET", "/social/rest/groups/@all/"+closed, guest.token, nil), http.StatusForbidden)

	// Invited again, the guest accepts: the owner hears of the guest's join.
	e.do("POST", members, owner.token, map[string]string{"id": guest.id})
	if r := e.do("POST", members, guest.token, map[string]string{"id": "@me"}); r.status != 201 || e.entry(r)["membersCount"] != 2.0 {
		t.Fatalf("accept: %d %s", r.status, r.raw)
	}
	e.Eventually("the owner's join notification", func() bool { return len(e.notificationTypes(owner)) == 1 })
	r = e.do("GET", "/social/rest/notifications/@me", owner.token, nil)
	if n := r.body["list"].([]any)[0].(map[string]any); n["type"] != "group_join" || n["actor"].(map[string]any)["id"] != guest.id {
		t.Errorf("owner's notification: %v", n)
	}
}

// Invitations do not fill a quota: a user with the most groups can still
// be invited, and accepting is what is refused.
func TestInvitationsTakeNoQuota(t *testing.T) {
	e := newEnv(t)
	owner, busy := e.register("owner"), e.register("busy")
	g := e.createGroup(owner, "late", "closed")
	for i := 0; i < 100; i++ {
		e.createGroup(busy, "mine "+strconv.Itoa(i), "open")
	}
	if r := e.do("POST", "/social/rest/groups/@all/"+g+"/members", owner.token, map[string]string{"id": busy.id}); r.status != http.StatusAccepted {
		t.Fatalf("invite a full user: %d %s", r.status, r.raw)
	}
	e.wantError(e.do("POST", "/social/rest/groups/@all/"+g+"/members", busy.token, map[string]string{"id": "@me"}), http.StatusConflict)
}

// A cursor in our envelope around bytes Datastore never made is the
// client's error, a 400, on every paged list.
func TestForgedCursorsAre400(t *testing.T) {
	e := newEnv(t)
	u := e.register("pager")
	for i := 0; i < 3; i++ {
		e.post(u, "p"+strconv.Itoa(i))
	}
	g := e.createGroup(u, "g", "open")
	e.createGroup(u, "h", "open")
	if r := e.do("POST", "/social/rest/groups/@all/"+g+"/members", e.register("joiner").token, map[string]string{"id": "@me"}); r.status != 201 {
		t.Fatalf("join: %d %s", r.status, r.raw)
	}
	for _, path := range []string{
		"/social/rest/activities/@me/@self", "/social/rest/activities/@me/@all", "/social/rest/activities/@me/@friends",
		"/social/rest/people/@me/" + g, "/social/rest/groups/@me",
	} {
		e.Eventually("two pages of "+path, func() bool {
			return e.do("GET", path+"?count=1", u.token, nil).body["nextCursor"] != nil
		})
		next := e.do("GET", path+"?count=1", u.token, nil).body["nextCursor"].(string)
		raw, err := base64.RawURLEncoding.DecodeString(next)
		if err != nil {
			t.Fatal(err)
		}
		tag, _, _ := strings.Cut(string(raw), "\x00")
		for _, junk := range []string{"AAAA", base64.URLEncoding.EncodeToString([]byte("\x00\xff garbage \x01")), strings.Repeat("Q", 200)} {
			forged := base64.RawURLEncoding.EncodeToString([]byte(tag + "\x00" + junk))
			e.wantError(e.do("GET", path+"?count=1&cursor="+forged, u.token, nil), http.StatusBadRequest)
		}
	}
	if n := len(e.logs.Lines("request failed")); n != 0 {
		t.Errorf("%d requests failed (5xx) on forged cursors", n)
	}
}

// Control characters and bidirectional overrides are refused wherever
// people write text for others.
func TestHostileTextRefused(t *testing.T) {
	e := newEnv(t)
	u := e.register("writer")
	act := e.post(u, "target")
	for _, bad := range []string{"nul\x00", "esc\x1b[2J", "rlo \u202Egnp.exe", "iso\u2066x\u2069"} {
		for _, c := range []struct {
			method, path string
			body         map[string]string
		}{
			{"POST", "/social/rest/activities/@me/@self", map[string]string{"title": bad}},
			{"POST", "/social/rest/activities/@me/@self", map[string]string{"title": "ok", "body": bad}},
			{"POST", "/social/rest/comments/" + act, map[string]string{"text": bad}},
			{"POST", "/social/rest/groups/@me", map[string]string{"title": bad}},
			{"POST", "/social/rest/groups/@me", map[string]string{"title": "ok", "description": bad}},
			{"POST", "/auth/register", map[string]string{"username": "hostile", "password": "password1", "displayName": bad}},
		} {
			e.wantError(e.do(c.method, c.path, u.token, c.body), http.StatusBadRequest)
		}
	}
	e.wantError(e.do("POST", "/social/rest/activities/@me/@self", u.token, map[string]string{"title": "two\nlines"}), http.StatusBadRequest)
	if r := e.do("POST", "/social/rest/activities/@me/@self", u.token, map[string]string{"title": "fine", "body": "two\n\tlines"}); r.status != 201 {
		t.Errorf("a body with newline and tab: %d %s", r.status, r.raw)
	}
	if got := e.feed(u, "@me/@self"); len(got) != 2 {
		t.Errorf("refused posts were made: %d activities", len(got))
	}
	// @bobé is not bob.
	bob := e.register("bob")
	e.post(u, "hi @bobé")
	e.Settle()
	if got := e.notificationTypes(bob); len(got) != 0 {
		t.Errorf("@bobé notified bob: %v", got)
	}
}

// logout?all=true ends every session of the caller and no one else's.
func TestLogoutEverywhere(t *testing.T) {
	e := newEnv(t)
	u, other := e.register("roamer"), e.register("stayer")
	var tokens []string
	for i := 0; i < 3; i++ {
		r := e.do("POST", "/auth/login", "", map[string]string{"username": "roamer", "password": "password-roamer"})
		tokens = append(tokens, r.body["token"].(string))
	}
	e.wantError(e.do("POST", "/auth/logout?all=maybe", u.token, nil), http.StatusBadRequest)
	if r := e.do("POST", "/auth/logout?all=true", tokens[0], nil); r.status != 204 {
		t.Fatalf("logout all: %d %s", r.status, r.raw)
	}
	for _, tok := range append(tokens, u.token) {
		e.wantError(e.do("GET", "/social/rest/people/@me/@self", tok, nil), http.StatusUnauthorized)
	}
	if r := e.do("GET", "/social/rest/people/@me/@self", other.token, nil); r.status != 200 {
		t.Errorf("another user's session ended: %d", r.status)
	}
}
