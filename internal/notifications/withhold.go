package notifications

import (
	"context"
	"fmt"

	"cloud.google.com/go/datastore"

	"socialstream/internal/accounts"
	"socialstream/internal/policy"
	"socialstream/internal/store"
)

// Whether a notification is there for its reader is decided by the
// policy (policy.SeeNotification) over who did it and the post it is
// about, as they are; the decision is kept on the notification as
// Withheld, so that the unread count is one count of the index and agrees
// with the lists. It is made when the notification is, and made again,
// by Reweigh, for every notification a change of those facts touches: a
// suspension or a limit of who did it and its lifting (package
// moderation's job), a post taken down or put back (the same job), a
// follow or unfollow between the reader and who did it (package
// rebuild's job: a post its author's followers alone see, a limited
// author's). An edit that no longer mentions someone deletes their
// notification of it in its commit; a post deleted has its notifications
// deleted (ForgetActivity). What the reader decides themselves (a block, a mute)
// is read with their state as they read, and never marked.

// withholdBatch is how many notifications one transaction of Reweigh
// changes.
const withholdBatch = 250

// Selection names the notifications Reweigh weighs again: those Actor
// caused (with User, those of one reader alone), or those about Activity.
type Selection struct {
	Actor, User, Activity string
}

func (sel Selection) query(db *store.DB) *datastore.Query {
	q := db.Query(Kind).KeysOnly()
	if sel.Activity != "" {
		return q.FilterField("activityId", "=", sel.Activity)
	}
	q = q.FilterField("actorId", "=", sel.Actor)
	if sel.User != "" {
		q = q.FilterField("userId", "=", sel.User)
	}
	return q
}

// Reweigh decides again whether each of up to n of the notifications sel
// names, from cursor, is withheld, reading in each batch's transaction
// what the decision turns on as it is then: the job of a change runs it
// any number of times, in any order with others, and whichever runs last
// leaves the marks as the facts are. It returns the cursor of the rest,
// "" at the end.
func (s *Service) Reweigh(ctx context.Context, sel Selection, cursor string, n int) (string, error) {
	if sel.Activity == "" && sel.Actor == "" {
		return "", fmt.Errorf("notifications.Reweigh: nothing selected")
	}
	next, err := s.db.UpdatePage(ctx, sel.query(s.db), cursor, n, withholdBatch, func(tx *store.Tx, keys []*datastore.Key) error {
		l := tx.Lookup()
		ns := make([]Notification, len(keys))
		found := make([]store.Ref, len(keys))
		for i, k := range keys {
			found[i] = l.Add(k, &ns[i])
		}
		w := s.weigh(l, func() []*Notification {
			var out []*Notification
			for i := range ns {
				if found[i].Found() {
					out = append(out, &ns[i])
				}
			}
			return out
		}, nil)
		if err := l.Run(ctx); err != nil {
			return err
		}
		var put []*datastore.Key
		var vals []*Notification
		for i, k := range keys {
			if want := w.withheld(&ns[i]); found[i].Found() && ns[i].Withheld != want {
				ns[i].Withheld = want
				put, vals = append(put, k), append(vals, &ns[i])
			}
		}
		return tx.PutMulti(put, vals)
	})
	if err != nil {
		return "", fmt.Errorf("notifications.Reweigh(%+v): %w", sel, err)
	}
	return next, nil
}

// ReweighAll weighs again every notification sel names (Reweigh), a
// page at a time: at most MaxKept and those since the pruning of a
// reader's, one page of the job's of a person's or an activity's.
func (s *Service) ReweighAll(ctx context.Context, sel Selection) error {
	for cursor := ""; ; {
		next, err := s.Reweigh(ctx, sel, cursor, 500)
		if err != nil || next == "" {
			return err
		}
		cursor = next
	}
}

// weighing is what deciding whether notifications are withheld read.
type weighing struct {
	people map[string]*accounts.Record
	// posts answers what the policy knows of the posts found; nil when
	// none is weighed (none asked, or no Activities to read them).
	posts   func() map[string]policy.Post
	found   map[string]policy.Post
	follows map[[2]string]store.Ref
}

// weigh adds to l what deciding whether the notifications ns returns
// (once the round before has run) are withheld needs: who did each, the
// post it is about and its author, and the reader's follow of that author
// where the policy needs it (policy.NeedsFollow). actors, if given, are
// records of people read already.
func (s *Service) weigh(l *store.Lookup, ns func() []*Notification, actors map[string]*accounts.Record) *weighing {
	w := &weighing{people: map[string]*accounts.Record{}, follows: map[[2]string]store.Ref{}}
	for id, r := range actors {
		w.people[id] = r
	}
	person := func(id string) {
		if id != "" && w.people[id] == nil {
			w.people[id] = accounts.Read(l, id)
		}
	}
	l.Then(func() {
		var posts []string
		list := ns()
		for _, n := range list {
			person(n.ActorID)
			if n.ActivityID != "" {
				posts = append(posts, n.ActivityID)
			}
		}
		if len(posts) > 0 && s.cfg.Activities != nil {
			w.posts = s.cfg.Activities.Posts(l, posts)
		}
		l.Then(func() {
			if w.posts == nil {
				return
			}
			w.found = w.posts()
			for _, n := range list {
				if p, ok := w.found[n.ActivityID]; ok && p.Author != n.UserID {
					person(p.Author)
				}
			}
			l.Then(func() { s.readWeighFollows(l, w, list) })
		})
	})
	return w
}

// readWeighFollows adds to l the follows of their readers the policy
// needs to decide on the posts of list (read by now).
func (s *Service) readWeighFollows(l *store.Lookup, w *weighing, list []*Notification) {
	if s.cfg.Graph == nil {
		return
	}
	for _, n := range list {
		p, ok := w.found[n.ActivityID]
		k := [2]string{n.UserID, p.Author}
		if !ok || w.follows[k] != (store.Ref{}) || !policy.NeedsFollow(n.UserID, p, w.account(n.UserID, p.Author), true) {
			continue
		}
		w.follows[k] = s.cfg.Graph.Follows(l, n.UserID, p.Author)
	}
}

// account is what the policy knows of person id, to reader (their own
// account is there for them: their guard checks it).
func (w *weighing) account(reader, id string) policy.Account {
	if id == reader {
		return policy.Account{ID: id, Exists: true}
	}
	return w.people[id].Account()
}

// withheld decides whether n is kept from its reader by who did it and
// what it is about (policy.SeeNotification, with no tie of the reader's
// own making: those are read as they read).
func (w *weighing) withheld(n *Notification) bool {
	var actor policy.Account
	if n.ActorID != "" {
		actor = w.account(n.UserID, n.ActorID)
	}
	if n.ActivityID == "" || w.posts == nil {
		return !policy.SeeNotification(n.UserID, actor, policy.Ties{}, nil, policy.Account{}, policy.Ties{})
	}
	p, ok := w.found[n.ActivityID]
	if !ok {
		return true // what it is about is gone: its cleanup deletes it
	}
	ties := policy.Ties{Follows: w.follows[[2]string{n.UserID, p.Author}].Found()}
	return !policy.SeeNotification(n.UserID, actor, policy.Ties{}, &p, w.account(n.UserID, p.Author), ties)
}
