package wired_test

import (
	"context"
	"errors"
	"testing"

	"socialstream/internal/accounts"
	"socialstream/internal/app/apptest"
	"socialstream/internal/derrors"
	"socialstream/internal/moderation"
	"socialstream/internal/store"
)

// A report reaches the moderators' queue, never one about the moderator
// reading it; only staff act, and a plain user learns nothing of a
// report by trying; an action on a report resolves it, and its subject
// sees a notice that never names who took it.
func TestReportsAndActions(t *testing.T) {
	ctx := context.Background()
	env := apptest.New(t)
	db, gen, acc, svc := env.DB, env.Gen, env.Acc, env.Svc
	m := svc.Moderation
	person := env.Person
	mod, other, ann, bob := person("mod"), person("other"), person("ann"), person("bob")
	for _, staff := range []string{mod, other} {
		if err := moderation.SetRole(ctx, db, gen, staff, accounts.RoleModerator); err != nil {
			t.Fatal(err)
		}
	}
	aboutBob, err := m.File(ctx, ann, moderation.ReportInput{AccountID: bob, Category: "spam", Comment: "ads"})
	if err != nil {
		t.Fatal(err)
	}
	aboutMod, err := m.File(ctx, ann, moderation.ReportInput{AccountID: mod, Category: "abuse", Comment: "rude"})
	if err != nil {
		t.Fatal(err)
	}
	ids := func(qs []moderation.QueuedReport) map[string]bool {
		out := map[string]bool{}
		for _, q := range qs {
			out[q.ID] = true
		}
		return out
	}
	q, _, err := m.Queue(ctx, mod, moderation.Open, store.PageRequest{Count: 10})
	if err != nil || !ids(q)[aboutBob.ID] || ids(q)[aboutMod.ID] {
		t.Errorf("mod's queue %v (%v): want the report about bob, not the one about mod", ids(q), err)
	}
	if q, _, err := m.Queue(ctx, other, moderation.Open, store.PageRequest{Count: 10}); err != nil || !ids(q)[aboutMod.ID] {
		t.Errorf("the other moderator's queue %v (%v): want the report about mod", ids(q), err)
	}
	// A plain user is refused before anything about the report is read:
	// the same answer for a report that exists and one that does not.
	for _, id := range []string{aboutBob.ID, aboutMod.ID, "00000000000000000000"} {
		if _, err := m.Act(ctx, ann, moderation.ActionInput{Action: moderation.Dismiss, ReportID: id}); !errors.Is(err, derrors.PermissionDenied) {
			t.Errorf("ann acts on report %s: %v, want a refusal", id, err)
		}
	}
	if _, err := m.Act(ctx, mod, moderation.ActionInput{Action: moderation.Limit, ReportID: aboutBob.ID, AccountID: bob, Reason: "ads"}); err != nil {
		t.Fatal(err)
	}
	mine, err := m.One(ctx, ann, aboutBob.ID)
	if err != nil || mine.State != moderation.Actioned {
		t.Errorf("ann's report after the action: %+v, %v", mine, err)
	}
	notices, _, err := m.Notices(ctx, bob, store.PageRequest{Count: 10})
	if err != nil || len(notices) != 1 || notices[0].Action != moderation.Limit {
		t.Fatalf("bob's notices %+v, %v", notices, err)
	}
	if p, err := acc.Get(ctx, bob); err != nil || !p.Standing().Limited {
		t.Errorf("bob after the limit: %+v, %v", p.Standing(), err)
	}
}
