package api_test

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"reflect"
	"slices"
	"testing"

	"socialstream/internal/stacktest"
)

// These tests replay what Shindig's osapi JavaScript client sends, request
// by request, and check what its callbacks would receive. How osapi
// behaves, as its sources have it:
//   - osapi.<service>.<method>(params) fills params.userId with "@viewer"
//     and params.groupId with "@self" when the gadget leaves them out;
//   - a call executed alone is a batch of one, keyed by the method name;
//     osapi.newBatch().add(key, call) keys it by the gadget's key;
//   - the transport POSTs the JSON array [{method, id: key, params}] to the
//     RPC URL with the security token as ?st=, and no Authorization header;
//   - each callback gets the slot's "data" or "result" when the slot has
//     no "error", else the whole slot; an HTTP failure reaches every
//     callback as {error: {code: status, message: body}}.

// osapiCall is one call as a gadget makes it.
type osapiCall struct {
	key, method string
	params      map[string]any
}

// call is osapi.<method>(params) added under key.
func call(key, method string, params map[string]any) osapiCall {
	p := map[string]any{}
	for k, v := range params {
		p[k] = v
	}
	if p["userId"] == nil {
		p["userId"] = "@viewer"
	}
	if p["groupId"] == nil {
		p["groupId"] = "@self"
	}
	return osapiCall{key: key, method: method, params: p}
}

// gadget sends batches as the osapi transport does, its token in the form
// auth names: "st" or "oauth_token" on the URL, or "OAuth2" in the header.
type gadget struct {
	e     *env
	token string
	auth  string
}

// execute sends calls as one batch and returns what each key's callback
// receives (osapi's batchResult).
func (g gadget) execute(calls ...osapiCall) map[string]any {
	g.e.t.Helper()
	batch := make([]map[string]any, len(calls))
	for i, c := range calls {
		batch[i] = map[string]any{"method": c.method, "id": c.key, "params": c.params}
	}
	path, headers := "/social/rpc", []string{"Content-Type", "application/json"}
	switch g.auth {
	case "OAuth2":
		headers = append(headers, "Authorization", "OAuth2 "+g.token)
	default:
		path += "?" + g.auth + "=" + url.QueryEscape(g.token)
	}
	r := g.e.do("POST", path, "", batch, headers...)
	if r.status != 200 {
		// The transport's XHR failure, as every callback sees it.
		return map[string]any{"error": map[string]any{"code": float64(r.status), "message": string(r.raw)}}
	}
	var slots []map[string]any
	if err := json.Unmarshal(r.raw, &slots); err != nil {
		g.e.t.Fatalf("batch answer is not an array: %s", r.raw)
	}
	out := map[string]any{}
	for _, s := range slots {
		key, _ := s["id"].(string)
		switch {
		case s["error"] != nil:
			out[key] = s
		case s["data"] != nil:
			out[key] = s["data"]
		default:
			out[key] = s["result"]
		}
	}
	return out
}

// one executes a single call (keyed by its method) and returns what its
// callback receives.
func (g gadget) one(method string, params map[string]any) any {
	g.e.t.Helper()
	res := g.execute(call(method, method, params))
	if res["error"] != nil {
		return res["error"]
	}
	return res[method]
}

// object is a callback's response that must be an object without error.
func object(t *testing.T, what string, v any) map[string]any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s: callback gets %#v, want an object", what, v)
	}
	if m["error"] != nil {
		t.Fatalf("%s: callback gets an error: %v", what, m["error"])
	}
	return m
}

func errorCode(v any) float64 {
	m, _ := v.(map[string]any)
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

func listIDs(t *testing.T, v any) []string {
	t.Helper()
	items, ok := object(t, "collection", v)["list"].([]any)
	if !ok {
		t.Fatalf("no list in %#v", v)
	}
	out := []string{}
	for _, it := range items {
		out = append(out, it.(map[string]any)["id"].(string))
	}
	return out
}

func TestOsapiPeople(t *testing.T) {
	e := newEnv(t)
	alice, bob, carol := e.register("alice"), e.register("bob"), e.register("carol")
	e.follow(alice, bob.id)
	g := gadget{e: e, token: alice.token, auth: "st"}

	// osapi.people.getViewer(): the person itself, as personTest.xml reads it.
	viewer := object(t, "getViewer", g.one("people.get", map[string]any{"userId": "@viewer", "groupId": "@self"}))
	if viewer["id"] != alice.id || viewer["displayName"] != "alice" {
		t.Errorf("getViewer: %v", viewer)
	}
	// osapi.people.getOwner(): the owner is the viewer here.
	if owner := object(t, "getOwner", g.one("people.get", map[string]any{"userId": "@owner", "groupId": "@self"})); owner["id"] != alice.id {
		t.Errorf("getOwner: %v", owner)
	}
	// osapi.people.getViewerFriends() and getOwnerFriends().
	for _, who := range []string{"@viewer", "@owner"} {
		if got := listIDs(t, g.one("people.get", map[string]any{"userId": who, "groupId": "@friends"})); !slices.Equal(got, []string{bob.id}) {
			t.Errorf("%s friends: %v", who, got)
		}
	}
	// osapi.people.get() with no params at all: the viewer.
	if p := object(t, "people.get()", g.one("people.get", nil)); p["id"] != alice.id {
		t.Errorf("people.get(): %v", p)
	}
	// userId as an array of one, as Shindig's test gadgets send it.
	if p := object(t, "userId [id]", g.one("people.get", map[string]any{"userId": []string{bob.id}})); p["id"] != bob.id {
		t.Errorf("userId [bob]: %v", p)
	}
	// Several users, as an array or a comma list: a collection, in order.
	for _, users := range []any{[]string{carol.id, bob.id}, carol.id + "," + bob.id} {
		if got := listIDs(t, g.one("people.get", map[string]any{"userId": users})); !slices.Equal(got, []string{carol.id, bob.id}) {
			t.Errorf("userId %v: %v", users, got)
		}
	}
	// fields: id and the fields asked for, nothing else.
	slim := object(t, "fields", g.one("people.get", map[string]any{"fields": []string{"displayName", "thumbnailUrl"}}))
	if keys := sortedKeys(slim); !slices.Equal(keys, []string{"displayName", "id"}) {
		t.Errorf("fields displayName,thumbnailUrl: %v", slim)
	}
	friends := object(t, "friends fields", g.one("people.get", map[string]any{"groupId": "@friends", "fields": "followersCount"}))
	if item := friends["list"].([]any)[0].(map[string]any); !slices.Equal(sortedKeys(item), []string{"followersCount", "id"}) {
		t.Errorf("friends with fields: %v", item)
	}

	// Follow and unfollow by RPC: osapi sends groupId @self with them.
	if res := object(t, "people.create", g.one("people.create", map[string]any{"id": carol.id})); res["id"] != carol.id {
		t.Errorf("people.create: %v", res)
	}
	if res := object(t, "people.delete", g.one("people.delete", map[string]any{"id": carol.id})); len(res) != 0 {
		t.Errorf("people.delete: callback gets %v, want {}", res)
	}

	// The other token forms osapi sends by itself.
	for _, auth := range []string{"oauth_token", "OAuth2"} {
		g := gadget{e: e, token: bob.token, auth: auth}
		if p := object(t, auth, g.one("people.get", nil)); p["id"] != bob.id {
			t.Errorf("%s: %v", auth, p)
		}
	}
	// A bad token fails the whole request, as an XHR failure: osapi hands
	// the callback the batch's error itself.
	if bad, _ := (gadget{e: e, token: "nope", auth: "st"}).one("people.get", nil).(map[string]any); bad["code"] != 401.0 {
		t.Errorf("bad st: callback gets %v, want code 401", bad)
	}
	// The token in the query works on the RPC URL only.
	e.wantError(e.do("GET", "/social/rest/people/@me/@self?st="+url.QueryEscape(alice.token), "", nil), 401)
}

func TestOsapiActivities(t *testing.T) {
	e := newEnv(t)
	alice, bob := e.register("alice"), e.register("bob")
	e.follow(alice, bob.id)
	g := gadget{e: e, token: bob.token, auth: "st"}

	// osapi.activities.create({activity: {...}}): the activity itself.
	posted := object(t, "create", g.one("activities.create", map[string]any{"activity": map[string]any{"title": "hello from a gadget"}}))
	id, _ := posted["id"].(string)
	if id == "" || posted["title"] != "hello from a gadget" {
		t.Fatalf("activities.create: %v", posted)
	}
	second := object(t, "create", g.one("activities.create", map[string]any{"activity": map[string]any{"title": "again"}}))["id"].(string)
	e.Settle()

	// activityId, one: the activity itself; a list: a collection.
	if a := object(t, "get one", g.one("activities.get", map[string]any{"activityId": id})); a["id"] != id || a["title"] != "hello from a gadget" {
		t.Errorf("activities.get one: %v", a)
	}
	if got := listIDs(t, g.one("activities.get", map[string]any{"activityId": []string{id, second}})); len(got) != 2 {
		t.Errorf("activities.get two: %v", got)
	}
	if code := errorCode(g.one("activities.get", map[string]any{"activityId": "123"})); code != 404 {
		t.Errorf("unknown activityId: %v", code)
	}

	// A gadget's first batch: viewer and home feed together, by its keys.
	alices := gadget{e: e, token: alice.token, auth: "st"}
	res := alices.execute(
		call("viewer", "people.get", map[string]any{"userId": "@viewer", "groupId": "@self"}),
		call("home", "activities.get", map[string]any{"userId": "@viewer", "groupId": "@friends", "count": 20, "fields": []string{"title"}}),
		call("nope", "activities.share", nil),
	)
	if v := object(t, "viewer", res["viewer"]); v["displayName"] != "alice" {
		t.Errorf("viewer: %v", v)
	}
	home := object(t, "home", res["home"])["list"].([]any)
	if len(home) != 2 || !slices.Equal(sortedKeys(home[0].(map[string]any)), []string{"id", "title"}) {
		t.Errorf("home with fields=title: %v", home)
	}
	if code := errorCode(res["nope"]); code != 501 {
		t.Errorf("unknown method: %v, want 501", res["nope"])
	}

	// Likes answer the activity with its counts; comments and
	// notifications {} where nothing is returned.
	if r := object(t, "likes.create", alices.one("likes.create", map[string]any{"activityId": id})); r["id"] != id || r["likesCount"] != 1.0 || r["likedByViewer"] != true {
		t.Errorf("likes.create: %v", r)
	}
	c := object(t, "comments.create", alices.one("comments.create", map[string]any{"activityId": id, "text": "nice"}))
	if c["text"] != "nice" {
		t.Errorf("comments.create: %v", c)
	}
	if r := object(t, "comments.delete", alices.one("comments.delete", map[string]any{"activityId": []string{id}, "commentId": c["id"]})); len(r) != 0 {
		t.Errorf("comments.delete: %v", r)
	}
	if r := object(t, "likes.delete", alices.one("likes.delete", map[string]any{"activityId": id})); r["id"] != id || r["likesCount"] != 0.0 || r["likedByViewer"] != false {
		t.Errorf("likes.delete: %v", r)
	}
	if r := object(t, "notifications.read", g.one("notifications.read", map[string]any{"all": true})); len(r) != 0 {
		t.Errorf("notifications.read: %v", r)
	}

	// activities.delete with activityId: {}, and gone.
	if r := object(t, "delete", g.one("activities.delete", map[string]any{"activityId": id})); len(r) != 0 {
		t.Errorf("activities.delete: %v", r)
	}
	if code := errorCode(g.one("activities.get", map[string]any{"activityId": id})); code != 404 {
		t.Errorf("deleted activity: %v", code)
	}
	// A list to delete: all of them must be the caller's, or none goes.
	other := object(t, "create", alices.one("activities.create", map[string]any{"activity": map[string]any{"title": "alice's"}}))["id"].(string)
	if code := errorCode(g.one("activities.delete", map[string]any{"activityId": []string{second, other}})); code != 404 {
		t.Errorf("deleting someone else's in a list: %v", code)
	}
	if a := object(t, "still there", g.one("activities.get", map[string]any{"activityId": second})); a["id"] != second {
		t.Errorf("after a refused list delete: %v", a)
	}
}

func TestOsapiGroupsAndAppData(t *testing.T) {
	e := newEnv(t)
	alice, bob := e.register("alice"), e.register("bob")
	ga, gb := gadget{e: e, token: alice.token, auth: "st"}, gadget{e: e, token: bob.token, auth: "OAuth2"}

	group := object(t, "groups.create", ga.one("groups.create", map[string]any{"title": "gadgeteers"}))
	gid, _ := group["id"].(string)
	if gid == "" || group["title"] != "gadgeteers" {
		t.Fatalf("groups.create: %v", group)
	}
	// osapi.groups.get() sends groupId @self: the viewer's groups.
	if got := listIDs(t, ga.one("groups.get", nil)); !slices.Equal(got, []string{gid}) {
		t.Errorf("groups.get(): %v", got)
	}
	if g := object(t, "join", gb.one("groups.join", map[string]any{"groupId": gid})); g["membersCount"] != 2.0 {
		t.Errorf("groups.join: %v", g)
	}
	if got := listIDs(t, gb.one("groups.get", map[string]any{"userId": "@viewer"})); !slices.Equal(got, []string{gid}) {
		t.Errorf("bob's groups after joining: %v", got)
	}
	if code := errorCode(gb.one("groups.join", nil)); code != 400 { // osapi's default groupId @self names no group
		t.Errorf("groups.join without a groupId: %v, want 400", code)
	}
	if r := object(t, "leave", gb.one("groups.leave", map[string]any{"groupId": gid})); len(r) != 0 {
		t.Errorf("groups.leave: %v", r)
	}
	if got := listIDs(t, gb.one("groups.get", nil)); len(got) != 0 {
		t.Errorf("bob's groups after leaving: %v", got)
	}

	// AppData: osapi.appdata.update / get / delete.
	upd := func(g gadget, data map[string]any, extra map[string]any) any {
		p := map[string]any{"appId": "@app", "data": data}
		for k, v := range extra {
			p[k] = v
		}
		return g.one("appdata.update", p)
	}
	if r := object(t, "update", upd(ga, map[string]any{"color": "blue", "size": "10"}, nil)); len(r) != 0 {
		t.Errorf("appdata.update: %v", r)
	}
	// update changes only the keys it names; fields narrows it further.
	object(t, "update", upd(ga, map[string]any{"size": "12", "ignored": "x"}, map[string]any{"fields": []string{"size"}}))
	want := map[string]any{alice.id: map[string]any{"color": "blue", "size": "12"}}
	if got := object(t, "get", ga.one("appdata.get", map[string]any{"appId": "@app"})); !reflect.DeepEqual(got, want) {
		t.Errorf("appdata.get: %v, want %v", got, want)
	}
	// Anyone reads it; keys narrow it; several users at once.
	object(t, "bob's", upd(gb, map[string]any{"color": "red"}, nil))
	got := object(t, "two users", gb.one("appdata.get", map[string]any{"userId": []string{alice.id, "@viewer"}, "appId": "@app", "fields": "color"}))
	if want := map[string]any{alice.id: map[string]any{"color": "blue"}, bob.id: map[string]any{"color": "red"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("appdata.get of two: %v, want %v", got, want)
	}
	// Only the owner writes.
	if code := errorCode(gb.one("appdata.update", map[string]any{"userId": alice.id, "appId": "@app", "data": map[string]any{"color": "black"}})); code != 403 {
		t.Errorf("writing someone else's: %v", code)
	}
	for name, data := range map[string]map[string]any{
		"bad key":      {"no spaces": "x"},
		"not a string": {"n": 5},
	} {
		if code := errorCode(upd(ga, data, nil)); code != 400 {
			t.Errorf("%s: %v, want 400", name, code)
		}
	}
	if code := errorCode(ga.one("appdata.update", map[string]any{"appId": "@app", "data": "color=blue"})); code != 400 {
		t.Errorf("data not an object: %v", code)
	}
	if r := object(t, "delete", ga.one("appdata.delete", map[string]any{"appId": "@app", "fields": []string{"size"}})); len(r) != 0 {
		t.Errorf("appdata.delete: %v", r)
	}
	want = map[string]any{alice.id: map[string]any{"color": "blue"}}
	if got := object(t, "get", ga.one("appdata.get", map[string]any{"appId": "@app"})); !reflect.DeepEqual(got, want) {
		t.Errorf("after delete: %v, want %v", got, want)
	}

	// system.listMethods: what the container asks first.
	methods, ok := ga.one("system.listMethods", nil).([]any)
	var names []string
	for _, m := range methods {
		names = append(names, m.(string))
	}
	for _, m := range []string{"people.get", "activities.get", "appdata.update", "groups.join", "system.listMethods"} {
		if !ok || !slices.Contains(names, m) {
			t.Errorf("system.listMethods lacks %s: %v", m, methods)
		}
	}
}

func sortedKeys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestOsapiAlbumsAndMediaItems(t *testing.T) {
	e := newEnv(t)
	ann := e.register("ann")
	g := gadget{e: e, token: ann.token, auth: "st"}

	album := object(t, "osapi.albums.create", g.one("albums.create", map[string]any{"album": map[string]any{"title": "Gadget album"}}))
	albumID := album["id"].(string)
	if album["ownerId"] != ann.id || album["mediaItemCount"] != float64(0) {
		t.Errorf("albums.create gives %v", album)
	}
	data := "data:image/png;base64," + base64.StdEncoding.EncodeToString(stacktest.Picture(t, "png", 16, 9))
	item := object(t, "osapi.mediaItems.create", g.one("mediaItems.create", map[string]any{
		"albumId": albumID, "mediaItem": map[string]any{"url": data, "description": "a small gradient"}}))
	itemID := item["id"].(string)
	if item["albumId"] != albumID || item["width"] != float64(16) || item["type"] != "image" {
		t.Errorf("mediaItems.create gives %v", item)
	}
	// Several calls in one batch, as a gadget's newBatch makes them.
	res := g.execute(
		call("albums", "albums.get", nil),
		call("items", "mediaItems.get", map[string]any{"albumId": albumID}),
		call("byId", "mediaItems.get", map[string]any{"albumId": albumID, "mediaItemId": itemID}),
		call("fields", "albums.supportedFields", nil),
		// Shindig's update names the item mediaItemIds.
		call("update", "mediaItems.update", map[string]any{"albumId": albumID, "mediaItemIds": itemID, "mediaItem": map[string]any{"description": "a gradient"}}),
	)
	if list := object(t, "albums.get", res["albums"])["list"].([]any); len(list) != 1 {
		t.Errorf("albums.get lists %v", list)
	}
	if list := object(t, "mediaItems.get", res["items"])["list"].([]any); len(list) != 1 {
		t.Errorf("mediaItems.get lists %v", list)
	}
	if got := object(t, "mediaItems.get by id", res["byId"]); got["id"] != itemID {
		t.Errorf("mediaItems.get by id gives %v", got)
	}
	if fields, _ := res["fields"].([]any); !slices.Contains(fields, any("mediaItemCount")) {
		t.Errorf("albums.supportedFields gives %v", res["fields"])
	}
	if got := object(t, "mediaItems.update", res["update"]); got["description"] != "a gradient" {
		t.Errorf("mediaItems.update gives %v", got)
	}
	// Later versions of Shindig's handler also read the id from id and
	// the item from data.
	res = g.execute(
		call("byData", "mediaItems.update", map[string]any{"albumId": albumID, "id": itemID, "data": map[string]any{"title": "Gradient"}}),
		call("both", "mediaItems.update", map[string]any{"albumId": albumID, "mediaItemId": itemID, "id": itemID,
			"mediaItem": map[string]any{"title": "One"}, "data": map[string]any{"title": "Two"}}),
	)
	if got := object(t, "mediaItems.update by id and data", res["byData"]); got["title"] != "Gradient" || got["description"] != "a gradient" {
		t.Errorf("mediaItems.update by id and data gives %v", got)
	}
	if m, _ := res["both"].(map[string]any); m == nil || m["error"] == nil || m["error"].(map[string]any)["code"] != float64(400) {
		t.Errorf("mediaItems.update with mediaItem and data: %v, want a 400", res["both"])
	}
	res = g.execute(
		call("del", "mediaItems.delete", map[string]any{"albumId": albumID, "mediaItemId": itemID}),
		call("gone", "albums.delete", map[string]any{"albumId": albumID}),
	)
	for _, key := range []string{"del", "gone"} {
		if m, _ := res[key].(map[string]any); m == nil || m["error"] != nil {
			t.Errorf("%s: callback gets %v", key, res[key])
		}
	}
	if got := g.one("albums.get", map[string]any{"albumId": albumID}); !reflect.DeepEqual(got.(map[string]any)["error"].(map[string]any)["code"], float64(404)) {
		t.Errorf("a deleted album: %v", got)
	}
}
