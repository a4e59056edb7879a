package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"socialstream/internal/federation"
	"socialstream/internal/graph"
	"socialstream/internal/outbox"
	"socialstream/internal/queue"
)

// A person blocks a domain for themselves: its people's posts leave
// their home, its people's mentions tell them nothing, the follows
// between them and its people end both ways (their server told: the
// Undo of the person's Follow, the Reject of theirs), and a new Follow
// from there is rejected; the list shows it, and an unblock lifts it
// (restoring no follow). Bad domains are refused.
func TestFederationPersonDomainBlocks(t *testing.T) {
	e, other, base := federatedBeside(t)
	ann, zed := e.register("ann"), e.register("zed")
	eve, bob := other.Person("eve"), other.Person("bob")
	eveID := e.followRemote(other, ann, eve)
	annActor := base + "/users/" + ann.id
	sendTo(t, other, eve, base, map[string]any{"id": eve.URI + "/follows/ann", "type": "Follow", "actor": eve.URI, "object": annActor}, http.StatusAccepted)
	public := []string{federation.PublicCollection}
	sendTo(t, other, eve, base, remoteCreate(eve, "1", "<p>before the block</p>", public, nil, nil), http.StatusAccepted)
	e.Settle()
	if home := e.mastoHome(ann); len(home) != 1 {
		t.Fatalf("ann's home before: %v", home)
	}

	for _, bad := range []string{"", "not a domain!", "127.0.0.1:" + base[len(base)-5:]} {
		if st, r := e.MastoForm("POST", "/api/v1/domain_blocks", ann.token, url.Values{"domain": {bad}}); st < 400 || st >= 500 {
			t.Errorf("block %q: %d %v", bad, st, r)
		}
	}
	if st, r := e.MastoForm("POST", "/api/v1/domain_blocks", ann.token, url.Values{"domain": {other.Domain}}); st != 200 {
		t.Fatalf("block: %d %v", st, r)
	}
	e.Settle()
	if st, list := e.mastoStrings("/api/v1/domain_blocks", ann.token); st != 200 || !slices.Equal(list, []string{other.Domain}) {
		t.Errorf("the list: %d %v", st, list)
	}
	if home := e.mastoHome(ann); len(home) != 0 {
		t.Errorf("ann's home still shows the domain's posts: %v", home)
	}
	// The public timeline keeps the domain's posts from her alone.
	for _, c := range []struct {
		u    user
		want int
	}{{ann, 0}, {zed, 1}} {
		if st, tl := e.mastoList("/api/v1/timelines/public", c.u.token); st != 200 || len(tl) != c.want {
			t.Errorf("the public timeline as %s: %d, %d statuses, want %d", c.u.name, st, len(tl), c.want)
		}
	}
	st, rel := e.mastoList("/api/v1/accounts/relationships?id[]="+eveID, ann.token)
	if st != 200 || len(rel) != 1 || rel[0]["following"] != false || rel[0]["followed_by"] != false || rel[0]["domain_blocking"] != true {
		t.Errorf("ann and eve after the block: %d %v", st, rel)
	}
	var told []string
	for _, r := range other.Received() {
		if inner, _ := r.Activity["object"].(map[string]any); inner != nil {
			told = append(told, r.Activity["type"].(string)+" "+inner["type"].(string))
		}
	}
	if !slices.Contains(told, "Undo Follow") || !slices.Contains(told, "Reject Follow") {
		t.Errorf("eve's server was told %v", told)
	}

	// From now on: bob's mention tells ann nothing, zed everything; eve's
	// Follow is rejected.
	mention := func(id string) map[string]any {
		return remoteCreate(bob, id, "<p>@ann @zed hello</p>", public, nil, map[string]any{"tag": []any{
			map[string]any{"type": "Mention", "href": annActor, "name": "@ann"},
			map[string]any{"type": "Mention", "href": base + "/users/" + zed.id, "name": "@zed"}}})
	}
	sendTo(t, other, bob, base, mention("5"), http.StatusAccepted)
	before := len(other.Received())
	sendTo(t, other, eve, base, map[string]any{"id": eve.URI + "/follows/ann2", "type": "Follow", "actor": eve.URI, "object": annActor}, http.StatusAccepted)
	e.Settle()
	if types := e.notificationTypes(ann); slices.Contains(types, "mention") {
		t.Errorf("ann was told of a mention from a domain she blocks: %v", types)
	}
	if types := e.notificationTypes(zed); !slices.Contains(types, "mention") {
		t.Errorf("zed was not told of the mention: %v", types)
	}
	if r := e.received(other, before+1)[before]; r.Activity["type"] != "Reject" {
		t.Errorf("eve's new Follow was answered %v", r.Activity["type"])
	}

	if st, r := e.MastoForm("DELETE", "/api/v1/domain_blocks", ann.token, url.Values{"domain": {other.Domain}}); st != 200 {
		t.Fatalf("unblock: %d %v", st, r)
	}
	if st, list := e.mastoStrings("/api/v1/domain_blocks", ann.token); st != 200 || len(list) != 0 {
		t.Errorf("the list after the unblock: %d %v", st, list)
	}
	if st, rel := e.mastoList("/api/v1/accounts/relationships?id[]="+eveID, ann.token); st != 200 || len(rel) != 1 || rel[0]["domain_blocking"] != false {
		t.Errorf("ann and eve after the unblock: %d %v", st, rel)
	}
	if home := e.mastoHome(ann); len(home) != 0 {
		t.Errorf("the unblock restored a follow: %v", home)
	}
}

// mastoStrings GETs a Mastodon list of strings as token.
func (e *env) mastoStrings(path, token string) (int, []string) {
	e.t.Helper()
	r := e.do("GET", path, token, nil)
	var out []string
	if r.status == http.StatusOK {
		if err := json.Unmarshal([]byte(r.raw), &out); err != nil {
			e.t.Fatalf("%s: %v: %s", path, err, r.raw)
		}
	}
	return r.status, out
}

// Reports cross servers: a report here of a person of another server
// goes to their server as a Flag from the deployment's own actor, naming
// them and their posts, only when its reporter asks (forward); another
// server's Flag of a person here is a report in the moderators' queue,
// against them, with their post it names.
func TestFederationReportsAcrossServers(t *testing.T) {
	e, other, base := federatedBeside(t)
	ada, ann := e.register("ada"), e.register("ann")
	e.makeAdmin(ada)
	eve, bob := other.Person("eve"), other.Person("bob")
	eveID := e.followRemote(other, ann, eve)
	sendTo(t, other, eve, base, remoteCreate(eve, "1", "<p>buy now</p>", []string{federation.PublicCollection}, nil, nil), http.StatusAccepted)
	e.Settle()
	home := e.mastoHome(ann)
	if len(home) != 1 {
		t.Fatalf("ann's home: %v", home)
	}
	before := len(other.Received())
	for _, forward := range []string{"false", "true"} {
		st, r := e.MastoForm("POST", "/api/v1/reports", ann.token, url.Values{"account_id": {eveID},
			"status_ids[]": {home[0]["id"].(string)}, "comment": {"spam, " + forward}, "forward": {forward}})
		if st != 200 || r["forwarded"] != (forward == "true") {
			t.Fatalf("report, forward %s: %d %v", forward, st, r)
		}
		e.Settle()
	}
	told := e.received(other, before+1)[before:]
	if len(told) != 1 || told[0].Activity["type"] != "Flag" || told[0].Err != nil {
		t.Fatalf("eve's server was told: %+v", told)
	}
	flag := told[0].Activity
	objects, _ := flag["object"].([]any)
	if flag["actor"] != base+"/actor" || flag["content"] != "spam, true" || len(objects) != 2 ||
		objects[0] != eve.URI || objects[1] != eve.URI+"/statuses/1" {
		t.Errorf("the Flag: %v", flag)
	}

	// bob's server reports ann's post.
	post := e.post(ann, "something rude")
	annActor := base + "/users/" + ann.id
	sendTo(t, other, bob, base, map[string]any{"id": bob.URI + "/flags/1", "type": "Flag", "actor": bob.URI, "content": "rude",
		"object": []string{annActor, base + "/statuses/" + number(t, post)}}, http.StatusAccepted)
	sendTo(t, other, bob, base, map[string]any{"id": bob.URI + "/flags/2", "type": "Flag", "actor": bob.URI, "content": "who?",
		"object": []string{base + "/users/nobody"}}, http.StatusNotFound)
	got := e.list(e.do("GET", "/social/rest/moderation/reports", ada.token, nil))
	if len(got) != 3 { // ann's two, then bob's server's, newest first
		t.Fatalf("the moderators' queue: %v", got)
	}
	q := e.entry(e.do("GET", "/social/rest/moderation/reports/"+got[0], ada.token, nil))
	acts, _ := q["activities"].([]any)
	if q["accountId"] != ann.id || q["comment"] != "rude" || len(acts) != 1 {
		t.Errorf("the report from bob's server: %v", q)
	}
}

// The jobs that follow a block wait for it and do nothing once it is
// undone: a domain cut for a block not yet shown waits (a retry), then,
// past the wait, or after the unblock, ends having ended nothing; a
// Block's job for a block lifted since sends nothing past its wait.
func TestFederationBlockJobsWaitAndGiveUp(t *testing.T) {
	ctx := context.Background()
	e, other, _ := federatedBeside(t)
	ann := e.register("ann")
	eve := other.Person("eve")
	eveID := e.followRemote(other, ann, eve)
	now := time.Now()
	early := graph.DomainCutTask{User: ann.id, Domain: other.Domain, At: now.UnixMicro()}
	if _, err := e.svc.Graph.DomainCut(ctx, early); !errors.Is(err, queue.ErrNotYet) {
		t.Errorf("a cut before its block shows: %v, want a retry", err)
	}
	late := early
	late.At = now.Add(-queue.GiveUpAfter - time.Minute).UnixMicro()
	if n, err := e.svc.Graph.DomainCut(ctx, late); n != 0 || err != nil {
		t.Errorf("a cut past its wait: %d, %v", n, err)
	}
	if st, rel := e.mastoList("/api/v1/accounts/relationships?id[]="+eveID, ann.token); st != 200 || rel[0]["following"] != true {
		t.Fatalf("a cut of no block ended a follow: %v", rel)
	}
	// The block shows: the same task, retried, ends the follow.
	if err := e.svc.Graph.BlockDomain(ctx, ann.id, other.Domain); err != nil {
		t.Fatal(err)
	}
	e.Settle()
	if n, err := e.svc.Graph.DomainCut(ctx, early); n != 0 || err != nil {
		t.Errorf("the cut run again, after its job: %d, %v (nothing left to end)", n, err)
	}
	if st, rel := e.mastoList("/api/v1/accounts/relationships?id[]="+eveID, ann.token); st != 200 || rel[0]["following"] != false {
		t.Errorf("after the block: %v", rel)
	}

	// A Block's job for a block that does not stand: a retry while it
	// may yet commit, nothing sent past that.
	before := len(other.Received())
	bt := outbox.BlockTask{Blocker: ann.id, Blocked: eveID, At: now.UnixMicro()}
	if _, err := e.svc.Federation.Block(ctx, bt); !errors.Is(err, queue.ErrNotYet) {
		t.Errorf("a Block's job before its block: %v, want a retry", err)
	}
	bt.At = now.Add(-queue.GiveUpAfter - time.Minute).UnixMicro()
	if out, err := e.svc.Federation.Block(ctx, bt); err != nil || !strings.Contains(out, "not sent") {
		t.Errorf("a Block's job past its wait: %q, %v", out, err)
	}
	e.Settle()
	if got := other.Received()[before:]; len(got) != 0 {
		t.Errorf("sent for a block that never stood: %+v", got)
	}
}
