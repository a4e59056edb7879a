package conversations

import (
	"context"
	"os"
	"slices"
	"testing"

	"socialstream/internal/ids"
	"socialstream/internal/paging"
	"socialstream/internal/store"
	"socialstream/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// A post's job may run late, twice and out of order: each entry keeps
// its posts in order, once; the newest decides unread; a removal hides
// the entry from a post older than it (however late its job) and not
// from a newer one; a delete's cleanup gives the post before, and an
// entry with none left is gone.
func TestPostsJoinExactlyInAnyOrder(t *testing.T) {
	ctx := context.Background()
	db := testenv.DB(t)
	s, err := New(db)
	if err != nil {
		t.Fatal(err)
	}
	g := ids.New()
	p1, p2, p3 := ids.Format(g.Next()), ids.Format(g.Next()), ids.Format(g.Next())
	people := []string{"ann", "bob"}
	add := func(id, author string) {
		t.Helper()
		err := db.Update(ctx, func(tx *store.Tx) error {
			l := tx.Lookup()
			r := Read(l, Post{ID: id, Author: author, People: people}, people)
			if err := l.Run(ctx); err != nil {
				return err
			}
			_, err := r.Add(tx)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	list := func(user string) []Conversation {
		t.Helper()
		got, _, err := s.List(ctx, user, "", paging.Request{Count: 10})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	add(p2, "bob")
	add(p1, "ann") // late, older: not the newest
	add(p2, "bob") // twice
	got := list("ann")
	if len(got) != 1 || got[0].Last != p2 || !got[0].Unread || !slices.Equal(got[0].Others, []string{"bob"}) {
		t.Fatalf("ann's: %+v", got)
	}
	if b := list("bob"); len(b) != 1 || b[0].Unread || b[0].ID != got[0].ID {
		t.Errorf("bob's: %+v", b)
	}
	if err := s.Remove(ctx, "ann", got[0].ID); err != nil {
		t.Fatal(err)
	}
	add(p1, "ann") // a late job of a post older than the removal
	if a := list("ann"); len(a) != 0 {
		t.Errorf("ann's after she removed it, and an older post's job ran again: %+v", a)
	}
	add(p3, "bob")
	if a := list("ann"); len(a) != 1 || a[0].Last != p3 || !a[0].Unread {
		t.Errorf("ann's after a newer post: %+v", a)
	}
	if _, err := s.MarkRead(ctx, "ann", got[0].ID); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{p3, p3} { // the cleanup, twice
		if _, err := s.ForgetActivity(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if b := list("bob"); len(b) != 1 || b[0].Last != p2 {
		t.Errorf("bob's after the newest was deleted: %+v", b)
	}
	if a := list("ann"); len(a) != 0 {
		t.Errorf("ann's after the one post since her removal was deleted: %+v", a)
	}
	for _, id := range []string{p1, p2} {
		if _, err := s.ForgetActivity(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if b := list("bob"); len(b) != 0 {
		t.Errorf("bob's with every post deleted: %+v", b)
	}
	if _, err := s.MarkRead(ctx, "bob", "not an id"); err != ErrNoSuchConversation {
		t.Errorf("a bad id: %v", err)
	}
}
