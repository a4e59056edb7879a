package api_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"socialstream/internal/federation"
	"socialstream/internal/federation/peer"
)

// question is the Create of a Question of p's: its options with their
// counts there, one choice or several, open until end.
func question(p *peer.Person, id string, options []string, counts []int, voters int, multiple bool, end time.Time, to, cc []string) map[string]any {
	var opts []any
	for i, o := range options {
		opts = append(opts, map[string]any{"type": "Note", "name": o, "replies": map[string]any{"type": "Collection", "totalItems": counts[i]}})
	}
	key := "oneOf"
	if multiple {
		key = "anyOf"
	}
	a := remoteCreate(p, id, "<p>which one?</p>", to, cc, map[string]any{key: opts, "endTime": end.UTC().Format(time.RFC3339), "votersCount": voters})
	a["object"].(map[string]any)["type"] = "Question"
	return a
}

// pollOf reads the poll of a Mastodon status: its option counts, its
// voters, and whether the reader voted.
func pollOf(t *testing.T, st map[string]any) (counts []float64, voters float64, voted bool) {
	t.Helper()
	p, _ := st["poll"].(map[string]any)
	if p == nil {
		t.Fatalf("no poll on %v", st)
	}
	for _, o := range p["options"].([]any) {
		n, _ := o.(map[string]any)["votes_count"].(float64)
		counts = append(counts, n)
	}
	voters, _ = p["voters_count"].(float64)
	voted, _ = p["voted"].(bool)
	return counts, voters, voted
}

// Polls cross servers both ways, as Questions. A Question of another
// server's is a post with its poll here, its counts its server's; a vote
// here shows at once on top of them and goes to its server as a Note
// named by the option; the Update that counts it brings the counts. A
// poll here goes out as a Question, and a vote of a person there, a
// Note in reply to it, counts once, each choice of a poll of several.
func TestFederationPollsAcrossServers(t *testing.T) {
	e, other, base := federatedBeside(t)
	ann := e.register("ann")
	eve := other.Person("eve")
	e.followRemote(other, ann, eve)
	public, followers := []string{federation.PublicCollection}, []string{eve.URI + "/followers"}
	end := time.Now().Add(24 * time.Hour).Truncate(time.Second)
	sendTo(t, other, eve, base, question(eve, "q1", []string{"tea", "coffee"}, []int{3, 1}, 4, false, end, public, followers), http.StatusAccepted)
	e.Settle()
	home := e.mastoHome(ann)
	if len(home) != 1 {
		t.Fatalf("ann's home: %v", home)
	}
	st := home[0]
	if counts, voters, voted := pollOf(t, st); counts[0] != 3 || counts[1] != 1 || voters != 4 || voted {
		t.Fatalf("the Question's poll here: %v", st["poll"])
	}

	// ann votes: it counts at once, and goes to eve's server.
	before := len(other.Received())
	pollID := st["poll"].(map[string]any)["id"].(string)
	if code, r := e.MastoForm("POST", "/api/v1/polls/"+pollID+"/votes", ann.token, url.Values{"choices[]": {"1"}}); code != 200 {
		t.Fatalf("ann's vote: %d %v", code, r)
	} else if counts, voters, voted := pollOf(t, map[string]any{"poll": r}); counts[1] != 2 || voters != 5 || !voted {
		t.Errorf("the poll after ann's vote: %v", r)
	}
	e.Settle()
	sent := e.received(other, before+1)[before:]
	if len(sent) != 1 || sent[0].Err != nil || sent[0].Activity["type"] != "Create" {
		t.Fatalf("eve's server was sent: %+v", sent)
	}
	vote, _ := sent[0].Activity["object"].(map[string]any)
	if vote["type"] != "Note" || vote["name"] != "coffee" || vote["inReplyTo"] != eve.URI+"/statuses/q1" {
		t.Errorf("the vote sent: %v", vote)
	}
	// The Update that counts it: the counts are its server's again.
	upd := question(eve, "q1", []string{"tea", "coffee"}, []int{3, 2}, 5, false, end, public, followers)
	upd["type"], upd["id"] = "Update", eve.URI+"/statuses/q1#updates/1"
	sendTo(t, other, eve, base, upd, http.StatusAccepted)
	e.Settle()
	if counts, voters, voted := pollOf(t, e.mastoHome(ann)[0]); counts[0] != 3 || counts[1] != 2 || voters != 5 || !voted {
		t.Errorf("the poll after its Update: %v", e.mastoHome(ann)[0]["poll"])
	}

	// A poll here goes out as a Question to ann's follower there.
	sendTo(t, other, eve, base, map[string]any{"id": eve.URI + "/follows/ann", "type": "Follow", "actor": eve.URI,
		"object": base + "/users/" + ann.id}, http.StatusAccepted)
	e.Settle()
	before = len(other.Received())
	code, mine := e.MastoForm("POST", "/api/v1/statuses", ann.token, url.Values{"status": {"which days?"},
		"poll[options][]": {"mon", "tue", "wed"}, "poll[expires_in]": {"86400"}, "poll[multiple]": {"true"}})
	if code != 200 {
		t.Fatalf("ann's poll: %d %v", code, mine)
	}
	e.Settle()
	out := e.received(other, before+1)[before:]
	q, _ := out[0].Activity["object"].(map[string]any)
	if out[0].Activity["type"] != "Create" || q["type"] != "Question" || len(q["anyOf"].([]any)) != 3 || q["endTime"] == nil || q["votersCount"] != 0.0 {
		t.Fatalf("the Question sent: %v", out[0].Activity)
	}
	// eve votes for two days, one Note each, the first sent twice; an
	// option the poll does not have counts nothing.
	for i, day := range []string{"mon", "mon", "wed", "sun"} {
		v := remoteCreate(eve, "v"+day, "", []string{base + "/users/" + ann.id}, nil, map[string]any{"name": day, "inReplyTo": q["id"]})
		delete(v["object"].(map[string]any), "content")
		if i == 1 {
			v["id"] = v["id"].(string) + "/again"
		}
		sendTo(t, other, eve, base, v, http.StatusAccepted)
	}
	e.Settle()
	code, got := e.MastoForm("GET", "/api/v1/polls/"+mine["id"].(string), ann.token, nil)
	if counts, voters, _ := pollOf(t, map[string]any{"poll": got}); code != 200 || counts[0] != 1 || counts[1] != 0 || counts[2] != 1 || voters != 1 {
		t.Errorf("ann's poll after eve's votes: %d %v", code, got)
	}
	// The votes made no post.
	if st, list := e.mastoList("/api/v1/accounts/"+ann.id+"/statuses", ann.token); st != 200 || len(list) != 1 {
		t.Errorf("ann's statuses: %d %d", st, len(list))
	}
	// The Question as its page serves it to other servers.
	r := e.do("GET", "/statuses/"+mine["id"].(string), "", nil, "Accept", "application/activity+json")
	if r.status != 200 || r.body["type"] != "Question" || !strings.Contains(string(r.raw), `"totalItems":1`) {
		t.Errorf("the Question served: %d %s", r.status, r.raw)
	}
}
