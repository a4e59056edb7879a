package api_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"socialstream/internal/appdata"
)

func TestAppDataREST(t *testing.T) {
	e := newEnv(t)
	alice, bob := e.register("alice"), e.register("bob")
	base := "/social/rest/appdata/"
	get := func(u user, path string) map[string]any {
		t.Helper()
		r := e.do("GET", base+path, u.token, nil)
		if r.status != 200 {
			t.Fatalf("GET %s: %d %s", path, r.status, r.raw)
		}
		return e.entry(r)
	}
	put := func(u user, method, path string, body any, want int) {
		t.Helper()
		if r := e.do(method, base+path, u.token, body); r.status != want {
			t.Fatalf("%s %s: %d %s, want %d", method, path, r.status, r.raw, want)
		}
	}

	// Nothing yet: every user named is there, with no keys.
	if got := get(bob, alice.id+"/@self/chess"); !reflect.DeepEqual(got, map[string]any{alice.id: map[string]any{}}) {
		t.Errorf("empty: %v", got)
	}
	put(alice, "PUT", "@me/@self/chess", map[string]string{"board": "e4 e5", "level": "3"}, 204)
	put(alice, "POST", "@me/@self/chess", map[string]string{"level": "4"}, 204) // only the keys named change
	put(alice, "PUT", "@me/@self/go", map[string]string{"level": "9"}, 204)     // another app, apart
	want := map[string]any{alice.id: map[string]any{"board": "e4 e5", "level": "4"}}
	if got := get(bob, alice.id+"/@self/chess"); !reflect.DeepEqual(got, want) {
		t.Errorf("anyone reads: %v, want %v", got, want)
	}
	if got := get(alice, "@me/@self/chess?fields=level,nope"); !reflect.DeepEqual(got, map[string]any{alice.id: map[string]any{"level": "4"}}) {
		t.Errorf("fields: %v", got)
	}
	if got := get(bob, "@username:alice,@me,"+bob.id+"/@self/go"); !reflect.DeepEqual(got, map[string]any{alice.id: map[string]any{"level": "9"}, bob.id: map[string]any{}}) {
		t.Errorf("two users: %v", got)
	}

	// Refusals change nothing.
	e.wantError(e.do("PUT", base+alice.id+"/@self/chess", bob.token, map[string]string{"board": "x"}), 403)
	e.wantError(e.do("DELETE", base+alice.id+"/@self/chess", bob.token, nil), 403)
	for name, body := range map[string]any{
		"key with a space": map[string]string{"a b": "x"},
		"key too long":     map[string]string{strings.Repeat("k", appdata.MaxKey+1): "x"},
		"number value":     `{"level": 5}`,
		"null value":       `{"level": null}`,
		"array":            `["level"]`,
		"empty":            ``,
	} {
		t.Run(name, func(t *testing.T) {
			e.t = t
			e.wantError(e.do("PUT", base+"@me/@self/chess", alice.token, body), 400)
		})
	}
	e.t = t
	e.wantError(e.do("PUT", base+"@me/@friends/chess", alice.token, map[string]string{"a": "b"}), 400)
	e.wantError(e.do("PUT", base+"@me/@self/bad%20app", alice.token, map[string]string{"a": "b"}), 400)
	e.wantError(e.do("GET", base+"@me/@self/chess?fields=a%20b", alice.token, nil), 400)
	e.wantError(e.do("PUT", base+"@me/@self/chess", "", map[string]string{"a": "b"}), 401)

	// The bound on a user's data: 413 past it, and nothing written.
	big := strings.Repeat("x", appdata.MaxBytes/4)
	for i := 0; i < 3; i++ {
		put(alice, "PUT", "@me/@self/files", map[string]string{fmt.Sprintf("part%d", i): big}, 204)
	}
	e.wantError(e.do("PUT", base+"@me/@self/files", alice.token, map[string]string{"part3": big}), 413)
	if got := get(alice, "@me/@self/files")[alice.id].(map[string]any); len(got) != 3 {
		t.Errorf("after a refused write: %d keys", len(got))
	}
	// Replacing a value in place counts the new size only.
	put(alice, "PUT", "@me/@self/files", map[string]string{"part0": big}, 204)

	// Delete some keys, then the rest of the app's data.
	put(alice, "DELETE", "@me/@self/chess?fields=board", nil, 204)
	if got := get(alice, "@me/@self/chess"); !reflect.DeepEqual(got, map[string]any{alice.id: map[string]any{"level": "4"}}) {
		t.Errorf("after deleting board: %v", got)
	}
	put(alice, "DELETE", "@me/@self/chess", nil, 204)
	if got := get(alice, "@me/@self/chess"); !reflect.DeepEqual(got, map[string]any{alice.id: map[string]any{}}) {
		t.Errorf("after deleting all: %v", got)
	}
	if got := get(alice, "@me/@self/go"); !reflect.DeepEqual(got, map[string]any{alice.id: map[string]any{"level": "9"}}) {
		t.Errorf("another app after deleting chess: %v", got)
	}
}

func TestFieldsREST(t *testing.T) {
	e := newEnv(t)
	alice, bob := e.register("alice"), e.register("bob")
	e.follow(alice, bob.id)
	e.post(bob, "hello")
	e.Settle()

	me := e.entry(e.do("GET", "/social/rest/people/@me/@self?fields=displayName", alice.token, nil))
	if keys := sortedKeys(me); !slices.Equal(keys, []string{"displayName", "id"}) {
		t.Errorf("person with fields=displayName: %v", me)
	}
	if all := e.entry(e.do("GET", "/social/rest/people/@me/@self?fields=@all", alice.token, nil)); all["followingCount"] != 1.0 {
		t.Errorf("fields=@all: %v", all)
	}
	r := e.do("GET", "/social/rest/activities/@me/@friends?fields=title,author", alice.token, nil)
	items, _ := r.body["list"].([]any)
	if len(items) != 1 || !slices.Equal(sortedKeys(items[0].(map[string]any)), []string{"author", "id", "title"}) {
		t.Errorf("feed with fields=title,author: %s", r.raw)
	}
	e.wantError(e.do("GET", "/social/rest/people/@me/@self?fields=dis%20play", alice.token, nil), 400)
	e.wantError(e.do("GET", "/social/rest/activities/@me/@self?fields="+strings.Repeat("a,", 101)+"b", alice.token, nil), 400)
}

// TestAppDataConcurrentWrites: one user's writes from several tabs at once
// each land (a transaction on the user's one entity), none lost.
func TestAppDataConcurrentWrites(t *testing.T) {
	e := newEnv(t)
	alice := e.register("alice")
	const n = 8
	done := make(chan int, n)
	for i := range n {
		go func() {
			r := e.do("PUT", "/social/rest/appdata/@me/@self/tabs", alice.token, map[string]string{fmt.Sprintf("k%d", i): "v"})
			done <- r.status
		}()
	}
	for range n {
		if s := <-done; s != 204 {
			t.Errorf("a concurrent write answered %d", s)
		}
	}
	r := e.do("GET", "/social/rest/appdata/@me/@self/tabs", alice.token, nil)
	if got := e.entry(r)[alice.id].(map[string]any); len(got) != n {
		t.Errorf("after %d concurrent writes of distinct keys: %v", n, got)
	}
}
