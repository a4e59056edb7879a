package mutes

import (
	"context"
	"os"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"socialstream/internal/accounts"
	"socialstream/internal/ids"
	"socialstream/internal/store"
	"socialstream/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// A mute for a while holds until it ends, and then is as none: not read
// as active, not listed.
func TestAMuteEnds(t *testing.T) {
	ctx := context.Background()
	db := testenv.DB(t)
	acc, err := accounts.New(db, ids.New(), accounts.Config{BcryptCost: bcrypt.MinCost})
	if err != nil {
		t.Fatal(err)
	}
	var people []string
	for _, name := range []string{"ann", "ben", "cat"} {
		p, _, err := acc.Register(ctx, name, "password1", "")
		if err != nil {
			t.Fatal(err)
		}
		people = append(people, p.ID)
	}
	ann, ben, cat := people[0], people[1], people[2]
	s, err := New(db, acc)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return t0 }
	if _, _, err := s.Mute(ctx, ann, ben, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Mute(ctx, ann, cat, 0); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		at       time.Duration
		ben, cat bool
		listed   int
	}{{5 * time.Second, true, true, 2}, {10 * time.Second, false, true, 1}, {1000 * time.Hour, false, true, 1}} {
		s.now = func() time.Time { return t0.Add(c.at) }
		_, b, err := s.Get(ctx, ann, ben)
		if err != nil {
			t.Fatal(err)
		}
		_, k, err := s.Get(ctx, ann, cat)
		if err != nil {
			t.Fatal(err)
		}
		l := db.Lookup()
		ref := Read(l, ann, ben)
		if err := l.Run(ctx); err != nil {
			t.Fatal(err)
		}
		list, _, err := s.List(ctx, ann, store.PageRequest{Count: 10})
		if err != nil {
			t.Fatal(err)
		}
		if b != c.ben || ref.ActiveAt(s.now()) != c.ben || k != c.cat || len(list) != c.listed {
			t.Errorf("at +%v: ben muted %v (read %v), cat %v, listed %d; want %v, %v, %d", c.at, b, ref.ActiveAt(s.now()), k, len(list), c.ben, c.cat, c.listed)
		}
	}
}
