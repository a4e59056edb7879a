package moderation

import (
	"errors"
	"slices"
	"testing"

	"socialstream/internal/accounts"
	"socialstream/internal/policy"
)

// Whether an action is taken, decided without Datastore.
func TestDecideAct(t *testing.T) {
	open := &Report{AccountID: "bob", State: Open, ActivityIDs: []string{"A1", "A2"}}
	resolved := &Report{AccountID: "bob", State: Actioned, ActionID: "X1"}
	base := actFacts{moderator: "mod", id: "N1", in: ActionInput{Action: Limit, AccountID: "bob", Reason: "r"},
		staff: policy.Account{ID: "mod", Exists: true, Role: policy.RoleModerator}, subject: policy.Account{ID: "bob", Exists: true}}
	with := func(f func(*actFacts)) actFacts { c := base; f(&c); return c }
	reported := func(rep *Report, f func(*actFacts)) actFacts {
		return with(func(c *actFacts) { c.in.ReportID, c.report = "R1", rep; f(c) })
	}
	cases := []struct {
		name     string
		facts    actFacts
		err      error
		again    string // the entry's moderator, of an action done already
		activity []string
	}{
		{name: "an action", facts: base},
		{name: "this action, committed by an earlier try",
			facts: with(func(f *actFacts) {
				f.mine, f.staff.Suspended = &Action{ModeratorID: "mod", Action: Limit}, true
			}), again: "mod"},
		{name: "a moderator suspended", facts: with(func(f *actFacts) { f.staff.Suspended = true }), err: policy.ErrSuspended},
		{name: "no account", facts: with(func(f *actFacts) { f.subject.Exists = false }), err: accounts.ErrNoSuchPerson},
		{name: "on an admin", facts: with(func(f *actFacts) { f.subject.Role = policy.RoleAdmin }), err: errOnAdmin},
		{name: "a report not there", facts: reported(nil, func(*actFacts) {}), err: ErrNoSuchReport},
		{name: "a report of someone else", facts: reported(&Report{AccountID: "cat", State: Open}, func(*actFacts) {}), err: errNotOfIt},
		{name: "a report resolved", facts: reported(resolved, func(f *actFacts) { f.prior = &Action{ModeratorID: "other", Action: Limit} }), err: errResolved},
		{name: "a report resolved by this action, tried again",
			facts: reported(resolved, func(f *actFacts) { f.prior = &Action{ModeratorID: "mod", Action: Limit} }), again: "mod"},
		{name: "a report resolved otherwise by the same moderator",
			facts: reported(resolved, func(f *actFacts) { f.prior = &Action{ModeratorID: "mod", Action: Suspend} }), err: errResolved},
		{name: "a removal naming nothing takes the report's", facts: reported(open, func(f *actFacts) { f.in.Action = Remove }), activity: open.ActivityIDs},
		{name: "a removal naming its own", facts: reported(open, func(f *actFacts) { f.in.Action, f.in.ActivityIDs = Remove, []string{"A3"} })},
	}
	for _, c := range cases {
		plan, err := decideAct(c.facts)
		if !errors.Is(err, c.err) {
			t.Errorf("%s: %v, want %v", c.name, err, c.err)
			continue
		}
		switch {
		case (plan.again != nil) != (c.again != ""), plan.again != nil && plan.again.ModeratorID != c.again:
			t.Errorf("%s: again %+v, want by %q", c.name, plan.again, c.again)
		case !slices.Equal(plan.activityIDs, c.activity):
			t.Errorf("%s: takes %v, want %v", c.name, plan.activityIDs, c.activity)
		}
	}
}
