package federation

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/accounts"
	"socialstream/internal/blocks"
	"socialstream/internal/derrors"
	"socialstream/internal/graph"
	"socialstream/internal/store"
	"socialstream/internal/viewer"
)

// What another server posts to an inbox here is read in this order, and
// nothing of it is acted on before the last step:
//
//  1. its signature (ReadSignature): signed, fresh, over the target, the
//     host, the date and the body's digest;
//  2. the key its keyId names, kept or fetched (KeyOwner), checks it;
//     when it does not, the key is fetched again once (it may have
//     changed);
//  3. the activity's actor is the key's owner, and its id is of the
//     actor's server;
//  4. then what it does: a Follow of a person here (answered with an
//     Accept, or a request a locked person decides), and the Undo of
//     one. Whatever else is taken and left alone for now.

// KindRemoteFollow is the kind of a remote person's Follow of a local
// one, named remote_local: its id, which the Accept or Reject names.
const KindRemoteFollow = "RemoteFollow"

func remoteFollowKey(db *store.DB, remote, local string) *datastore.Key {
	return db.NameKey(KindRemoteFollow, remote+"_"+local, nil)
}

type remoteFollow struct {
	FollowID string `datastore:"followId,noindex"`
	// Follower and Followee name the people (Followee indexed: a local
	// person's remote followers are found by it).
	Follower string `datastore:"follower,noindex"`
	Followee string `datastore:"followee"`
	// Inbox, on a remote person's Follow of someone here, is where the
	// posts of the person followed go for them (their actor's
	// DeliveryInbox), copied from their actor when the Follow is taken
	// and kept in step with it (InboxesJob): a post's job reads its
	// author's followers' inboxes by one projection query, not an actor
	// each. Indexed for that query; empty on a Follow taken before it was
	// kept, whose actor is read instead.
	Inbox string `datastore:"inbox,omitempty"`
}

// MaxActivityBytes bounds what an inbox takes.
const MaxActivityBytes = 256 << 10

// Errors of an inbox.
var (
	errNotTheActor = derrors.New(derrors.PermissionDenied, "the activity's actor is not the key's owner")
	errMalformed   = derrors.New(derrors.InvalidArgument, "the activity is not one the service reads")
	errNotOurs     = derrors.New(derrors.NotFound, "the activity names no one here")
)

// Graph is what an inbox does to the follow graph (package graph's
// Service).
type Graph interface {
	Ask(ctx context.Context, follower, followee string, copyLimit *int) (accounts.Person, graph.Outcome, error)
	Unfollow(ctx context.Context, follower, followee string, keepHistory bool) error
	Asked(ctx context.Context, requester, target string) (time.Time, bool, error)
	Approve(ctx context.Context, target, requester string) (accounts.Person, error)
	Reject(ctx context.Context, target, requester string) error
	Block(ctx context.Context, blocker, blocked string) (accounts.Person, error)
	Unblock(ctx context.Context, blocker, blocked string) error
}

// activity is what an inbox reads of an activity.
type activity struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Actor   json.RawMessage `json:"actor"`
	Object  json.RawMessage `json:"object"`
	Content string          `json:"content"` // a Flag's comment
}

// ref reads an id, written as a string or as an object with an id.
func ref(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(raw, &o) == nil {
		return o.ID
	}
	return ""
}

// Receive takes an activity posted to an inbox here, with its body, and
// returns what came of it. Its errors are the sender's to read: 401 for
// a signature that does not hold, 403 for an actor not the signer, 400
// for what is not an activity, 404 for a follow of no one here.
func (s *Service) Receive(ctx context.Context, r *http.Request, body []byte) (string, error) {
	sig, err := ReadSignature(r, body, s.now())
	if err != nil {
		return "", derrors.New(derrors.Unauthenticated, err.Error())
	}
	if !s.cfg.IsHost(r.Host) {
		// A delivery signed for another server, replayed here.
		return "", derrors.New(derrors.Unauthenticated, fmt.Sprintf("the signature is for %q, not this server (%s)", r.Host, s.cfg.Domain))
	}
	if err := s.checkNotBlocked(ctx, sig.KeyID); err != nil { // before anything is fetched
		return "", err
	}
	actor, err := s.signer(ctx, sig)
	if err != nil {
		return "", err
	}
	var a activity
	if err := json.Unmarshal(body, &a); err != nil || a.Type == "" {
		return "", errMalformed
	}
	if ref(a.Actor) != actor.URI {
		return "", errNotTheActor
	}
	if !sameHost(a.ID, actor.URI) {
		return "", fmt.Errorf("%w: its id is not of its actor's server", errMalformed)
	}
	switch a.Type {
	case "Follow":
		return s.followed(ctx, actor, a)
	case "Undo":
		return s.undone(ctx, actor, a)
	case "Accept", "Reject":
		return s.answered(ctx, actor, a)
	case "Create":
		return s.created(ctx, actor, a)
	case "Delete":
		return s.deleted(ctx, actor, a)
	case "Like", "Announce":
		return s.reacted(ctx, actor, a.Type, a.Object, false)
	case "Block":
		return s.blockedBy(ctx, actor, a.Object, false)
	case "Flag":
		return s.flagged(ctx, actor, a.Object, a.Content)
	case "Update":
		if ref(a.Object) == actor.URI { // their profile: read again from their server
			if _, err := s.Resolve(ctx, actor.URI, true); errors.Is(err, ErrRemote) {
				return "", err
			} else if err != nil {
				return "", fmt.Errorf("%w: %w", derrors.New(derrors.Unavailable, "their actor could not be read: try again later"), err)
			}
			return "profile refreshed", nil
		}
		return s.updated(ctx, actor, a)
	}
	return "ignored " + a.Type, nil
}

// signer returns the remote person whose key checks sig: kept, or
// fetched again once when the kept key does not check it.
func (s *Service) signer(ctx context.Context, sig *Signature) (Actor, error) {
	for _, refresh := range []bool{false, true} {
		actor, err := s.KeyOwner(ctx, sig.KeyID, refresh)
		if errors.Is(err, ErrRemote) {
			return Actor{}, derrors.New(derrors.Unauthenticated, "the signature's key: "+err.Error())
		}
		if err != nil { // its server did not answer: the sender tries again later
			return Actor{}, fmt.Errorf("%w: %w", derrors.New(derrors.Unavailable, "the signature's key could not be fetched: try again later"), err)
		}
		if err := sig.Verify(actor.PublicKey); err == nil {
			return actor, nil
		} else if refresh {
			return Actor{}, derrors.New(derrors.Unauthenticated, err.Error())
		}
	}
	panic("unreachable")
}

// local returns the id of the local person an address of this
// deployment's names, "" if it names none.
func (s *Service) local(uri string) string {
	rest, ok := strings.CutPrefix(uri, s.cfg.Base()+PeoplePath)
	if !ok || rest == "" || strings.ContainsAny(rest, "/#?") {
		return ""
	}
	if id, err := url.PathUnescape(rest); err == nil {
		return id
	}
	return ""
}

// followed takes a Follow: the follow begins (answered with an Accept),
// or waits as a request for a locked person; one refused for a block is
// answered with a Reject.
func (s *Service) followed(ctx context.Context, actor Actor, a activity) (string, error) {
	target := s.local(ref(a.Object))
	if target == "" {
		return "", errNotOurs
	}
	if s.graph == nil {
		return "", errors.New("federation: no graph")
	}
	l := s.db.Lookup()
	state := viewer.Read(l, target)
	if err := l.Run(ctx); err != nil {
		return "", err
	}
	if state.BlocksDomainOf("@" + hostOf(actor.URI)) { // they block the follower's domain
		return "rejected (domain blocked)", s.answer(ctx, actor, target, a.ID, false)
	}
	if err := s.keepFollow(ctx, remoteFollow{FollowID: a.ID, Follower: actor.UserID, Followee: target}); err != nil {
		return "", fmt.Errorf("federation: a follow: %w", err)
	}
	none := 0 // no copies: another server keeps what its people read
	_, out, err := s.graph.Ask(ctx, actor.UserID, target, &none)
	switch {
	case errors.Is(err, blocks.ErrBlocked):
		return "rejected (blocked)", s.answer(ctx, actor, target, a.ID, false)
	case errors.Is(err, accounts.ErrNoSuchPerson):
		return "", errNotOurs
	case err != nil:
		return "", err
	case out == graph.Requested:
		return "requested", nil
	}
	return "accepted", s.answer(ctx, actor, target, a.ID, true)
}

// undone takes an Undo of a Follow: the follow, or the request, ends.
func (s *Service) undone(ctx context.Context, actor Actor, a activity) (string, error) {
	var inner activity
	if err := json.Unmarshal(a.Object, &inner); err != nil {
		return "ignored Undo", nil // of something by its id alone
	}
	if ref(inner.Actor) != actor.URI {
		return "", errNotTheActor
	}
	switch inner.Type {
	case "Like", "Announce":
		return s.reacted(ctx, actor, inner.Type, inner.Object, true)
	case "Block":
		return s.blockedBy(ctx, actor, inner.Object, true)
	case "Follow":
	default:
		return "ignored Undo of a " + inner.Type, nil
	}
	target := s.local(ref(inner.Object))
	if target == "" {
		return "", errNotOurs
	}
	if err := s.graph.Unfollow(ctx, actor.UserID, target, false); err != nil && !errors.Is(err, accounts.ErrNoSuchPerson) {
		return "", err
	}
	return "unfollowed", nil
}

// answer sends a remote follower the Accept, or the Reject, of their
// Follow (followID) of the local person target.
func (s *Service) answer(ctx context.Context, follower Actor, target, followID string, accept bool) error {
	kind := "Reject"
	if accept {
		kind = "Accept"
	}
	sum := sha256.Sum256([]byte(followID))
	id := s.cfg.Actor(target) + "#" + strings.ToLower(kind) + "s/" + hex.EncodeToString(sum[:12])
	return s.Send(ctx, target, id, map[string]any{
		"@context": "https://www.w3.org/ns/activitystreams",
		"id":       id,
		"type":     kind,
		"actor":    s.cfg.Actor(target),
		"object":   map[string]any{"id": followID, "type": "Follow", "actor": follower.URI, "object": s.cfg.Actor(target)},
	}, follower.Inbox)
}
