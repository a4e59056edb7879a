package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"socialstream/internal/api"
	"socialstream/internal/app"
	"socialstream/internal/ids"
	"socialstream/internal/stacktest"
	"socialstream/internal/trends"
)

// hiddenState is one state the policy hides from the reader, with what it
// hides: an activity (with its author, and a picture on it), or a person
// alone.
type hiddenState struct {
	name                      string
	activity, person, picture string
	// username is the person's, and list one of their lists (private to
	// them: another's is not there, whatever their standing).
	username, list string
	// personHidden: the person is hidden too (suspended, deleted), not
	// their activity alone.
	personHidden bool
}

// the secret every hidden activity's text holds, which no answer to the
// reader may carry.
const secret = "SECRET"

// hiddenWorld makes, for reader, one of each hidden state.
func hiddenWorld(t *testing.T, e *env) (reader user, states []hiddenState) {
	t.Helper()
	ada := e.register("ada")
	e.makeAdmin(ada)
	reader = e.register("reader")
	// Two fans like every post of the states before it is hidden, so
	// that each one that may trend would, were the trends to leak it.
	fans := []user{e.register("fan1"), e.register("fan2")}
	liked := func(id string) {
		t.Helper()
		for _, f := range fans {
			if r := e.do("POST", "/social/rest/likes/"+id, f.token, nil); r.status >= 300 {
				t.Fatalf("like: %d %s", r.status, r.raw)
			}
		}
	}
	// Everyone lets anyone's search find their public posts: a search is
	// then one more way the hidden could leak.
	indexable := map[string]bool{}
	postAs := func(u user, title, vis string) (string, string) {
		t.Helper()
		if !indexable[u.id] {
			indexable[u.id] = true
			if r := e.do("PUT", "/social/rest/people/@me/@self", u.token, map[string]any{"indexable": true}); r.status != http.StatusOK {
				t.Fatalf("indexable: %d %s", r.status, r.raw)
			}
		}
		pic := e.uploaded(u, secret+" alt")["id"].(string)
		body := map[string]any{"title": title, "mediaItems": []string{pic}}
		if vis != "" {
			body["visibility"] = vis
		}
		r := e.do("POST", "/social/rest/activities/@me/@self", u.token, body)
		if r.status != http.StatusCreated {
			t.Fatalf("post: %d %s", r.status, r.raw)
		}
		return e.entry(r)["id"].(string), pic
	}
	// A person hidden as a whole has an avatar too, which their picture
	// links must not serve.
	withAvatar := func(u user) {
		t.Helper()
		pic := e.uploaded(u, "a face")["id"].(string)
		if r := e.do("PUT", "/social/rest/people/@me/@self", u.token, map[string]any{"avatar": pic}); r.status != http.StatusOK {
			t.Fatalf("avatar: %d %s", r.status, r.raw)
		}
	}
	lists := map[string]string{} // a list of each person's, made before they are hidden
	listOf := func(u user) string {
		t.Helper()
		if lists[u.id] == "" {
			r := e.do("POST", "/api/v1/lists", u.token, map[string]any{"title": secret + " list"}, stacktest.JSON...)
			if r.status != http.StatusOK {
				t.Fatalf("list: %d %s", r.status, r.raw)
			}
			lists[u.id] = r.body["id"].(string)
		}
		return lists[u.id]
	}
	state := func(name string, u user, title, vis string) *hiddenState {
		a, p := postAs(u, title, vis)
		if vis == "" {
			liked(a)
		}
		states = append(states, hiddenState{name: name, activity: a, person: u.id, picture: p, username: u.name, list: listOf(u)})
		return &states[len(states)-1]
	}
	// Someone the reader sees reposts a post before it is hidden: the
	// repost, theirs, is then hidden as what it shares is. Each repost is
	// a state of its own, added once the hiding is done.
	sharer := e.register("sharer")
	// The searches' control: shown, and found by the hidden posts' word.
	if r := e.do("PUT", "/social/rest/people/@me/@self", sharer.token, map[string]any{"indexable": true}); r.status != http.StatusOK {
		t.Fatalf("indexable: %d %s", r.status, r.raw)
	}
	liked(e.post(sharer, "a visible "+strings.ToLower(secret)+" that searches find"))
	var reposts []hiddenState
	repost := func(s *hiddenState) {
		t.Helper()
		r := e.do("POST", "/social/rest/reposts/"+s.activity, sharer.token, nil)
		if r.status != http.StatusCreated {
			t.Fatalf("repost: %d %s", r.status, r.raw)
		}
		reposts = append(reposts, hiddenState{name: "a repost of " + s.name, activity: e.entry(r)["id"].(string), person: sharer.id, picture: s.picture,
			username: sharer.name, list: listOf(sharer)})
	}

	removed := e.register("removed")
	s := state("removed", removed, secret+" removed", "")
	repost(s)
	e.act(ada, map[string]any{"action": "remove", "accountId": removed.id, "activityIds": []string{s.activity}, "reason": "spam"})

	suspended := e.register("suspended")
	withAvatar(suspended)
	s = state("suspended author", suspended, secret+" suspended", "")
	s.personHidden = true
	repost(s)
	// What they did before: a follow of the reader, which told them.
	if r := e.do("POST", "/social/rest/people/@me/@friends", suspended.token, map[string]string{"id": reader.id}); r.status != http.StatusCreated {
		t.Fatalf("follow: %d %s", r.status, r.raw)
	}
	e.act(ada, map[string]any{"action": "suspend", "accountId": suspended.id, "reason": "spam"})

	limited := e.register("limited")
	repost(state("limited author", limited, secret+" limited", ""))
	e.act(ada, map[string]any{"action": "limit", "accountId": limited.id, "reason": "spam"})

	blocker := e.register("blocker")
	repost(state("blocked by its author", blocker, secret+" blocker", ""))
	if r := e.do("POST", "/social/rest/people/@me/@blocked", blocker.token, map[string]string{"id": reader.id}); r.status != http.StatusCreated {
		t.Fatalf("block: %d %s", r.status, r.raw)
	}
	blocked := e.register("blocked")
	repost(state("its author blocked", blocked, secret+" blocked", ""))
	if r := e.do("POST", "/social/rest/people/@me/@blocked", reader.token, map[string]string{"id": blocked.id}); r.status != http.StatusCreated {
		t.Fatalf("block: %d %s", r.status, r.raw)
	}

	locked := e.register("locked")
	if r := e.do("PUT", "/social/rest/people/@me/@self", locked.token, map[string]any{"locked": true}); r.status != http.StatusOK {
		t.Fatalf("lock: %d %s", r.status, r.raw)
	}
	state("a locked account's followers-only post", locked, secret+" locked", "followers")

	dropper := e.register("dropper")
	s = state("a mention an edit dropped", dropper, "hello @reader", "mentioned")
	if r := e.do("PUT", "/social/rest/activities/@me/@self/@app/"+s.activity, dropper.token, map[string]string{"title": secret + " dropped"}); r.status != http.StatusOK {
		t.Fatalf("edit: %d %s", r.status, r.raw)
	}

	// Replies to the reader's post that the reader may not see: one for
	// followers (the reader follows no one), one for those it names
	// (not the reader). They must not tell the reader either.
	r := e.do("POST", "/social/rest/activities/@me/@self", reader.token, map[string]any{"title": "the reader's own"})
	if r.status != http.StatusCreated {
		t.Fatalf("post: %d %s", r.status, r.raw)
	}
	mine := e.entry(r)["id"].(string)
	replier := e.register("replier")
	for _, vis := range []string{"followers", "mentioned"} {
		pic := e.uploaded(replier, secret+" alt")["id"].(string)
		r := e.do("POST", "/social/rest/activities/@me/@self", replier.token, map[string]any{
			"title": secret + " a reply for " + vis, "inReplyTo": mine, "visibility": vis, "mediaItems": []string{pic}})
		if r.status != http.StatusCreated {
			t.Fatalf("reply: %d %s", r.status, r.raw)
		}
		states = append(states, hiddenState{name: "a reply to the reader for " + vis, activity: e.entry(r)["id"].(string), person: replier.id, picture: pic,
			username: replier.name, list: listOf(replier)})
	}

	gone := e.register("gone")
	withAvatar(gone)
	state("a deleted account", gone, secret+" gone", "").personHidden = true
	if r := e.do("DELETE", "/auth/account", gone.token, map[string]string{"password": "password-gone"}); r.status >= 300 {
		t.Fatalf("delete: %d %s", r.status, r.raw)
	}
	return reader, append(states, reposts...)
}

// sameRefusal reports whether got, an answer about s, refuses as want,
// the same answer about none (things that never existed), does: the
// same body word for word, once s's ids are read as none's. Answers
// that are no refusal are not compared.
func sameRefusal(got, want resp, s, none hiddenState) bool {
	if got.status < 400 || got.status != want.status {
		return got.status == want.status
	}
	pairs := []string{s.activity, none.activity, s.person, none.person, s.picture, none.picture, s.list, none.list}
	for _, p := range [][2]string{{s.activity, none.activity}, {s.picture, none.picture}} {
		a, okA := ids.Parse(p[0])
		b, okB := ids.Parse(p[1])
		if okA && okB {
			pairs = append(pairs, strconv.FormatInt(a, 10), strconv.FormatInt(b, 10))
		}
	}
	return strings.NewReplacer(pairs...).Replace(string(got.raw)) == string(want.raw)
}

// absent is a state of things that never existed, in the same shapes.
func absent() hiddenState {
	g := ids.New()
	return hiddenState{name: "nothing", activity: ids.Format(g.Next()), person: g.NextString(), picture: ids.Format(g.Next()), personHidden: true,
		username: "nobody" + strconv.FormatInt(g.Next()%1e6, 10), list: g.NextString()}
}

var pathParam = regexp.MustCompile(`\{([A-Za-z]+)\}`)

// request is the request of one operation of the OpenAPI document naming
// the things of s, or "" for an operation that names none of them.
func (s hiddenState) request(method, path string) (string, any) {
	names, namesPerson := false, false
	filled := pathParam.ReplaceAllStringFunc(path, func(m string) string {
		switch m[1 : len(m)-1] {
		case "userId":
			if strings.Contains(path, "{target}") {
				return "@me" // the reader's own list, naming the person as target
			}
			namesPerson = true
			return s.person
		case "target":
			namesPerson = true
			return s.person
		case "activityId", "ids":
			names = true
			return s.activity
		case "mediaItemId", "id":
			names = true
			return s.picture
		case "selector", "groupId":
			if strings.HasPrefix(path, "/social/rest/people/") && strings.HasSuffix(path, "{target}") {
				return "@friends"
			}
			return "@self"
		case "appId":
			return "@app"
		case "albumId":
			return "@all"
		case "variant":
			return "image"
		case "which":
			return "avatar"
		}
		return "0123456789abcdef" // a filter, report, comment or tag: none the reader has
	})
	if path == "/social/rest/people/{userId}/{selector}" && (method == http.MethodPost || method == http.MethodPut) {
		filled = strings.Replace(filled, "/"+s.person+"/@self", "/@me/@friends", 1)
	}
	var body any
	if method == http.MethodPost || method == http.MethodPut {
		body = map[string]any{"id": s.person, "accountId": s.person, "activityIds": []string{s.activity}, "category": "spam",
			"title": "t", "text": "t", "mediaItem": map[string]any{"id": s.picture, "description": "d"}}
	}
	if body != nil && !strings.Contains(path, "{") {
		namesPerson = true // a write naming the person in its body only
	}
	if !names && !(namesPerson && s.personHidden) {
		return "", nil // names nothing the state hides
	}
	return filled, body
}

// op is a route: a method and a path.
type op struct{ method, path string }

// inOrder sorts ops by rank, then by method and path: a sweep's reads
// before the writes that may end the states it tries.
func inOrder(ops []op, rank func(op) int) {
	slices.SortFunc(ops, func(a, b op) int {
		if d := rank(a) - rank(b); d != 0 {
			return d
		}
		return strings.Compare(a.method+a.path, b.method+b.path)
	})
}

// Whatever the policy hides from someone answers them, on every route of
// the OpenAPI document that names it, as what never existed answers: the
// same status, and nothing of it in the body. Each hidden state is tried
// on every documented operation that names an activity, a person or a
// picture, against the same operation naming things that never existed;
// a route added later is tried without being named here.
func TestHiddenAnswersAsAbsent(t *testing.T) {
	e := newEnv(t)
	reader, states := hiddenWorld(t, e)
	e.Settle()
	doc, _, err := loadContract()
	if err != nil {
		t.Fatal(err)
	}
	var ops []op
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			if strings.HasPrefix(path, "/auth/") || path == "/social/rpc" {
				continue // the caller's own account; JSON-RPC is tried below
			}
			ops = append(ops, op{method, path})
		}
	}
	// Reads first, then writes; the reader's own unblock, unfollow and
	// unmute last, as they end the states they are tried on.
	rank := func(o op) int {
		switch {
		case o.method == http.MethodGet:
			return 0
		case o.method == http.MethodDelete && strings.HasPrefix(o.path, "/social/rest/people/"):
			return 3
		case o.method == http.MethodDelete:
			return 2
		}
		return 1
	}
	inOrder(ops, rank)
	tried := 0
	for _, o := range ops {
		for _, s := range states {
			path, body := s.request(o.method, o.path)
			if path == "" {
				continue
			}
			none := absent()
			none.personHidden = s.personHidden
			nonePath, noneBody := none.request(o.method, o.path)
			want := e.do(o.method, nonePath, reader.token, noneBody)
			got := e.do(o.method, path, reader.token, body)
			tried++
			if !sameRefusal(got, want, s, none) {
				t.Errorf("%s %s, %s: %d %s; what never existed: %d %s", o.method, o.path, s.name, got.status, got.raw, want.status, want.raw)
			}
			if strings.Contains(string(got.raw), secret) {
				t.Errorf("%s %s, %s: the answer carries the hidden text: %s", o.method, o.path, s.name, got.raw)
			}
		}
	}
	if tried < 100 {
		t.Errorf("only %d requests tried", tried)
	}
	// A search of the words every hidden post holds finds none of them,
	// and finds the post that shows.
	for _, r := range []resp{e.do("GET", "/social/rest/activities/@search?q="+secret, reader.token, nil),
		e.do("POST", "/social/rpc", reader.token, `{"method":"activities.search","id":"s","params":{"q":"`+secret+`"}}`),
		e.do("GET", "/api/v2/search?type=statuses&q="+secret, reader.token, nil)} {
		if r.status != http.StatusOK || strings.Contains(string(r.raw), secret) || !strings.Contains(string(r.raw), "a visible secret") {
			t.Errorf("a search of %q: %d %s", secret, r.status, r.raw)
		}
	}
	// What trends shows none of them, and shows the post that shows.
	trendAll(t, e)
	for _, r := range []resp{e.do("GET", "/social/rest/trends/statuses", reader.token, nil),
		e.do("POST", "/social/rpc", reader.token, `{"method":"trends.get","id":"t","params":{"kind":"statuses"}}`)} {
		if r.status != http.StatusOK || strings.Contains(string(r.raw), secret) || !strings.Contains(string(r.raw), "a visible secret") {
			t.Errorf("what trends: %d %s", r.status, r.raw)
		}
	}
}

// The same over JSON-RPC: every method, its params naming the hidden
// things as Shindig's osapi names them, against the same naming things
// that never existed.
func TestHiddenAnswersAsAbsentOverRPC(t *testing.T) {
	e := newEnv(t)
	reader, states := hiddenWorld(t, e)
	e.Settle()
	r := e.do("POST", "/social/rpc", reader.token, `{"method":"system.listMethods","id":"m"}`)
	var methods []string
	for _, m := range r.body["result"].([]any) {
		methods = append(methods, m.(string))
	}
	// Reads first; the reader's own deletes last.
	rank := func(m string) int {
		switch {
		case strings.HasSuffix(m, ".get"):
			return 0
		case m == "people.delete":
			return 3
		case strings.HasSuffix(m, ".delete"):
			return 2
		}
		return 1
	}
	slices.SortFunc(methods, func(a, b string) int {
		if d := rank(a) - rank(b); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	params := func(method string, s hiddenState) string {
		if !s.personHidden {
			// The activity and its picture alone, by their author.
			return fmt.Sprintf(`{"userId":%q,"groupId":"@self","activityId":%q,"mediaItemId":%q,"albumId":"@all","activity":{"title":"t"},"comment":{"text":"t"},"text":"t"}`,
				s.person, s.activity, s.picture)
		}
		return fmt.Sprintf(`{"userId":%q,"groupId":"@friends","id":%q,"activityId":%q,"mediaItemId":%q,"albumId":"@all","accountId":%q,"category":"spam","text":"t"}`,
			s.person, s.person, s.activity, s.picture, s.person)
	}
	tried := 0
	for _, m := range methods {
		if m == "system.listMethods" || strings.HasSuffix(m, ".supportedFields") {
			continue
		}
		for _, s := range states {
			if (strings.HasPrefix(m, "people.") || strings.HasPrefix(m, "featuredTags.")) && !s.personHidden {
				continue // only their activity is hidden, not the person
			}
			none := absent()
			none.personHidden = s.personHidden
			call := func(s hiddenState) resp {
				return e.do("POST", "/social/rpc", reader.token, fmt.Sprintf(`{"method":%q,"id":"1","params":%s}`, m, params(m, s)))
			}
			want, got := call(none), call(s)
			tried++
			if rpcStatus(got) != rpcStatus(want) || rpcStatus(got) >= 400 && !sameRefusal(resp{status: 400, raw: got.raw}, resp{status: 400, raw: want.raw}, s, none) {
				t.Errorf("%s, %s: %d %s; what never existed: %d %s", m, s.name, rpcStatus(got), got.raw, rpcStatus(want), want.raw)
			}
			if strings.Contains(string(got.raw), secret) {
				t.Errorf("%s, %s: the answer carries the hidden text: %s", m, s.name, got.raw)
			}
		}
	}
	if tried < 100 {
		t.Errorf("only %d calls tried", tried)
	}
}

// mastoRequest is the Mastodon face's request of one route naming the
// things of s (as that face names them), or "" for one that names none.
func (s hiddenState) mastoRequest(path string) string {
	names := false
	status, _ := ids.Parse(s.activity)
	picture, _ := ids.Parse(s.picture)
	filled := regexp.MustCompile(`:(\w+)`).ReplaceAllStringFunc(path, func(m string) string {
		switch {
		case m == ":id" && strings.HasPrefix(path, "/api/v1/statuses/"):
			names = true
			return strconv.FormatInt(status, 10)
		case m == ":id" && strings.HasPrefix(path, "/api/v1/media/"):
			names = true
			return strconv.FormatInt(picture, 10)
		case m == ":id" && (strings.HasPrefix(path, "/api/v1/lists/") || strings.HasPrefix(path, "/api/v1/timelines/list/")):
			names = true // another's list, whoever they are
			return s.list
		case m == ":id" && (strings.HasPrefix(path, "/api/v1/accounts/") || strings.HasPrefix(path, "/api/v1/follow_requests/")):
			names = names || s.personHidden
			return s.person
		}
		return "123456789"
	})
	if !names {
		return ""
	}
	return filled
}

// The same on the Mastodon face: every route of it that names a status
// or a person is tried on each hidden state, against the same naming
// what never existed; a route added later is tried without being named
// here. Its routes that name nothing (timelines, notifications, search)
// must not carry the hidden text either.
func TestHiddenAnswersAsAbsentOnMastodon(t *testing.T) {
	e := newEnv(t)
	reader, states := hiddenWorld(t, e)
	e.Settle()
	trendAll(t, e)
	if r := e.do("GET", "/api/v1/trends/statuses", reader.token, nil); !strings.Contains(string(r.raw), "a visible "+strings.ToLower(secret)) {
		t.Errorf("the control does not trend for the reader: %d %s", r.status, r.raw)
	}
	router, err := app.Router(e.svc, slog.New(slog.DiscardHandler), api.Guard{})
	if err != nil {
		t.Fatal(err)
	}
	var ops []op
	for _, rt := range router.Routes() {
		if strings.HasPrefix(rt.Path, "/api/") && rt.Method != http.MethodHead && rt.Path != "/api/v1/accounts" {
			ops = append(ops, op{rt.Method, rt.Path})
		}
	}
	// Reads first, then writes; deletes last.
	rank := func(o op) int {
		switch o.method {
		case http.MethodGet:
			return 0
		case http.MethodDelete:
			return 2
		}
		return 1
	}
	inOrder(ops, rank)
	tried := 0
	for _, o := range ops {
		if !strings.Contains(o.path, ":") {
			if o.method == http.MethodGet {
				for _, q := range []string{"", "?q=reader&id[]=" + states[0].person, "?q=" + secret} {
					if got := e.do(o.method, o.path+q, reader.token, nil); strings.Contains(string(got.raw), secret) {
						t.Errorf("%s %s: the answer carries hidden text: %s", o.method, o.path, got.raw)
					}
				}
			}
			continue
		}
		for _, s := range states {
			path := s.mastoRequest(o.path)
			if path == "" {
				continue
			}
			none := absent()
			none.personHidden = s.personHidden
			body := map[string]any{"status": "t"}
			want := e.do(o.method, none.mastoRequest(o.path), reader.token, body, stacktest.JSON...)
			got := e.do(o.method, path, reader.token, body, stacktest.JSON...)
			tried++
			if !sameRefusal(got, want, s, none) {
				t.Errorf("%s %s, %s: %d %s; what never existed: %d %s", o.method, o.path, s.name, got.status, got.raw, want.status, want.raw)
			}
			if strings.Contains(string(got.raw), secret) {
				t.Errorf("%s %s, %s: the answer carries the hidden text: %s", o.method, o.path, s.name, got.raw)
			}
		}
	}
	// A hidden person is found by no name, and put on none of the
	// reader's lists (nor invited to a group of theirs), as no one is.
	mine := e.do("POST", "/api/v1/lists", reader.token, map[string]any{"title": "mine"}, stacktest.JSON...).body["id"].(string)
	for _, s := range states {
		if !s.personHidden {
			continue
		}
		none := absent()
		for _, try := range []func(h hiddenState) resp{
			func(h hiddenState) resp {
				return e.do("GET", "/api/v1/accounts/lookup?acct="+h.username, reader.token, nil)
			},
			func(h hiddenState) resp {
				return e.do("POST", "/api/v1/lists/"+mine+"/accounts", reader.token, map[string]any{"account_ids": []string{h.person}}, stacktest.JSON...)
			},
			func(h hiddenState) resp {
				return e.do("POST", "/social/rest/groups/@all/"+mine+"/members", reader.token, map[string]string{"id": h.person})
			},
		} {
			got, want := try(s), try(none)
			if !sameRefusal(got, want, s, none) || got.status < 400 {
				t.Errorf("%s: %d %s; what never existed: %d %s", s.name, got.status, got.raw, want.status, want.raw)
			}
		}
	}
	// A reply to what is hidden is refused as one to what never existed.
	for _, s := range states {
		status, _ := ids.Parse(s.activity)
		n, _ := ids.Parse(absent().activity)
		want := e.do("POST", "/api/v1/statuses", reader.token, map[string]any{"status": "re", "in_reply_to_id": strconv.FormatInt(n, 10)}, stacktest.JSON...)
		got := e.do("POST", "/api/v1/statuses", reader.token, map[string]any{"status": "re", "in_reply_to_id": strconv.FormatInt(status, 10)}, stacktest.JSON...)
		if want.status != http.StatusNotFound || got.status != want.status {
			t.Errorf("a reply to %s: %d %s; to what never existed: %d", s.name, got.status, got.raw, want.status)
		}
	}
	if tried < 100 {
		t.Errorf("only %d requests tried", tried)
	}
}

// trendAll ranks what trends, approves every post that waits for review,
// and ranks again: each the refresh keeps trends for everyone who may see
// it. The control, a post of the sharer's liked as the states' were,
// trends for the reader.
func trendAll(t *testing.T, e *env) {
	t.Helper()
	ctx := context.Background()
	if err := e.svc.Activities.RefreshTrends(ctx); err != nil {
		t.Fatal(err)
	}
	_, waiting, err := e.svc.Trends.Trending(ctx, trends.Statuses)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range waiting {
		if _, err := e.svc.Trends.Review(ctx, trends.Statuses, it.ID, "ada", true); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.svc.Activities.RefreshTrends(ctx); err != nil {
		t.Fatal(err)
	}
	shown, _, err := e.svc.Trends.Trending(ctx, trends.Statuses)
	if err != nil || len(shown) < 2 {
		t.Fatalf("the posts that trend: %v, %v; want the control and those of the states a refresh keeps", shown, err)
	}
}

// What is hidden from the reader never tells them: no notification of it
// in any list (REST, JSON-RPC, Mastodon's v1 and grouped v2), and every
// unread count counts exactly what its list shows unread (a suspended
// person's earlier follow, a reply the reader may not see, neither).
func TestHiddenNeverTold(t *testing.T) {
	e := newEnv(t)
	reader, states := hiddenWorld(t, e)
	e.Settle()
	hidden := map[string]string{}
	for _, s := range states {
		hidden[s.activity] = s.name
		if n, ok := ids.Parse(s.activity); ok {
			hidden[strconv.FormatInt(n, 10)] = s.name
		}
		if s.personHidden {
			hidden[s.person] = s.name
		}
	}
	r := e.do("GET", "/social/rest/notifications/@me?count=100", reader.token, nil)
	unread := 0
	for _, n := range r.body["list"].([]any) {
		n := n.(map[string]any)
		if name, ok := hidden[fmt.Sprint(n["activityId"])]; ok {
			t.Errorf("REST: a notification of %s: %v", name, n)
		}
		if actor, _ := n["actor"].(map[string]any); actor != nil && hidden[fmt.Sprint(actor["id"])] != "" {
			t.Errorf("REST: a notification by %s: %v", hidden[fmt.Sprint(actor["id"])], n)
		}
		if n["read"] == false {
			unread++
		}
	}
	if got := r.body["unreadCount"]; got != float64(unread) {
		t.Errorf("REST: unreadCount %v, the list shows %d unread: %s", got, unread, r.raw)
	}
	rpc := e.do("POST", "/social/rpc", reader.token, `{"method":"notifications.get","id":"n","params":{"count":100}}`)
	if res, _ := rpc.body["result"].(map[string]any); res == nil || res["unreadCount"] != float64(unread) {
		t.Errorf("JSON-RPC: %s, want an unreadCount of %d", rpc.raw, unread)
	}
	m := e.do("GET", "/api/v1/notifications?limit=80", reader.token, nil)
	var list []map[string]any
	if err := json.Unmarshal(m.raw, &list); err != nil {
		t.Fatalf("Mastodon notifications: %d %s", m.status, m.raw)
	}
	for _, n := range list {
		st, _ := n["status"].(map[string]any)
		acc, _ := n["account"].(map[string]any)
		if st != nil && hidden[fmt.Sprint(st["id"])] != "" || acc != nil && hidden[fmt.Sprint(acc["id"])] != "" {
			t.Errorf("Mastodon: a notification of what is hidden: %v", n)
		}
	}
	if c := e.do("GET", "/api/v1/notifications/unread_count", reader.token, nil); c.body["count"] != float64(len(list)) {
		t.Errorf("Mastodon: unread_count %s, the list shows %d, none read", c.raw, len(list))
	}
	if g := e.do("GET", "/api/v2/notifications", reader.token, nil); strings.Contains(string(g.raw), secret) {
		t.Errorf("Mastodon v2: the answer carries the hidden text: %s", g.raw)
	}
	if strings.Contains(string(r.raw)+string(rpc.raw)+string(m.raw), secret) {
		t.Error("a list of notifications carries the hidden text")
	}
}
