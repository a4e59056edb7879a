package federation

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"socialstream/internal/activities"
	"socialstream/internal/derrors"
	"socialstream/internal/moderation"
	"socialstream/internal/outbox"
	"socialstream/internal/queue"
	"socialstream/internal/text"
)

// Reports across servers. A report here of a person of another server,
// when its reporter asks (Mastodon's forward), goes to their server as a
// Flag from the deployment's own actor (never naming the reporter),
// naming the person and the posts of theirs it names, with its comment:
// a job enqueued ahead of the report's commit sends it once the report
// is filed. Another server's Flag of people here is a report here, filed
// by whoever sent it (their server's actor, as a person of its own kind)
// against the first person here it names, with the posts of theirs it
// names.

// Flag runs a flag job: once the report is filed, it sends the Flag to
// the reported person's server.
func (s *Service) Flag(ctx context.Context, t outbox.FlagTask) (string, error) {
	if filed, err := moderation.Filed(ctx, s.db, t.Report); err != nil {
		return "", err
	} else if !filed {
		if s.now().Sub(time.Unix(t.At, 0)) < queue.GiveUpOf(s.q) {
			return "", queue.NotYet("the report")
		}
		return "never filed", nil
	}
	actor, remote, err := s.ActorOf(ctx, t.Account)
	if err != nil || !remote {
		return "not remote", err
	}
	notes, err := activities.NotesElsewhere(ctx, s.db, t.Activities)
	if err != nil {
		return "", err
	}
	object := []string{actor.URI}
	for _, id := range t.Activities {
		if at, ok := notes[id]; ok {
			object = append(object, at)
		}
	}
	id := s.cfg.InstanceActor() + "#flags/" + t.Report
	return "flag sent", s.Send(ctx, InstanceKey, id, map[string]any{
		"@context": "https://www.w3.org/ns/activitystreams", "id": id, "type": "Flag",
		"actor": s.cfg.InstanceActor(), "content": t.Comment, "object": object,
	}, actor.DeliveryInbox())
}

// Reporter files reports (package moderation's Service).
type Reporter interface {
	File(ctx context.Context, reporter string, in moderation.ReportInput) (moderation.ReportView, error)
}

// flagged takes a Flag: a report, by the actor, of the first person here
// it names, with the posts here it names.
func (s *Service) flagged(ctx context.Context, actor Actor, raw json.RawMessage, content string) (string, error) {
	var objects addresses
	if err := json.Unmarshal(raw, &objects); err != nil {
		return "", errMalformed
	}
	in := moderation.ReportInput{Category: "other", Comment: text.Strip(content, moderation.MaxComment, true)}
	for _, o := range objects {
		if id := s.local(o); id != "" && in.AccountID == "" {
			in.AccountID = id
		} else if post := s.localNote(o); post != "" && len(in.ActivityIDs) < moderation.MaxReportActivities {
			in.ActivityIDs = append(in.ActivityIDs, post)
		}
	}
	if in.AccountID == "" {
		return "", errNotOurs
	}
	if s.reporter == nil {
		return "", errors.New("federation: no reporter")
	}
	r, err := s.reporter.File(ctx, actor.UserID, in)
	if errors.Is(err, activities.ErrNotTheirs) || errors.Is(err, activities.ErrNoSuchActivity) { // posts not theirs, or not there
		in.ActivityIDs = nil
		r, err = s.reporter.File(ctx, actor.UserID, in)
	}
	var de *derrors.Error
	switch {
	case errors.As(err, &de) && (errors.Is(err, derrors.NotFound) || errors.Is(err, derrors.InvalidArgument)):
		return "", errNotOurs
	case err != nil:
		return "", err
	}
	return "reported as " + r.ID, nil
}
