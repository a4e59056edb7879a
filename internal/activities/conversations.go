package activities

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"socialstream/internal/accounts"
	"socialstream/internal/conversations"
	"socialstream/internal/ids"
	"socialstream/internal/queue"
	"socialstream/internal/store"
)

// A direct post (for the mentioned alone) joins the conversation of its
// people (package conversations): a job enqueued ahead of its commit adds
// it to the entries of those of them who are here, in a transaction that
// reads the post, so a post deleted first joins none.

// ConversationJob adds a direct post to its conversation.
var ConversationJob = queue.Job[ConversationTask]{Name: "conversation", Queue: queue.Notifications,
	TaskName: func(t ConversationTask) string { return "conversation-" + t.ActivityID }}

// ConversationTask is the body of a conversation job: the post, and the
// names of those it mentioned as posted (of the people of other servers,
// name@domain), by id.
type ConversationTask struct {
	ActivityID string            `json:"activityId"`
	Names      map[string]string `json:"names,omitempty"`
}

// Outcomes of a conversation job, for its log line.
const (
	ConversationAdded = "added"
	ConversationGone  = "the post is gone, or not direct"
)

func (s *Service) conversationJob(id string, names map[string]string) queue.Pending {
	return ConversationJob.Pending(s.queue, ConversationTask{ActivityID: id, Names: names}, 0)
}

// direct says whether a post of visibility, mentioning mentions, is a
// conversation's.
func direct(visibility string, mentions []string) bool {
	return visibility == MentionedOnly && len(mentions) > 0
}

// Converse runs a conversation job. It can run any number of times, in
// any order, with the same end.
func (s *Service) Converse(ctx context.Context, t ConversationTask) (string, error) {
	seq, ok := ids.Parse(t.ActivityID)
	if !ok {
		return ConversationGone, nil
	}
	var first Version // as posted, if edited since
	l := s.db.Lookup()
	r := readWithAuthor(l, t.ActivityID)
	l.Then(func() {
		if r.found.Found() && r.a.Edits > 0 {
			l.Add(VersionKey(s.db, t.ActivityID, 0), &first)
		}
	})
	if err := l.Run(ctx); err != nil {
		return "", err
	}
	a, found, author := r.a, r.found, r.author
	// Its people are those it mentioned as posted, however late the job
	// runs: an edit moves it to no other conversation.
	mentions := a.MentionIDs
	if a.Edits > 0 {
		mentions = first.MentionIDs
	}
	switch {
	case !found.Found() && s.now().Sub(ids.Time(seq)) < s.cfg.GiveUpAfter:
		return "", ErrNotYet
	case !found.Found() || !direct(a.Visibility, mentions):
		return ConversationGone, nil
	}
	post := conversations.Post{ID: t.ActivityID, Author: a.UserID, People: append([]string{a.UserID}, mentions...)}
	names := maps.Clone(t.Names)
	if names == nil {
		names = map[string]string{}
	}
	for i, m := range a.MentionIDs {
		if _, ok := names[m]; !ok && i < len(a.MentionNames) {
			names[m] = a.MentionNames[i]
		}
	}
	local := localPeople(a.UserID, author, mentions, names)
	out := ConversationGone
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		l := tx.Lookup()
		still := l.Add(Key(s.db, t.ActivityID), &Activity{})
		r := conversations.Read(l, post, local)
		if err := l.Run(ctx); err != nil || !still.Found() {
			return err
		}
		out = ConversationAdded
		_, err := r.Add(tx)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("activities: conversation of %s: %w", t.ActivityID, err)
	}
	return out, nil
}

// localPeople are those of a direct post's people who are here: its
// author (read), and those it mentions by a name of this server.
func localPeople(authorID string, author *accounts.Record, mentions []string, names map[string]string) []string {
	var local []string
	if p, ok := author.Person(); ok && !p.Remote() {
		local = append(local, authorID)
	}
	for _, m := range mentions {
		if m != authorID && !accounts.IsRemote(names[m]) {
			local = append(local, m)
		}
	}
	return local
}

// People returns those of people caller may see: the authors of shown
// (views read for caller) as their page read them, the others read now
// (accounts.Shown).
func People(ctx context.Context, acc *accounts.Service, caller string, people []string, shown []View) (map[string]accounts.Person, error) {
	found := map[string]accounts.Person{}
	for _, v := range shown {
		if v.Author != nil {
			found[v.UserID] = *v.Author
		}
	}
	var rest []string
	for _, p := range people {
		if _, ok := found[p]; !ok && !slices.Contains(rest, p) {
			rest = append(rest, p)
		}
	}
	if len(rest) == 0 {
		return found, nil
	}
	more, err := acc.Shown(ctx, caller, rest)
	maps.Copy(found, more)
	return found, err
}
