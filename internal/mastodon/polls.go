package mastodon

import (
	"strconv"
	"time"

	"socialstream/internal/activities"
	"socialstream/internal/derrors"
	"socialstream/internal/polls"
)

// mPoll is Mastodon's Poll. Its id is its status's: a status has one
// poll at most, so a client's poll id finds its status.
type mPoll struct {
	ID          string        `json:"id"`
	ExpiresAt   *string       `json:"expires_at"`
	Expired     bool          `json:"expired"`
	Multiple    bool          `json:"multiple"`
	VotesCount  int64         `json:"votes_count"`
	VotersCount *int64        `json:"voters_count"`
	Options     []mPollOption `json:"options"`
	Emojis      []any         `json:"emojis"`
	Voted       bool          `json:"voted"`
	OwnVotes    []int         `json:"own_votes"`
}

// mPollOption is one of a poll's options: its votes are null while the
// poll hides its totals.
type mPollOption struct {
	Title      string `json:"title"`
	VotesCount *int64 `json:"votes_count"`
}

// poll renders the poll of the status statusID, as its reader sees it.
func poll(statusID string, p *polls.View) *mPoll {
	if p == nil {
		return nil
	}
	at := p.Expires.UTC().Format("2006-01-02T15:04:05.000Z")
	voters := p.VotersCount
	out := &mPoll{ID: statusID, ExpiresAt: &at, Expired: p.Expired, Multiple: p.Multiple, VotesCount: p.VotesCount,
		VotersCount: &voters, Options: []mPollOption{}, Emojis: []any{}, Voted: p.Voted, OwnVotes: p.OwnVotes}
	for _, o := range p.Options {
		out.Options = append(out.Options, mPollOption{Title: o.Title, VotesCount: o.VotesCount})
	}
	return out
}

// pollInput reads a status's poll: poll[options][], poll[expires_in]
// (seconds), poll[multiple], poll[hide_totals]; nil if none is sent.
func pollInput(m *mreq) (*polls.Input, error) {
	options := m.p.list("poll[options]")
	if len(options) == 0 && !m.p.has("poll[expires_in]") {
		return nil, nil
	}
	secs, err := strconv.ParseInt(m.p.str("poll[expires_in]"), 10, 64)
	if err != nil || secs <= 0 {
		return nil, derrors.New(derrors.InvalidArgument, "Validation failed: poll[expires_in] must be a number of seconds")
	}
	multiple, err := m.p.flag("poll[multiple]", false)
	if err != nil {
		return nil, err
	}
	hide, err := m.p.flag("poll[hide_totals]", false)
	if err != nil {
		return nil, err
	}
	return &polls.Input{Options: options, ExpiresIn: time.Duration(min(secs, int64(polls.MaxExpiry/time.Second)+1)) * time.Second,
		Multiple: multiple, HideTotals: hide}, nil
}

// getPoll is GET /api/v1/polls/:id: the poll of the status of that id,
// as the caller may see it (404 otherwise, or if it has none).
func (s *Server) getPoll(m *mreq) (any, error) {
	id, v, err := s.seenStatus(m)
	if err != nil {
		return nil, err
	}
	if v.Poll == nil {
		return nil, errMGone
	}
	return poll(mid(id), v.Poll), nil
}

// votePoll is POST /api/v1/polls/:id/votes: choices[] the indexes of
// the options chosen.
func (s *Server) votePoll(m *mreq) (any, error) {
	id, err := statusID(m)
	if err != nil {
		return nil, err
	}
	var choices []int
	for _, c := range m.p.list("choices") {
		n, err := strconv.Atoi(c)
		if err != nil {
			return nil, derrors.New(derrors.InvalidArgument, "Validation failed: choices are the indexes of options")
		}
		choices = append(choices, n)
	}
	v, err := s.activities.Vote(m.ctx, m.caller, id, choices)
	if err != nil {
		return nil, err
	}
	return poll(mid(id), v.Poll), nil
}

// pollOf is the poll a status shows: its own, never a repost's.
func pollOf(v activities.View) *mPoll { return poll(mid(v.ID), v.Poll) }
