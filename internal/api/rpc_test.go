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
	if got := single.body["result"].(map[string]any)["entry"].(map[string]any)["id"]; got != alice.id {
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
	wantCodes := []int{0, 404, 400, 404, 400, 400}
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
