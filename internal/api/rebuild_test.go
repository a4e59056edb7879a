package api_test

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/bcrypt"

	"socialstream/internal/accounts"
	"socialstream/internal/app"
	"socialstream/internal/federation"
	"socialstream/internal/ids"
	"socialstream/internal/queue"
	"socialstream/internal/rebuild"
	"socialstream/internal/trends"
)

func (e *env) feed(u user, path string) []string {
	e.t.Helper()
	return e.list(e.do("GET", "/social/rest/activities/"+path, u.token, nil))
}

// Through the tasks emulator and the real handlers: a follow brings the
// followee's earlier posts home, an unfollow takes them away (unless
// keepHistory), and joining a group puts the member's earlier posts in the
// group's feed.
func TestRebuildThroughTheQueue(t *testing.T) {
	e := newEnv(t)
	alice, bob, carol := e.register("alice"), e.register("bob"), e.register("carol")
	var posts []string
	for i := 0; i < 5; i++ {
		posts = append([]string{e.post(bob, "earlier")}, posts...)
	}

	e.follow(alice, bob.id)
	e.Eventually("bob's earlier posts at alice's home", func() bool { return slices.Equal(e.feed(alice, "@me/@friends"), posts) })
	// copyLimit=2 copies two at once; the backfill chain brings the rest.
	if r := e.do("POST", "/social/rest/people/@me/@friends?copyLimit=2", carol.token, map[string]string{"id": bob.id}); r.status != 201 {
		t.Fatalf("follow with copyLimit: %d", r.status)
	}
	e.Eventually("carol's copies, backfill included", func() bool { return slices.Equal(e.feed(carol, "@me/@friends"), posts) })
	backfilled := false
	for _, l := range e.logs.Lines("task done") {
		backfilled = backfilled || (l["queue"] == "backfill" && l["follower"] == carol.id && l["activitiesChanged"] == 3.0)
	}
	if !backfilled {
		t.Errorf("no backfill job copied the older three for carol")
	}

	if r := e.do("DELETE", "/social/rest/people/@me/@friends/"+bob.id, alice.token, nil); r.status != 204 {
		t.Fatal(r.status)
	}
	e.Eventually("alice home emptied", func() bool { return len(e.feed(alice, "@me/@friends")) == 0 })
	if r := e.do("DELETE", "/social/rest/people/@me/@friends/"+bob.id+"?keepHistory=true", carol.token, nil); r.status != 204 {
		t.Fatal(r.status)
	}
	time.Sleep(500 * time.Millisecond)
	if diff := cmp.Diff(posts, e.feed(carol, "@me/@friends")); diff != "" {
		t.Errorf("keepHistory home mismatch (-want +got):\n%s", diff)
	}

	group := e.createGroup(carol, "carol's", "open")
	if r := e.do("POST", "/social/rest/groups/@all/"+group+"/members", bob.token, map[string]string{"id": "@me"}); r.status != 201 {
		t.Fatal(r.status)
	}
	e.Eventually("bob's posts in the group", func() bool { return slices.Equal(e.feed(carol, "@me/"+group), posts) })
	if r := e.do("DELETE", "/social/rest/groups/@all/"+group+"/members/@me", bob.token, nil); r.status != 204 {
		t.Fatal(r.status)
	}
	e.Eventually("the group feed emptied", func() bool { return len(e.feed(carol, "@me/"+group)) == 0 })

	// Each job logged what it changed, as structured fields.
	var changed float64
	for _, l := range e.logs.Lines("task done") {
		if l["job"] == "rebuild" && l["kind"] == "follow" && l["follower"] == alice.id {
			changed = l["activitiesChanged"].(float64)
			if ids, _ := l["changedIds"].([]any); len(ids) != 5 {
				t.Errorf("changedIds = %v", l["changedIds"])
			}
		}
	}
	if changed != 5 {
		t.Errorf("follow job logged activitiesChanged %v, want 5; logs: %v", changed, e.logs.Lines("task done"))
	}
}

// A job that fails (here: it came before its follow committed) answers
// 5xx, and the queue retries it until it succeeds.
func TestFailedJobIsRetriedBySQueue(t *testing.T) {
	e := newEnv(t)
	alice, bob := e.register("alice"), e.register("bob")
	post := e.post(bob, "before")
	// The follow's job is enqueued, runs, and fails before the follow
	// commits.
	slow := queueFunc(func(ctx context.Context, task queue.Task) error {
		err := e.tasks.Queue.Enqueue(ctx, task)
		if task.Path == rebuild.RunJob.Path() {
			e.Eventually("a failed attempt", func() bool { return len(e.logs.Lines("task failed; the queue retries it")) > 0 })
		}
		return err
	})
	acc, err := accounts.New(e.db, ids.New(), accounts.Config{BcryptCost: bcrypt.MinCost})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := app.NewServices(e.db, ids.New(), acc, slow, slog.New(slog.DiscardHandler), rebuild.Config{}, app.Pictures{}, app.Push{}, federation.Config{}, trends.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Graph.Follow(context.Background(), alice.id, bob.id, nil); err != nil {
		t.Fatal(err)
	}
	e.Eventually("the retried job's copy", func() bool { return slices.Equal(e.feed(alice, "@me/@friends"), []string{post}) })
	for _, l := range e.logs.Lines("task done") {
		if l["job"] == "rebuild" && l["retryCount"] == "0" {
			t.Errorf("the job succeeded on its first attempt: %v", l)
		}
	}
}

// queueFunc is a Queue of one function.
type queueFunc func(context.Context, queue.Task) error

func (f queueFunc) Enqueue(ctx context.Context, t queue.Task) error { return f(ctx, t) }
