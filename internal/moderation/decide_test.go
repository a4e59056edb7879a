package moderation

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

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

// Whether a withholding's step goes on, decided without Datastore: once
// its change shows; a later change that undid it stops it (that one's
// job does the work); one not shown yet is waited for.
func TestDecideWithhold(t *testing.T) {
	const at = 1000
	cases := []struct {
		name            string
		t               WithholdTask
		f               withholdFacts
		stop            string
		shows, replaced bool
	}{
		{name: "a suspension shown", t: WithholdTask{At: at, On: true}, f: withholdFacts{account: true, suspended: at}, shows: true},
		{name: "a suspension not shown yet", t: WithholdTask{At: at, On: true}, f: withholdFacts{account: true}},
		{name: "a suspension lifted since", t: WithholdTask{At: at, On: true}, f: withholdFacts{account: true, lifted: at + 1}, replaced: true},
		{name: "a lifting shown", t: WithholdTask{At: at}, f: withholdFacts{account: true, lifted: at}, shows: true},
		{name: "a lifting, suspended again since", t: WithholdTask{At: at}, f: withholdFacts{account: true, suspended: at + 1}, replaced: true},
		{name: "a limit shown", t: WithholdTask{Limit: true, At: at, On: true}, f: withholdFacts{account: true, limited: true, limitChanged: at}, shows: true},
		{name: "a limit not shown yet", t: WithholdTask{Limit: true, At: at, On: true}, f: withholdFacts{account: true, limitChanged: at - 1}},
		{name: "a limit lifted since", t: WithholdTask{Limit: true, At: at, On: true}, f: withholdFacts{account: true, limitChanged: at + 1}, replaced: true},
		{name: "a limit's step of someone suspended", t: WithholdTask{Limit: true, At: at, On: true}, f: withholdFacts{account: true, limited: true, limitChanged: at, suspended: at}, shows: true},
		{name: "a takedown shown", t: WithholdTask{ActivityID: "A", At: at, On: true}, f: withholdFacts{account: true, activity: true, found: true, removed: at}, shows: true},
		{name: "a takedown not shown yet", t: WithholdTask{ActivityID: "A", At: at, On: true}, f: withholdFacts{account: true, activity: true, found: true}},
		{name: "a takedown put back since", t: WithholdTask{ActivityID: "A", At: at, On: true}, f: withholdFacts{account: true, activity: true, found: true, restored: at + 1}, replaced: true},
		{name: "a restore shown", t: WithholdTask{ActivityID: "A", At: at}, f: withholdFacts{account: true, activity: true, found: true, restored: at}, shows: true},
		{name: "a restore, taken down again since", t: WithholdTask{ActivityID: "A", At: at}, f: withholdFacts{account: true, activity: true, found: true, removed: at + 1}, replaced: true},
		{name: "a takedown of an activity gone", t: WithholdTask{ActivityID: "A", At: at, On: true}, f: withholdFacts{account: true, activity: true}, stop: "the activity is gone"},
		{name: "an account gone", t: WithholdTask{At: at, On: true}, f: withholdFacts{}, stop: "the account is gone"},
	}
	for _, c := range cases {
		stop, shows, replaced := decideWithhold(c.t, c.f)
		if stop != c.stop || shows != c.shows || (!shows && stop == "" && replaced != c.replaced) {
			t.Errorf("%s: stop %q, shows %v, replaced %v; want %q, %v, %v", c.name, stop, shows, replaced, c.stop, c.shows, c.replaced)
		}
	}
}

// A suspension's withholding starts at the likes, a limit's and a
// takedown's at the notifications, one task an activity taken down.
func TestWithholdTasks(t *testing.T) {
	now := time.UnixMicro(1000)
	for _, c := range []struct {
		in   ActionInput
		want []string
	}{
		{ActionInput{Action: Suspend, AccountID: "bob"}, []string{"withhold-bob-1000-0 likes true"}},
		{ActionInput{Action: Unsuspend, AccountID: "bob"}, []string{"withhold-bob-1000-0 likes false"}},
		{ActionInput{Action: Limit, AccountID: "bob"}, []string{"withhold-bob-limit-1000-0 notifications true"}},
		{ActionInput{Action: Unlimit, AccountID: "bob"}, []string{"withhold-bob-limit-1000-0 notifications false"}},
		{ActionInput{Action: Remove, AccountID: "bob", ActivityIDs: []string{"1", "2"}},
			[]string{"withhold-bob-1-1000-0 notifications true", "withhold-bob-2-1000-0 notifications true"}},
		{ActionInput{Action: Restore, AccountID: "bob", ActivityIDs: []string{"1"}}, []string{"withhold-bob-1-1000-0 notifications false"}},
		{ActionInput{Action: Dismiss, AccountID: "bob"}, nil},
	} {
		var got []string
		for _, task := range withholdTasks(c.in, now) {
			got = append(got, fmt.Sprintf("%s %s %v", task.name(), task.Kind, task.On))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.in.Action, got, c.want)
		}
	}
}
