package api_test

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"socialstream/internal/accounts"
	"socialstream/internal/blocks"
	"socialstream/internal/mutes"
	"socialstream/internal/store"
	"socialstream/internal/viewer"
)

// asEarlierVersion leaves a person as an earlier version did: no state
// of their own, a card of counts alone.
func (e *env) asEarlierVersion(ctx context.Context, u user) {
	e.t.Helper()
	err := e.db.Update(ctx, func(tx *store.Tx) error {
		var c accounts.Counts
		if _, err := tx.Get(accounts.CountsKey(e.db, u.id), &c); err != nil {
			return err
		}
		if err := tx.Put(accounts.CountsKey(e.db, u.id), &accounts.Counts{Followers: c.Followers, Following: c.Following}); err != nil {
			return err
		}
		return tx.Delete(viewer.Key(e.db, u.id))
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// homeOf reads u's home feed: the ids shown, and whether u likes each.
func (e *env) homeOf(u user) (shown []string, liked map[string]bool, names map[string]string) {
	e.t.Helper()
	r := e.do("GET", "/social/rest/activities/@me/@friends?count=50", u.token, nil)
	shown = e.list(r)
	liked, names = map[string]bool{}, map[string]string{}
	for _, it := range r.body["list"].([]any) {
		a := it.(map[string]any)
		liked[a["id"].(string)] = a["likedByViewer"] == true
		names[a["id"].(string)] = a["author"].(map[string]any)["preferredUsername"].(string)
	}
	return shown, liked, names
}

// The people of an earlier version, who have no state of their own and
// cards without names, see what they saw: their blocks and mutes hide,
// their likes show (read by key), the authors have their names (read from
// the User); the upgrade lists their blocks and mutes and names their
// cards, and their pages show the same; later blocks and likes keep the
// state in step.
func TestPeopleOfAnEarlierVersion(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	reader, author, foe, bore := e.register("reader"), e.register("author"), e.register("foe"), e.register("bore")
	for _, u := range []user{author, foe, bore} {
		e.follow(reader, u.id)
	}
	old := e.post(author, "from before")
	fromFoe, fromBore := e.post(foe, "foe's"), e.post(bore, "bore's")
	e.settle()
	if r := e.do("POST", "/social/rest/likes/"+old, reader.token, nil); r.status >= 300 {
		t.Fatalf("like: %d %s", r.status, r.raw)
	}
	for _, u := range []user{reader, author, foe, bore} {
		e.asEarlierVersion(ctx, u)
	}
	// The earlier version's block and mute, written as it wrote them.
	if err := e.db.Update(ctx, func(tx *store.Tx) error { return blocks.Set(tx, reader.id, foe.id, time.Now()) }); err != nil {
		t.Fatal(err)
	}
	if err := e.db.Put(ctx, mutes.Key(e.db, reader.id, bore.id), &mutes.Stored{Muter: reader.id, Muted: bore.id, Created: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		shown, liked, names := e.homeOf(reader)
		if slices.Contains(shown, fromFoe) || slices.Contains(shown, fromBore) || !slices.Contains(shown, old) {
			t.Errorf("%s: home shows %v; want %s, not the blocked %s nor the muted %s", when, shown, old, fromFoe, fromBore)
		}
		if !liked[old] {
			t.Errorf("%s: the reader's like of %s not shown", when, old)
		}
		if names[old] != "author" {
			t.Errorf("%s: the author's name %q", when, names[old])
		}
	}
	check("before the upgrade")

	// A like now makes a state that knows the likes from now on alone,
	// and no blocks: the page still reads the rest by key.
	fresh := e.post(author, "after")
	e.settle()
	if r := e.do("POST", "/social/rest/likes/"+fresh, reader.token, nil); r.status >= 300 {
		t.Fatalf("like: %d %s", r.status, r.raw)
	}
	check("with a state made by a like")

	for _, u := range []user{reader, author, foe, bore} {
		if _, err := e.svc.Upgrade.Person(ctx, u.id); err != nil {
			t.Fatal(err)
		}
	}
	var st viewer.State
	if _, err := e.db.Get(ctx, viewer.Key(e.db, reader.id), &st); err != nil {
		t.Fatal(err)
	}
	if !st.Complete || !slices.Equal(st.Blocks, []string{foe.id}) || !slices.Equal(st.Muted, []string{bore.id}) {
		t.Errorf("the reader's state after the upgrade: %+v", st)
	}
	var foeState viewer.State
	if _, err := e.db.Get(ctx, viewer.Key(e.db, foe.id), &foeState); err != nil || !slices.Equal(foeState.BlockedBy, []string{reader.id}) {
		t.Errorf("the blocked one's state: %+v, %v", foeState, err)
	}
	var card accounts.Counts
	if _, err := e.db.Get(ctx, accounts.CountsKey(e.db, author.id), &card); err != nil || card.Username != "author" || card.Followers != 1 {
		t.Errorf("the author's card: %+v, %v", card, err)
	}
	check("after the upgrade")
	if _, liked, _ := e.homeOf(reader); !liked[fresh] {
		t.Error("the like made before the upgrade is not shown")
	}
	// Running it again changes nothing.
	if changed, err := e.svc.Upgrade.Person(ctx, reader.id); err != nil || changed {
		t.Errorf("a second upgrade: changed %v, %v", changed, err)
	}

	// Kept in step: the unblock and unmute show them again, the unlike
	// takes the like away.
	if r := e.do("DELETE", "/social/rest/people/@me/@blocked/"+foe.id, reader.token, nil); r.status != http.StatusNoContent {
		t.Fatalf("unblock: %d %s", r.status, r.raw)
	}
	if r := e.do("DELETE", "/social/rest/people/@me/@muted/"+bore.id, reader.token, nil); r.status != http.StatusNoContent {
		t.Fatalf("unmute: %d %s", r.status, r.raw)
	}
	if r := e.do("DELETE", "/social/rest/likes/"+fresh, reader.token, nil); r.status >= 300 {
		t.Fatalf("unlike: %d %s", r.status, r.raw)
	}
	shown, liked, _ := e.homeOf(reader)
	if !slices.Contains(shown, fromFoe) || !slices.Contains(shown, fromBore) || liked[fresh] || !liked[old] {
		t.Errorf("after unblock, unmute, unlike: shown %v, liked %v", shown, liked)
	}
}
