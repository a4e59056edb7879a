package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/mattn/go-mastodon"
)

// Favourites, counts and language, as a Mastodon app reads them: the
// domain keeps each, and both faces answer it.
func TestMastodonFavouritesCountsAndLanguage(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	alice, bob := e.register("alice"), e.register("bob")
	ca, cb := e.mastoClient(alice, "read write follow"), e.mastoClient(bob, "read write follow")

	var posts []*mastodon.Status
	for _, text := range []string{"first", "second", "third"} {
		st, err := ca.PostStatus(ctx, &mastodon.Toot{Status: text, Language: "en"})
		if err != nil {
			t.Fatal(err)
		}
		if st.Language != "en" {
			t.Errorf("language: %q", st.Language)
		}
		posts = append(posts, st)
	}
	if _, err := ca.PostStatus(ctx, &mastodon.Toot{Status: "to bob alone @bob", Visibility: "direct"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ca.PostStatus(ctx, &mastodon.Toot{Status: "no such language", Language: "zz"}); err == nil {
		t.Error("a status in language zz posted")
	} else {
		wantStatus(t, err, http.StatusUnprocessableEntity)
	}
	reply, err := cb.PostStatus(ctx, &mastodon.Toot{Status: "a reply", InReplyToID: posts[0].ID})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := cb.GetStatus(ctx, posts[0].ID); err != nil || st.RepliesCount != 1 {
		t.Errorf("replies_count after a reply: %+v, %v", st, err)
	}
	me, err := ca.GetAccountCurrentUser(ctx)
	if err != nil || me.StatusesCount != 3 {
		t.Errorf("statuses_count (the direct one uncounted): %+v, %v", me, err)
	}
	var raw map[string]any
	if r := e.do("GET", "/api/v1/accounts/"+alice.id, alice.token, nil); r.status != http.StatusOK {
		t.Fatalf("account: %d %s", r.status, r.raw)
	} else {
		raw = r.body
	}
	if d, _ := raw["last_status_at"].(string); len(d) != len(time.DateOnly) {
		t.Errorf("last_status_at: %v", raw["last_status_at"])
	}
	if err := cb.DeleteStatus(ctx, reply.ID); err != nil {
		t.Fatal(err)
	}
	if st, err := ca.GetStatus(ctx, posts[0].ID); err != nil || st.RepliesCount != 0 {
		t.Errorf("replies_count after the reply's delete: %+v, %v", st, err)
	}
	if a, err := ca.GetAccount(ctx, mastodon.ID(bob.id)); err != nil || a.StatusesCount != 0 {
		t.Errorf("bob's statuses_count after his one delete: %+v, %v", a, err)
	}

	// Favourites, newest favourite first, paged; an unfavourite leaves.
	for _, st := range []*mastodon.Status{posts[1], posts[0], posts[2]} {
		if _, err := cb.Favourite(ctx, st.ID); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cb.Unfavourite(ctx, posts[2].ID); err != nil {
		t.Fatal(err)
	}
	pg := &mastodon.Pagination{Limit: 1}
	var got []mastodon.ID
	for range 4 {
		page, err := cb.GetFavourites(ctx, pg)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range page {
			if !st.Favourited.(bool) {
				t.Errorf("a favourite not favourited: %+v", st)
			}
			got = append(got, st.ID)
		}
		if pg.MaxID == "" {
			break
		}
		pg = &mastodon.Pagination{Limit: 1, MaxID: pg.MaxID}
	}
	if want := []mastodon.ID{posts[0].ID, posts[1].ID}; !equalIDs(got, want) {
		t.Errorf("favourites: %v, want %v", got, want)
	}
	// And REST's, the same list.
	if r := e.do("GET", "/social/rest/likes", bob.token, nil); r.status != http.StatusOK || len(r.body["list"].([]any)) != 2 {
		t.Errorf("REST's likes: %d %s", r.status, r.raw)
	}
	if list, err := ca.GetFavourites(ctx, nil); err != nil || len(list) != 0 {
		t.Errorf("alice's favourites: %v, %v", list, err)
	}
}

func equalIDs(a, b []mastodon.ID) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
