package api_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"socialstream/internal/federation"
	"socialstream/internal/federation/peer"
)

// remoteCreate is the Create of a Note of p's (its id p's address
// /statuses/id), with extra fields of the Note.
func remoteCreate(p *peer.Person, id, content string, to, cc []string, extra map[string]any) map[string]any {
	n := map[string]any{"id": p.URI + "/statuses/" + id, "type": "Note", "attributedTo": p.URI, "content": content,
		"to": to, "cc": cc, "published": time.Now().UTC().Format(time.RFC3339)}
	for k, v := range extra {
		n[k] = v
	}
	return map[string]any{"@context": "https://www.w3.org/ns/activitystreams", "id": n["id"].(string) + "/activity",
		"type": "Create", "actor": p.URI, "object": n}
}

// sendTo posts activity a, signed as from, to the shared inbox at base,
// and wants status want.
func sendTo(t *testing.T, other *peer.Server, from *peer.Person, base string, a map[string]any, want int) {
	t.Helper()
	if st, body, _ := other.Send(context.Background(), from, base+"/inbox", a); st != want {
		t.Fatalf("%v %v: %d %s", a["type"], a["id"], st, body)
	}
}

// Replies cross servers both ways: a remote person's reply to their own
// post (a thread) and another's reply to it, naming its author, are
// replies here; a reply here to a post of another server names that
// Note as what it answers, and goes to its server even when no one
// there follows the replier.
func TestFederationRepliesAcrossServers(t *testing.T) {
	e, other, base := federatedBeside(t)
	ann := e.register("ann")
	eve, bob := other.Person("eve"), other.Person("bob")
	e.followRemote(other, ann, eve)
	if st, _ := e.lookupAccountAs(ann, "bob@"+other.Domain); st != 200 { // bob is known here, followed by no one
		t.Fatalf("lookup bob: %d", st)
	}
	public, followers := []string{federation.PublicCollection}, []string{eve.URI + "/followers"}
	annActor := base + "/users/" + ann.id

	sendTo(t, other, eve, base, remoteCreate(eve, "1", "<p>the first</p>", public, followers, nil), http.StatusAccepted)
	sendTo(t, other, eve, base, remoteCreate(eve, "2", "<p>and more</p>", public, followers,
		map[string]any{"inReplyTo": eve.URI + "/statuses/1"}), http.StatusAccepted)
	sendTo(t, other, bob, base, remoteCreate(bob, "9", `<p>@eve @ann agreed</p>`, public, []string{bob.URI + "/followers"},
		map[string]any{"inReplyTo": eve.URI + "/statuses/1", "tag": []any{
			map[string]any{"type": "Mention", "href": eve.URI, "name": "@eve@" + other.Domain},
			map[string]any{"type": "Mention", "href": annActor, "name": "@ann"}}}), http.StatusAccepted)
	// A reply to something not kept here is a post of its own.
	sendTo(t, other, eve, base, remoteCreate(eve, "3", "<p>elsewhere</p>", public, followers,
		map[string]any{"inReplyTo": "https://far.example/notes/1"}), http.StatusAccepted)
	e.Settle()

	home := e.mastoHome(ann)
	byText := map[string]map[string]any{}
	for _, s := range home {
		byText[plain(s["content"])] = s
	}
	first, more, lone := byText["the first"], byText["and more"], byText["elsewhere"]
	if first == nil || more == nil || lone == nil {
		t.Fatalf("ann's home: %v", home)
	}
	if more["in_reply_to_id"] != first["id"] || lone["in_reply_to_id"] != nil {
		t.Errorf("eve's thread: %v answers %v; the lone reply answers %v", more["in_reply_to_id"], first["id"], lone["in_reply_to_id"])
	}
	_, ctxBody := e.MastoForm("GET", "/api/v1/statuses/"+first["id"].(string)+"/context", ann.token, nil)
	desc, _ := ctxBody["descendants"].([]any)
	if len(desc) != 2 {
		t.Fatalf("the first post's replies here: %v", ctxBody)
	}
	for _, d := range desc {
		if d.(map[string]any)["in_reply_to_id"] != first["id"] {
			t.Errorf("a reply: %v", d)
		}
	}

	// ann answers eve's first post: eve's server is told, with what it
	// answers named by its Note's address.
	before := len(other.Received())
	st, r := e.MastoForm("POST", "/api/v1/statuses", ann.token, url.Values{"status": {"thank you"}, "in_reply_to_id": {first["id"].(string)}})
	if st != 200 {
		t.Fatalf("reply: %d %v", st, r)
	}
	e.Settle()
	told := e.received(other, before+1)[before:]
	if len(told) != 1 || told[0].Activity["type"] != "Create" || told[0].Err != nil {
		t.Fatalf("eve's server was told: %+v", told)
	}
	if n, _ := told[0].Activity["object"].(map[string]any); n["inReplyTo"] != eve.URI+"/statuses/1" {
		t.Errorf("the reply's Note answers %v", n["inReplyTo"])
	}
	_, _, n := e.apGet("/statuses/"+r["id"].(string), "application/activity+json")
	if n["inReplyTo"] != eve.URI+"/statuses/1" {
		t.Errorf("the reply's Note, read here, answers %v", n["inReplyTo"])
	}
}

var htmlTag = regexp.MustCompile(`<[^>]*>`)

// plain is a Mastodon status's content with its tags dropped.
func plain(content any) string {
	s, _ := content.(string)
	return strings.TrimSpace(html.UnescapeString(htmlTag.ReplaceAllString(s, "")))
}

// Edits cross servers both ways: a remote person's Update of a Note
// edits its post here (an older Update, come late, is left alone; an
// Update of a Note never taken is taken as it is now); an edit here
// sends the Update of its Note to the servers the post went to.
func TestFederationEditsAcrossServers(t *testing.T) {
	e, other, base := federatedBeside(t)
	ann := e.register("ann")
	eve := other.Person("eve")
	e.followRemote(other, ann, eve)
	public, followers := []string{federation.PublicCollection}, []string{eve.URI + "/followers"}
	update := func(id, content string, at time.Time) map[string]any {
		a := remoteCreate(eve, id, content, public, followers, map[string]any{"updated": at.UTC().Format(time.RFC3339)})
		a["type"], a["id"] = "Update", fmt.Sprintf("%s/statuses/%s#updates/%d", eve.URI, id, at.Unix())
		return a
	}
	now := time.Now()
	sendTo(t, other, eve, base, remoteCreate(eve, "1", "<p>as first written</p>", public, followers, nil), http.StatusAccepted)
	sendTo(t, other, eve, base, update("1", "<p>as last written</p>", now.Add(2*time.Second)), http.StatusAccepted)
	sendTo(t, other, eve, base, update("1", "<p>as written between</p>", now.Add(time.Second)), http.StatusAccepted) // late
	sendTo(t, other, eve, base, update("2", "<p>never seen before</p>", now), http.StatusAccepted)
	e.Settle()
	home := e.mastoHome(ann)
	if len(home) != 2 || plain(home[0]["content"]) != "never seen before" || plain(home[1]["content"]) != "as last written" ||
		home[1]["edited_at"] == nil {
		t.Fatalf("ann's home: %v", home)
	}

	// ann's post to eve, edited: eve's server is sent its Update.
	st, r := e.MastoForm("POST", "/api/v1/statuses", ann.token, url.Values{"status": {"hello @eve@" + other.Domain}})
	if st != 200 {
		t.Fatalf("post: %d %v", st, r)
	}
	created := e.received(other, len(other.Received())+1)
	before := len(other.Received())
	if st, r := e.MastoForm("PUT", "/api/v1/statuses/"+r["id"].(string), ann.token, url.Values{"status": {"hello again @eve@" + other.Domain}}); st != 200 {
		t.Fatalf("edit: %d %v", st, r)
	}
	e.Settle()
	told := e.received(other, before+1)[before:]
	if len(told) != 1 || told[0].Activity["type"] != "Update" || told[0].Err != nil {
		t.Fatalf("eve's server was told of the edit: %+v", told)
	}
	n, _ := told[0].Activity["object"].(map[string]any)
	was, _ := created[len(created)-1].Activity["object"].(map[string]any)
	if n["id"] != was["id"] || !strings.Contains(n["content"].(string), "hello again") || n["updated"] == nil ||
		told[0].Activity["id"] == created[len(created)-1].Activity["id"] {
		t.Errorf("the Update: %v, of the Create %v", told[0].Activity, created[len(created)-1].Activity)
	}

	// A post that names no one elsewhere, edited: it goes to ann's
	// follower there, eve, and so does its Update.
	sendTo(t, other, eve, base, map[string]any{"id": eve.URI + "/follows/ann", "type": "Follow", "actor": eve.URI,
		"object": base + "/users/" + ann.id}, http.StatusAccepted)
	e.Settle()
	_, plainPost := e.MastoForm("POST", "/api/v1/statuses", ann.token, url.Values{"status": {"for my followers"}})
	e.Settle()
	before = len(other.Received())
	if st, r := e.MastoForm("PUT", "/api/v1/statuses/"+plainPost["id"].(string), ann.token, url.Values{"status": {"for my followers, edited"}}); st != 200 {
		t.Fatalf("edit: %d %v", st, r)
	}
	e.Settle()
	if told := e.received(other, before+1)[before:]; told[0].Activity["type"] != "Update" {
		t.Errorf("eve's server was told of the plain post's edit: %+v", told)
	}
}

// Blocks cross servers both ways: a block here of a person of another
// server ends the follow and sends them the Block (to their own inbox),
// an unblock its Undo; a remote person's Block of a person here is their
// block, which the relationship shows, and its Undo lifts it.
func TestFederationBlocksAcrossServers(t *testing.T) {
	e, other, base := federatedBeside(t)
	ann := e.register("ann")
	eve, bob := other.Person("eve"), other.Person("bob")
	eveID := e.followRemote(other, ann, eve)

	before := len(other.Received())
	for _, verb := range []string{"block", "unblock"} {
		if st, r := e.MastoForm("POST", "/api/v1/accounts/"+eveID+"/"+verb, ann.token, nil); st != 200 || r["following"] != false {
			t.Fatalf("%s: %d %v", verb, st, r)
		}
		e.Settle()
	}
	told := e.received(other, before+2)[before:]
	if len(told) != 2 || told[0].Activity["type"] != "Block" || told[0].Activity["object"] != eve.URI ||
		told[0].Activity["actor"] != base+"/users/"+ann.id || told[0].Inbox == "/inbox" || told[0].Err != nil {
		t.Fatalf("eve's server was told of the block: %+v", told)
	}
	if undone, _ := told[1].Activity["object"].(map[string]any); told[1].Activity["type"] != "Undo" || undone["id"] != told[0].Activity["id"] ||
		undone["type"] != "Block" || told[1].Err != nil {
		t.Errorf("the Undo: %+v", told[1])
	}
	// Blocked again: sent again, though the Block's id is the same.
	if st, r := e.MastoForm("POST", "/api/v1/accounts/"+eveID+"/block", ann.token, nil); st != 200 {
		t.Fatalf("block again: %d %v", st, r)
	}
	e.Settle()
	if again := e.received(other, before+3)[before+2]; again.Activity["type"] != "Block" || again.Activity["id"] != told[0].Activity["id"] {
		t.Errorf("the second Block: %+v", again)
	}

	// bob, of the other server, blocks ann, then lifts it.
	st, found := e.lookupAccountAs(ann, "bob@"+other.Domain)
	if st != 200 {
		t.Fatalf("lookup bob: %d", st)
	}
	bobID := found["id"].(string)
	annActor := base + "/users/" + ann.id
	relation := func() map[string]any {
		t.Helper()
		st, rel := e.mastoList("/api/v1/accounts/relationships?id[]="+bobID, ann.token)
		if st != 200 || len(rel) != 1 {
			t.Fatalf("relationships: %d %v", st, rel)
		}
		return rel[0]
	}
	block := map[string]any{"id": bob.URI + "/blocks/1", "type": "Block", "actor": bob.URI, "object": annActor}
	sendTo(t, other, bob, base, block, http.StatusAccepted)
	if r := relation(); r["blocked_by"] != true {
		t.Errorf("after bob's Block: %v", r)
	}
	if st, r := e.MastoForm("POST", "/api/v1/accounts/"+bobID+"/follow", ann.token, nil); st == 200 {
		t.Errorf("ann followed bob, who blocks her: %v", r)
	}
	sendTo(t, other, bob, base, map[string]any{"id": bob.URI + "/blocks/1/undo", "type": "Undo", "actor": bob.URI, "object": block}, http.StatusAccepted)
	if r := relation(); r["blocked_by"] != false {
		t.Errorf("after its Undo: %v", r)
	}
	sendTo(t, other, bob, base, map[string]any{"id": bob.URI + "/blocks/2", "type": "Block", "actor": bob.URI,
		"object": base + "/users/nobody"}, http.StatusNotFound)
}

// A remote person's server tells of their deletion: their account here
// goes, erased as any (their posts leave their followers' homes, the
// follows end), and what is kept of their actor with it; another's
// Delete of them is not theirs to send.
func TestFederationRemotePersonDeleted(t *testing.T) {
	e, other, base := federatedBeside(t)
	ann := e.register("ann")
	eve, bob := other.Person("eve"), other.Person("bob")
	eveID := e.followRemote(other, ann, eve)
	e.followRemote(other, ann, bob)
	sendTo(t, other, eve, base, remoteCreate(eve, "1", "<p>soon gone</p>", []string{federation.PublicCollection}, nil, nil), http.StatusAccepted)
	e.Settle()
	if home := e.mastoHome(ann); len(home) != 1 {
		t.Fatalf("ann's home: %v", home)
	}
	deletion := map[string]any{"@context": "https://www.w3.org/ns/activitystreams", "id": eve.URI + "#delete",
		"type": "Delete", "actor": eve.URI, "object": eve.URI, "to": []string{federation.PublicCollection}}
	forged := map[string]any{"id": bob.URI + "#delete-eve", "type": "Delete", "actor": bob.URI, "object": eve.URI}
	sendTo(t, other, bob, base, forged, http.StatusAccepted) // taken, and nothing comes of it
	if st, _ := e.MastoForm("GET", "/api/v1/accounts/"+eveID, ann.token, nil); st != 200 {
		t.Fatalf("eve after bob's Delete of her: %d", st)
	}
	// A Note of hers deleted before it came: its record is hers too.
	sendTo(t, other, eve, base, map[string]any{"id": eve.URI + "/statuses/9#delete", "type": "Delete", "actor": eve.URI,
		"object": eve.URI + "/statuses/9"}, http.StatusAccepted)
	other.Gone(eve)
	sendTo(t, other, eve, base, deletion, http.StatusAccepted) // her key, kept, checks it
	e.Settle()
	if found, _ := mentionsOf(t, e.db, eveID); len(found) > 0 {
		t.Errorf("erased, eve is still named: %v", found)
	}
	if st, r := e.MastoForm("GET", "/api/v1/accounts/"+eveID, ann.token, nil); st != 404 {
		t.Errorf("eve after her Delete: %d %v", st, r)
	}
	if home := e.mastoHome(ann); len(home) != 0 {
		t.Errorf("ann's home still has eve's post: %v", home)
	}
	if st, me := e.MastoForm("GET", "/api/v1/accounts/verify_credentials", ann.token, nil); st != 200 || me["following_count"] != float64(1) {
		t.Errorf("ann follows: %v", me["following_count"])
	}
	// Sent again (a server retries): her key is no longer known, nor can
	// it be fetched; nothing of her comes back.
	if st, body, _ := other.Send(context.Background(), eve, base+"/inbox", deletion); st >= 500 || st == http.StatusAccepted {
		t.Errorf("her Delete again: %d %s", st, body)
	}
	if st, r := e.lookupAccountAs(ann, "eve@"+other.Domain); st != 404 {
		t.Errorf("eve found again: %d %v", st, r)
	}
}

// A person here deletes their account: the servers of their remote
// followers are sent the Delete of their actor, signed with their key
// (which other servers kept: their actor is gone), and the key pair
// outlives the account until the deliveries' retries are over.
func TestFederationPersonHereDeleted(t *testing.T) {
	ctx := context.Background()
	e, other, base := federatedBeside(t)
	ann := e.register("ann")
	eve := other.Person("eve")
	annActor := base + "/users/" + ann.id
	sendTo(t, other, eve, base, map[string]any{"id": eve.URI + "/follows/1", "type": "Follow", "actor": eve.URI, "object": annActor}, http.StatusAccepted)
	if accept := e.received(other, 1)[0]; accept.Activity["type"] != "Accept" || accept.Err != nil {
		t.Fatalf("eve's follow: %+v", accept)
	}
	if r := e.do("DELETE", "/auth/account", ann.token, map[string]string{"password": "password-ann"}); r.status != http.StatusAccepted {
		t.Fatalf("delete: %d %s", r.status, r.raw)
	}
	e.Settle()
	told := e.received(other, 2)[1:]
	if len(told) != 1 || told[0].Activity["type"] != "Delete" || told[0].Activity["object"] != annActor ||
		told[0].Activity["actor"] != annActor || told[0].Err != nil || told[0].Inbox != "/inbox" {
		t.Fatalf("eve's server was told: %+v", told)
	}
	if st, _, _ := e.apGet("/users/"+ann.id, "application/activity+json"); st != http.StatusNotFound {
		t.Errorf("ann's actor after: %d", st)
	}
	if _, ok, err := e.svc.Keys.Stored(ctx, ann.id); !ok || err != nil {
		t.Fatalf("ann's key went with the erasure, before the deliveries' retries are over (%v)", err)
	}
	if e.tasks.Server.Scheduled() != 1 {
		t.Errorf("scheduled: %d, want the key's erasure", e.tasks.Server.Scheduled())
	}
	if err := e.svc.Federation.ForgetKey(ctx, federation.ForgetKeyTask{User: ann.id}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := e.svc.Keys.Stored(ctx, ann.id); ok || err != nil {
		t.Errorf("ann's key after its erasure: %v %v", ok, err)
	}
}

// A post that mentions someone of another server the service does not
// know yet finds them as it is made (their WebFinger, their actor): the
// post mentions them, and goes to their server; a name no server knows
// is no mention, and the post is made all the same. The post's read step
// finds them (package activities), through REST as through Mastodon's.
func TestFederationMentionOfSomeoneNotKnown(t *testing.T) {
	e, other, _ := federatedBeside(t)
	ann := e.register("ann")
	carl := other.Person("carl")
	before := len(other.Received())
	st, r := e.MastoForm("POST", "/api/v1/statuses", ann.token, url.Values{
		"status": {"hello @carl@" + other.Domain + " and @nobody@" + other.Domain}, "visibility": {"direct"}})
	if st != 200 {
		t.Fatalf("post: %d %v", st, r)
	}
	if mentions, _ := r["mentions"].([]any); len(mentions) != 1 || mentions[0].(map[string]any)["acct"] != "carl@"+other.Domain {
		t.Errorf("the post's mentions: %v", r["mentions"])
	}
	e.Settle()
	told := e.received(other, before+1)[before:]
	n, _ := told[0].Activity["object"].(map[string]any)
	if len(told) != 1 || told[0].Activity["type"] != "Create" || told[0].Err != nil || !slices.Contains(anyStrings(n["to"]), carl.URI) {
		t.Errorf("carl's server was told: %+v", told)
	}
	// The domain finds them, whatever the face: a post by REST too.
	other.Person("dora")
	r2 := e.do("POST", "/social/rest/activities/@me/@self", ann.token, map[string]string{"title": "hi @dora@" + other.Domain})
	if mentions, _ := e.entry(r2)["mentions"].([]any); r2.status != 201 || len(mentions) != 1 {
		t.Errorf("the REST post's mentions: %d %s", r2.status, r2.raw)
	}
}

// anyStrings reads a JSON list of strings.
func anyStrings(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// A Note's Delete may overtake its Create, and a Create or an Update of
// it come again after its Delete (a server retries, late): a Note its
// server deleted makes no post here, whichever comes first. Found by
// the convergence checker's other server.
func TestFederationDeleteOvertakesCreate(t *testing.T) {
	e, other, base := federatedBeside(t)
	ann := e.register("ann")
	eve := other.Person("eve")
	e.followRemote(other, ann, eve)
	public, followers := []string{federation.PublicCollection}, []string{eve.URI + "/followers"}
	del := func(n string) map[string]any {
		return map[string]any{"id": eve.URI + "/statuses/" + n + "#delete", "type": "Delete", "actor": eve.URI,
			"object": map[string]any{"id": eve.URI + "/statuses/" + n, "type": "Tombstone"}}
	}

	// The Delete first, then its Create, twice, and an Update.
	sendTo(t, other, eve, base, del("1"), http.StatusAccepted)
	first := remoteCreate(eve, "1", "<p>overtaken</p>", public, followers, nil)
	sendTo(t, other, eve, base, first, http.StatusAccepted)
	sendTo(t, other, eve, base, first, http.StatusAccepted)
	update := remoteCreate(eve, "1", "<p>overtaken, edited</p>", public, followers,
		map[string]any{"updated": time.Now().UTC().Format(time.RFC3339)})
	update["type"], update["id"] = "Update", eve.URI+"/statuses/1#updates/1"
	sendTo(t, other, eve, base, update, http.StatusAccepted)

	// Kept, deleted, then its Create again.
	second := remoteCreate(eve, "2", "<p>kept a while</p>", public, followers, nil)
	sendTo(t, other, eve, base, second, http.StatusAccepted)
	if home := e.mastoHome(ann); len(home) != 1 || plain(home[0]["content"]) != "kept a while" {
		t.Fatalf("ann's home, before the Delete: %v", home)
	}
	sendTo(t, other, eve, base, del("2"), http.StatusAccepted)
	sendTo(t, other, eve, base, second, http.StatusAccepted)
	e.Settle()
	if home := e.mastoHome(ann); len(home) != 0 {
		t.Fatalf("ann's home shows a Note its server deleted: %v", home)
	}

	// Another Note is taken as ever.
	sendTo(t, other, eve, base, remoteCreate(eve, "3", "<p>still here</p>", public, followers, nil), http.StatusAccepted)
	if home := e.mastoHome(ann); len(home) != 1 || plain(home[0]["content"]) != "still here" {
		t.Errorf("ann's home after: %v", home)
	}
}

// A Note's mentions are its tags, as Mastodon reads them: a Mention tag
// of a person here mentions and tells them whatever the text says, and
// an @name in the text with no tag mentions no one. An Update that
// tags someone new tells them.
func TestFederationMentionsAreTheNotesTags(t *testing.T) {
	ctx := context.Background()
	e, other, base := federatedBeside(t)
	ann, zed, bob := e.register("ann"), e.register("zed"), e.register("bob")
	eve := other.Person("eve")
	e.followRemote(other, ann, eve)
	zedTag := map[string]any{"type": "Mention", "href": base + "/users/" + zed.id, "name": "@zed@" + strings.TrimPrefix(base, "http://")}
	note := func(typ, id, content string, tags ...any) map[string]any {
		n := map[string]any{"id": eve.URI + "/statuses/" + id, "type": "Note", "attributedTo": eve.URI, "content": content,
			"to": []string{federation.PublicCollection}, "cc": []string{eve.URI + "/followers"}, "tag": tags,
			"published": time.Now().UTC().Format(time.RFC3339)}
		if typ == "Update" {
			n["updated"] = time.Now().UTC().Add(time.Second).Format(time.RFC3339)
		}
		return map[string]any{"@context": "https://www.w3.org/ns/activitystreams", "id": eve.URI + "/statuses/" + id + "/" + typ,
			"type": typ, "actor": eve.URI, "object": n}
	}
	for _, a := range []map[string]any{
		note("Create", "1", "<p>for you, whoever you are</p>", zedTag), // tagged, not in the text
		note("Create", "2", "<p>hi @bob and @zed</p>"),                 // in the text, not tagged
	} {
		if st, body, _ := other.Send(ctx, eve, base+"/inbox", a); st != http.StatusAccepted {
			t.Fatalf("%v: %d %s", a["id"], st, body)
		}
	}
	e.Settle()
	which := func(s map[string]any) string { // which Note a status is, by its text
		if strings.Contains(fmt.Sprint(s["content"]), "whoever") {
			return "1"
		}
		return "2"
	}
	mentioned := func(u user) map[string]bool {
		t.Helper()
		st, list := e.mastoList("/api/v1/notifications?types[]=mention", u.token)
		if st != 200 {
			t.Fatalf("notifications of %s: %d", u.name, st)
		}
		out := map[string]bool{}
		for _, n := range list {
			s, _ := n["status"].(map[string]any)
			out[which(s)] = true
		}
		return out
	}
	if got := mentioned(zed); !got["1"] || got["2"] || len(got) != 1 {
		t.Errorf("zed is told of the mentions of %v, want the tagged Note's alone", got)
	}
	if got := mentioned(bob); len(got) != 0 {
		t.Errorf("bob, named in a text with no tag, is told of %v", got)
	}
	for _, s := range e.mastoHome(ann) {
		var accts []string
		for _, m := range s["mentions"].([]any) {
			accts = append(accts, fmt.Sprint(m.(map[string]any)["acct"]))
		}
		want := map[string][]string{"1": {"zed"}, "2": nil}[which(s)]
		if !slices.Equal(accts, want) {
			t.Errorf("status %v mentions %v, want %v", s["content"], accts, want)
		}
	}

	// An Update of the second that tags zed tells zed.
	if st, body, _ := other.Send(ctx, eve, base+"/inbox", note("Update", "2", "<p>hi @bob and @zed, now tagged</p>", zedTag)); st != http.StatusAccepted {
		t.Fatalf("Update: %d %s", st, body)
	}
	e.Settle()
	if got := mentioned(zed); !got["1"] || !got["2"] {
		t.Errorf("after the Update, zed is told of %v", got)
	}
	if got := mentioned(bob); len(got) != 0 {
		t.Errorf("after the Update, bob is told of %v", got)
	}
}
