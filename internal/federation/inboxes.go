package federation

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/queue"
	"socialstream/internal/store"
)

// A remote person's Follow of someone here carries where that person's
// posts go for them (remoteFollow.Inbox): their actor's DeliveryInbox,
// so that a post's job finds its author's followers' inboxes by one
// projection query and no actor each. The copy is kept in step with the
// actor as the follower chunks are with the graph:
//
//   - a Follow is kept in a transaction that reads the actor, so that a
//     change of the actor that commits meanwhile makes it read again;
//   - a keeping of a fetched actor that changes their delivery inbox
//     enqueues, ahead of its commit, the job that writes it onto every
//     Follow of that person here (InboxesJob), each batch in a
//     transaction that reads the actor as it is then: a job that runs
//     late, twice or out of order writes what the actor holds now.

// InboxesJob writes a remote person's delivery inbox, as their actor now
// holds it, onto their Follows of people here.
var InboxesJob = queue.Job[InboxesTask]{Name: "federate-inboxes", Queue: queue.Federation, TaskName: InboxesTask.name}

// InboxesTask names the keeping of an actor that enqueued it: the
// actor's address and the time it was fetched (UnixMicro), which the
// kept actor carries once that keeping has committed.
type InboxesTask struct {
	URI     string `json:"uri"`
	Fetched int64  `json:"fetched"`
}

func (t InboxesTask) name() string {
	sum := sha256.Sum256([]byte(t.URI))
	return fmt.Sprintf("inboxes-%s-%d", hex.EncodeToString(sum[:8]), t.Fetched)
}

// inboxesPage and inboxesBatch are how many Follows a step of the job
// reads keys of, and how many a transaction writes.
const (
	inboxesPage  = 500
	inboxesBatch = 25
)

// CopyInboxes runs an inboxes job: once the keeping it follows shows
// (the actor fetched then or later), it writes the actor's delivery
// inbox onto each of the person's Follows of people here that holds
// another, and reports how many it wrote.
func (s *Service) CopyInboxes(ctx context.Context, t InboxesTask) (string, error) {
	ctx = store.Unguarded(ctx)
	var link actorURI
	var kept remoteActor
	l := s.db.Lookup()
	linked := l.Add(actorURIKey(s.db, t.URI), &link)
	if err := l.Run(ctx); err != nil {
		return "", err
	}
	found := false
	if linked.Found() {
		var err error
		if found, err = s.db.Get(ctx, remoteActorKey(s.db, link.UserID), &kept); err != nil {
			return "", err
		}
	}
	if !found || kept.Fetched.UnixMicro() < t.Fetched {
		if s.now().Sub(time.UnixMicro(t.Fetched)) < queue.GiveUpOf(s.q) {
			return "", queue.NotYet("the actor's keeping")
		}
		return "never kept", nil
	}
	user := link.UserID
	q := s.db.Query(KindRemoteFollow).
		FilterField("__key__", ">=", remoteFollowKey(s.db, user, "")).
		FilterField("__key__", "<", s.db.NameKey(KindRemoteFollow, user+"`", nil)). // "`" is "_" + 1
		KeysOnly()
	wrote, cursor := 0, ""
	for {
		next, err := s.db.UpdatePage(ctx, q, cursor, inboxesPage, inboxesBatch, func(tx *store.Tx, keys []*datastore.Key) error {
			n, err := s.copyInbox(ctx, tx, user, keys)
			wrote += n
			return err
		})
		if err != nil {
			return "", fmt.Errorf("federation: the inboxes of %s: %w", user, err)
		}
		if next == "" {
			return fmt.Sprintf("wrote %d", wrote), nil
		}
		cursor = next
	}
}

// copyInbox writes, in tx, user's delivery inbox as their actor holds it
// now onto those of their Follows at keys that hold another (a Follow
// gone meanwhile is left gone), and returns how many it wrote.
func (s *Service) copyInbox(ctx context.Context, tx *store.Tx, user string, keys []*datastore.Key) (int, error) {
	l := tx.Lookup()
	var actor remoteActor
	known := l.Add(remoteActorKey(s.db, user), &actor)
	follows := make([]remoteFollow, len(keys))
	refs := make([]store.Ref, len(keys))
	for i, k := range keys {
		refs[i] = l.Add(k, &follows[i])
	}
	if err := l.Run(ctx); err != nil {
		return 0, err
	}
	if !known.Found() {
		return 0, nil // erased: so are their Follows, or soon
	}
	inbox, wrote := actor.deliveryInbox(), 0
	for i, k := range keys {
		if !refs[i].Found() || follows[i].Inbox == inbox || !strings.HasPrefix(k.Name, user+"_") {
			continue
		}
		follows[i].Inbox = inbox
		if err := tx.Put(k, &follows[i]); err != nil {
			return 0, err
		}
		wrote++
	}
	return wrote, nil
}

// keepFollow writes a remote person's Follow of someone here with their
// delivery inbox as their actor holds it, read in the same transaction.
func (s *Service) keepFollow(ctx context.Context, f remoteFollow) error {
	return s.db.Update(store.Unguarded(ctx), func(tx *store.Tx) error {
		var actor remoteActor
		l := tx.Lookup()
		known := l.Add(remoteActorKey(s.db, f.Follower), &actor)
		if err := l.Run(ctx); err != nil {
			return err
		}
		f.Inbox = ""
		if known.Found() {
			f.Inbox = actor.deliveryInbox()
		}
		return tx.Put(remoteFollowKey(s.db, f.Follower, f.Followee), &f)
	})
}

// copiedInboxes returns the delivery inboxes the Follows of user by
// people of other servers carry, by follower: one projection query. A
// Follow with none (taken before they were kept) is not among them.
func (s *Service) copiedInboxes(ctx context.Context, user string) (map[string]string, error) {
	var follows []remoteFollow
	q := s.db.Query(KindRemoteFollow).FilterField("followee", "=", user).Project("inbox").Limit(MaxRemoteFollowers)
	keys, err := s.db.GetAll(ctx, q, &follows)
	if err != nil {
		return nil, fmt.Errorf("federation: the inboxes of %s's followers elsewhere: %w", user, err)
	}
	out := make(map[string]string, len(keys))
	for i, k := range keys {
		if follower, ok := strings.CutSuffix(k.Name, "_"+user); ok && follower != "" && follows[i].Inbox != "" {
			out[follower] = follows[i].Inbox
		}
	}
	return out, nil
}

// deliveryInbox is where what goes to the actor's person is delivered:
// their server's shared inbox, or their own.
func (r remoteActor) deliveryInbox() string { return cmp.Or(r.SharedInbox, r.Inbox) }
