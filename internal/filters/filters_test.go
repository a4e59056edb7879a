package filters

import (
	"encoding/json"
	"slices"
	"testing"
	"time"
)

// The matching rules, in milliseconds: where a filter applies and until
// when, whole words or anywhere, any letter case, hide over warn, the
// texts of what an activity shares as its own.
func TestApply(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	raw := func(fs ...Filter) []string {
		out, err := encode(fs)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	spoilers := Filter{ID: "1", Title: "spoilers", Keywords: []Keyword{{Keyword: "Finale", WholeWord: true}, {Keyword: "ending"}}, Context: []string{Home, Public}, Action: Warn}
	cats := Filter{ID: "2", Title: "cats", Keywords: []Keyword{{Keyword: "cat", WholeWord: true}}, Context: []string{Home}, Action: Hide}
	old := Filter{ID: "3", Title: "old", Keywords: []Keyword{{Keyword: "news"}}, Context: []string{Home}, Action: Hide, ExpiresAt: now.Add(-time.Minute).Format(time.RFC3339)}
	soon := Filter{ID: "4", Title: "soon", Keywords: []Keyword{{Keyword: "news"}}, Context: []string{Home}, Action: Warn, ExpiresAt: now.Add(time.Minute).Format(time.RFC3339)}
	all := raw(spoilers, cats, old, soon)
	for _, c := range []struct {
		name  string
		where string
		texts []string
		hide  bool
		warn  []string // the filters' ids
	}{
		{"nothing matches", Home, []string{"a quiet day"}, false, nil},
		{"a whole word, any case", Home, []string{"the FINALE tonight"}, false, []string{"1"}},
		{"not inside a word", Home, []string{"finalес semifinaler"}, false, nil},
		{"anywhere when not whole", Home, []string{"neverending"}, false, []string{"1"}},
		{"hide wins", Home, []string{"my cat saw the finale"}, true, nil},
		{"cat inside a word is no cat", Home, []string{"concatenate"}, false, nil},
		{"in the shared activity's text", Home, []string{"look", "a cat"}, true, nil},
		{"another context", Notifications, []string{"the finale, a cat"}, false, nil},
		{"only where it applies", Public, []string{"a cat at the finale"}, false, []string{"1"}},
		{"an expired filter does nothing, one still running warns", Home, []string{"news"}, false, []string{"4"}},
		{"punctuation is a boundary", Home, []string{"finale!"}, false, []string{"1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			hide, warn := Active(all, c.where, now).Apply(c.texts...)
			var ids []string
			for _, m := range warn {
				ids = append(ids, m.FilterID)
			}
			if hide != c.hide || !slices.Equal(ids, c.warn) {
				t.Errorf("hide %v, warn %v; want %v, %v", hide, ids, c.hide, c.warn)
			}
		})
	}
	if Active(nil, Home, now) != nil || Active(all, "", now) != nil || Active(raw(old), Home, now) != nil {
		t.Error("a set with no filter that applies is not nil")
	}
	// A stored filter that does not decode is left out, not an error.
	if s := Active(append([]string{"{not json", `{"id":""}`}, raw(cats)...), Home, now); s == nil || len(s.fs) != 1 {
		t.Errorf("decoding skipped nothing: %+v", s)
	}
}

// What a filter must be to be kept.
func TestCheck(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	good := func() Filter {
		return Filter{Title: " spoilers ", Keywords: []Keyword{{Keyword: " finale "}}, Context: []string{Home, Home, Public}}
	}
	f := good()
	if err := f.check(now); err != nil {
		t.Fatal(err)
	}
	if f.Title != "spoilers" || f.Keywords[0].Keyword != "finale" || f.Action != Warn || !slices.Equal(f.Context, []string{Home, Public}) {
		b, _ := json.Marshal(f)
		t.Errorf("cleaned %s", b)
	}
	for name, change := range map[string]func(*Filter){
		"no title":        func(f *Filter) { f.Title = " " },
		"no keyword":      func(f *Filter) { f.Keywords = nil },
		"a keyword twice": func(f *Filter) { f.Keywords = append(f.Keywords, Keyword{Keyword: "FINALE"}) },
		"no context":      func(f *Filter) { f.Context = nil },
		"unknown context": func(f *Filter) { f.Context = []string{"elsewhere"} },
		"unknown action":  func(f *Filter) { f.Action = "shout" },
		"not a time":      func(f *Filter) { f.ExpiresAt = "tomorrow" },
		"expired already": func(f *Filter) { f.ExpiresAt = now.Add(-time.Second).Format(time.RFC3339) },
		"too many keywords": func(f *Filter) {
			for i := range MaxKeywords {
				f.Keywords = append(f.Keywords, Keyword{Keyword: string(rune('a' + i))})
			}
		},
	} {
		f := good()
		change(&f)
		if err := f.check(now); err == nil {
			t.Errorf("%s: taken", name)
		}
	}
}
