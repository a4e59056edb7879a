package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"socialstream/internal/stacktest"
)

// A direct thread with someone of another server is a conversation here:
// their direct Note to zed is in zed's list, with them, unread; zed's
// direct answer to them is its newest post, and read.
func TestFederationDirectConversation(t *testing.T) {
	ctx := context.Background()
	e, other, base := federatedBeside(t)
	zed := e.register("zed")
	eve := other.Person("eve")
	zedActor := base + "/users/" + zed.id
	note := map[string]any{"id": eve.URI + "/statuses/d1", "type": "Note", "attributedTo": eve.URI,
		"content": `<p><span class="h-card"><a href="` + zedActor + `" class="u-url mention">@<span>zed</span></a></span> just us</p>`,
		"to":      []string{zedActor}, "published": time.Now().UTC().Format(time.RFC3339),
		"tag": []any{map[string]any{"type": "Mention", "href": zedActor, "name": "@zed"}}}
	create := map[string]any{"@context": "https://www.w3.org/ns/activitystreams", "id": eve.URI + "/statuses/d1/activity",
		"type": "Create", "actor": eve.URI, "object": note}
	if st, body, _ := other.Send(ctx, eve, base+"/inbox", create); st != http.StatusAccepted {
		t.Fatalf("the direct Note: %d %s", st, body)
	}
	e.Settle()
	st, list := e.mastoList("/api/v1/conversations", zed.token)
	if st != http.StatusOK || len(list) != 1 || list[0]["unread"] != true {
		t.Fatalf("zed's conversations: %d %v", st, list)
	}
	accts, _ := list[0]["accounts"].([]any)
	last, _ := list[0]["last_status"].(map[string]any)
	if len(accts) != 1 || accts[0].(map[string]any)["acct"] != "eve@"+other.Domain || last == nil || last["visibility"] != "direct" {
		t.Fatalf("the conversation: %v", list[0])
	}
	conv := list[0]["id"]
	r := e.do("POST", "/api/v1/statuses", zed.token, map[string]any{"status": "@eve@" + other.Domain + " back to you",
		"visibility": "direct", "in_reply_to_id": last["id"]}, stacktest.JSON...)
	if r.status != http.StatusOK {
		t.Fatalf("zed's answer: %d %s", r.status, r.raw)
	}
	e.Settle()
	_, list = e.mastoList("/api/v1/conversations", zed.token)
	if len(list) != 1 || list[0]["id"] != conv || list[0]["unread"] != false || list[0]["last_status"].(map[string]any)["id"] != r.body["id"] {
		t.Errorf("after zed's answer: %v", list)
	}
}
