package wired_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"socialstream/internal/accounts"
	"socialstream/internal/app/apptest"
	"socialstream/internal/appdata"
	"socialstream/internal/derrors"
	"socialstream/internal/ids"
	"socialstream/internal/testenv"
)

// A person's app data, by application: set, read by many at once, some
// keys or all, deleted, bounded, checked; nothing kept for someone who is
// not there; exported and erased whole.
func TestAppData(t *testing.T) {
	ctx := context.Background()
	db := testenv.DB(t)
	acc := apptest.Accounts(t, db, ids.New())
	ann, _, err := acc.Register(ctx, "ann", "password-ann", "")
	if err != nil {
		t.Fatal(err)
	}
	bob, _, err := acc.Register(ctx, "bob", "password-bob", "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := appdata.New(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update(ctx, ann.ID, "", map[string]string{"theme": "dark", "size": "12"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(ctx, ann.ID, "chess", map[string]string{"rating": "1500", "skip": "x"}, []string{"rating"}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, []string{ann.ID, bob.ID, ann.ID}, "@app", nil)
	if err != nil || len(got) != 2 || got[ann.ID]["theme"] != "dark" || len(got[bob.ID]) != 0 {
		t.Fatalf("@app of both: %v, %v", got, err)
	}
	if got, err := s.Get(ctx, []string{ann.ID}, "chess", nil); err != nil || len(got[ann.ID]) != 1 || got[ann.ID]["rating"] != "1500" {
		t.Errorf("chess, the one key the update named: %v, %v", got, err)
	}
	if got, err := s.Get(ctx, []string{ann.ID}, "", []string{"size"}); err != nil || len(got[ann.ID]) != 1 {
		t.Errorf("one key: %v, %v", got, err)
	}
	if err := s.Delete(ctx, ann.ID, "", []string{"theme"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Get(ctx, []string{ann.ID}, "", nil); len(got[ann.ID]) != 1 || got[ann.ID]["size"] != "12" {
		t.Errorf("after deleting theme: %v", got[ann.ID])
	}

	// Refusals, each of its kind, change nothing.
	for _, c := range []struct {
		name string
		err  error
		kind error
	}{
		{"bad app", s.Update(ctx, ann.ID, "no spaces", map[string]string{"k": "v"}, nil), derrors.InvalidArgument},
		{"bad key", s.Update(ctx, ann.ID, "", map[string]string{"a/b": "v"}, nil), derrors.InvalidArgument},
		{"invalid UTF-8", s.Update(ctx, ann.ID, "", map[string]string{"k": "\xff"}, nil), derrors.InvalidArgument},
		{"too large", s.Update(ctx, ann.ID, "", map[string]string{"big": strings.Repeat("x", appdata.MaxBytes)}, nil), derrors.TooLarge},
		{"someone not here", s.Update(ctx, ids.Format(4242), "", map[string]string{"k": "v"}, nil), accounts.ErrBadToken},
	} {
		if !errors.Is(c.err, c.kind) {
			t.Errorf("%s: %v, want %v", c.name, c.err, c.kind)
		}
	}
	if got, _ := s.Get(ctx, []string{ann.ID}, "", nil); len(got[ann.ID]) != 1 {
		t.Errorf("after the refusals: %v", got[ann.ID])
	}
	all, err := appdata.Export(ctx, db, ann.ID)
	if err != nil || len(all) != 2 || all["@app"]["size"] != "12" || all["chess"]["rating"] != "1500" {
		t.Errorf("export: %v, %v", all, err)
	}
	if n, err := appdata.Erase(ctx, db, ann.ID); err != nil || n != 1 {
		t.Errorf("erase: %d, %v", n, err)
	}
	if all, err := appdata.Export(ctx, db, ann.ID); err != nil || len(all) != 0 {
		t.Errorf("export after the erasure: %v, %v", all, err)
	}
}
