package api_test

import (
	"strings"
	"testing"
)

// TestJunkNeverA500 sends malformed bodies and parameters to every
// endpoint: each answer is a 2xx or a 4xx with the error envelope, never a
// 5xx.
func TestJunkNeverA500(t *testing.T) {
	e := newEnv(t)
	u, other := e.register("junker"), e.register("other")
	act := e.post(other, "target")
	group := e.createGroup(other, "g", "open")
	endpoints := []struct{ method, path string }{
		{"POST", "/auth/register"}, {"POST", "/auth/login"}, {"POST", "/auth/logout"},
		{"GET", "/social/rest/people/@me/@self"}, {"GET", "/social/rest/people/@me/@friends"},
		{"GET", "/social/rest/people/@me/" + group}, {"POST", "/social/rest/people/@me/@friends"},
		{"DELETE", "/social/rest/people/@me/@friends/" + other.id},
		{"GET", "/social/rest/groups/@me"}, {"POST", "/social/rest/groups/@me"},
		{"GET", "/social/rest/groups/@all/" + group}, {"POST", "/social/rest/groups/@all/" + group + "/members"},
		{"DELETE", "/social/rest/groups/@all/" + group + "/members/@me"},
		{"GET", "/social/rest/activities/@me/@friends"}, {"GET", "/social/rest/activities/@me/@self/@app/" + act},
		{"POST", "/social/rest/activities/@me/@self"}, {"DELETE", "/social/rest/activities/@me/@self/@app/" + act},
		{"GET", "/social/rest/comments/" + act}, {"POST", "/social/rest/comments/" + act},
		{"POST", "/social/rest/likes/" + act}, {"GET", "/social/rest/likes/" + act},
		{"GET", "/social/rest/notifications/@me"}, {"POST", "/social/rest/notifications/@me/read"},
		{"POST", "/social/rpc"},
	}
	bodies := []string{
		``, `null`, `[]`, `"text"`, `12`, `{`, `{"id":{}}`, `{"title":[1],"text":{},"ids":"x","all":"yes","count":"9"}`,
		`{"id":"` + strings.Repeat("9", 40) + `","username":"\u0000","password":1e400}`,
		"\xff\xfe{}", `{"method":"activities.get","params":{"count":-1,"cursor":"%%%"}}`,
	}
	queries := []string{"", "?count=-5", "?count=1e9", "?cursor=" + strings.Repeat("A", 5000), "?startIndex=x", "?%zz", "?copyLimit=9999999999999999999", "?keepHistory=2"}
	for _, ep := range endpoints {
		for _, b := range bodies {
			for _, q := range queries {
				var body any
				if ep.method != "GET" && ep.method != "DELETE" {
					body = b
				}
				r := e.do(ep.method, ep.path+q, u.token, body)
				if r.status >= 500 {
					t.Errorf("%s %s%s with %q: %d %s", ep.method, ep.path, q, b, r.status, r.raw)
				}
				if r.status >= 400 {
					if e, ok := r.body["error"].(map[string]any); !ok || e["message"] == "" {
						t.Errorf("%s %s%s: %d without the error envelope: %s", ep.method, ep.path, q, r.status, r.raw)
					}
				}
			}
		}
	}
}
