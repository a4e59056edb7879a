package activities

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"socialstream/internal/accounts"
)

// What an edit writes, decided without Datastore.
func TestDecideEdit(t *testing.T) {
	current := Activity{Seq: 7, UserID: "ann", Title: "hi @bob", Body: "b", PostedTime: 1000, Visibility: Public,
		MentionIDs: []string{"bob", "cat"}, MentionedAt: []int{0, 1}, Edits: 1, EditedTime: 2000, Tags: []string{"go"}}
	facts := func(f func(*editFacts)) editFacts {
		seen := current
		e := editFacts{id: "A7", found: true, current: current, seen: &seen, text: wording{title: "hello @cat @dan", body: "b2"},
			tags: []string{"rust"}, mentionable: []string{"cat", "dan"}, now: 5000}
		if f != nil {
			f(&e)
		}
		return e
	}
	t.Run("refused", func(t *testing.T) {
		for _, c := range []struct {
			name  string
			facts editFacts
			err   error
		}{
			{"a suspended author", facts(func(f *editFacts) { f.mayAct = accounts.ErrSuspended }), accounts.ErrSuspended},
			{"deleted meanwhile", facts(func(f *editFacts) { f.found = false }), ErrNoSuchActivity},
			{"edited meanwhile", facts(func(f *editFacts) { f.current.Edits = 2 }), errEditedMeanwhile},
			{"retitled meanwhile", facts(func(f *editFacts) { f.current.Title = "other" }), errEditedMeanwhile},
			{"warned meanwhile", facts(func(f *editFacts) { f.current.SpoilerText = "cw" }), errEditedMeanwhile},
			{"made before the edit shown", facts(func(f *editFacts) { f.at = 1999 }), ErrOlderEdit},
			{"made as the edit shown", facts(func(f *editFacts) { f.at = 2000 }), ErrOlderEdit},
		} {
			if _, err := decideEdit(c.facts); !errors.Is(err, c.err) {
				t.Errorf("%s: %v, want %v", c.name, err, c.err)
			}
		}
	})
	t.Run("another server's edit, at its time", func(t *testing.T) {
		for _, c := range []struct{ at, want int64 }{{2001, 2001}, {9000, 9000}} { // its clock may be ahead of ours
			p, err := decideEdit(facts(func(f *editFacts) { f.at = c.at }))
			if err != nil || p.activity.EditedTime != c.want {
				t.Errorf("at %d: %v, edited at %d, want %d", c.at, err, p.activity.EditedTime, c.want)
			}
		}
	})
	t.Run("an edit", func(t *testing.T) {
		p, err := decideEdit(facts(nil))
		if err != nil {
			t.Fatal(err)
		}
		a := p.activity
		if a.Title != "hello @cat @dan" || a.Body != "b2" || a.Edits != 2 || a.EditedTime != 5000 || !slices.Equal(a.Tags, []string{"rust"}) {
			t.Errorf("activity %+v", a)
		}
		// cat keeps the edit that first named them; dan is named by this one.
		if !slices.Equal(a.MentionIDs, []string{"cat", "dan"}) || !slices.Equal(a.MentionedAt, []int{1, 2}) {
			t.Errorf("mentions %v at %v", a.MentionIDs, a.MentionedAt)
		}
		if p.was.Title != "hi @bob" || p.was.Time != 2000 || !slices.Equal(p.was.MentionIDs, []string{"bob", "cat"}) {
			t.Errorf("version %+v", p.was)
		}
		if fmt.Sprint(p.forget) != fmt.Sprint([]struct{ user, event string }{{"bob", mentionEvent("A7", 0)}}) || p.audience {
			t.Errorf("forgets %v, audience %v", p.forget, p.audience)
		}
		if current.Title != "hi @bob" || current.Edits != 1 {
			t.Error("the decision changed what it read")
		}
	})
	t.Run("a content warning", func(t *testing.T) {
		p, _ := decideEdit(facts(func(f *editFacts) { f.text = wording{title: "hi @bob", body: "b", spoiler: "plot", sensitive: true} }))
		if a := p.activity; a.SpoilerText != "plot" || !a.Sensitive || p.was.SpoilerText != "" || p.was.Sensitive {
			t.Errorf("activity warns %q (%v), version %q (%v)", a.SpoilerText, a.Sensitive, p.was.SpoilerText, p.was.Sensitive)
		}
	})
	t.Run("a clock behind the last edit", func(t *testing.T) {
		p, _ := decideEdit(facts(func(f *editFacts) { f.now = 1500 }))
		if p.activity.EditedTime != 2001 {
			t.Errorf("edited at %d", p.activity.EditedTime)
		}
	})
	t.Run("for the mentioned alone", func(t *testing.T) {
		p, _ := decideEdit(facts(func(f *editFacts) { f.current.Visibility, f.mentionable = MentionedOnly, nil }))
		if !p.audience || len(p.forget) != 2 || p.activity.MentionIDs != nil {
			t.Errorf("%+v", p)
		}
	})
}
