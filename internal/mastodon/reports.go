package mastodon

import (
	"socialstream/internal/derrors"
	"socialstream/internal/moderation"
)

// Reports: Mastodon's categories by ours.
var reportCategories = map[string]string{"spam": "spam", "legal": "illegal", "violation": "abuse", "other": "other"}

type mReport struct {
	ID            string   `json:"id"`
	ActionTaken   bool     `json:"action_taken"`
	ActionTakenAt *string  `json:"action_taken_at"`
	Category      string   `json:"category"`
	Comment       string   `json:"comment"`
	Forwarded     bool     `json:"forwarded"`
	CreatedAt     string   `json:"created_at"`
	StatusIDs     []string `json:"status_ids"`
	RuleIDs       []string `json:"rule_ids"`
	TargetAccount mAccount `json:"target_account"`
}

// report is POST /api/v1/reports: the operation of reports.create.
func (s *Server) report(m *mreq) (any, error) {
	cat := "other"
	if c := m.p.str("category"); c != "" {
		var ok bool
		if cat, ok = reportCategories[c]; !ok {
			return nil, derrors.New(derrors.InvalidArgument, "category must be spam, legal, violation or other")
		}
	}
	forward, err := m.p.flag("forward", false)
	if err != nil {
		return nil, err
	}
	in := moderation.ReportInput{AccountID: m.p.str("account_id"), Category: cat, Comment: m.p.str("comment"), Forward: forward}
	for _, id := range m.p.list("status_ids") {
		sid := scattered(id)
		if sid == "" {
			return nil, errMGone
		}
		in.ActivityIDs = append(in.ActivityIDs, sid)
	}
	target, err := s.accounts.Card(m.ctx, m.caller, in.AccountID)
	if err != nil {
		return nil, err
	}
	r, err := s.moderation.File(m.ctx, m.caller, in)
	if err != nil {
		return nil, err
	}
	back := map[string]string{}
	for theirs, ours := range reportCategories {
		back[ours] = theirs
	}
	v := mReport{ID: mid(r.ID), ActionTaken: r.Resolved != "", Category: back[r.Category], Comment: r.Comment, Forwarded: r.Forwarded,
		CreatedAt: isoTime(r.Created), StatusIDs: []string{}, TargetAccount: s.account(s.origin(m.c), target)}
	for _, id := range r.ActivityIDs {
		v.StatusIDs = append(v.StatusIDs, mid(id))
	}
	return v, nil
}
