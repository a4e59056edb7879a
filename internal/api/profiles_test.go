package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// A person's profile: a bio (note), up to four fields, an avatar and a
// header from their uploads; shown wherever their card is, and the
// pictures served to anyone who may see the person, by links that name
// the person and the picture.
func TestProfiles(t *testing.T) {
	e := newEnv(t)
	ann, bob := e.register("ann"), e.register("bob")
	e.follow(bob, ann.id)
	avatar, header, other := e.uploaded(ann, "a face")["id"].(string), e.uploaded(ann, "a view")["id"].(string), e.uploaded(ann, "more")["id"].(string)
	bobs := e.uploaded(bob, "bob's")["id"].(string)
	me := "/social/rest/people/@me/@self"
	fields := []map[string]string{{"name": "site", "value": "https://example.com/ann"}, {"name": "pronouns", "value": "she/her"}}
	r := e.do("PUT", me, ann.token, map[string]any{"displayName": "Ann B.", "note": "Hello.\nI write about #go.", "fields": fields, "avatar": avatar, "header": header})
	p := e.entry(r)
	if r.status != 200 || p["displayName"] != "Ann B." || p["note"] != "Hello.\nI write about #go." || len(p["fields"].([]any)) != 2 ||
		!strings.Contains(p["avatarUrl"].(string), avatar) || !strings.Contains(p["headerUrl"].(string), header) || p["thumbnailUrl"] == nil {
		t.Fatalf("profile: %d %s", r.status, r.raw)
	}
	// The pictures, to anyone, no token.
	for _, link := range []string{p["avatarUrl"].(string), p["thumbnailUrl"].(string), p["headerUrl"].(string)} {
		if status, kind, body := e.Fetch(e.url + link); status != 200 || !strings.HasPrefix(kind, "image/") || len(body) == 0 {
			t.Errorf("%s: %d %s", link, status, kind)
		}
	}
	// An app showing her avatar on every item asks again with its tag, and
	// is told it may keep what it holds, whichever form: no bytes.
	thumb := p["thumbnailUrl"].(string)
	for _, accept := range []string{"image/webp,*/*", ""} {
		req, _ := http.NewRequest(http.MethodGet, e.url+thumb, nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		tag := res.Header.Get("ETag")
		if want := `"` + avatar + `.thumb`; !strings.HasPrefix(tag, want) || res.Header.Get("Vary") != "Accept" {
			t.Fatalf("the avatar's thumbnail (Accept %q): ETag %q, Vary %q", accept, tag, res.Header.Get("Vary"))
		}
		req.Header.Set("If-None-Match", tag)
		again, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		again.Body.Close()
		if again.StatusCode != http.StatusNotModified || again.Header.Get("ETag") != tag || !strings.HasPrefix(again.Header.Get("Cache-Control"), "public, max-age=") {
			t.Errorf("asked again with %s: %d, ETag %q", tag, again.StatusCode, again.Header.Get("ETag"))
		}
	}
	// On her card wherever it is: a feed's author, people.get by RPC.
	post := e.post(ann, "hi")
	e.Settle()
	for _, it := range e.feedItems(bob, "@me/@friends") {
		if it["id"] == post {
			if a := it["author"].(map[string]any); a["note"] != p["note"] || a["avatarUrl"] != p["avatarUrl"] || a["displayName"] != "Ann B." {
				t.Errorf("the author on bob's home: %v", a)
			}
		}
	}
	res := e.doBatch(bob, `[{"method":"people.get","id":"p","params":{"userId":"`+ann.id+`","groupId":"@self"}}]`)
	if got, _ := res[0]["result"].(map[string]any); got == nil || got["note"] != p["note"] {
		t.Errorf("people.get: %v", res[0])
	}
	// Refusals change nothing.
	for _, bad := range []map[string]any{
		{"note": strings.Repeat("n", 501)},
		{"fields": []map[string]string{{"name": "a"}, {"name": "b"}, {"name": "c"}, {"name": "d"}, {"name": "e"}}},
		{"fields": []map[string]string{{"name": "", "value": "x"}}},
		{"fields": []map[string]string{{"name": "two\nlines", "value": "x"}}},
		{"avatar": other, "header": other},
		{"avatar": 7},
		{},
	} {
		e.wantError(e.do("PUT", me, ann.token, bad), 400)
	}
	e.wantError(e.do("PUT", me, ann.token, map[string]any{"avatar": bobs}), 404)   // not hers
	e.wantError(e.do("PUT", me, ann.token, map[string]any{"avatar": "x"}), 404)    // no such picture
	e.wantError(e.do("PUT", me, ann.token, map[string]any{"header": avatar}), 400) // the avatar already
	e.wantError(e.do("PUT", me, bob.token, map[string]any{"note": "x", "avatar": bobs, "locked": true, "person": map[string]any{"locked": false}}), 400)
	// A profile picture is neither deleted nor posted while it is one.
	e.wantError(e.do("DELETE", "/social/rest/mediaItems/@me/@self/@all/"+avatar, ann.token, nil), 409)
	e.wantError(e.do("POST", "/social/rest/activities/@me/@self", ann.token, map[string]any{"title": "x", "mediaItems": []string{header}}), 409)
	if r := e.do("GET", me, ann.token, nil); e.entry(r)["note"] != p["note"] || e.entry(r)["avatarUrl"] != p["avatarUrl"] || len(e.entry(r)["fields"].([]any)) != 2 {
		t.Errorf("after the refusals: %s", r.raw)
	}
	// A new avatar; then none. The one replaced is an upload like any
	// other again: it may be posted.
	r = e.do("PUT", me, ann.token, map[string]any{"avatar": other})
	if r.status != 200 || !strings.Contains(e.entry(r)["avatarUrl"].(string), other) {
		t.Fatalf("a new avatar: %d %s", r.status, r.raw)
	}
	if r := e.do("POST", "/social/rest/activities/@me/@self", ann.token, map[string]any{"title": "my old face", "mediaItems": []string{avatar}}); r.status != 201 {
		t.Errorf("posting the old avatar: %d %s", r.status, r.raw)
	}
	link := e.entry(r)["avatarUrl"].(string)
	r = e.do("PUT", me, ann.token, map[string]any{"person": map[string]any{"avatar": ""}})
	if r.status != 200 || e.entry(r)["avatarUrl"] != nil || e.entry(r)["headerUrl"] == nil {
		t.Fatalf("no avatar: %d %s", r.status, r.raw)
	}
	if status, _, _ := e.Fetch(e.url + link); status != http.StatusNotFound {
		t.Errorf("the avatar's link with no avatar: %d", status)
	}
	if status, _, _ := e.Fetch(e.url + "/media/people/" + ann.id + "/banner/image"); status != http.StatusNotFound {
		t.Errorf("no such picture: %d", status)
	}
	// By JSON-RPC, as OpenSocial's people.update sends it.
	res = e.doBatch(ann, `[{"method":"people.update","id":"u","params":{"userId":"@viewer","groupId":"@self","person":{"note":"by rpc"}}}]`)
	if got, _ := res[0]["result"].(map[string]any); got == nil || got["note"] != "by rpc" {
		t.Errorf("people.update: %v", res[0])
	}
}
