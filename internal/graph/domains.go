package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"socialstream/internal/accounts"
	"socialstream/internal/derrors"
	"socialstream/internal/queue"
	"socialstream/internal/store"
	"socialstream/internal/viewer"
)

// A person's own domain blocks: a person blocks a domain of other
// servers for themselves (Mastodon's domain blocks). Its people's posts
// and notifications leave their feeds (the viewer's state lists the
// domains, which every page reads anyway), and a job ends the follows
// between them and the domain's people both ways, so that nothing of
// theirs goes there. No one of the domain can follow them meanwhile
// (package federation refuses their Follow).

// ErrTooManyDomains refuses a domain block past viewer.MaxDomains.
var ErrTooManyDomains = derrors.New(derrors.Conflict, fmt.Sprintf("at most %d domains can be blocked", viewer.MaxDomains))

// BlockDomain has user block domain (checked by the caller), and
// enqueues, ahead of the commit, the job that ends their follows with
// its people. Blocking it again changes nothing.
func (s *Service) BlockDomain(ctx context.Context, user, domain string) error {
	t := DomainCutTask{User: user, Domain: domain, At: s.now().UnixMicro()}
	var jobs queue.Ahead
	err := jobs.Commit(ctx, []queue.Pending{DomainCutJob.Pending(s.queue, t, 0)}, func() error {
		return s.setDomain(ctx, user, domain, true)
	})
	if err != nil {
		return fmt.Errorf("graph.BlockDomain(%s, %s): %w", user, domain, err)
	}
	return nil
}

// UnblockDomain lifts user's block of domain, if any. It restores no
// follow.
func (s *Service) UnblockDomain(ctx context.Context, user, domain string) error {
	if err := s.setDomain(ctx, user, domain, false); err != nil {
		return fmt.Errorf("graph.UnblockDomain(%s, %s): %w", user, domain, err)
	}
	return nil
}

func (s *Service) setDomain(ctx context.Context, user, domain string, on bool) error {
	return s.db.Update(ctx, func(tx *store.Tx) error {
		l := tx.Lookup()
		me, state := accounts.Read(l, user), viewer.Read(l, user)
		if err := l.Run(ctx); err != nil {
			return err
		}
		if err := me.MayAct(); err != nil {
			return err
		}
		if !state.Edit().SetDomain(domain, on) {
			return ErrTooManyDomains
		}
		return state.Save(tx)
	})
}

// BlockedDomains returns the domains user blocks, in the order blocked.
func (s *Service) BlockedDomains(ctx context.Context, user string) ([]string, error) {
	l := s.db.Lookup()
	state := viewer.Read(l, user)
	if err := l.Run(ctx); err != nil {
		return nil, fmt.Errorf("graph.BlockedDomains(%s): %w", user, err)
	}
	return state.Domains(), nil
}

// DomainCutJob ends, a page at a time, the follows between a person and
// the people of a domain they block.
var DomainCutJob = queue.Job[DomainCutTask]{Name: "domain-cut", Queue: queue.Rebuild,
	TaskName: func(t DomainCutTask) string {
		return fmt.Sprintf("domain-cut-%s-%x-%d-%d", t.User, t.Domain, t.At, t.Step)
	}}

// DomainCutTask is one step of a DomainCutJob.
type DomainCutTask struct {
	User   string `json:"user"`
	Domain string `json:"domain"`
	At     int64  `json:"at"` // the block, µs: names the chain
	// Step counts the steps; Followers says the step reads the
	// person's followers (else whom they follow); Cursor is where it
	// begins.
	Step      int    `json:"step,omitempty"`
	Followers bool   `json:"followers,omitempty"`
	Cursor    string `json:"cursor,omitempty"`
}

// domainCutBatch is how many follows one step reads.
const domainCutBatch = 500

// DomainCut runs one step of a DomainCutJob: of up to domainCutBatch
// follows of the person (whom they follow, then their followers), it
// ends those with people of the domain, and enqueues the next step if
// there may be more. It returns how many it ended.
func (s *Service) DomainCut(ctx context.Context, t DomainCutTask) (int, error) {
	l := s.db.Lookup()
	state := viewer.Read(l, t.User)
	if err := l.Run(ctx); err != nil {
		return 0, err
	}
	if !slices.Contains(state.Domains(), t.Domain) {
		if !state.Found() || s.now().Sub(time.UnixMicro(t.At)) >= queue.GiveUpOf(s.queue) {
			return 0, nil // unblocked since, never blocked, or the person is gone
		}
		return 0, queue.NotYet("the domain block")
	}
	field := "follower"
	if t.Followers {
		field = "followee"
	}
	q := s.db.Query(KindFollow).FilterField(field, "=", t.User).KeysOnly()
	keys, next, err := s.db.KeysFrom(ctx, q, t.Cursor, domainCutBatch)
	if err != nil {
		return 0, fmt.Errorf("graph.DomainCut(%s): %w", t.User, err)
	}
	others := make([]string, len(keys))
	lk := s.db.Lookup()
	records := make([]*accounts.Record, len(keys))
	for i, k := range keys {
		follower, followee, _ := strings.Cut(k.Name, "_")
		others[i] = followee
		if t.Followers {
			others[i] = follower
		}
		records[i] = accounts.Read(lk, others[i])
	}
	if err := lk.Run(ctx); err != nil {
		return 0, err
	}
	n := 0
	for i, r := range records {
		p, ok := r.Person()
		if !ok || !state.BlocksDomainOf(p.PreferredUsername) {
			continue
		}
		follower, followee := t.User, others[i]
		var told []queue.Pending
		if t.Followers {
			follower, followee = others[i], t.User
			if s.remote != nil && p.Remote() { // their server is told: the Reject of their Follow
				told = append(told, s.remote.Answering(follower, followee, false))
			}
		}
		var jobs queue.Ahead
		err := jobs.Commit(ctx, told, func() error { return s.Unfollow(ctx, follower, followee, false) })
		if err != nil && !errors.Is(err, accounts.ErrNoSuchPerson) {
			return n, err
		}
		n++
	}
	switch {
	case next != "" && len(keys) == domainCutBatch:
		t.Cursor = next
	case !t.Followers:
		t.Followers, t.Cursor = true, ""
	default:
		return n, nil
	}
	t.Step++
	return n, DomainCutJob.Enqueue(ctx, s.queue, t, 0)
}
