package api_test

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/activitypub"
	"socialstream/internal/api"
	"socialstream/internal/app"
	"socialstream/internal/federation"
	"socialstream/internal/federation/peer"
	"socialstream/internal/ids"
	"socialstream/internal/localstack"
	"socialstream/internal/queue"
	"socialstream/internal/tasksemu"
	"socialstream/internal/testenv"
)

// fedDomain is the domain the tests' deployments federate as: their
// addresses are https://social.example/..., whatever address the test
// reaches them at.
const fedDomain = "social.example"

func newFederatedEnv(t *testing.T) *env {
	t.Helper()
	return newEnvOn(t, testenv.DB(t), app.Config{BackfillMax: 1000, Federation: federation.Config{Domain: fedDomain}})
}

// apGet gets path as another server would (Accept: ActivityPub's JSON),
// or as a browser when accept says so, without following a redirect.
func (e *env) apGet(path, accept string) (int, http.Header, map[string]any) {
	e.t.Helper()
	req, err := http.NewRequest("GET", e.url+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Accept", accept)
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var body map[string]any
	if len(raw) > 0 && raw[0] == '{' {
		if err := json.Unmarshal(raw, &body); err != nil {
			e.t.Fatalf("GET %s: %d %q", path, res.StatusCode, raw)
		}
	}
	return res.StatusCode, res.Header, body
}

const (
	asJSON    = `application/ld+json; profile="https://www.w3.org/ns/activitystreams"`
	asBrowser = "text/html,application/xhtml+xml,*/*;q=0.8"
)

// Federation is off unless FEDERATION_DOMAIN is set: no WebFinger, no
// actor, no Note, and NodeInfo names no protocol.
func TestFederationIsOffUnlessConfigured(t *testing.T) {
	e := newEnv(t)
	ann := e.register("ann")
	id := e.post(ann, "hello")
	for _, path := range []string{"/.well-known/webfinger?resource=acct:ann@" + fedDomain, "/.well-known/host-meta",
		"/users/" + ann.id, "/users/" + ann.id + "/outbox", "/statuses/" + number(t, id)} {
		if status, _, _ := e.apGet(path, asJSON); status != http.StatusNotFound {
			t.Errorf("GET %s with federation off: %d, want 404", path, status)
		}
	}
	r := e.do("GET", "/nodeinfo/2.0", "", nil)
	if p, _ := r.body["protocols"].([]any); len(p) != 0 {
		t.Errorf("NodeInfo protocols with federation off: %v", p)
	}
	_, acct := e.lookupAccount("ann")
	if uri, _ := acct["uri"].(string); strings.Contains(uri, "/users/") {
		t.Errorf("uri with federation off: %s", uri)
	}
}

func (e *env) lookupAccount(acct string) (int, map[string]any) {
	e.t.Helper()
	r := e.do("GET", "/api/v1/accounts/lookup?acct="+url.QueryEscape(acct), "", nil)
	return r.status, r.body
}

// number is the number a post's id stands for, as its Note's address
// writes it: Mastodon's id of the post.
func number(t *testing.T, id string) string {
	t.Helper()
	n, ok := ids.Parse(id)
	if !ok {
		t.Fatalf("%q is no post's id", id)
	}
	return strconv.FormatInt(n, 10)
}

// A person is found by WebFinger (acct:name@domain, or their actor's
// address) and host-meta; their actor is a Person with every collection,
// the shared inbox and an RSA public key that stays theirs; a browser is
// sent to their page; someone not there, or hidden, is a 404 as is
// another server's name.
func TestFederationFindsAPerson(t *testing.T) {
	e := newFederatedEnv(t)
	ann := e.register("ann")
	base := "https://" + fedDomain

	status, h, wf := e.apGet("/.well-known/webfinger?resource=acct:ann@"+fedDomain, "application/jrd+json")
	if status != 200 || !strings.HasPrefix(h.Get("Content-Type"), "application/jrd+json") {
		t.Fatalf("webfinger: %d %s %v", status, h.Get("Content-Type"), wf)
	}
	if wf["subject"] != "acct:ann@"+fedDomain || !slices.ContainsFunc(wf["links"].([]any), func(l any) bool {
		m := l.(map[string]any)
		return m["rel"] == "self" && m["type"] == "application/activity+json" && m["href"] == base+"/users/"+ann.id
	}) {
		t.Errorf("webfinger: %v", wf)
	}
	for resource, want := range map[string]int{
		"acct:ANN@" + fedDomain:                 200, // names are found in any case
		"ann@" + fedDomain:                      200,
		base + "/users/ann":                     200,
		"acct:ann@other.example":                404,
		"acct:nobody@" + fedDomain:              404,
		"https://other.example/users/" + ann.id: 404,
		base + "/users/ann":                     404, // by id alone
		"acct:ann":                              400,
		"":                                      400,
		"acct:" + strings.Repeat("a", 600) + "@" + fedDomain: 400,
	} {
		status, _, body := e.apGet("/.well-known/webfinger?resource="+url.QueryEscape(resource), "application/jrd+json")
		if status != want {
			t.Errorf("webfinger %.40q: %d, want %d", resource, status, want)
		}
		if want >= 400 {
			if msg, _ := body["error"].(string); msg == "" {
				t.Errorf("webfinger %.40q: no error message: %v", resource, body)
			}
		}
	}
	req, _ := http.NewRequest("GET", e.url+"/.well-known/host-meta", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	xrd, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(xrd), `template="`+base+`/.well-known/webfinger?resource={uri}"`) {
		t.Errorf("host-meta: %s", xrd)
	}

	status, h, actor := e.apGet("/users/"+ann.id, asJSON)
	if status != 200 || !strings.HasPrefix(h.Get("Content-Type"), "application/activity+json") {
		t.Fatalf("actor: %d %s", status, h.Get("Content-Type"))
	}
	id := base + "/users/" + ann.id
	for field, want := range map[string]string{"id": id, "type": "Person", "preferredUsername": "ann", "inbox": id + "/inbox",
		"outbox": id + "/outbox", "followers": id + "/followers", "following": id + "/following", "featured": id + "/featured"} {
		if actor[field] != want {
			t.Errorf("actor's %s: %v, want %s", field, actor[field], want)
		}
	}
	if ep, _ := actor["endpoints"].(map[string]any); ep["sharedInbox"] != base+"/inbox" {
		t.Errorf("shared inbox: %v", actor["endpoints"])
	}
	key := actor["publicKey"].(map[string]any)
	if key["id"] != id+"#main-key" || key["owner"] != id {
		t.Errorf("publicKey: %v", key)
	}
	pub := parsePublicKey(t, key["publicKeyPem"].(string))
	if pub.N.BitLen() != federation.KeyBits {
		t.Errorf("key of %d bits", pub.N.BitLen())
	}
	// The key is kept: another instance, and a later read, show it.
	other := newEnvOn(t, e.db, app.Config{Federation: federation.Config{Domain: fedDomain}})
	if _, _, again := other.apGet("/users/"+ann.id, "application/activity+json"); again["publicKey"].(map[string]any)["publicKeyPem"] != key["publicKeyPem"] {
		t.Error("another instance shows another key")
	}

	status, h, _ = e.apGet("/users/"+ann.id, asBrowser)
	if status != http.StatusSeeOther || h.Get("Location") != base+"/#/people/ann" || !strings.Contains(h.Get("Vary"), "Accept") {
		t.Errorf("a browser: %d to %q (Vary %q)", status, h.Get("Location"), h.Get("Vary"))
	}
	for _, path := range []string{"/users/12345", "/users/ann", "/users/0" + ann.id, "/users/-1"} {
		if status, _, body := e.apGet(path, asJSON); status != 404 || body["error"] == nil {
			t.Errorf("%s: %d %v", path, status, body)
		}
	}

	// Mastodon's face knows the person by the same address.
	st, acct := e.lookupAccount("ann@" + fedDomain)
	if st != 200 || acct["uri"] != id {
		t.Errorf("lookup of ann@%s: %d uri %v", fedDomain, st, acct["uri"])
	}
	r := e.do("GET", "/nodeinfo/2.0", "", nil)
	if p, _ := r.body["protocols"].([]any); !slices.Contains(p, any("activitypub")) {
		t.Errorf("NodeInfo protocols: %v", r.body["protocols"])
	}
	if r := e.do("GET", "/api/v2/instance", "", nil); r.body["domain"] != fedDomain {
		t.Errorf("instance domain: %v", r.body["domain"])
	}

	// A suspended person is no one's to find.
	mo := e.register("moe")
	e.makeAdmin(mo)
	e.act(mo, map[string]any{"action": "suspend", "accountId": ann.id, "reason": "spam"})
	for _, path := range []string{"/users/" + ann.id, "/users/" + ann.id + "/outbox", "/.well-known/webfinger?resource=acct:ann@" + fedDomain} {
		if status, _, _ := e.apGet(path, asJSON); status != 404 {
			t.Errorf("%s of a suspended person: %d", path, status)
		}
	}
}

func parsePublicKey(t *testing.T, s string) *rsa.PublicKey {
	t.Helper()
	block, _ := pem.Decode([]byte(s))
	if block == nil || block.Type != "PUBLIC KEY" {
		t.Fatalf("publicKeyPem: %q", s)
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	pub, ok := k.(*rsa.PublicKey)
	if !ok {
		t.Fatalf("not an RSA key: %T", k)
	}
	return pub
}

// Each post anyone may see is a Note at its address, addressed as its
// visibility says, with its mentions, tags, warning, language and the
// post it answers; a repost is its Announce; the outbox pages what a
// person posted that anyone may see, newest first, and featured holds
// what they pin. A post for followers or the mentioned, or removed, is
// a 404 to an unsigned fetch and no item of the outbox; a browser is
// sent to the post's page.
func TestFederationServesPublicPostsAsNotes(t *testing.T) {
	e := newFederatedEnv(t)
	ann, bob := e.register("ann"), e.register("bob")
	base := "https://" + fedDomain
	annActor, bobActor := base+"/users/"+ann.id, base+"/users/"+bob.id
	post := func(u user, form url.Values) string {
		t.Helper()
		status, st := e.MastoForm("POST", "/api/v1/statuses", u.token, form)
		if status != 200 {
			t.Fatalf("post %v: %d %v", form, status, st)
		}
		if st["uri"] != base+"/statuses/"+st["id"].(string) {
			t.Errorf("a status's uri: %v", st["uri"])
		}
		return st["id"].(string)
	}
	public := post(ann, url.Values{"status": {"hi @bob, see #Go"}, "spoiler_text": {"cw"}, "language": {"en"}})
	unlisted := post(ann, url.Values{"status": {"quietly"}, "visibility": {"unlisted"}})
	private := post(ann, url.Values{"status": {"friends only"}, "visibility": {"private"}})
	direct := post(ann, url.Values{"status": {"@bob psst"}, "visibility": {"direct"}})
	reply := post(bob, url.Values{"status": {"@ann hello"}, "in_reply_to_id": {public}})

	status, h, n := e.apGet("/statuses/"+public, "application/activity+json")
	if status != 200 || !strings.HasPrefix(h.Get("Content-Type"), "application/activity+json") {
		t.Fatalf("Note: %d %s %v", status, h.Get("Content-Type"), n)
	}
	for field, want := range map[string]any{"id": base + "/statuses/" + public, "type": "Note", "attributedTo": annActor,
		"summary": "cw", "sensitive": true, // a warning hides the pictures too, as Mastodon has it
		"inReplyTo": nil} {
		if n[field] != want {
			t.Errorf("Note's %s: %v, want %v", field, n[field], want)
		}
	}
	if c, _ := n["content"].(string); !strings.Contains(c, `>@<span>bob</span></a>`) || !strings.Contains(c, `rel="tag">#<span>Go</span>`) {
		t.Errorf("content: %s", c)
	}
	if cm, _ := n["contentMap"].(map[string]any); cm["en"] != n["content"] {
		t.Errorf("contentMap: %v", n["contentMap"])
	}
	wantAddressed(t, "public", n, []string{federation.PublicCollection}, []string{annActor + "/followers", bobActor})
	tags := n["tag"].([]any)
	if !slices.ContainsFunc(tags, func(x any) bool {
		m := x.(map[string]any)
		return m["type"] == "Mention" && m["href"] == bobActor && m["name"] == "@bob@"+fedDomain
	}) || !slices.ContainsFunc(tags, func(x any) bool {
		m := x.(map[string]any)
		return m["type"] == "Hashtag" && m["name"] == "#go" && m["href"] == base+"/tags/go"
	}) {
		t.Errorf("tags: %v", tags)
	}
	_, _, u := e.apGet("/statuses/"+unlisted, asJSON)
	wantAddressed(t, "unlisted", u, []string{annActor + "/followers"}, []string{federation.PublicCollection})
	_, _, r := e.apGet("/statuses/"+reply, asJSON)
	if r["inReplyTo"] != base+"/statuses/"+public {
		t.Errorf("the reply's inReplyTo: %v", r["inReplyTo"])
	}
	for name, id := range map[string]string{"followers-only": private, "direct": direct, "no post": "12345", "not a number": "abc"} {
		if status, _, body := e.apGet("/statuses/"+id, asJSON); status != 404 || body["error"] == nil {
			t.Errorf("%s: %d %v", name, status, body)
		}
	}
	if status, h, _ := e.apGet("/statuses/"+public, asBrowser); status != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), base+"/#/activity/") {
		t.Errorf("a browser: %d to %q", status, h.Get("Location"))
	}

	// A repost is its Announce.
	status, rb := e.MastoForm("POST", "/api/v1/statuses/"+public+"/reblog", bob.token, nil)
	if status != 200 {
		t.Fatalf("reblog: %d %v", status, rb)
	}
	_, _, an := e.apGet("/statuses/"+rb["id"].(string), asJSON)
	if an["type"] != "Announce" || an["actor"] != bobActor || an["object"] != base+"/statuses/"+public {
		t.Errorf("the repost: %v", an)
	}

	// The outbox: what anyone may see, newest first, a page at a time.
	for i := range 20 {
		e.post(ann, "filler "+strconv.Itoa(i))
	}
	_, _, box := e.apGet("/users/"+ann.id+"/outbox", asJSON)
	if box["type"] != "OrderedCollection" || box["first"] != annActor+"/outbox?page=true" || box["totalItems"] != float64(23) {
		t.Errorf("outbox: %v", box)
	}
	var seen []string
	for next := "/users/" + ann.id + "/outbox?page=true"; next != ""; {
		_, _, pg := e.apGet(next, asJSON)
		for _, it := range pg["orderedItems"].([]any) {
			a := it.(map[string]any)
			if a["type"] != "Create" || a["actor"] != annActor {
				t.Errorf("an outbox item: %v", a)
			}
			seen = append(seen, a["object"].(map[string]any)["id"].(string))
		}
		n, _ := pg["next"].(string)
		next = strings.TrimPrefix(n, base)
	}
	if len(seen) != 22 || seen[20] != base+"/statuses/"+unlisted || seen[21] != base+"/statuses/"+public {
		t.Errorf("outbox lists %d: %v", len(seen), seen[max(0, len(seen)-3):])
	}

	// Featured: what they pin.
	if r := e.do("POST", "/social/rest/pins/"+e.activityID(public), ann.token, nil); r.status != 200 {
		t.Fatalf("pin: %d %s", r.status, r.raw)
	}
	_, _, feat := e.apGet("/users/"+ann.id+"/featured", asJSON)
	if items, _ := feat["orderedItems"].([]any); len(items) != 1 || items[0].(map[string]any)["id"] != base+"/statuses/"+public {
		t.Errorf("featured: %v", feat)
	}

	// Removed by a moderator: gone.
	mo := e.register("moe")
	e.makeAdmin(mo)
	e.act(mo, map[string]any{"action": "remove", "accountId": ann.id, "activityIds": []string{e.activityID(unlisted)}, "reason": "spam"})
	if status, _, _ := e.apGet("/statuses/"+unlisted, asJSON); status != 404 {
		t.Errorf("a removed post: %d", status)
	}
}

// activityID is the activity id of a Mastodon status id.
func (e *env) activityID(number string) string {
	e.t.Helper()
	n, err := strconv.ParseInt(number, 10, 64)
	if err != nil {
		e.t.Fatal(err)
	}
	return ids.Format(n)
}

func wantAddressed(t *testing.T, what string, obj map[string]any, to, cc []string) {
	t.Helper()
	strs := func(v any) []string {
		var out []string
		for _, x := range v.([]any) {
			out = append(out, x.(string))
		}
		slices.Sort(out)
		return out
	}
	slices.Sort(to)
	slices.Sort(cc)
	if got := strs(obj["to"]); !slices.Equal(got, to) {
		t.Errorf("%s: to %v, want %v", what, got, to)
	}
	if got := strs(obj["cc"]); !slices.Equal(got, cc) {
		t.Errorf("%s: cc %v, want %v", what, got, cc)
	}
}

// newLoopbackFederatedEnv is a stack that federates as the address it
// listens at, on loopback, so that another server on this machine
// (package peer) reaches it at the addresses it gives.
func newLoopbackFederatedEnv(t *testing.T) *env {
	t.Helper()
	l, addr, err := localstack.Listen()
	if err != nil {
		t.Fatal(err)
	}
	return newEnvFrom(t, localstack.Options{APIListener: l, Config: app.Config{BackfillMax: 1000,
		Federation: federation.Config{Domain: addr, AllowLoopback: true}}})
}

// federatedBeside is a stack that federates on loopback (its root
// returned too) and another server beside it, closed with the test.
func federatedBeside(t *testing.T) (*env, *peer.Server, string) {
	t.Helper()
	other := peer.New()
	t.Cleanup(other.Close)
	e := newLoopbackFederatedEnv(t)
	return e, other, strings.TrimSuffix(e.url, "/")
}

// received waits for the other server to have taken n activities, and
// returns them.
func (e *env) received(other *peer.Server, n int) []peer.Received {
	e.t.Helper()
	var got []peer.Received
	e.Eventually(fmt.Sprintf("%d activities at the other server", n), func() bool {
		got = other.Received()
		return len(got) >= n
	})
	return got
}

// A person of another server follows a person here: the follow begins,
// and the Accept, signed with the followed person's key, names the
// Follow; they are a follower like any (name@domain); the Undo ends it.
// A locked person gets a request, and their approval or rejection is
// sent as an Accept or a Reject. A follow of no one here is a 404.
func TestFederationFollowFromAnotherServer(t *testing.T) {
	ctx := context.Background()
	e, other, base := federatedBeside(t)
	ann := e.register("ann")
	annActor := base + "/users/" + ann.id
	bob := other.Person("bob")

	follow := map[string]any{"@context": "https://www.w3.org/ns/activitystreams", "id": bob.URI + "/follows/1",
		"type": "Follow", "actor": bob.URI, "object": annActor}
	if status, body, err := other.Send(ctx, bob, annActor+"/inbox", follow); err != nil || status != http.StatusAccepted {
		t.Fatalf("Follow: %d %s %v", status, body, err)
	}
	got := e.received(other, 1)
	accept := got[0]
	obj, _ := accept.Activity["object"].(map[string]any)
	if accept.Err != nil || accept.KeyID != annActor+"#main-key" || accept.Activity["type"] != "Accept" ||
		accept.Activity["actor"] != annActor || obj["id"] != follow["id"] || accept.Inbox != "/users/bob/inbox" {
		t.Fatalf("the answer: %+v", accept)
	}
	acct := "bob@" + other.Domain
	status, followers := e.mastoList("/api/v1/accounts/"+ann.id+"/followers", ann.token)
	if status != 200 || len(followers) != 1 || followers[0]["acct"] != acct || followers[0]["username"] != "bob" ||
		followers[0]["display_name"] != "Bob of elsewhere" {
		t.Fatalf("ann's followers: %d %v", status, followers)
	}
	if st, a := e.lookupAccount(acct); st != 200 || a["id"] != followers[0]["id"] {
		t.Errorf("lookup of %s: %d %v", acct, st, a)
	}

	undo := map[string]any{"@context": "https://www.w3.org/ns/activitystreams", "id": bob.URI + "/follows/1/undo",
		"type": "Undo", "actor": bob.URI, "object": follow}
	if status, body, _ := other.Send(ctx, bob, base+"/inbox", undo); status != http.StatusAccepted {
		t.Fatalf("Undo: %d %s", status, body)
	}
	if _, followers := e.mastoList("/api/v1/accounts/"+ann.id+"/followers", ann.token); len(followers) != 0 {
		t.Errorf("after the Undo, ann's followers: %v", followers)
	}

	// Their server makes bob's key anew: the key kept here no longer
	// checks, so it is fetched again, and the follow goes through.
	other.Rekey(bob)
	before := len(other.Received())
	again := map[string]any{"id": bob.URI + "/follows/2", "type": "Follow", "actor": bob.URI, "object": annActor}
	if status, body, _ := other.Send(ctx, bob, base+"/inbox", again); status != http.StatusAccepted {
		t.Fatalf("a Follow with a new key: %d %s", status, body)
	}
	if got := e.received(other, before+1)[before]; got.Activity["type"] != "Accept" {
		t.Errorf("after the new key: %+v", got)
	}

	// Locked: a request, then the person's decision.
	for _, c := range []struct {
		name, decide, answer string
	}{{"cid", "authorize", "Accept"}, {"dee", "reject", "Reject"}} {
		u := e.register(c.name)
		if st, r := e.MastoForm("PATCH", "/api/v1/accounts/update_credentials", u.token, url.Values{"locked": {"true"}}); st != 200 {
			t.Fatalf("lock: %d %v", st, r)
		}
		actor := base + "/users/" + u.id
		before := len(other.Received())
		f := map[string]any{"id": bob.URI + "/follows/" + c.name, "type": "Follow", "actor": bob.URI, "object": actor}
		if status, body, _ := other.Send(ctx, bob, base+"/inbox", f); status != http.StatusAccepted {
			t.Fatalf("Follow of %s: %d %s", c.name, status, body)
		}
		_, reqs := e.mastoList("/api/v1/follow_requests", u.token)
		if len(reqs) != 1 || reqs[0]["acct"] != acct {
			t.Fatalf("%s's requests: %v", c.name, reqs)
		}
		// What bob's server takes of the follow: the answer, alone (the
		// Update of the lock, which may come, is not one).
		answers := func() []peer.Received {
			return slices.DeleteFunc(slices.Clone(other.Received()[before:]), func(r peer.Received) bool { return r.Activity["type"] == "Update" })
		}
		if len(answers()) != 0 {
			t.Errorf("a request was answered before %s decided", c.name)
		}
		if st, r := e.MastoForm("POST", "/api/v1/follow_requests/"+reqs[0]["id"].(string)+"/"+c.decide, u.token, nil); st != 200 {
			t.Fatalf("%s: %d %v", c.decide, st, r)
		}
		e.Eventually("the answer at the other server", func() bool { return len(answers()) > 0 })
		got := answers()[0]
		obj, _ := got.Activity["object"].(map[string]any)
		if got.Err != nil || got.Activity["type"] != c.answer || obj["id"] != f["id"] || got.KeyID != actor+"#main-key" {
			t.Errorf("%s's answer: %+v", c.name, got)
		}
	}

	// Refused: unsigned, signed by someone else than the actor, a body
	// changed after signing, signed for another server, a follow of no
	// one here.
	carl := other.Person("carl")
	for _, c := range []struct {
		name string
		req  func() *http.Request
		want int
	}{
		{"unsigned", func() *http.Request {
			r, _ := http.NewRequest("POST", base+"/inbox", strings.NewReader(`{"type":"Follow"}`))
			return r
		}, http.StatusUnauthorized},
		{"another's actor", func() *http.Request {
			body, _ := json.Marshal(map[string]any{"id": bob.URI + "/follows/9", "type": "Follow", "actor": bob.URI, "object": annActor})
			r, _ := other.Signed(ctx, carl, base+"/inbox", body)
			return r
		}, http.StatusForbidden},
		{"a changed body", func() *http.Request {
			body, _ := json.Marshal(follow)
			r, _ := other.Signed(ctx, bob, base+"/inbox", body)
			changed := strings.Replace(string(body), "/follows/1", "/follows/2", 1)
			r.Body, r.ContentLength, r.GetBody = io.NopCloser(strings.NewReader(changed)), int64(len(changed)), nil
			return r
		}, http.StatusUnauthorized},
		{"no one here", func() *http.Request {
			body, _ := json.Marshal(map[string]any{"id": bob.URI + "/follows/8", "type": "Follow", "actor": bob.URI, "object": base + "/users/12345"})
			r, _ := other.Signed(ctx, bob, base+"/inbox", body)
			return r
		}, http.StatusNotFound},
		{"signed for another server", func() *http.Request {
			// A genuine delivery to another server, replayed here: its
			// signature covers that server's host.
			body, _ := json.Marshal(map[string]any{"id": bob.URI + "/follows/7", "type": "Follow", "actor": bob.URI, "object": annActor})
			r, _ := other.Signed(ctx, bob, "http://other.example/inbox", body)
			r.URL, _ = url.Parse(base + "/inbox")
			r.Host = "other.example"
			return r
		}, http.StatusUnauthorized},
		{"not JSON", func() *http.Request {
			r, _ := other.Signed(ctx, bob, base+"/inbox", []byte("not json"))
			return r
		}, http.StatusBadRequest},
	} {
		res, err := http.DefaultClient.Do(c.req())
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != c.want || !strings.Contains(string(raw), `"error"`) {
			t.Errorf("%s: %d %s, want %d", c.name, res.StatusCode, raw, c.want)
		}
	}
}

// mastoList gets a Mastodon list.
func (e *env) mastoList(path, token string) (int, []map[string]any) {
	e.t.Helper()
	r := e.do("GET", path, token, nil)
	var out []map[string]any
	if r.status == 200 {
		if err := json.Unmarshal(r.raw, &out); err != nil {
			e.t.Fatalf("%s: %s", path, r.raw)
		}
	}
	return r.status, out
}

// A person here follows a person of another server, found by
// name@domain (WebFinger, then their actor): the follow is a request
// until their server's Accept, which must name the Follow sent; the
// unfollow sends the Undo of that Follow. A Reject of a follow begun
// ends it.
func TestFederationFollowOfAnotherServer(t *testing.T) {
	ctx := context.Background()
	e, other, base := federatedBeside(t)
	ann := e.register("ann")
	annActor := base + "/users/" + ann.id
	eve := other.Person("eve")
	acct := "eve@" + other.Domain

	if st, _ := e.lookupAccount(acct); st != 404 {
		t.Errorf("an unknown remote person, looked up by no one: %d", st)
	}
	r := e.do("GET", "/api/v2/search?resolve=true&type=accounts&q=@"+url.QueryEscape(acct), ann.token, nil)
	found, _ := r.body["accounts"].([]any)
	if r.status != 200 || len(found) != 1 {
		t.Fatalf("search: %d %s", r.status, r.raw)
	}
	eveID := found[0].(map[string]any)["id"].(string)

	st, rel := e.MastoForm("POST", "/api/v1/accounts/"+eveID+"/follow", ann.token, nil)
	if st != 200 || rel["requested"] != true || rel["following"] != false {
		t.Fatalf("follow: %d %v", st, rel)
	}
	got := e.received(other, 1)[0]
	if got.Err != nil || got.Activity["type"] != "Follow" || got.Activity["actor"] != annActor || got.Activity["object"] != eve.URI ||
		got.KeyID != annActor+"#main-key" || got.Inbox != "/users/eve/inbox" {
		t.Fatalf("the Follow: %+v", got)
	}
	followID := got.Activity["id"].(string)

	// An Accept of another Follow, or by someone else, is refused.
	wrong := map[string]any{"id": eve.URI + "/accepts/0", "type": "Accept", "actor": eve.URI, "object": followID + "x"}
	if st, body, _ := other.Send(ctx, eve, base+"/inbox", wrong); st != http.StatusNotFound {
		t.Errorf("an Accept of another Follow: %d %s", st, body)
	}
	mallory := other.Person("mallory")
	byOther := map[string]any{"id": mallory.URI + "/accepts/1", "type": "Accept", "actor": mallory.URI, "object": followID}
	if st, body, _ := other.Send(ctx, mallory, base+"/inbox", byOther); st != http.StatusNotFound {
		t.Errorf("an Accept by someone else: %d %s", st, body)
	}
	accept := map[string]any{"id": eve.URI + "/accepts/1", "type": "Accept", "actor": eve.URI,
		"object": map[string]any{"id": followID, "type": "Follow", "actor": annActor, "object": eve.URI}}
	if st, body, _ := other.Send(ctx, eve, base+"/inbox", accept); st != http.StatusAccepted {
		t.Fatalf("Accept: %d %s", st, body)
	}
	_, rels := e.mastoList("/api/v1/accounts/relationships?id[]="+eveID, ann.token)
	if len(rels) != 1 || rels[0]["following"] != true || rels[0]["requested"] != false {
		t.Fatalf("after the Accept: %v", rels)
	}

	if st, _ := e.MastoForm("POST", "/api/v1/accounts/"+eveID+"/unfollow", ann.token, nil); st != 200 {
		t.Fatalf("unfollow: %d", st)
	}
	undo := e.received(other, 2)[1]
	obj, _ := undo.Activity["object"].(map[string]any)
	if undo.Err != nil || undo.Activity["type"] != "Undo" || obj["id"] != followID {
		t.Fatalf("the Undo: %+v", undo)
	}

	// Followed again and accepted, then rejected: the follow ends.
	e.MastoForm("POST", "/api/v1/accounts/"+eveID+"/follow", ann.token, nil)
	again := e.received(other, 3)[2]
	id2 := again.Activity["id"].(string)
	if id2 == followID {
		t.Fatal("the second Follow has the first's id")
	}
	for _, kind := range []string{"Accept", "Reject"} {
		a := map[string]any{"id": eve.URI + "/" + kind + "/2", "type": kind, "actor": eve.URI, "object": id2}
		if st, body, _ := other.Send(ctx, eve, base+"/inbox", a); st != http.StatusAccepted {
			t.Fatalf("%s: %d %s", kind, st, body)
		}
	}
	_, rels = e.mastoList("/api/v1/accounts/relationships?id[]="+eveID, ann.token)
	if len(rels) != 1 || rels[0]["following"] != false || rels[0]["requested"] != false {
		t.Errorf("after the Reject: %v", rels)
	}
}

// followRemote makes u follow p of other, accepted by their server, and
// returns p's id here.
func (e *env) followRemote(other *peer.Server, u user, p *peer.Person) string {
	e.t.Helper()
	r := e.do("GET", "/api/v2/search?resolve=true&type=accounts&q="+url.QueryEscape(p.Name+"@"+other.Domain), u.token, nil)
	found, _ := r.body["accounts"].([]any)
	if len(found) != 1 {
		e.t.Fatalf("search %s: %d %s", p.Name, r.status, r.raw)
	}
	id := found[0].(map[string]any)["id"].(string)
	before := len(other.Received())
	if st, rel := e.MastoForm("POST", "/api/v1/accounts/"+id+"/follow", u.token, nil); st != 200 {
		e.t.Fatalf("follow: %d %v", st, rel)
	}
	follow := e.received(other, before+1)[before].Activity
	accept := map[string]any{"id": p.URI + "/accepts/" + u.id, "type": "Accept", "actor": p.URI, "object": follow["id"]}
	if st, body, _ := other.Send(context.Background(), p, strings.TrimSuffix(e.url, "/")+"/inbox", accept); st != http.StatusAccepted {
		e.t.Fatalf("Accept: %d %s", st, body)
	}
	return id
}

// A person of another server posts: the Note reaches the homes of their
// followers here as any post does, tells the people here it mentions,
// keeps its warning and visibility; sent twice it is one post; its
// Delete takes it away. A Note no one here follows or is mentioned in
// is dropped; one attributed to someone else is refused.
func TestFederationPostsFromAnotherServer(t *testing.T) {
	ctx := context.Background()
	e, other, base := federatedBeside(t)
	ann, zed := e.register("ann"), e.register("zed")
	eve := other.Person("eve")
	e.followRemote(other, ann, eve)

	note := func(id, content string, to, cc []string, extra map[string]any) map[string]any {
		n := map[string]any{"id": eve.URI + "/statuses/" + id, "type": "Note", "attributedTo": eve.URI, "content": content,
			"to": to, "cc": cc, "published": time.Now().UTC().Format(time.RFC3339)}
		for k, v := range extra {
			n[k] = v
		}
		return map[string]any{"@context": "https://www.w3.org/ns/activitystreams", "id": eve.URI + "/statuses/" + id + "/activity",
			"type": "Create", "actor": eve.URI, "object": n}
	}
	send := func(from *peer.Person, a map[string]any, want int) {
		t.Helper()
		if st, body, _ := other.Send(ctx, from, base+"/inbox", a); st != want {
			t.Fatalf("%v: %d %s", a["id"], st, body)
		}
	}
	public := []string{federation.PublicCollection}
	followers := []string{eve.URI + "/followers"}
	zedActor := base + "/users/" + zed.id
	first := note("1", `<p>Hello <span class="h-card"><a href="`+zedActor+`" class="u-url mention">@<span>zed</span></a></span> and `+
		`<span class="h-card"><a href="https://far.example/@ann" class="u-url mention">@<span>ann</span></a></span> &amp; friends</p><p>second line</p>`,
		public, followers, map[string]any{"summary": "a warning", "sensitive": true,
			"tag": []any{map[string]any{"type": "Mention", "href": zedActor, "name": "@zed"},
				map[string]any{"type": "Mention", "href": "https://far.example/users/ann", "name": "@ann@far.example"}}})
	send(eve, first, http.StatusAccepted)
	send(eve, first, http.StatusAccepted) // again: one post
	quiet := note("2", "<p>for my followers</p>", followers, nil, nil)
	send(eve, quiet, http.StatusAccepted)

	e.Settle()
	home := e.mastoHome(ann)
	if len(home) != 2 {
		t.Fatalf("ann's home: %d items: %v", len(home), home)
	}
	latest, earlier := home[0], home[1]
	acc, _ := earlier["account"].(map[string]any)
	if acc["acct"] != "eve@"+other.Domain || earlier["spoiler_text"] != "a warning" || earlier["sensitive"] != true ||
		earlier["visibility"] != "public" || latest["visibility"] != "private" {
		t.Errorf("the posts: %v / %v", earlier, latest)
	}
	if c, _ := earlier["content"].(string); !strings.Contains(c, "Hello") || !strings.Contains(c, "@ann@far.example &amp; friends") ||
		!strings.Contains(c, "second line") || !strings.Contains(c, `>@<span>zed</span></a>`) {
		t.Errorf("content: %s", c)
	}
	if types := e.notificationTypes(zed); !slices.Contains(types, "mention") {
		t.Errorf("zed, mentioned, was told: %v", types)
	}
	if types := e.notificationTypes(ann); slices.Contains(types, "mention") {
		t.Errorf("ann, whose namesake elsewhere was mentioned, was told: %v", types)
	}

	// ann favourites eve's post, then takes it back: eve's server is told.
	before := len(other.Received())
	for _, verb := range []string{"favourite", "unfavourite"} {
		if st, r := e.MastoForm("POST", "/api/v1/statuses/"+earlier["id"].(string)+"/"+verb, ann.token, nil); st != 200 {
			t.Fatalf("%s: %d %v", verb, st, r)
		}
		e.Settle()
	}
	told := other.Received()[before:]
	if len(told) != 2 || told[0].Activity["type"] != "Like" || told[0].Activity["object"] != eve.URI+"/statuses/1" ||
		told[1].Activity["type"] != "Undo" || told[0].Err != nil || told[1].Err != nil {
		t.Fatalf("eve's server was told: %+v", told)
	}
	if undone, _ := told[1].Activity["object"].(map[string]any); undone["id"] != told[0].Activity["id"] {
		t.Errorf("the Undo names %v, the Like was %v", undone["id"], told[0].Activity["id"])
	}

	// ann reposts eve's post, then takes it back: eve's server is told.
	before = len(other.Received())
	for _, verb := range []string{"reblog", "unreblog"} {
		if st, r := e.MastoForm("POST", "/api/v1/statuses/"+earlier["id"].(string)+"/"+verb, ann.token, nil); st != 200 {
			t.Fatalf("%s: %d %v", verb, st, r)
		}
		e.Settle()
	}
	told = other.Received()[before:]
	if len(told) != 2 || told[0].Activity["type"] != "Announce" || told[0].Activity["object"] != eve.URI+"/statuses/1" ||
		told[1].Activity["type"] != "Undo" || told[0].Err != nil || told[1].Err != nil || told[0].Inbox != "/inbox" {
		t.Fatalf("eve's server was told of the repost: %+v", told)
	}
	if undone, _ := told[1].Activity["object"].(map[string]any); undone["id"] != told[0].Activity["id"] || undone["type"] != "Announce" {
		t.Errorf("the Undo names %v, the Announce was %v", undone, told[0].Activity["id"])
	}

	// Refused, or dropped.
	mallory := other.Person("mallory")
	send(mallory, note("3", "not mine", public, nil, nil), http.StatusForbidden)
	stray := map[string]any{"id": mallory.URI + "/statuses/4/activity", "type": "Create", "actor": mallory.URI,
		"object": map[string]any{"id": mallory.URI + "/statuses/4", "type": "Note", "attributedTo": mallory.URI, "content": "no one listens", "to": public}}
	send(mallory, stray, http.StatusAccepted)
	e.Settle()
	if home := e.mastoHome(ann); len(home) != 2 {
		t.Errorf("after the refused and the dropped: %d items", len(home))
	}

	// Deleted.
	del := map[string]any{"id": eve.URI + "/statuses/2#delete", "type": "Delete", "actor": eve.URI, "object": eve.URI + "/statuses/2"}
	send(eve, del, http.StatusAccepted)
	e.Settle()
	if home := e.mastoHome(ann); len(home) != 1 || home[0]["id"] != earlier["id"] {
		t.Errorf("after the Delete: %v", home)
	}
}

// mastoHome is u's home timeline on the Mastodon face.
func (e *env) mastoHome(u user) []map[string]any {
	e.t.Helper()
	st, list := e.mastoList("/api/v1/timelines/home", u.token)
	if st != 200 {
		e.t.Fatalf("home of %s: %d", u.name, st)
	}
	return list
}

// A post here that reaches followers goes to the servers of the
// author's remote followers, to each server's shared inbox once, signed
// by the author: its Create, and when deleted its Delete. A post for
// the mentioned alone does not; nor does a post of someone with no
// remote followers.
func TestFederationPostsToAnotherServer(t *testing.T) {
	ctx := context.Background()
	e, other, base := federatedBeside(t)
	ann, cid := e.register("ann"), e.register("cid")
	annActor := base + "/users/" + ann.id
	for _, name := range []string{"bob", "bea"} { // two people of one server
		p := other.Person(name)
		f := map[string]any{"id": p.URI + "/follows/ann", "type": "Follow", "actor": p.URI, "object": annActor}
		if st, body, _ := other.Send(ctx, p, base+"/inbox", f); st != http.StatusAccepted {
			t.Fatalf("Follow: %d %s", st, body)
		}
	}
	accepted := len(e.received(other, 2))

	post := func(u user, form url.Values) string {
		t.Helper()
		st, s := e.MastoForm("POST", "/api/v1/statuses", u.token, form)
		if st != 200 {
			t.Fatalf("post: %d %v", st, s)
		}
		return s["id"].(string)
	}
	public := post(ann, url.Values{"status": {"hello #fediverse"}, "spoiler_text": {"cw"}})
	followersOnly := post(ann, url.Values{"status": {"friends"}, "visibility": {"private"}})
	post(ann, url.Values{"status": {"@cid psst"}, "visibility": {"direct"}})
	post(cid, url.Values{"status": {"no one elsewhere follows me"}})
	bobAcct := "bob@" + other.Domain
	toBob := post(ann, url.Values{"status": {"just for @" + bobAcct}, "visibility": {"direct"}})
	e.Settle()
	got := other.Received()[accepted:]
	if len(got) != 3 {
		t.Fatalf("the other server got %d activities: %+v", len(got), got)
	}
	byNote := map[string]map[string]any{}
	for _, g := range got {
		obj, _ := g.Activity["object"].(map[string]any)
		if g.Err != nil || g.KeyID != annActor+"#main-key" || g.Activity["type"] != "Create" || g.Inbox != "/inbox" || obj["type"] != "Note" {
			t.Errorf("a delivery: %+v", g)
			continue
		}
		byNote[obj["id"].(string)] = obj
	}
	pub, priv := byNote[base+"/statuses/"+public], byNote[base+"/statuses/"+followersOnly]
	bob := other.Person("bob")
	if d := byNote[base+"/statuses/"+toBob]; d == nil {
		t.Errorf("the post for bob alone: %v", byNote)
	} else {
		wantAddressed(t, "for bob", d, []string{bob.URI}, nil)
		if tags, _ := d["tag"].([]any); len(tags) != 1 || tags[0].(map[string]any)["href"] != bob.URI || tags[0].(map[string]any)["name"] != "@"+bobAcct {
			t.Errorf("the post for bob's tags: %v", d["tag"])
		}
	}
	if pub == nil || !strings.Contains(pub["content"].(string), "hello") || pub["summary"] != "cw" {
		t.Errorf("the public Note: %v", pub)
	} else {
		wantAddressed(t, "public", pub, []string{federation.PublicCollection}, []string{annActor + "/followers"})
	}
	if priv == nil {
		t.Errorf("the followers' Note: %v", byNote)
	} else {
		wantAddressed(t, "followers", priv, []string{annActor + "/followers"}, nil)
	}

	if st, _ := e.mastoStatusDelete(ann, public); st != 200 {
		t.Fatalf("delete: %d", st)
	}
	e.Settle()
	got = other.Received()[accepted+3:]
	if len(got) != 1 || got[0].Activity["type"] != "Delete" || got[0].Err != nil {
		t.Fatalf("after the delete: %+v", got)
	}
	if obj, _ := got[0].Activity["object"].(map[string]any); obj["id"] != base+"/statuses/"+public {
		t.Errorf("the Delete's object: %v", got[0].Activity["object"])
	}
}

// followedFrom has p of the other server follow u, by their nth Follow.
func (e *env) followedFrom(other *peer.Server, p *peer.Person, u user, n int) {
	e.t.Helper()
	base := strings.TrimSuffix(e.url, "/")
	f := map[string]any{"id": fmt.Sprintf("%s/follows/%d", p.URI, n), "type": "Follow", "actor": p.URI, "object": base + "/users/" + u.id}
	if st, body, _ := other.Send(context.Background(), p, base+"/inbox", f); st != http.StatusAccepted {
		e.t.Fatalf("Follow: %d %s", st, body)
	}
}

// A follower elsewhere whose server moves their deliveries to their own
// inbox gets the next post there: their Follow carries where posts go
// for them (copied from their actor, so that a post reads no actor per
// follower), and the keeping of their actor fetched anew writes the new
// inbox onto it.
func TestFederationPostsFollowTheFollowersInbox(t *testing.T) {
	ctx := context.Background()
	e, other, base := federatedBeside(t)
	ann, cid := e.register("ann"), e.register("cid")
	bob := other.Person("bob")
	follow := func(u user, n int) { e.followedFrom(other, bob, u, n) }
	post := func(text string) string {
		t.Helper()
		st, s := e.MastoForm("POST", "/api/v1/statuses", ann.token, url.Values{"status": {text}})
		if st != 200 {
			t.Fatalf("post: %d %v", st, s)
		}
		return base + "/statuses/" + s["id"].(string)
	}
	inboxOf := func(note string) string {
		t.Helper()
		e.Eventually("the post at the other server", func() bool { return tookCreate(other, note) })
		for _, g := range other.Received() {
			if obj, _ := g.Activity["object"].(map[string]any); g.Activity["type"] == "Create" && obj["id"] == note {
				return g.Inbox
			}
		}
		return ""
	}
	follow(ann, 1)
	e.Settle()
	if got := inboxOf(post("to the shared inbox")); got != "/inbox" {
		t.Fatalf("the first post went to %q, want the server's shared inbox", got)
	}
	// A Follow kept before Follows carried an inbox: bob's actor is read
	// for it instead.
	keys, err := e.db.GetAll(ctx, e.db.Query(federation.KindRemoteFollow).FilterField("followee", "=", ann.id).KeysOnly(), nil)
	if err != nil || len(keys) != 1 {
		t.Fatalf("ann's Follows from elsewhere: %v %v", keys, err)
	}
	var kept datastore.PropertyList
	if _, err := e.db.Get(ctx, keys[0], &kept); err != nil {
		t.Fatal(err)
	}
	carried := len(kept)
	if kept = slices.DeleteFunc(kept, func(p datastore.Property) bool { return p.Name == "inbox" }); len(kept) == carried {
		t.Fatalf("bob's Follow carries no inbox: %v", kept)
	}
	if err := e.db.Put(ctx, keys[0], &kept); err != nil {
		t.Fatal(err)
	}
	if got := inboxOf(post("to a Follow that carries no inbox")); got != "/inbox" {
		t.Fatalf("a post to a Follow with no inbox went to %q, want the shared inbox bob's actor names", got)
	}
	// Their server names bob's own inbox alone from now on, and makes his
	// key anew: his next activity has his actor fetched again.
	other.Unshare(bob)
	other.Rekey(bob)
	follow(cid, 2)
	e.Settle()
	if got := inboxOf(post("to bob's own inbox")); got != "/users/bob/inbox" {
		t.Fatalf("after bob's server moved his deliveries, a post went to %q, want /users/bob/inbox", got)
	}
}

// The job that writes a follower's new inbox onto their Follows waits
// for the keeping of the actor it follows, writes what the actor holds
// when it runs (so a late or repeated run changes nothing more), and
// leaves a Follow gone meanwhile gone.
func TestFederationInboxesJob(t *testing.T) {
	ctx := context.Background()
	e, other, _ := federatedBeside(t)
	ann, cid := e.register("ann"), e.register("cid")
	bob := other.Person("bob")
	follow := func(u user, n int) { e.followedFrom(other, bob, u, n) }
	follow(ann, 1)
	follow(cid, 2)
	e.Settle()
	keys, err := e.db.GetAll(ctx, e.db.Query(federation.KindRemoteFollow).FilterField("followee", "=", cid.id).KeysOnly(), nil)
	if err != nil || len(keys) != 1 {
		t.Fatalf("cid's Follows from elsewhere: %v %v", keys, err)
	}
	bobID, _, _ := strings.Cut(keys[0].Name, "_")
	inbox := func(followee string) (string, bool) {
		t.Helper()
		var kept datastore.PropertyList
		found, err := e.db.Get(ctx, e.db.NameKey(federation.KindRemoteFollow, bobID+"_"+followee, nil), &kept)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range kept {
			if p.Name == "inbox" {
				return p.Value.(string), found
			}
		}
		return "", found
	}
	if got, _ := inbox(ann.id); got != other.URL+"/inbox" {
		t.Fatalf("bob's Follow of ann carries %q, want his server's shared inbox", got)
	}
	// A keeping not committed yet: the job waits for it.
	future := federation.InboxesTask{URI: bob.URI, Fetched: time.Now().Add(time.Hour).UnixMicro()}
	if _, err := e.svc.Federation.CopyInboxes(ctx, future); !errors.Is(err, queue.ErrNotYet) {
		t.Fatalf("a job before its keeping: %v, want ErrNotYet", err)
	}
	// A keeping that never committed (of someone never kept here): the
	// job waits for it until the give-up, then ends.
	nobody := other.URL + "/users/nobody"
	if _, err := e.svc.Federation.CopyInboxes(ctx, federation.InboxesTask{URI: nobody, Fetched: time.Now().UnixMicro()}); !errors.Is(err, queue.ErrNotYet) {
		t.Fatalf("a job of a keeping never committed, within the give-up: %v, want ErrNotYet", err)
	}
	lost := federation.InboxesTask{URI: nobody, Fetched: time.Now().Add(-24 * time.Hour).UnixMicro()}
	if out, err := e.svc.Federation.CopyInboxes(ctx, lost); err != nil || out != "never kept" {
		t.Fatalf("a job of a keeping never committed, past the give-up: %q %v, want \"never kept\"", out, err)
	}
	// Bob's follow of cid ends; then his server moves his deliveries to
	// his own inbox, and his next activity has his actor fetched again.
	if err := e.db.Delete(ctx, keys[0]); err != nil {
		t.Fatal(err)
	}
	other.Unshare(bob)
	other.Rekey(bob)
	follow(ann, 3)
	e.Settle()
	own := bob.URI + "/inbox"
	if got, _ := inbox(ann.id); got != own {
		t.Fatalf("after bob's actor changed, his Follow of ann carries %q, want %q", got, own)
	}
	if _, found := inbox(cid.id); found {
		t.Fatal("the job wrote bob's Follow of cid back, which was gone")
	}
	// An older job run again, late: it writes what the actor holds now.
	stale := federation.InboxesTask{URI: bob.URI, Fetched: time.Now().Add(-time.Hour).UnixMicro()}
	if out, err := e.svc.Federation.CopyInboxes(ctx, stale); err != nil || out != "wrote 0" {
		t.Fatalf("a late job: %q %v, want nothing written", out, err)
	}
	if got, _ := inbox(ann.id); got != own {
		t.Fatalf("after a late job, bob's Follow of ann carries %q, want %q", got, own)
	}
}

// mastoStatusDelete deletes a status on the Mastodon face.
func (e *env) mastoStatusDelete(u user, id string) (int, map[string]any) {
	e.t.Helper()
	r := e.do("DELETE", "/api/v1/statuses/"+id, u.token, nil)
	return r.status, r.body
}

// The deployment's own actor, whose key signs its fetches, is found as
// WebFinger finds anyone (acct:instance.actor@domain, or its address),
// and read as an Application with its key. A signature whose key's
// server fails is a 503, for its sender to try again; a Note whose tag
// is one object, not a list, is read all the same.
func TestFederationInstanceActorAndPeersWays(t *testing.T) {
	ctx := context.Background()
	e, other, base := federatedBeside(t)
	ann := e.register("ann")
	for _, resource := range []string{"acct:" + federation.InstanceName + "@" + strings.TrimPrefix(base, "http://"), base + "/actor"} {
		status, _, wf := e.apGet("/.well-known/webfinger?resource="+url.QueryEscape(resource), "application/jrd+json")
		links, _ := wf["links"].([]any)
		if status != 200 || len(links) != 1 || links[0].(map[string]any)["href"] != base+"/actor" {
			t.Errorf("webfinger %s: %d %v", resource, status, wf)
		}
	}
	status, _, actor := e.apGet("/actor", asJSON)
	key, _ := actor["publicKey"].(map[string]any)
	if status != 200 || actor["type"] != "Application" || actor["preferredUsername"] != federation.InstanceName || key["id"] != base+"/actor#main-key" {
		t.Fatalf("the instance actor: %d %v", status, actor)
	}
	parsePublicKey(t, key["publicKeyPem"].(string))

	eve := other.Person("eve")
	other.Down(eve, true)
	f := map[string]any{"id": eve.URI + "/follows/1", "type": "Follow", "actor": eve.URI, "object": base + "/users/" + ann.id}
	if st, body, _ := other.Send(ctx, eve, base+"/inbox", f); st != http.StatusServiceUnavailable || !strings.Contains(string(body), "error") {
		t.Errorf("a key whose server fails: %d %s", st, body)
	}
	other.Down(eve, false)
	if st, body, _ := other.Send(ctx, eve, base+"/inbox", f); st != http.StatusAccepted {
		t.Fatalf("the Follow again: %d %s", st, body)
	}
	note := map[string]any{"id": eve.URI + "/statuses/1/activity", "type": "Create", "actor": eve.URI, "object": map[string]any{
		"id": eve.URI + "/statuses/1", "type": "Note", "attributedTo": eve.URI, "to": federation.PublicCollection,
		"content": "<p>hi @ann</p>", "tag": map[string]any{"type": "Mention", "href": base + "/users/" + ann.id, "name": "@ann"}}}
	if st, body, _ := other.Send(ctx, eve, base+"/inbox", note); st != http.StatusAccepted {
		t.Fatalf("a Note with one tag: %d %s", st, body)
	}
	e.Settle()
	if types := e.notificationTypes(ann); !slices.Contains(types, "mention") {
		t.Errorf("ann, mentioned by a Note of one tag: %v", types)
	}
	bad := map[string]any{"id": eve.URI + "/statuses/2/activity", "type": "Create", "actor": eve.URI, "object": map[string]any{
		"id": eve.URI + "/statuses/2", "type": "Note", "attributedTo": eve.URI, "content": 7}}
	if st, body, _ := other.Send(ctx, eve, base+"/inbox", bad); st != http.StatusBadRequest {
		t.Errorf("a Note that does not read: %d %s", st, body)
	}
}

// A blocked domain is cut off: its signed requests are refused before
// anything is fetched, its people are not found, and nothing is
// delivered to it; lifted, it is heard again.
func TestFederationBlockedDomain(t *testing.T) {
	ctx := context.Background()
	other := peer.New()
	t.Cleanup(other.Close)
	db := testenv.DB(t)
	if err := federation.BlockDomain(ctx, db, other.Domain, "spam", time.Now()); err != nil {
		t.Fatal(err)
	}
	l, addr, err := localstack.Listen()
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvFrom(t, localstack.Options{DB: db, APIListener: l, Config: app.Config{Federation: federation.Config{Domain: addr, AllowLoopback: true}}})
	base := strings.TrimSuffix(e.url, "/")
	ann := e.register("ann")
	eve := other.Person("eve")
	f := map[string]any{"id": eve.URI + "/follows/1", "type": "Follow", "actor": eve.URI, "object": base + "/users/" + ann.id}
	if st, body, _ := other.Send(ctx, eve, base+"/inbox", f); st != http.StatusForbidden || !strings.Contains(string(body), "blocked") {
		t.Errorf("a Follow from a blocked domain: %d %s", st, body)
	}
	if st, _ := e.lookupAccountAs(ann, "eve@"+other.Domain); st != 404 {
		t.Errorf("a person of a blocked domain, looked up: %d", st)
	}
	if got := other.Received(); len(got) != 0 {
		t.Errorf("the blocked domain was sent %d activities", len(got))
	}
	// Delivered to it, refused for good.
	out, err := e.svc.Federation.Deliver(ctx, federation.Delivery{From: ann.id, Inbox: other.URL + "/inbox", ID: "x", Activity: []byte(`{}`)})
	if err != nil || !strings.Contains(out, "blocked") {
		t.Errorf("a delivery to a blocked domain: %q %v", out, err)
	}
}

// lookupAccountAs looks acct up on the Mastodon face, signed in as u.
func (e *env) lookupAccountAs(u user, acct string) (int, map[string]any) {
	e.t.Helper()
	r := e.do("GET", "/api/v1/accounts/lookup?acct="+url.QueryEscape(acct), u.token, nil)
	return r.status, r.body
}

// Two deployments of the service federate, each with its own namespace,
// domain and keys: a person of one finds and follows a person of the
// other (the follow waits for the other's Accept) and sees their posts
// at home; the other sees the follower; an unfollow ends it on both.
func TestFederationTwoDeployments(t *testing.T) {
	a, b := newLoopbackFederatedEnv(t), newLoopbackFederatedEnv(t)
	ann, bob := a.register("ann"), b.register("bob")
	bobAcct := "bob@" + strings.TrimPrefix(b.url, "http://")
	r := a.do("GET", "/api/v2/search?resolve=true&type=accounts&q=@"+url.QueryEscape(bobAcct), ann.token, nil)
	found, _ := r.body["accounts"].([]any)
	if len(found) != 1 {
		t.Fatalf("search of %s: %d %s", bobAcct, r.status, r.raw)
	}
	bobThere := found[0].(map[string]any)["id"].(string)
	if st, rel := a.MastoForm("POST", "/api/v1/accounts/"+bobThere+"/follow", ann.token, nil); st != 200 || rel["requested"] != true {
		t.Fatalf("follow: %d %v", st, rel)
	}
	a.Eventually("the follow accepted", func() bool {
		_, rels := a.mastoList("/api/v1/accounts/relationships?id[]="+bobThere, ann.token)
		return len(rels) == 1 && rels[0]["following"] == true
	})
	_, followers := b.mastoList("/api/v1/accounts/"+bob.id+"/followers", bob.token)
	if len(followers) != 1 || followers[0]["acct"] != "ann@"+strings.TrimPrefix(a.url, "http://") {
		t.Errorf("bob's followers at his deployment: %v", followers)
	}

	if st, s := b.MastoForm("POST", "/api/v1/statuses", bob.token, url.Values{"status": {"hello from afar"}}); st != 200 {
		t.Fatalf("bob posts: %d %v", st, s)
	}
	var home []map[string]any
	a.Eventually("bob's post in ann's home", func() bool {
		home = a.mastoHome(ann)
		return len(home) == 1
	})
	if acc, _ := home[0]["account"].(map[string]any); acc["acct"] != bobAcct || !strings.Contains(home[0]["content"].(string), "from afar") {
		t.Errorf("ann's home: %v", home[0])
	}

	if st, _ := a.MastoForm("POST", "/api/v1/accounts/"+bobThere+"/unfollow", ann.token, nil); st != 200 {
		t.Fatalf("unfollow: %d", st)
	}
	b.Eventually("ann's Undo taken", func() bool {
		_, followers := b.mastoList("/api/v1/accounts/"+bob.id+"/followers", bob.token)
		return len(followers) == 0
	})
}

// A person of another server likes and reposts a post here: counted and
// told as anyone's; their Undo takes each back. A post hidden from them
// is not there to like; one of another server is left alone.
func TestFederationReactionsFromAnotherServer(t *testing.T) {
	ctx := context.Background()
	e, other, base := federatedBeside(t)
	ann := e.register("ann")
	eve := other.Person("eve")
	st, post := e.MastoForm("POST", "/api/v1/statuses", ann.token, url.Values{"status": {"like me"}})
	_, hidden := e.MastoForm("POST", "/api/v1/statuses", ann.token, url.Values{"status": {"friends"}, "visibility": {"private"}})
	if st != 200 {
		t.Fatalf("post: %d", st)
	}
	note := base + "/statuses/" + post["id"].(string)
	send := func(a map[string]any, want int) {
		t.Helper()
		if st, body, _ := other.Send(ctx, eve, base+"/inbox", a); st != want {
			t.Fatalf("%v: %d %s", a["type"], st, body)
		}
	}
	like := map[string]any{"id": eve.URI + "/likes/1", "type": "Like", "actor": eve.URI, "object": note}
	announce := map[string]any{"id": eve.URI + "/announces/1", "type": "Announce", "actor": eve.URI, "object": note,
		"to": []string{federation.PublicCollection}}
	send(like, http.StatusAccepted)
	send(announce, http.StatusAccepted)
	e.Settle()
	counts := func() (any, any) {
		t.Helper()
		r := e.do("GET", "/api/v1/statuses/"+post["id"].(string), ann.token, nil)
		return r.body["favourites_count"], r.body["reblogs_count"]
	}
	if f, rb := counts(); f != float64(1) || rb != float64(1) {
		t.Errorf("after the Like and the Announce: favourites %v, reblogs %v", f, rb)
	}
	if types := e.notificationTypes(ann); !slices.Contains(types, "like") || !slices.Contains(types, "repost") {
		t.Errorf("ann was told: %v", types)
	}
	send(map[string]any{"id": eve.URI + "/likes/1/undo", "type": "Undo", "actor": eve.URI, "object": like}, http.StatusAccepted)
	send(map[string]any{"id": eve.URI + "/announces/1/undo", "type": "Undo", "actor": eve.URI, "object": announce}, http.StatusAccepted)
	e.Settle()
	if f, rb := counts(); f != float64(0) || rb != float64(0) {
		t.Errorf("after the Undos: favourites %v, reblogs %v", f, rb)
	}
	send(map[string]any{"id": eve.URI + "/likes/2", "type": "Like", "actor": eve.URI, "object": base + "/statuses/" + hidden["id"].(string)}, http.StatusNotFound)
	send(map[string]any{"id": eve.URI + "/likes/3", "type": "Like", "actor": eve.URI, "object": "https://far.example/notes/1"}, http.StatusAccepted)
}

// A person here who changes their profile or their lock is told to the
// servers that follow them and those of the people they follow, each
// once: the Update of their actor, signed by them, as their actor reads
// now. A person no one elsewhere follows or is followed by sends nothing.
func TestFederationProfileChangesReachOtherServers(t *testing.T) {
	ctx := context.Background()
	e, other, base := federatedBeside(t)
	third := peer.New()
	t.Cleanup(third.Close)
	ann, cid := e.register("ann"), e.register("cid")
	annActor := base + "/users/" + ann.id
	bob, dan := other.Person("bob"), third.Person("dan")
	follow := map[string]any{"id": bob.URI + "/follows/1", "type": "Follow", "actor": bob.URI, "object": annActor}
	if st, body, _ := other.Send(ctx, bob, base+"/inbox", follow); st != http.StatusAccepted {
		t.Fatalf("Follow: %d %s", st, body)
	}
	e.received(other, 1) // its Accept
	e.followRemote(third, ann, dan)

	// updates returns the Updates of ann's actor a server took since
	// before, checking each is signed by her.
	updates := func(srv *peer.Server, before int) []map[string]any {
		t.Helper()
		var out []map[string]any
		for _, r := range srv.Received()[before:] {
			if r.Activity["type"] != "Update" {
				continue
			}
			if r.Err != nil || r.KeyID != annActor+"#main-key" || r.Activity["actor"] != annActor {
				t.Errorf("an Update as taken: %+v", r)
			}
			obj, _ := r.Activity["object"].(map[string]any)
			out = append(out, obj)
		}
		return out
	}
	before, beforeThird := len(other.Received()), len(third.Received())
	st, _ := e.MastoForm("PATCH", "/api/v1/accounts/update_credentials", ann.token, url.Values{
		"display_name": {"Ann, renamed"}, "note": {"a new bio"},
		"fields_attributes[0][name]": {"site"}, "fields_attributes[0][value]": {"ann.example"}})
	if st != 200 {
		t.Fatalf("update_credentials: %d", st)
	}
	e.Settle()
	for name, got := range map[string][]map[string]any{"the follower's server": updates(other, before), "the followee's server": updates(third, beforeThird)} {
		if len(got) != 1 {
			t.Fatalf("%s took %d Updates of ann's actor, want 1", name, len(got))
		}
		a := got[0]
		attachment, _ := a["attachment"].([]any)
		if a["id"] != annActor || a["type"] != "Person" || a["name"] != "Ann, renamed" || !strings.Contains(fmt.Sprint(a["summary"]), "a new bio") ||
			len(attachment) != 1 || attachment[0].(map[string]any)["name"] != "site" || a["manuallyApprovesFollowers"] != false {
			t.Errorf("%s took %v", name, a)
		}
	}

	// A lock is told as well.
	before = len(other.Received())
	if st, _ := e.MastoForm("PATCH", "/api/v1/accounts/update_credentials", ann.token, url.Values{"locked": {"true"}}); st != 200 {
		t.Fatalf("lock: %d", st)
	}
	e.Settle()
	if got := updates(other, before); len(got) != 1 || got[0]["manuallyApprovesFollowers"] != true || got[0]["name"] != "Ann, renamed" {
		t.Errorf("after the lock, the follower's server took %v", got)
	}

	// cid has no one elsewhere: nothing goes.
	before, beforeThird = len(other.Received()), len(third.Received())
	if st, _ := e.MastoForm("PATCH", "/api/v1/accounts/update_credentials", cid.token, url.Values{"display_name": {"Cid"}}); st != 200 {
		t.Fatalf("cid's update: %d", st)
	}
	e.Settle()
	if n, m := len(other.Received())-before, len(third.Received())-beforeThird; n != 0 || m != 0 {
		t.Errorf("cid's change reached other servers: %d and %d activities", n, m)
	}
}

// A remote person's Update of their actor has their card here read
// again: a new display name shows.
func TestFederationProfileUpdateFromAnotherServer(t *testing.T) {
	ctx := context.Background()
	e, other, base := federatedBeside(t)
	ann := e.register("ann")
	eve := other.Person("eve")
	f := map[string]any{"id": eve.URI + "/follows/1", "type": "Follow", "actor": eve.URI, "object": base + "/users/" + ann.id}
	if st, body, _ := other.Send(ctx, eve, base+"/inbox", f); st != http.StatusAccepted {
		t.Fatalf("Follow: %d %s", st, body)
	}
	acct := "eve@" + other.Domain
	if _, a := e.lookupAccount(acct); a["display_name"] != "Eve of elsewhere" {
		t.Fatalf("eve's card: %v", a["display_name"])
	}
	other.Show(eve, "Eve, renamed")
	up := map[string]any{"id": eve.URI + "#updates/1", "type": "Update", "actor": eve.URI, "object": map[string]any{"id": eve.URI, "type": "Person"}}
	if st, body, _ := other.Send(ctx, eve, base+"/inbox", up); st != http.StatusAccepted {
		t.Fatalf("Update: %d %s", st, body)
	}
	if _, a := e.lookupAccount(acct); a["display_name"] != "Eve, renamed" {
		t.Errorf("after the Update: %v", a["display_name"])
	}
}

// Every route of the ActivityPub face that names a person or a post
// answers what anyone may not see (a post removed, for followers or the
// mentioned, deleted, of a suspended or limited author; a person
// suspended or deleted) as it answers what never existed, and no answer
// carries its text; a route added later is tried without being named
// here.
func TestHiddenAnswersAsAbsentOnActivityPub(t *testing.T) {
	e := newFederatedEnv(t)
	const secret = "the hidden words"
	mo := e.register("moe")
	e.makeAdmin(mo)
	ann, sus, lim, gone := e.register("ann"), e.register("sus"), e.register("lim"), e.register("gone")
	postBy := func(u user, visibility string) string {
		t.Helper()
		form := url.Values{"status": {secret + " @ann"}}
		if visibility != "" {
			form.Set("visibility", visibility)
		}
		st, s := e.MastoForm("POST", "/api/v1/statuses", u.token, form)
		if st != 200 {
			t.Fatalf("post: %d %v", st, s)
		}
		return s["id"].(string)
	}
	hiddenPosts := map[string]string{
		"for followers":         postBy(ann, "private"),
		"for the mentioned":     postBy(ann, "direct"),
		"of a suspended author": postBy(sus, ""),
		"of a limited author":   postBy(lim, ""),
	}
	removed, deleted := postBy(ann, ""), postBy(ann, "")
	hiddenPosts["removed"], hiddenPosts["deleted"] = removed, deleted
	e.Settle() // the posts' jobs ran: each was there
	e.act(mo, map[string]any{"action": "remove", "accountId": ann.id, "activityIds": []string{e.activityID(removed)}, "reason": "spam"})
	if st, _ := e.mastoStatusDelete(ann, deleted); st != 200 {
		t.Fatalf("delete: %d", st)
	}
	e.act(mo, map[string]any{"action": "suspend", "accountId": sus.id, "reason": "spam"})
	e.act(mo, map[string]any{"action": "limit", "accountId": lim.id, "reason": "spam"})
	if r := e.do("DELETE", "/auth/account", gone.token, map[string]string{"password": "password-gone"}); r.status != http.StatusAccepted {
		t.Fatalf("delete account: %d %s", r.status, r.raw)
	}
	e.Settle()
	hiddenPeople := map[string]string{"suspended": sus.id, "deleted": gone.id}

	router, err := app.Router(e.svc, slog.New(slog.DiscardHandler), api.Guard{})
	if err != nil {
		t.Fatal(err)
	}
	tried := 0
	for _, rt := range router.Routes() {
		if rt.Method != http.MethodGet || !activitypub.Path(rt.Path) || !strings.Contains(rt.Path, ":") {
			continue
		}
		names := hiddenPeople
		absentID := "12345"
		if strings.HasPrefix(rt.Path, federation.NotesPath) {
			names, absentID = hiddenPosts, "12345678901234"
		}
		wantStatus, _, want := e.apGet(strings.Replace(rt.Path, ":id", absentID, 1), asJSON)
		for name, id := range names {
			status, _, got := e.apGet(strings.Replace(rt.Path, ":id", id, 1), asJSON)
			tried++
			if status != wantStatus || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("GET %s, %s: %d %v; what never existed: %d %v", rt.Path, name, status, got, wantStatus, want)
			}
			if strings.Contains(fmt.Sprint(got), secret) {
				t.Errorf("GET %s, %s: the answer carries the hidden text", rt.Path, name)
			}
		}
	}
	// Pages that name a person show nothing hidden of theirs.
	for _, path := range []string{"/users/" + ann.id + "/outbox?page=true", "/users/" + lim.id + "/outbox?page=true", "/users/" + ann.id + "/featured"} {
		if _, _, got := e.apGet(path, asJSON); strings.Contains(fmt.Sprint(got), secret) {
			t.Errorf("GET %s carries hidden text: %v", path, got)
		}
	}
	for _, acct := range []string{"sus", "gone"} {
		if status, _, _ := e.apGet("/.well-known/webfinger?resource=acct:"+acct+"@"+fedDomain, "application/jrd+json"); status != 404 {
			t.Errorf("webfinger of %s: %d", acct, status)
		}
	}
	if tried < 16 { // 6 posts at one route, 2 people at 5
		t.Errorf("only %d requests tried", tried)
	}
}

// A post whose followers elsewhere are on two servers goes to both in one
// job (federation.BatchJob); the server that is down is tried again on
// its own, and takes the post once it is up, while the other took it at
// once.
func TestFederationPostsToTwoServersAtOnce(t *testing.T) {
	ctx := context.Background()
	e, up, base := federatedBeside(t)
	down := peer.New()
	t.Cleanup(down.Close)
	ann := e.register("ann")
	annActor := base + "/users/" + ann.id
	for _, other := range []*peer.Server{up, down} {
		p := other.Person("bob")
		f := map[string]any{"id": p.URI + "/follows/ann", "type": "Follow", "actor": p.URI, "object": annActor}
		if st, body, _ := other.Send(ctx, p, base+"/inbox", f); st != http.StatusAccepted {
			t.Fatalf("Follow: %d %s", st, body)
		}
		e.received(other, 1) // the Accept
	}
	down.Unreachable(true)
	st, s := e.MastoForm("POST", "/api/v1/statuses", ann.token, url.Values{"status": {"to two servers"}})
	if st != 200 {
		t.Fatalf("post: %d %v", st, s)
	}
	note := base + "/statuses/" + s["id"].(string)
	created := func(other *peer.Server) bool { return tookCreate(other, note) }
	e.Eventually("the post at the server that is up, and refused by the one down", func() bool {
		return created(up) && down.Refused() > 0
	})
	if created(down) {
		t.Fatal("the server down took the post")
	}
	down.Unreachable(false)
	e.Eventually("the post at the server that was down, tried again", func() bool { return created(down) })
	batches := 0
	for _, l := range e.Logs.Lines("task done") {
		if l["job"] == federation.BatchJob.Name && l["activity"] == note+"/activity" {
			batches++
		}
	}
	if batches != 1 {
		t.Errorf("%d batch jobs of the post logged done, want 1", batches)
	}
}

// tookCreate reports whether other took the Create of note, signed as
// checked.
func tookCreate(other *peer.Server, note string) bool {
	for _, r := range other.Received() {
		if obj, _ := r.Activity["object"].(map[string]any); r.Activity["type"] == "Create" && obj["id"] == note && r.Err == nil {
			return true
		}
	}
	return false
}

// Under the queue's faults (tasks delivered twice, late, failed, timed
// out, created but answered as lost, not created), every post to
// followers on two servers reaches both: a batch that fails runs again
// whole, and an inbox of it that fails is retried on its own.
func TestFederationBatchesUnderTaskFaults(t *testing.T) {
	ctx := context.Background()
	l, addr, err := localstack.Listen()
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvFrom(t, localstack.Options{APIListener: l, Queue: fastRetries,
		Config: app.Config{BackfillMax: 1000, GiveUpAfter: 3 * time.Second, Federation: federation.Config{Domain: addr, AllowLoopback: true}},
		TaskFaults: tasksemu.Faults{Seed: 11, Duplicate: 0.3, Delay: 0.3, MaxDelay: 2 * time.Second, Fail: 0.2, Timeout: 0.15,
			CreateFail: 0.1, CreateLost: 0.1}})
	base := strings.TrimSuffix(e.url, "/")
	servers := []*peer.Server{peer.New(), peer.New()}
	ann := e.register("ann")
	annActor := base + "/users/" + ann.id
	for _, other := range servers {
		t.Cleanup(other.Close)
		p := other.Person("bob")
		f := map[string]any{"id": p.URI + "/follows/ann", "type": "Follow", "actor": p.URI, "object": annActor}
		for try := 0; ; try++ { // the inbox's own job may be refused by a fault: the server sends it again
			if st, _, _ := other.Send(ctx, p, base+"/inbox", f); st == http.StatusAccepted || try == 10 {
				break
			}
		}
		e.received(other, 1) // the Accept
	}
	var notes []string
	for i := range 6 {
		form := url.Values{"status": {fmt.Sprintf("post %d to two servers", i)}}
		st, s := e.MastoForm("POST", "/api/v1/statuses", ann.token, form)
		for try := 0; st == http.StatusServiceUnavailable && try < 10; try++ {
			// A job it enqueues ahead of its commit was refused or lost: no
			// post was made, and the app tries again, as it is told.
			st, s = e.MastoForm("POST", "/api/v1/statuses", ann.token, form)
		}
		if st != 200 {
			t.Fatalf("post %d: %d %v", i, st, s)
		}
		notes = append(notes, base+"/statuses/"+s["id"].(string))
	}
	e.Settle()
	for i, other := range servers {
		got := map[string]bool{}
		for _, r := range other.Received() {
			if obj, _ := r.Activity["object"].(map[string]any); r.Activity["type"] == "Create" && r.Err == nil {
				got[obj["id"].(string)] = true
			}
		}
		for _, n := range notes {
			if !got[n] {
				t.Errorf("server %d never took %s", i, n)
			}
		}
	}
	if n := e.tasks.Server.FaultCounts(); len(n) == 0 {
		t.Error("no fault was injected")
	}
}

// A post goes to the servers of those of other servers who still follow
// its author, and not to one whose follow was undone, whether they are
// checked by key (two remote followers) or against the author's follower
// chunks (four).
func TestFederationPostsToThoseWhoStillFollow(t *testing.T) {
	ctx := context.Background()
	e, first, base := federatedBeside(t)
	servers := []*peer.Server{first}
	for range 3 {
		o := peer.New()
		t.Cleanup(o.Close)
		servers = append(servers, o)
	}
	for _, n := range []int{2, 4} {
		author := e.register(fmt.Sprintf("author%d", n))
		actor := base + "/users/" + author.id
		follows := make([]map[string]any, n)
		for i, o := range servers[:n] {
			p := o.Person(fmt.Sprintf("reader%d", n))
			follows[i] = map[string]any{"id": p.URI + "/follows/" + author.id, "type": "Follow", "actor": p.URI, "object": actor}
			if st, body, _ := o.Send(ctx, p, base+"/inbox", follows[i]); st != http.StatusAccepted {
				t.Fatalf("Follow: %d %s", st, body)
			}
		}
		gone := servers[n-1]
		undo := map[string]any{"id": follows[n-1]["id"].(string) + "/undo", "type": "Undo", "actor": follows[n-1]["actor"], "object": follows[n-1]}
		if st, body, _ := gone.Send(ctx, gone.Person(fmt.Sprintf("reader%d", n)), base+"/inbox", undo); st != http.StatusAccepted {
			t.Fatalf("Undo: %d %s", st, body)
		}
		e.Settle()
		st, s := e.MastoForm("POST", "/api/v1/statuses", author.token, url.Values{"status": {fmt.Sprintf("to %d servers", n-1)}})
		if st != 200 {
			t.Fatalf("post: %d %v", st, s)
		}
		note := base + "/statuses/" + s["id"].(string)
		created := func(o *peer.Server) bool { return tookCreate(o, note) }
		e.Eventually(fmt.Sprintf("the post at the %d servers of those who follow", n-1), func() bool {
			for _, o := range servers[:n-1] {
				if !created(o) {
					return false
				}
			}
			return true
		})
		e.Settle()
		if created(gone) {
			t.Errorf("%d followers: the server whose follow was undone took the post", n)
		}
	}
}
