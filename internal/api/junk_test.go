package api_test

import (
	"encoding/base64"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"socialstream/internal/app"
	"socialstream/internal/localstack"
	"socialstream/internal/ratelimit"
)

// TestJunkNeverA500 sends malformed bodies and parameters to every
// endpoint, first without rate limits, then to an instance whose limits
// run out half way: each answer is a 2xx or a 4xx with the error
// envelope (a 429 with Retry-After), never a 5xx.
func TestJunkNeverA500(t *testing.T) {
	e := newEnv(t)
	u, other := e.register("junker"), e.register("other")
	act := e.post(other, "target")
	group := e.createGroup(other, "g", "open")
	closed := e.createGroup(u, "mine", "closed")
	junk(t, e, u, other, act, group, closed)
	lim := e.stackLimits(ratelimit.Config{
		Account: ratelimit.Rule{Quota: 800, Window: time.Hour}, Address: ratelimit.Rule{Quota: 400, Window: time.Hour},
		Login: ratelimit.Rule{Quota: 5, Window: time.Hour}, Register: ratelimit.Rule{Quota: 5, Window: time.Hour}, Upload: ratelimit.Rule{Quota: 30, Window: time.Hour},
	})
	if n := junk(t, lim, u, other, act, group, closed); n == 0 {
		t.Error("the limited instance never answered 429")
	}
}

func (e *env) stackLimits(lim ratelimit.Config) *env {
	return newEnvFrom(e.t, localstack.Options{DB: e.db, Config: app.Config{RateLimits: lim}})
}

// junk runs the sweep on e and returns how many answers were 429s.
func junk(t *testing.T, e *env, u, other user, act, group, closed string) int {
	t.Helper()
	forged := base64.RawURLEncoding.EncodeToString([]byte("home:" + u.id + "\x00" + base64.URLEncoding.EncodeToString([]byte("\x01\xffjunk"))))
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
		{"POST", "/social/rest/groups/@all/" + closed + "/members"}, {"DELETE", "/social/rest/groups/@all/" + closed + "/members/" + other.id},
		{"POST", "/auth/logout?all=true"}, {"POST", "/_tasks/notify"}, {"POST", "/_tasks/trim"},
		{"GET", "/auth/account/export"}, {"DELETE", "/auth/account"}, {"POST", "/_tasks/erase"},
		{"GET", "/social/rest/people/@me/@blocked"}, {"POST", "/social/rest/people/@me/@blocked"},
		{"GET", "/social/rest/people/@me/@blocked/" + other.id}, {"DELETE", "/social/rest/people/@me/@blocked/" + other.id},
		{"GET", "/social/rest/people/" + other.id + "/@blocked"},
		{"GET", "/social/rest/appdata/@me/@self/@app"}, {"PUT", "/social/rest/appdata/@me/@self/chess"},
		{"POST", "/social/rest/appdata/@me/@self/chess"}, {"DELETE", "/social/rest/appdata/@me/@self/chess"},
		{"GET", "/social/rest/appdata/" + other.id + ",@me/@self/chess"}, {"PUT", "/social/rest/appdata/" + other.id + "/@self/chess"},
		{"POST", "/social/rpc?st=junk"},
	}
	bodies := []string{
		``, `null`, `[]`, `"text"`, `12`, `{`, `{"id":{}}`, `{"title":[1],"text":{},"ids":"x","all":"yes","count":"9"}`,
		`{"id":"` + strings.Repeat("9", 40) + `","username":"\u0000","password":1e400}`,
		"\xff\xfe{}", `{"method":"activities.get","params":{"count":-1,"cursor":"%%%"}}`,
		`{"title":"\u202egnp","text":"\u0000","displayName":"\u001b[2J","description":"\u2066","id":"` + other.id + `"}`,
		`[{"method":"groups.join","params":{"groupId":"` + closed + `","userId":"` + other.id + `"}},{"method":"nope"},{"method":"activities.create","params":{"activity":{"title":"@a @bb @ccc @dddd"}}}]`,
		`[{"method":"appdata.update","params":{"data":{"k":5},"userId":["@me","` + other.id + `"]}},{"method":"people.get","params":{"userId":[1,2],"fields":7}},` +
			`{"method":"activities.get","params":{"activityId":{"x":1},"activityIds":["1"]}},{"method":"system.listMethods","params":[]},` +
			`{"method":"appdata.get","params":{"userId":",,,","appId":"@app/x","fields":["a b"]}},{"method":"likes.create","params":{"activityId":["1","2"]}},` +
			`{"method":"groups.get","params":{"groupId":"@self","userId":"@owner"}},{"method":"appdata.delete","params":{"groupId":"@friends"}},` +
			`{"method":"groups.join","params":{"groupId":"@self"}},{"method":"groups.leave","params":{"groupId":["` + group + `"]}},{"method":"people.get","params":{"userId":"a,b","groupId":"@friends"}}]`,
		`{"big": "` + strings.Repeat("x", 70000) + `"}`,
	}
	queries := []string{"", "?count=-5", "?count=1e9", "?cursor=" + strings.Repeat("A", 5000), "?cursor=" + forged, "?startIndex=x", "?%zz", "?copyLimit=9999999999999999999", "?keepHistory=2", "?all=2", "?fields=a%20b,@all,,", "?fields=" + strings.Repeat("f,", 200)}
	// Every request is checked alone, whatever came before it: they run
	// four at a time, as the latency of each, not the CPU, bounds a run.
	type request struct {
		method, path string
		body         any
	}
	var requests []request
	for _, ep := range endpoints {
		for _, b := range bodies {
			for _, q := range queries {
				var body any
				if ep.method != "GET" && (ep.method != "DELETE" || ep.path == "/auth/account") {
					body = b
				}
				requests = append(requests, request{ep.method, ep.path + q, body})
			}
		}
	}
	// Each worker takes the next request: one that stops (a failed
	// transport ends it) leaves the rest to the others.
	var next, limited atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(len(requests)); i = next.Add(1) - 1 {
				req := requests[i]
				r := e.do(req.method, req.path, u.token, req.body)
				if r.status >= 500 {
					t.Errorf("%s %s with %q: %d %s", req.method, req.path, req.body, r.status, r.raw)
				}
				if r.status >= 400 {
					if e, ok := r.body["error"].(map[string]any); !ok || e["message"] == "" {
						t.Errorf("%s %s: %d without the error envelope: %s", req.method, req.path, r.status, r.raw)
					}
				}
				if r.status == 429 {
					limited.Add(1)
					if r.header.Get("Retry-After") == "" || r.header.Get("RateLimit") == "" {
						t.Errorf("%s %s: 429 without Retry-After and RateLimit: %v", req.method, req.path, r.header)
					}
				}
			}
		})
	}
	wg.Wait()
	return int(limited.Load())
}
