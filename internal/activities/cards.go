package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"socialstream/internal/cards"
	"socialstream/internal/ids"
	"socialstream/internal/media"
	"socialstream/internal/queue"
	"socialstream/internal/store"
)

// A post's link preview (package cards): the first link of its text is
// kept on it (Activity.Link) in its commit, or its edit's, and a job
// enqueued ahead of that commit gets the link's card (made once per
// address, shared by every post that links it) and copies it onto the
// post, so a page shows it with no read more.

// CardJob copies the card of a post's link onto it.
var CardJob = queue.Job[CardTask]{Name: "card", Queue: queue.Notifications,
	TaskName: func(t CardTask) string { return fmt.Sprintf("card-%s-%d", t.ActivityID, t.Edit) }}

// CardTask is the body of a card job: the post, the link it has since
// its Edit-th edit (0: since it was made), and when that edit was asked
// (µs), to wait for it.
type CardTask struct {
	ActivityID string `json:"activityId"`
	URL        string `json:"url"`
	Edit       int    `json:"edit,omitempty"`
	At         int64  `json:"at,omitempty"`
}

// unanswered decides a card job that got no card to tell, err: it is
// tried again (err), a page that gave no answer (cards.ErrNoAnswer) too,
// but for one that gave none for cards.RetryFor since the post or the
// edit that set its link, which goes without a card.
func unanswered(t CardTask, seq int64, now time.Time, err error) (string, error) {
	if errors.Is(err, cards.ErrNoAnswer) && now.Sub(t.since(seq)) >= cards.RetryFor {
		return CardUnanswered, nil
	}
	return "", err
}

// since is when the post, or the edit that set the link, was asked:
// At, or for a task that does not say, the post's id's time.
func (t CardTask) since(seq int64) time.Time {
	if t.At > 0 {
		return time.UnixMicro(t.At)
	}
	return ids.Time(seq)
}

// linkOf is the link of a post's text that gets a card: "" when the
// deployment makes none.
func (s *Service) linkOf(title, body string) string {
	if s.cfg.Cards == nil {
		return ""
	}
	return cards.FirstLink(title + "\n" + body)
}

// cardJob is the card job of post id's link, set by its edit-th edit.
func (s *Service) cardJob(id, link string, edit int) queue.Pending {
	return CardJob.Pending(s.queue, CardTask{ActivityID: id, URL: link, Edit: edit, At: s.now().UnixMicro()}, 0)
}

// Outcomes of a card job, for its log line.
const (
	CardCopied = "copied"
	CardNone   = "the page makes none"
	CardMoved  = "the post is gone, or links elsewhere now"
	// CardUnanswered: the page gave no answer for cards.RetryFor.
	CardUnanswered = "the page gave no answer"
)

// Preview runs a card job: it gets the card of t's link and copies it
// onto the post, unless the post is gone or links elsewhere by now. It
// can run any number of times, in any order, with the same end. A page
// that gave no answer fails it, to be tried again (unanswered).
func (s *Service) Preview(ctx context.Context, t CardTask) (string, error) {
	seq, ok := ids.Parse(t.ActivityID)
	if !ok || t.URL == "" || s.cfg.Cards == nil {
		return CardMoved, nil
	}
	key := Key(s.db, t.ActivityID)
	var a Activity
	found, err := s.db.Get(ctx, key, &a)
	switch {
	case err != nil:
		return "", err
	case !found && t.Edit == 0 && s.now().Sub(ids.Time(seq)) < s.cfg.GiveUpAfter,
		found && a.Edits < t.Edit && s.now().Sub(time.UnixMicro(t.At)) < s.cfg.GiveUpAfter:
		return "", ErrNotYet
	case !found || a.Link != t.URL:
		return CardMoved, nil
	}
	c, err := s.cfg.Cards.Of(ctx, t.URL, fmt.Sprintf("%s/%d", t.ActivityID, t.Edit))
	if err != nil {
		return unanswered(t, seq, s.now(), err)
	}
	if c == nil {
		return CardNone, nil
	}
	outcome := CardMoved
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		var a Activity
		ok, err := tx.Get(key, &a)
		if err != nil || !ok || a.Link != t.URL {
			return err
		}
		outcome = CardCopied
		a.Card = c
		return tx.Put(key, &a)
	})
	if err != nil {
		return "", fmt.Errorf("activities.Preview(%s): %w", t.ActivityID, err)
	}
	return outcome, nil
}

// CardView is a post's link preview as a reader sees it: its picture
// with a link that works for a while (package media).
type CardView struct {
	URL          string      `json:"url"`
	Title        string      `json:"title"`
	Description  string      `json:"description,omitempty"`
	Type         string      `json:"type"`
	ProviderName string      `json:"providerName,omitempty"`
	Image        *media.View `json:"image,omitempty"`
}

// cardView is c as shown, its picture's link made by mint.
func cardView(mint media.Minter, c *cards.Card) *CardView {
	if c == nil {
		return nil
	}
	v := &CardView{URL: c.URL, Title: c.Title, Description: c.Description, Type: c.Type, ProviderName: c.ProviderName}
	if c.Image.ID != "" && mint.Ready() {
		img := mint.Attached(c.Image)
		v.Image = &img
	}
	return v
}
