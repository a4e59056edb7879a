package api

import (
	"strings"
	"testing"
)

func TestCheckText(t *testing.T) {
	for _, c := range []struct {
		name, body string
		field      string // "" when valid
	}{
		{"plain", `{"title":"hello","n":1,"a":[true,null]}`, ""},
		{"a pair of escapes", `{"title":"\ud83d\ude00"}`, ""},
		{"escaped backslash before u", `{"title":"\\ud800"}`, ""},
		{"raw emoji", `{"title":"😀"}`, ""},
		{"invalid bytes", "{\"title\":\"a\xffb\"}", "/title"},
		{"a lone high surrogate", `{"activity":{"title":"x\ud800y"}}`, "/activity/title"},
		{"a high surrogate at the end", `{"title":"x\ud800"}`, "/title"},
		{"a lone low surrogate", `{"list":[1,"\udc00"]}`, "/list/1"},
		{"two high surrogates", `{"t":"\ud800\ud800"}`, "/t"},
		{"in a name", `{"\ud800":1}`, "/"},
		{"not JSON: left to the decoder", `{"title" 1}`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := checkText([]byte(c.body))
			switch {
			case c.field == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.field != "" && (err == nil || !strings.Contains(err.Error(), "at "+c.field)):
				t.Errorf("got %v, want a refusal naming %s", err, c.field)
			}
		})
	}
}
