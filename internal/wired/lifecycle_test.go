package wired_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"socialstream/internal/accounts"
	"socialstream/internal/activities"
	"socialstream/internal/app/apptest"
	"socialstream/internal/queue"
)

// The export is one JSON document, whole, of the person's own data; an
// erasure that comes before its deletion waits (NotYet), and once the
// account is gone takes what it left, step after step, to the end.
func TestExportAndErase(t *testing.T) {
	ctx := context.Background()
	env := apptest.New(t)
	acc, svc := env.Acc, env.Svc
	ann, _, err := acc.Register(ctx, "ann", "password-ann", "")
	if err != nil {
		t.Fatal(err)
	}
	post, _, err := svc.Activities.Post(ctx, ann.ID, activities.PostInput{Title: "mine"})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := svc.Lifecycle.Export(ctx, ann.ID, &buf, nil); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Person     struct{ ID string } `json:"person"`
		Activities []struct{ ID string }
		Complete   bool `json:"complete"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil || !doc.Complete || doc.Person.ID != ann.ID || len(doc.Activities) != 1 || doc.Activities[0].ID != post.ID {
		t.Fatalf("export %s (%v)", buf.Bytes(), err)
	}

	// The erasure's first step, before the deletion commits, waits.
	early := accounts.EraseTask{UserID: ann.ID, At: time.Now().UnixMicro()}
	if _, err := svc.Lifecycle.Erase(ctx, early); !errors.Is(err, queue.ErrNotYet) {
		t.Errorf("an erasure before its deletion: %v, want not yet", err)
	}
	if err := svc.Lifecycle.Delete(ctx, ann.ID, "password-ann"); err != nil {
		t.Fatal(err)
	}
	step, done := early, false
	for i := 0; i < 20 && !done; i++ {
		res, err := svc.Lifecycle.Erase(ctx, step)
		if err != nil {
			t.Fatal(err)
		}
		done = res.Done
		if res.Next != nil {
			step = *res.Next
		}
	}
	if !done {
		t.Fatal("the erasure did not end in 20 steps")
	}
	if _, err := svc.Activities.Exists(ctx, post.ID); !errors.Is(err, activities.ErrNoSuchActivity) {
		t.Errorf("ann's post after the erasure: %v", err)
	}
	if err := svc.Lifecycle.Export(ctx, ann.ID, &buf, nil); !errors.Is(err, accounts.ErrNoSuchPerson) {
		t.Errorf("an export of the erased: %v", err)
	}
}
