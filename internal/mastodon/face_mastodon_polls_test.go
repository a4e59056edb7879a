package mastodon_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/mattn/go-mastodon"
)

// Polls through a Mastodon client library nobody here wrote: made with a
// status, shown on it and by its own id, voted in once, hiding their
// totals until they end (but from their author), and not there for whom
// may not see the status.
func TestMastodonPolls(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	alice, bob, carol := e.Register("alice"), e.Register("bob"), e.Register("carol")
	ca, cb, cc := e.MastoClient(alice, "read write follow"), e.MastoClient(bob, "read write follow"), e.MastoClient(carol, "read write follow")
	st, err := ca.PostStatus(ctx, &mastodon.Toot{Status: "tea or coffee?",
		Poll: &mastodon.TootPoll{Options: []string{"tea", "coffee", "both"}, ExpiresInSeconds: 86400, HideTotals: true}})
	if err != nil {
		t.Fatal(err)
	}
	if st.Poll == nil || len(st.Poll.Options) != 3 || st.Poll.Options[1].Title != "coffee" || st.Poll.Multiple || st.Poll.Expired || st.Poll.Voted {
		t.Fatalf("the status's poll: %+v", st.Poll)
	}
	p, err := cb.PollVote(ctx, st.Poll.ID, 1)
	if err != nil || !p.Voted || len(p.OwnVotes) != 1 || p.OwnVotes[0] != 1 || p.VotesCount != 1 || p.VotersCount != 1 {
		t.Fatalf("bob's vote: %+v, %v", p, err)
	}
	// Totals hidden from a voter until it ends, shown to its author.
	raw := e.Do("GET", "/api/v1/polls/"+string(st.Poll.ID), bob.Token, nil)
	opts, _ := raw.Body["options"].([]any)
	if raw.Status != http.StatusOK || len(opts) != 3 || opts[1].(map[string]any)["votes_count"] != nil {
		t.Errorf("the poll to bob, totals hidden: %d %s", raw.Status, raw.Raw)
	}
	if mine, err := ca.GetPoll(ctx, st.Poll.ID); err != nil || mine.Options[1].VotesCount != 1 || mine.Voted {
		t.Errorf("the poll to its author: %+v, %v", mine, err)
	}
	// Once: the same vote again answers as the first; another is a 422.
	if again, err := cb.PollVote(ctx, st.Poll.ID, 1); err != nil || again.VotesCount != 1 {
		t.Errorf("the same vote again: %+v, %v", again, err)
	}
	_, err = cb.PollVote(ctx, st.Poll.ID, 2)
	wantStatus(t, err, http.StatusUnprocessableEntity)
	_, err = cc.PollVote(ctx, st.Poll.ID, 0, 1) // two, of a poll of one choice
	wantStatus(t, err, http.StatusUnprocessableEntity)
	_, err = cc.PollVote(ctx, st.Poll.ID, 3)
	wantStatus(t, err, http.StatusUnprocessableEntity)
	if st, err := cc.GetStatus(ctx, st.ID); err != nil || st.Poll == nil || st.Poll.Voted {
		t.Errorf("the status to carol, who has not voted: %+v, %v", st, err)
	}

	// A poll of several choices, for alice's followers: carol, who does
	// not follow her, may neither see nor vote in it.
	fol, err := ca.PostStatus(ctx, &mastodon.Toot{Status: "which days?", Visibility: "private",
		Poll: &mastodon.TootPoll{Options: []string{"mon", "tue"}, ExpiresInSeconds: 86400, Multiple: true}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cb.AccountFollow(ctx, mastodon.ID(alice.ID)); err != nil {
		t.Fatal(err)
	}
	if p, err := cb.PollVote(ctx, fol.Poll.ID, 0, 1); err != nil || p.VotesCount != 2 || p.VotersCount != 1 || p.Options[0].VotesCount != 1 {
		t.Errorf("bob's votes in the followers' poll: %+v, %v", p, err)
	}
	_, err = cc.GetPoll(ctx, fol.Poll.ID)
	wantStatus(t, err, http.StatusNotFound)
	_, err = cc.PollVote(ctx, fol.Poll.ID, 0)
	wantStatus(t, err, http.StatusNotFound)
	_, err = cc.GetPoll(ctx, st.ID+"0")
	wantStatus(t, err, http.StatusNotFound)

	// A status with no poll has none to show or vote in; pictures and a
	// poll do not go together.
	plain, err := ca.PostStatus(ctx, &mastodon.Toot{Status: "no poll"})
	if err != nil || plain.Poll != nil {
		t.Fatalf("a status with no poll: %+v, %v", plain, err)
	}
	_, err = cb.GetPoll(ctx, plain.ID)
	wantStatus(t, err, http.StatusNotFound)
	_, err = cb.PollVote(ctx, plain.ID, 0)
	wantStatus(t, err, http.StatusNotFound)
	// An edit that keeps the options keeps the votes; one of other
	// options starts the poll anew, as Mastodon's does.
	edit := func(options ...string) map[string]any {
		t.Helper()
		status, r := e.MastoForm("PUT", "/api/v1/statuses/"+string(st.ID), alice.Token,
			url.Values{"status": {"tea or coffee, then?"}, "poll[options][]": options, "poll[expires_in]": {"86400"}})
		if status != http.StatusOK {
			t.Fatalf("an edit of the poll: %d %v", status, r)
		}
		return r["poll"].(map[string]any)
	}
	if p := edit("tea", "coffee", "both"); p["votes_count"] != 1.0 {
		t.Errorf("the poll after an edit of its text alone: %v", p)
	}
	if p := edit("tea", "coffee", "neither"); p["votes_count"] != 0.0 || p["voters_count"] != 0.0 {
		t.Errorf("the poll after an edit of its options: %v", p)
	}
	if p, err := cb.GetPoll(ctx, st.Poll.ID); err != nil || p.Voted || p.VotesCount != 0 {
		t.Errorf("the new poll to bob, who voted in the old: %+v, %v", p, err)
	}
	if p, err := cb.PollVote(ctx, st.Poll.ID, 2); err != nil || !p.Voted || p.VotesCount != 1 || p.Options[2].Title != "neither" {
		t.Errorf("bob's vote in the new poll: %+v, %v", p, err)
	}
	status, _ := e.MastoForm("PUT", "/api/v1/statuses/"+string(st.ID), alice.Token,
		url.Values{"status": {"tea?"}, "poll[options][]": {"a"}, "poll[expires_in]": {"86400"}})
	if status != http.StatusUnprocessableEntity {
		t.Errorf("an edit to a poll of one option: %d", status)
	}
	// The instance states the limits it holds posts to.
	raw = e.Do("GET", "/api/v2/instance", "", nil)
	limits, _ := raw.Body["configuration"].(map[string]any)["polls"].(map[string]any)
	if limits["max_options"] != 4.0 || limits["min_expiration"] != 300.0 {
		t.Errorf("the instance's polls: %v", limits)
	}
}
