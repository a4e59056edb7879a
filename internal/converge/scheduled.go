package converge

// Scheduled posts: one is scheduled hours ahead through the API, and its
// job is run at its time by the checker (a clock set past it), under the
// Datastore's faults, until it succeeds, and then once more, as a task
// delivered twice: the post is made exactly once, or never when it was
// cancelled, and then shows everywhere a post made at that moment does.

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"socialstream/internal/scheduled"
)

// schedule has one of a's people schedule a post, cancel it a quarter of
// the time, and its job run.
func (r *runner) schedule(ctx context.Context, a *actor) (bool, error) {
	u := a.pick()
	r.seq.Lock()
	r.n++
	n := r.n
	r.seq.Unlock()
	title := fmt.Sprintf("scheduled %d by %s", n, u.name)
	at := time.Now().Add(2 * time.Hour).UTC().Truncate(time.Second)
	// No change of u's standing meanwhile: it decides whether the job
	// posts.
	defer r.lock("standing " + u.id)()
	rep, out := r.write(ctx, "schedule", http.MethodPost, "/social/rest/activities/@me/@self", u.token,
		map[string]any{"title": title, "scheduledAt": at.Format(time.RFC3339)})
	id := ""
	if out == acked {
		id = str(entry(rep), "id")
	} else if out == unknown {
		var err error
		if id, err = r.scheduledByTitle(ctx, u, title); err != nil {
			return true, err
		}
	}
	r.m.done("schedule", out != acked, time.Now())
	if id == "" {
		return true, nil
	}
	cancelled := false
	if a.rng.IntN(4) == 0 {
		_, out := r.write(ctx, "schedule", http.MethodDelete, "/social/rest/scheduled/@me/"+id, u.token, nil)
		if cancelled = out == acked; out == unknown {
			left, err := r.scheduledByTitle(ctx, u, title)
			if err != nil {
				return true, err
			}
			cancelled = left == ""
		}
	}
	pub, err := r.publisher(func() time.Time { return at.Add(time.Second) })
	if err != nil {
		return true, err
	}
	task := scheduled.PublishTask{ID: id, User: u.id, At: at.UnixMicro(), Due: at.UnixMicro()}
	start := time.Now()
	outcome, err := r.publish(ctx, pub, task)
	if err != nil {
		return true, err
	}
	if again, err := r.publish(ctx, pub, task); err != nil {
		return true, err
	} else if again != scheduled.Moved {
		r.m.violate(fmt.Sprintf("the job of %s's scheduled post %s, run again, answered %q", u.name, id, again))
	}
	end := time.Now()
	var postID string
	var made bool
	if err := r.retry(ctx, func() (err error) {
		postID, made, err = r.externalIDOf(ctx, u.id, scheduled.ExternalID(id))
		return err
	}); err != nil {
		return true, err
	}
	// A run may answer that the post is gone when the one before it
	// published it and lost the answer of its last commit: what it made
	// is what tells.
	switch {
	case cancelled && made:
		r.m.violate(fmt.Sprintf("%s's scheduled post %s, cancelled, was posted as %s", u.name, id, postID))
	case !cancelled && !made:
		r.m.violate(fmt.Sprintf("%s's scheduled post %s made no post (its job answered %q)", u.name, id, outcome))
	case outcome == scheduled.Refused:
		r.m.violate(fmt.Sprintf("%s's scheduled post %s was refused", u.name, id))
	}
	if made && postID != "" {
		r.record(&post{id: postID, author: u.id, title: title, visibility: "public", start: start, end: end, seqTime: seqTime(postID)})
	}
	return true, nil
}

// publish runs a publishing job until it succeeds, as its queue retries
// it.
func (r *runner) publish(ctx context.Context, pub *scheduled.Service, t scheduled.PublishTask) (string, error) {
	var outcome string
	err := r.retry(ctx, func() (err error) {
		outcome, err = pub.Publish(ctx, t)
		return err
	})
	return outcome, err
}

// scheduledByTitle finds u's scheduled post of that title: "" if none.
func (r *runner) scheduledByTitle(ctx context.Context, u *user, title string) (string, error) {
	rep, err := r.probe(ctx, "schedule", "/social/rest/scheduled/@me?count=100", u.token, 200)
	if err != nil {
		return "", err
	}
	items, _ := rep.body["list"].([]any)
	for _, it := range items {
		m, _ := it.(map[string]any)
		if act, _ := m["activity"].(map[string]any); str(act, "title") == title {
			return str(m, "id"), nil
		}
	}
	return "", nil
}
