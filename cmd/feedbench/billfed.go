package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"socialstream/internal/federation"
	"socialstream/internal/federation/peer"
)

// The bill of federation: what other servers cost a deployment that
// federates, metered on a stack of its own beside the same emulator (the
// other rows are a deployment's that does not): a Follow from another
// server (a person met for the first time, and one known), a post from
// another server to people here who follow its author, a post here to
// the inboxes of other servers, and a post here with no one elsewhere
// (what federating adds to every post). Each row is the inbox's request
// or the API's, with every job it enqueues, deliveries included.

// billFedInboxes are the counts of other servers' inboxes a post here
// is metered going to; billFedFollowers the counts of people here an
// incoming post is metered reaching.
var (
	billFedInboxes   = []int{1, 10}
	billFedFollowers = []int{1, 100}
)

// billFederation meters federation's operations.
func billFederation(ctx context.Context, s *stack) ([]billRow, error) {
	fs, err := startStack(ctx, config{bill: true, datastore: s.dsHost, federate: true}, s.logOut)
	if err != nil {
		return nil, fmt.Errorf("billing federation: %w", err)
	}
	defer fs.close()
	b := fedBiller{s: fs, base: strings.TrimSuffix(fs.url, "/")}
	defer b.close()
	var rows []billRow
	for _, f := range []func(context.Context) ([]billRow, error){b.follows, b.incoming, b.outgoing} {
		r, err := f(ctx)
		if rows = append(rows, r...); err != nil {
			return rows, fmt.Errorf("billing federation: %w", err)
		}
	}
	return rows, nil
}

// fedBiller is the federating stack and the other servers beside it.
type fedBiller struct {
	s       *stack
	base    string // its root, as other servers address it
	servers []*peer.Server
}

func (b *fedBiller) close() {
	for _, o := range b.servers {
		o.Close()
	}
}

func (b *fedBiller) server() *peer.Server {
	o := peer.New()
	b.servers = append(b.servers, o)
	return o
}

// send posts activity to the shared inbox as p of o, and wants 202.
func (b *fedBiller) send(ctx context.Context, o *peer.Server, p *peer.Person, activity map[string]any) error {
	st, body, err := o.Send(ctx, p, b.base+"/inbox", activity)
	if err != nil {
		return err
	}
	if st != http.StatusAccepted {
		return fmt.Errorf("%v: %d %s", activity["type"], st, body)
	}
	return nil
}

// metered runs f and waits for its jobs: what they were billed.
func (b *fedBiller) metered(ctx context.Context, f func() error) (opBill, error) {
	if err := b.s.settle(ctx); err != nil {
		return opBill{}, err
	}
	b.s.cache.Purge()
	b.s.meter.Take()
	before := b.s.operations()
	if err := f(); err != nil {
		return opBill{}, err
	}
	if err := b.s.settle(ctx); err != nil {
		return opBill{}, err
	}
	return opBill{Bill: b.s.meter.Take(), Tasks: b.s.operations().Sub(before)}, nil
}

// followed has p of o follow u here (accepted: u is not locked).
func (b *fedBiller) followed(ctx context.Context, o *peer.Server, p *peer.Person, u user) error {
	return b.send(ctx, o, p, map[string]any{"@context": "https://www.w3.org/ns/activitystreams",
		"id": fmt.Sprintf("%s/follows/%s", p.URI, u.id), "type": "Follow", "actor": p.URI, "object": b.base + "/users/" + u.id})
}

// follows meters a Follow from another server: of a person met for the
// first time (their actor fetched, their account made), and of one
// known.
func (b *fedBiller) follows(ctx context.Context) ([]billRow, error) {
	o := b.server()
	// Unmetered, first: what an instance reads once and keeps (the
	// domain blocks; the deployment's own key).
	warm, err := b.s.register(ctx, "fedwarm")
	if err != nil {
		return nil, err
	}
	if err := b.followed(ctx, o, o.Person("warm"), warm); err != nil {
		return nil, err
	}
	far := o.Person("far")
	var rows []billRow
	for i, op := range []string{"incoming follow, first contact", "incoming follow"} {
		u, err := b.s.register(ctx, fmt.Sprintf("fedfollowed%d", i))
		if err != nil {
			return rows, err
		}
		bill, err := b.metered(ctx, func() error { return b.followed(ctx, o, far, u) })
		if err != nil {
			return rows, fmt.Errorf("%s: %w", op, err)
		}
		rows = append(rows, billRow{Op: op, Bill: bill})
	}
	return rows, nil
}

// incoming meters a post from another server whose author n people here
// follow.
func (b *fedBiller) incoming(ctx context.Context) ([]billRow, error) {
	o := b.server()
	reader, err := b.s.register(ctx, "fedreader")
	if err != nil {
		return nil, err
	}
	var rows []billRow
	for _, n := range billFedFollowers {
		author := o.Person(fmt.Sprintf("author%d", n))
		var found struct{ ID string }
		acct := url.QueryEscape(author.Name + "@" + o.Domain)
		if err := b.s.do(ctx, reader, "GET", "/api/v1/accounts/lookup?acct="+acct, nil, &found); err != nil {
			return rows, fmt.Errorf("their author: %w", err)
		}
		followers := make([]string, n)
		for i := range followers {
			followers[i] = fmt.Sprintf("fedfollower%d", i)
		}
		if err := b.s.graph.ImportFollowers(ctx, found.ID, followers); err != nil {
			return rows, err
		}
		note := map[string]any{"id": author.URI + "/statuses/1", "type": "Note", "attributedTo": author.URI,
			"content": "<p>a post from elsewhere</p>", "to": []string{federation.PublicCollection},
			"cc": []string{author.URI + "/followers"}, "published": time.Now().UTC().Format(time.RFC3339)}
		create := map[string]any{"@context": "https://www.w3.org/ns/activitystreams", "id": author.URI + "/statuses/1/activity",
			"type": "Create", "actor": author.URI, "object": note}
		bill, err := b.metered(ctx, func() error { return b.send(ctx, o, author, create) })
		if err != nil {
			return rows, fmt.Errorf("incoming post: %w", err)
		}
		rows = append(rows, billRow{Op: fmt.Sprintf("incoming post, %d followers here", n), Bill: bill})
	}
	return rows, nil
}

// outgoing meters a post here to the inboxes of n other servers (a
// follower on each), and one with no one elsewhere.
func (b *fedBiller) outgoing(ctx context.Context) ([]billRow, error) {
	var rows []billRow
	for _, n := range append([]int{0}, billFedInboxes...) {
		poster, err := b.s.register(ctx, fmt.Sprintf("fedposter%d", n))
		if err != nil {
			return rows, err
		}
		var servers []*peer.Server
		for i := range n {
			o := b.server()
			servers = append(servers, o)
			if err := b.followed(ctx, o, o.Person(fmt.Sprintf("reader%d", i)), poster); err != nil {
				return rows, err
			}
		}
		bill, err := b.metered(ctx, func() error {
			return b.s.do(ctx, poster, "POST", "/social/rest/activities/@me/@self", map[string]string{"title": "a post"}, nil)
		})
		if err != nil {
			return rows, fmt.Errorf("outgoing post: %w", err)
		}
		for _, o := range servers { // each server took the post, signed as checked
			got := o.Received()
			last := got[len(got)-1]
			if last.Activity["type"] != "Create" || last.Err != nil {
				return rows, fmt.Errorf("outgoing post: %s took %v (%v)", o.Domain, last.Activity["type"], last.Err)
			}
			bill.Sent += last.Bytes
		}
		op := fmt.Sprintf("post, to %d inboxes elsewhere", n)
		if n == 0 {
			op = "post, 0 followers, federating"
		}
		rows = append(rows, billRow{Op: op, Bill: bill})
	}
	return rows, nil
}
