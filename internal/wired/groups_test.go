package wired_test

import (
	"context"
	"errors"
	"testing"

	"socialstream/internal/app/apptest"
	"socialstream/internal/groups"
	"socialstream/internal/store"
)

// An open group takes whoever joins; a closed one only whom its owner
// invites, and only once they accept; the owner cannot leave; a closed
// group shows itself to its members alone; counts follow.
func TestJoinPolicies(t *testing.T) {
	ctx := context.Background()
	env := apptest.New(t)
	svc := env.Svc
	g := svc.Groups
	person := env.Person
	ann, bob, cat := person("ann"), person("bob"), person("cat")
	open, err := g.Create(ctx, ann, "open", "", groups.Open)
	if err != nil {
		t.Fatal(err)
	}
	closed, err := g.Create(ctx, ann, "closed", "", groups.Closed)
	if err != nil {
		t.Fatal(err)
	}
	if _, out, err := g.Join(ctx, bob, open.ID, bob); err != nil || out != groups.Joined {
		t.Fatalf("bob joins the open group: %v, %v", out, err)
	}
	if _, out, err := g.Join(ctx, bob, open.ID, bob); err != nil || out != groups.AlreadyMember {
		t.Errorf("bob joins again: %v, %v", out, err)
	}
	if _, _, err := g.Join(ctx, bob, closed.ID, bob); !errors.Is(err, groups.ErrClosed) {
		t.Errorf("bob joins the closed group uninvited: %v", err)
	}
	if _, err := g.Get(ctx, bob, closed.ID); !errors.Is(err, groups.ErrMembersOnly) {
		t.Errorf("bob reads the closed group: %v", err)
	}
	if _, _, err := g.Join(ctx, bob, closed.ID, cat); !errors.Is(err, groups.ErrNotOwner) {
		t.Errorf("bob invites cat: %v", err)
	}
	if _, out, err := g.Join(ctx, ann, closed.ID, cat); err != nil || out != groups.Invited {
		t.Fatalf("ann invites cat: %v, %v", out, err)
	}
	if ok, err := g.IsMember(ctx, closed.ID, cat); err != nil || ok {
		t.Errorf("cat is a member before accepting: %v, %v", ok, err)
	}
	if _, out, err := g.Join(ctx, cat, closed.ID, cat); err != nil || out != groups.Joined {
		t.Fatalf("cat accepts: %v, %v", out, err)
	}
	if v, err := g.Get(ctx, cat, closed.ID); err != nil || v.MembersCount != 2 {
		t.Errorf("the closed group to cat: %+v, %v; want 2 members", v, err)
	}
	if err := g.Leave(ctx, ann, open.ID, ann); !errors.Is(err, groups.ErrOwnerLeaves) {
		t.Errorf("the owner leaves: %v", err)
	}
	if err := g.Leave(ctx, bob, open.ID, bob); err != nil {
		t.Fatal(err)
	}
	if v, err := g.Get(ctx, ann, open.ID); err != nil || v.MembersCount != 1 {
		t.Errorf("the open group after bob left: %+v, %v", v, err)
	}
	if list, n, _, err := g.OfUser(ctx, cat, cat, store.PageRequest{Count: 10}); err != nil || n != 1 || len(list) != 1 || list[0].ID != closed.ID {
		t.Errorf("cat's groups: %+v (%d), %v", list, n, err)
	}
}
