package api_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestRPC(t *testing.T) {
	e := newEnv(t)
	alice := e.register("alice")

	single := e.do("POST", "/social/rpc", alice.token, `{"method":"people.get","id":"1","params":{"userId":"@me","groupId":"@self"}}`)
	if single.status != 200 || single.body["id"] != "1" {
		t.Fatalf("single call: %d %s", single.status, single.raw)
	}
	if got := single.body["result"].(map[string]any)["id"]; got != alice.id {
		t.Errorf("result id %v, want %s", got, alice.id)
	}

	batch := e.do("POST", "/social/rpc", alice.token, `[
		{"method":"people.get","id":"a"},
		{"method":"no.such","id":"b"},
		{"method":"people.get","id":"c","params":{"userId":5}},
		{"method":"people.get","id":"d","params":{"userId":"@username:nobody"}},
		"not a call",
		{"id":"f"}
	]`)
	if batch.status != 200 {
		t.Fatalf("batch: %d %s", batch.status, batch.raw)
	}
	var slots []struct {
		ID     any             `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(batch.raw, &slots); err != nil {
		t.Fatal(err)
	}
	wantCodes := []int{0, 501, 400, 404, 400, 400}
	if len(slots) != len(wantCodes) {
		t.Fatalf("%d slots, want %d: %s", len(slots), len(wantCodes), batch.raw)
	}
	for i, want := range wantCodes {
		s := slots[i]
		switch {
		case want == 0 && (s.Error != nil || len(s.Result) == 0):
			t.Errorf("slot %d: want a result, got %s", i, batch.raw)
		case want != 0 && (s.Error == nil || s.Error.Code != want || s.Error.Message == ""):
			t.Errorf("slot %d: want error %d, got %+v", i, want, s.Error)
		}
	}
	if slots[1].ID != "b" || slots[3].ID != "d" {
		t.Errorf("ids not echoed: %s", batch.raw)
	}

	var big []string
	for i := 0; i < 51; i++ {
		big = append(big, fmt.Sprintf(`{"method":"people.get","id":"%d"}`, i))
	}
	for name, body := range map[string]string{
		"empty batch": `[]`,
		"too many":    "[" + strings.Join(big, ",") + "]",
		"malformed":   `[{"method":`,
		"scalar":      `42`,
		"empty":       ``,
	} {
		t.Run(name, func(t *testing.T) {
			e.t = t
			e.wantError(e.do("POST", "/social/rpc", alice.token, body), 400)
		})
	}
	e.t = t
	e.wantError(e.do("POST", "/social/rpc", "", `{"method":"people.get"}`), 401)
}

func TestRPCSocialMethods(t *testing.T) {
	e := newEnv(t)
	alice, bob := e.register("alice"), e.register("bob")
	r := e.do("POST", "/social/rpc", alice.token, `[
		{"method":"people.create","id":"follow","params":{"userId":"@me","groupId":"@friends","id":"`+bob.id+`"}},
		{"method":"groups.create","id":"group","params":{"title":"rpc group"}},
		{"method":"people.create","id":"self","params":{"id":"`+alice.id+`"}}
	]`)
	var out []map[string]any
	if err := json.Unmarshal(r.raw, &out); err != nil || len(out) != 3 {
		t.Fatalf("batch: %d %s", r.status, r.raw)
	}
	if out[0]["error"] != nil || out[1]["error"] != nil {
		t.Fatalf("calls failed: %s", r.raw)
	}
	if code := out[2]["error"].(map[string]any)["code"]; code != 400.0 {
		t.Errorf("self-follow by RPC: %v", code)
	}

	post := e.do("POST", "/social/rpc", bob.token, `{"method":"activities.create","id":"p","params":{"userId":"@me","groupId":"@self","activity":{"title":"via rpc @alice"}}}`)
	res, _ := post.body["result"].(map[string]any)
	id, _ := res["id"].(string)
	if id == "" {
		t.Fatalf("activities.create: %s", post.raw)
	}
	// REST and RPC give the same body.
	rpcFeed := e.do("POST", "/social/rpc", alice.token, `{"method":"activities.get","id":"f","params":{"userId":"@me","groupId":"@friends","count":5}}`)
	restFeed := e.do("GET", "/social/rest/activities/@me/@friends?count=5", alice.token, nil)
	rpcBody, _ := json.Marshal(rpcFeed.body["result"])
	restBody, _ := json.Marshal(restFeed.body)
	if string(rpcBody) != string(restBody) {
		t.Errorf("RPC and REST bodies differ:\nRPC  %s\nREST %s", rpcBody, restBody)
	}
	if got := e.list(restFeed); len(got) != 1 || got[0] != id {
		t.Errorf("home after RPC follow and post: %v", got)
	}
	del := e.do("POST", "/social/rpc", bob.token, `{"method":"activities.delete","id":"d","params":{"activityIds":["`+id+`"]}}`)
	if del.body["error"] != nil || string(del.raw) != `{"id":"d","result":{}}` {
		t.Errorf("activities.delete: %s", del.raw)
	}
	unf := e.do("POST", "/social/rpc", alice.token, `{"method":"people.delete","id":"u","params":{"id":"`+bob.id+`"}}`)
	if unf.body["error"] != nil {
		t.Errorf("people.delete: %s", unf.raw)
	}
	if p := e.entry(e.do("GET", "/social/rest/people/@me/@self", alice.token, nil)); p["followingCount"] != 0.0 {
		t.Errorf("followingCount after people.delete: %v", p["followingCount"])
	}
	groups := e.do("POST", "/social/rpc", alice.token, `{"method":"groups.get","id":"g","params":{"userId":"@me"}}`)
	if list, _ := groups.body["result"].(map[string]any)["list"].([]any); len(list) != 1 {
		t.Errorf("groups.get: %s", groups.raw)
	}
}
