package federation

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"socialstream/internal/accounts"
	"socialstream/internal/activities"
	"socialstream/internal/ids"
	"socialstream/internal/outbox"
	"socialstream/internal/queue"
	"socialstream/internal/store"
)

// A post of a person here that reaches followers (public, unlisted,
// followers-only) goes to the servers of their remote followers: its
// commit enqueues, ahead of it, a job (Publishing) that, once the post
// shows, sends the Create of its Note to each of their inboxes (a
// server's shared inbox once for all its people), one delivery each. A
// deleted post's cleanup job enqueues outbox.UnpublishJob, which sends
// the Delete of its Note to them alike (Unpublish). Their remote followers are those whose Follow the
// service took (a RemoteFollow naming them as followee) and who still
// follow them.

// Render makes the Create of a post's Note (package activitypub's),
// given what it names of other servers; with edit set, the Update of it
// that edit made.
type Render func(v activities.View, at Addresses, edit int) any

// RenderActor makes the actor of p, a person here, with their public key
// (PEM) (package activitypub's).
type RenderActor func(p accounts.Person, publicPEM string) any

// Renderers write what is sent of posts and people, as package
// activitypub serves them.
type Renderers struct {
	Post  Render
	Actor RenderActor
}

// Addresses are what posts name of other servers, by their ids here:
// the actors of the people of other servers they mention, and the Notes
// there they answer.
type Addresses struct {
	Actors map[string]string
	Notes  map[string]string
}

// AddressesOf returns what views name of other servers (one read for
// each person of another server they mention, and each post they
// answer).
func (s *Service) AddressesOf(ctx context.Context, views ...activities.View) (Addresses, error) {
	at, _, err := s.addressesOf(ctx, views...)
	return at, err
}

// addressesOf is AddressesOf, with the people of other servers views
// mention.
func (s *Service) addressesOf(ctx context.Context, views ...activities.View) (Addresses, map[string]Actor, error) {
	mentioned, err := s.RemoteMentions(ctx, views...)
	if err != nil {
		return Addresses{}, nil, err
	}
	at := Addresses{Actors: make(map[string]string, len(mentioned))}
	for id, a := range mentioned {
		at.Actors[id] = a.URI
	}
	var parents []string
	for _, v := range views {
		if v.InReplyTo != "" && !slices.Contains(parents, v.InReplyTo) {
			parents = append(parents, v.InReplyTo)
		}
	}
	if at.Notes, err = activities.NotesElsewhere(ctx, s.db, parents); err != nil {
		return Addresses{}, nil, err
	}
	return at, mentioned, nil
}

// Publish runs a publish job. Its author is a person here (a post of
// another server's makes no job).
func (s *Service) Publish(ctx context.Context, t outbox.PublishTask) (string, error) {
	var followers []string // the inboxes of the author's followers elsewhere, once read
	if t.Plain {           // the most posts and edits: one query, and done when no one elsewhere follows
		var err error
		if followers, err = s.remoteAudience(ctx, t.Author); err != nil || len(followers) == 0 {
			return "no one elsewhere", err
		}
	}
	views, err := s.activities.Shown(ctx, t.Author, []string{t.Activity})
	if err != nil {
		return "", err
	}
	shown := len(views) == 1 && views[0].Author != nil
	if !shown || t.Edit > 0 {
		if outcome, err := s.notYetShown(ctx, t, shown); outcome != "" || err != nil {
			return outcome, err
		}
	}
	v := views[0]
	inboxes, at, err := s.inboxesOf(ctx, t.Author, v, followers)
	if err != nil {
		return "", err
	}
	if len(inboxes) == 0 {
		return "no one elsewhere", nil
	}
	if s.render.Post == nil {
		return "", fmt.Errorf("federation: nothing renders posts")
	}
	id := s.cfg.Note(Number(t.Activity)) + "/activity"
	if t.Edit > 0 {
		id = fmt.Sprintf("%s#updates/%d", s.cfg.Note(Number(t.Activity)), t.Edit)
	}
	return fmt.Sprintf("sent to %d inboxes", len(inboxes)), s.Send(ctx, t.Author, id, s.render.Post(v, at, t.Edit), inboxes...)
}

// inboxesOf returns where author's post v goes, each inbox once, and
// what it names of other servers: their followers elsewhere (followers,
// when read before), but for a post for the mentioned alone; for a
// repost, the server of what it shares; the servers of the people it
// mentions, and of the post it answers.
func (s *Service) inboxesOf(ctx context.Context, author string, v activities.View, followers []string) ([]string, Addresses, error) {
	var inboxes []string
	var err error
	if v.Visibility != activities.MentionedOnly || v.RepostOf != nil {
		if followers == nil {
			if followers, err = s.remoteAudience(ctx, author); err != nil {
				return nil, Addresses{}, err
			}
		}
		inboxes = followers
	}
	if v.RepostOf != nil { // and the server of what it shares
		if inbox, ok, err := s.inboxOfElsewhere(ctx, *v.RepostOf); err != nil {
			return nil, Addresses{}, err
		} else if ok && !slices.Contains(inboxes, inbox) {
			inboxes = append(inboxes, inbox)
		}
	}
	at, addressed, err := s.addressedInboxes(ctx, v)
	if err != nil {
		return nil, Addresses{}, err
	}
	for _, inbox := range addressed {
		if !slices.Contains(inboxes, inbox) {
			inboxes = append(inboxes, inbox)
		}
	}
	return inboxes, at, nil
}

// addressedInboxes returns the addresses of what v names (addressesOf),
// and the inboxes of those it addresses on other servers but of blocked
// domains: the people it mentions, and the server of the post it
// answers.
func (s *Service) addressedInboxes(ctx context.Context, v activities.View) (Addresses, []string, error) {
	at, mentioned, err := s.addressesOf(ctx, v)
	if err != nil {
		return Addresses{}, nil, err
	}
	var to []Actor
	for _, id := range slices.Sorted(maps.Keys(mentioned)) {
		to = append(to, mentioned[id])
	}
	if _, ok := at.Notes[v.InReplyTo]; ok { // a reply goes to the server of what it answers
		if a, remote, err := s.ActorOf(ctx, v.InReplyToUserID); err != nil {
			return Addresses{}, nil, err
		} else if remote {
			to = append(to, a)
		}
	}
	var inboxes []string
	for _, a := range to {
		if blocked, err := s.blocked(ctx, a.DeliveryInbox()); err != nil {
			return Addresses{}, nil, err
		} else if !blocked {
			inboxes = append(inboxes, a.DeliveryInbox())
		}
	}
	return at, inboxes, nil
}

// notYetShown tells what a publish job does of a post not shown to its
// author, or of an edit: waits for its commit, or ends (its outcome);
// "" to go on and send it.
func (s *Service) notYetShown(ctx context.Context, t outbox.PublishTask, shown bool) (string, error) {
	_, committed, _, edits, err := activities.Mentioned(ctx, s.db, t.Activity)
	switch {
	case err != nil:
		return "", err
	case committed && edits >= t.Edit && !shown:
		return "hidden now (removed, or its author suspended or limited): not sent", nil
	case committed && edits >= t.Edit:
		return "", nil
	case !committed && t.Edit > 0:
		return "deleted since", nil // its cleanup's job sends its Delete
	case s.now().Sub(time.Unix(t.At, 0)) < queue.GiveUpOf(s.q):
		return "", queue.NotYet("the post")
	}
	return "never posted, or never edited", nil
}

// Unpublish runs an outbox.UnpublishJob: it sends the Delete of a
// deleted post's Note to the servers of its author's remote followers;
// for a repost, the Undo of its Announce, to them and to the server of
// what it shared.
func (s *Service) Unpublish(ctx context.Context, t outbox.UnpublishTask) error {
	author, id, shared := t.Author, t.Activity, t.Shared
	if _, remote, err := s.ActorOf(ctx, author); err != nil || remote {
		return err
	}
	inboxes, err := s.remoteAudience(ctx, author)
	if err != nil {
		return err
	}
	note := s.cfg.Note(Number(id))
	if shared != "" {
		object := s.cfg.Note(Number(shared))
		if views, err := s.activities.Shown(ctx, author, []string{shared}); err != nil {
			return err
		} else if len(views) == 1 {
			if at, ok := views[0].Elsewhere(); ok {
				object = at
			}
			if inbox, ok, err := s.inboxOfElsewhere(ctx, views[0]); err != nil {
				return err
			} else if ok && !slices.Contains(inboxes, inbox) {
				inboxes = append(inboxes, inbox)
			}
		}
		if len(inboxes) == 0 {
			return nil
		}
		return s.Send(ctx, author, note+"#undo", map[string]any{
			"@context": "https://www.w3.org/ns/activitystreams", "id": note + "#undo", "type": "Undo", "actor": s.cfg.Actor(author),
			"object": map[string]any{"id": note, "type": "Announce", "actor": s.cfg.Actor(author), "object": object},
		}, inboxes...)
	}
	if len(inboxes) == 0 {
		return nil
	}
	return s.Send(ctx, author, note+"#delete", map[string]any{
		"@context": "https://www.w3.org/ns/activitystreams", "id": note + "#delete", "type": "Delete",
		"actor": s.cfg.Actor(author), "to": []string{PublicCollection},
		"object": map[string]any{"id": note, "type": "Tombstone"},
	}, inboxes...)
}

// MaxRemoteFollowers bounds the remote followers one post goes to (one
// query's page): past it, the newest follows are served first.
const MaxRemoteFollowers = 1000

// remoteAudience returns the inboxes of user's remote followers, each
// server's shared inbox once: those whose Follow of user a RemoteFollow
// records (found by a keys-only query, whose keys name them: a read for
// each 1,000), who still follow (graph's FollowersAmong: user's follower
// chunks, a read or two for all of them), and whose inbox is known: the
// one their Follow carries (copiedInboxes: one projection query for
// all), or else their actor's (a read each).
func (s *Service) remoteAudience(ctx context.Context, user string) ([]string, error) {
	q := s.db.Query(KindRemoteFollow).FilterField("followee", "=", user).KeysOnly().Limit(MaxRemoteFollowers)
	keys, err := s.db.GetAll(ctx, q, nil)
	if err != nil {
		return nil, fmt.Errorf("federation: the remote followers of %s: %w", user, err)
	}
	var followers []string
	for _, k := range keys {
		if follower, ok := strings.CutSuffix(k.Name, "_"+user); ok && follower != "" {
			followers = append(followers, follower)
		}
	}
	if len(followers) == 0 {
		return nil, nil
	}
	still, err := s.follows.FollowersAmong(ctx, s.db, user, followers)
	if err != nil {
		return nil, fmt.Errorf("federation: the remote followers of %s: %w", user, err)
	}
	copied, err := s.copiedInboxes(ctx, user)
	if err != nil {
		return nil, err
	}
	// The actors of those whose Follow carries no inbox, read.
	l := s.db.Lookup()
	actors := make([]remoteActor, len(followers))
	known := make([]store.Ref, len(followers))
	for i, f := range followers {
		switch inbox := copied[f]; {
		case !still[f]:
		case inbox != "":
			actors[i] = remoteActor{Inbox: inbox}
		default:
			known[i] = l.Add(remoteActorKey(s.db, f), &actors[i])
		}
	}
	if err := l.Run(ctx); err != nil {
		return nil, fmt.Errorf("federation: the remote followers of %s: %w", user, err)
	}
	return s.deliveryInboxes(ctx, actors, func(i int) bool {
		f := followers[i]
		return still[f] && (copied[f] != "" || known[i].Found())
	})
}

// deliveryInboxes returns where to deliver to those of actors that
// count (each actor's server's shared inbox, or its own inbox for a
// server with none), each inbox once, in order, those of a blocked domain
// left out.
func (s *Service) deliveryInboxes(ctx context.Context, actors []remoteActor, counts func(i int) bool) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for i, a := range actors {
		if !counts(i) {
			continue
		}
		inbox := a.deliveryInbox()
		if blocked, err := s.blocked(ctx, inbox); err != nil {
			return nil, err
		} else if !blocked && !seen[inbox] {
			seen[inbox] = true
			out = append(out, inbox)
		}
	}
	return out, nil
}

// Number is the number a post's id stands for, as its Note's address
// writes it (Mastodon's id of it).
func Number(id string) string {
	if n, ok := ids.Parse(id); ok {
		return strconv.FormatInt(n, 10)
	}
	return id
}

// RemoteMentions returns the people of other servers views mention, by
// their ids here, as the service keeps them (one read each).
func (s *Service) RemoteMentions(ctx context.Context, views ...activities.View) (map[string]Actor, error) {
	l := s.db.Lookup()
	kept := map[string]*remoteActor{}
	refs := map[string]store.Ref{}
	for _, v := range views {
		for i, id := range v.Mentions {
			if i < len(v.MentionNames) && strings.Contains(v.MentionNames[i], "@") && kept[id] == nil {
				kept[id] = &remoteActor{}
				refs[id] = l.Add(remoteActorKey(s.db, id), kept[id])
			}
		}
	}
	if len(kept) == 0 {
		return nil, nil
	}
	if err := l.Run(ctx); err != nil {
		return nil, fmt.Errorf("federation: the people of other servers mentioned: %w", err)
	}
	out := make(map[string]Actor, len(kept))
	for id, r := range kept {
		if !refs[id].Found() {
			continue
		}
		if a, err := r.actor(id); err == nil {
			out[id] = a
		}
	}
	return out, nil
}

// inboxOfElsewhere returns the inbox of the server of a post of another
// server's, to which a repost of it goes; false for a post here.
func (s *Service) inboxOfElsewhere(ctx context.Context, v activities.View) (string, bool, error) {
	if _, ok := v.Elsewhere(); !ok {
		return "", false, nil
	}
	a, remote, err := s.ActorOf(ctx, v.UserID)
	if err != nil || !remote {
		return "", false, err
	}
	if blocked, err := s.blocked(ctx, a.DeliveryInbox()); err != nil || blocked {
		return "", false, err
	}
	return a.DeliveryInbox(), true, nil
}
