package graph

import (
	"errors"
	"testing"

	"socialstream/internal/accounts"
	"socialstream/internal/blocks"
)

// What a follow does before its transaction, decided without Datastore.
func TestDecideAsk(t *testing.T) {
	there := askFacts{found: true, seen: true}
	with := func(f func(*askFacts)) askFacts { c := there; f(&c); return c }
	cases := []struct {
		name  string
		facts askFacts
		step  askStep
		err   error
	}{
		{"a follow", there, askFollow, nil},
		{"no one", askFacts{}, askFollow, accounts.ErrNoSuchPerson},
		{"someone suspended", with(func(f *askFacts) { f.seen = false }), askFollow, accounts.ErrNoSuchPerson},
		{"an approval of someone suspended since", with(func(f *askFacts) { f.seen, f.approval = false, true }), askFollow, nil},
		{"following already", with(func(f *askFacts) { f.exists = true }), askAlready, nil},
		{"an approval of a follow there", with(func(f *askFacts) { f.exists, f.approval = true, true }), askFollow, nil},
		{"a block", with(func(f *askFacts) { f.blocked = true }), askFollow, blocks.ErrBlocked},
		{"a locked account", with(func(f *askFacts) { f.locked = true }), askRequest, nil},
		{"a block before a lock", with(func(f *askFacts) { f.locked, f.blocked = true, true }), askFollow, blocks.ErrBlocked},
		{"an approval, locked", with(func(f *askFacts) { f.locked, f.approval = true, true }), askFollow, nil},
	}
	for _, c := range cases {
		step, err := decideAsk(c.facts)
		if step != c.step || !errors.Is(err, c.err) {
			t.Errorf("%s: %v, %v; want %v, %v", c.name, step, err, c.step, c.err)
		}
	}
}

// What a follow's transaction writes, decided without Datastore.
func TestDecideFollow(t *testing.T) {
	there := followFacts{fromExists: true, toExists: true, toSeen: true}
	with := func(f func(*followFacts)) followFacts { c := there; f(&c); return c }
	approving := func(f func(*followFacts)) followFacts {
		return with(func(c *followFacts) { c.approval, c.asked = true, true; f(c) })
	}
	cases := []struct {
		name  string
		facts followFacts
		step  followStep
		err   error
	}{
		{"a follow", there, followWrite, nil},
		{"a follower deleted", with(func(f *followFacts) { f.fromExists = false }), followNothing, accounts.ErrBadToken},
		{"a follower suspended", with(func(f *followFacts) { f.fromMayAct = accounts.ErrSuspended }), followNothing, accounts.ErrSuspended},
		{"an approval of a follower suspended", approving(func(f *followFacts) { f.fromMayAct = accounts.ErrSuspended }), followWrite, nil},
		{"a followee gone", with(func(f *followFacts) { f.toExists = false }), followNothing, accounts.ErrNoSuchPerson},
		{"a followee suspended", with(func(f *followFacts) { f.toSeen = false }), followNothing, accounts.ErrNoSuchPerson},
		{"followed meanwhile", with(func(f *followFacts) { f.exists = true }), followNothing, nil},
		{"an approval run again after its commit", approving(func(f *followFacts) { f.exists, f.asked = true, false }), followNothing, nil},
		{"an approval of a follow there", approving(func(f *followFacts) { f.exists = true }), followEndRequest, nil},
		{"an approval", approving(func(*followFacts) {}), followWrite, nil},
		{"an approval withdrawn", approving(func(f *followFacts) { f.asked = false }), followNothing, ErrNoRequest},
		{"a block", with(func(f *followFacts) { f.blocked = true }), followNothing, blocks.ErrBlocked},
		{"locked meanwhile", with(func(f *followFacts) { f.toLocked = true }), followNothing, errLockChanged},
		{"an approval, locked", approving(func(f *followFacts) { f.toLocked = true }), followWrite, nil},
	}
	for _, c := range cases {
		step, err := decideFollow(c.facts)
		if step != c.step || !errors.Is(err, c.err) {
			t.Errorf("%s: %v, %v; want %v, %v", c.name, step, err, c.step, c.err)
		}
	}
}

// Which follows a block ends, decided without Datastore.
func TestDecideBlock(t *testing.T) {
	ab, ba := &Follow{Follower: "a", Followee: "b"}, &Follow{Follower: "b", Followee: "a"}
	cases := []struct {
		name   string
		facts  blockFacts
		ending []*Follow // nil: nothing changes
		err    error
	}{
		{"no follows", blockFacts{seen: true}, []*Follow{}, nil},
		{"both ways", blockFacts{seen: true, ab: ab, ba: ba}, []*Follow{ab, ba}, nil},
		{"one way", blockFacts{seen: true, ba: ba}, []*Follow{ba}, nil},
		{"blocking again", blockFacts{seen: true, already: true, ab: ab}, nil, nil},
		{"a suspended blocker", blockFacts{seen: true, mayAct: accounts.ErrSuspended, ab: ab}, nil, accounts.ErrSuspended},
		{"someone suspended", blockFacts{ab: ab}, nil, accounts.ErrNoSuchPerson},
	}
	for _, c := range cases {
		ending, err := decideBlock(c.facts)
		if !errors.Is(err, c.err) || (ending == nil) != (c.ending == nil) || len(ending) != len(c.ending) {
			t.Errorf("%s: %v, %v; want %v, %v", c.name, ending, err, c.ending, c.err)
			continue
		}
		for i := range ending {
			if ending[i] != c.ending[i] {
				t.Errorf("%s: ends %+v, want %+v", c.name, ending[i], c.ending[i])
			}
		}
	}
}
