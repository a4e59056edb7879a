package api_test

import (
	"net/http"
	"slices"
	"testing"
)

// REST's lists: made, read, renamed, filled, emptied and deleted by their
// owner alone, with their timeline at @list:id.
func TestListsOnREST(t *testing.T) {
	e := newEnv(t)
	ann, bob, cid := e.register("ann"), e.register("bob"), e.register("cid")
	e.follow(ann, bob.id)
	r := e.do("POST", "/social/rest/lists/@me", ann.token, map[string]any{"title": "mates", "repliesPolicy": "none"})
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.raw)
	}
	list := e.entry(r)
	id := list["id"].(string)
	if list["title"] != "mates" || list["repliesPolicy"] != "none" || list["exclusive"] != false {
		t.Errorf("created: %v", list)
	}
	path := "/social/rest/lists/@me/" + id
	for _, bad := range []map[string]any{{"title": ""}, {"repliesPolicy": "all"}} {
		if r := e.do("PUT", path, ann.token, bad); r.status != http.StatusBadRequest {
			t.Errorf("update with %v: %d %s", bad, r.status, r.raw)
		}
	}
	if r := e.do("PUT", path, ann.token, map[string]any{"title": "friends", "exclusive": true}); r.status != http.StatusOK ||
		e.entry(r)["title"] != "friends" || e.entry(r)["exclusive"] != true || e.entry(r)["repliesPolicy"] != "none" {
		t.Errorf("update: %d %s", r.status, r.raw)
	}
	if r := e.do("GET", path, ann.token, nil); r.status != http.StatusOK || e.entry(r)["title"] != "friends" {
		t.Errorf("get: %d %s", r.status, r.raw)
	}
	if got := e.list(e.do("GET", "/social/rest/lists/@me", ann.token, nil)); !slices.Equal(got, []string{id}) {
		t.Errorf("ann's lists: %v, want [%s]", got, id)
	}
	if got := e.list(e.do("GET", "/social/rest/lists/@me", bob.token, nil)); len(got) != 0 {
		t.Errorf("bob's lists: %v", got)
	}
	if r := e.do("GET", path, bob.token, nil); r.status != http.StatusForbidden && r.status != http.StatusNotFound {
		t.Errorf("another's list: %d %s", r.status, r.raw)
	}
	if r := e.do("POST", path+"/members", ann.token, map[string]any{"ids": []string{cid.id}}); r.status != http.StatusBadRequest {
		t.Errorf("adding one ann does not follow: %d %s", r.status, r.raw)
	}
	if r := e.do("POST", path+"/members", ann.token, map[string]any{"ids": []string{bob.id}}); r.status != http.StatusNoContent {
		t.Fatalf("add: %d %s", r.status, r.raw)
	}
	r = e.do("GET", path+"/members", ann.token, nil)
	if l, _ := r.body["list"].([]any); r.status != http.StatusOK || len(l) != 1 || l[0].(map[string]any)["id"] != bob.id {
		t.Errorf("members: %d %s", r.status, r.raw)
	}
	post := e.do("POST", "/social/rest/activities/@me/@self", bob.token, map[string]any{"title": "for the list"})
	postID := e.entry(post)["id"].(string)
	e.Eventually("bob's post in ann's list", func() bool {
		r := e.do("GET", "/social/rest/activities/@me/@list:"+id, ann.token, nil)
		l, _ := r.body["list"].([]any)
		return len(l) == 1 && l[0].(map[string]any)["id"] == postID
	})
	// Exclusive: not at ann's home.
	home := e.do("GET", "/social/rest/activities/@me/@friends", ann.token, nil)
	for _, a := range home.body["list"].([]any) {
		if a.(map[string]any)["id"] == postID {
			t.Error("an exclusive list's member's post at home")
		}
	}
	if r := e.do("DELETE", path+"/members/"+bob.id, ann.token, nil); r.status != http.StatusNoContent {
		t.Errorf("remove: %d %s", r.status, r.raw)
	}
	e.Eventually("bob's post gone from ann's list", func() bool {
		r := e.do("GET", "/social/rest/activities/@me/@list:"+id, ann.token, nil)
		l, _ := r.body["list"].([]any)
		return r.status == http.StatusOK && len(l) == 0
	})
	if r := e.do("DELETE", path, ann.token, nil); r.status != http.StatusNoContent {
		t.Errorf("delete: %d %s", r.status, r.raw)
	}
	if r := e.do("GET", path, ann.token, nil); r.status != http.StatusNotFound {
		t.Errorf("a deleted list: %d %s", r.status, r.raw)
	}
}

// Adding someone hidden from the owner (a block either way) answers as
// adding someone who never existed does.
func TestListAddOfTheHiddenIsAbsent(t *testing.T) {
	e := newEnv(t)
	ann, bob := e.register("ann"), e.register("bob")
	r := e.do("POST", "/social/rest/lists/@me", ann.token, map[string]any{"title": "l"})
	path := "/social/rest/lists/@me/" + e.entry(r)["id"].(string) + "/members"
	never := e.do("POST", path, ann.token, map[string]any{"ids": []string{"12345678901234567890"}})
	if r := e.do("POST", "/social/rest/people/@me/@blocked", bob.token, map[string]string{"id": ann.id}); r.status != http.StatusCreated {
		t.Fatalf("block: %d %s", r.status, r.raw)
	}
	hidden := e.do("POST", path, ann.token, map[string]any{"ids": []string{bob.id}})
	if hidden.status != never.status || hidden.errMessage() != never.errMessage() || never.status != http.StatusNotFound {
		t.Errorf("adding one who blocks ann: %d %s; one who never existed: %d %s", hidden.status, hidden.raw, never.status, never.raw)
	}
}
