package api_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"socialstream/internal/app"
	"socialstream/internal/dsfaults"
	"socialstream/internal/store"
	"socialstream/internal/testenv"
)

// A commit can apply and still answer Aborted; should the client library
// run the transaction again (it does when the rollback that follows
// succeeds), the transaction finds its own write. Each write must
// recognise it and answer success, having written once. Found by the
// convergence checker: a post made a second activity, a group creation
// and a registration failed with "id collision" or "taken", a comment
// with a conflict.
func TestWriteWhoseCommitAppliedThenAborted(t *testing.T) {
	e, inj := newEnvWithFaults(t)
	alice := e.register("alice")

	inj.FailNextCommit(codes.Aborted)
	bob := e.register("bob") // fails the test unless 201

	inj.FailNextCommit(codes.Aborted)
	id := e.post(alice, "once")
	if got := e.feed(alice, "@me/@self"); len(got) != 1 || got[0] != id {
		t.Errorf("@self after one post = %v, want [%s]", got, id)
	}

	inj.FailNextCommit(codes.Aborted)
	if r := e.do("POST", "/social/rest/groups/@me", alice.token, map[string]string{"title": "g"}); r.status != 201 {
		t.Errorf("create group: %d %s", r.status, r.raw)
	}
	if r := e.do("GET", "/social/rest/groups/@me", alice.token, nil); len(e.list(r)) != 1 {
		t.Errorf("groups after one creation: %s", r.raw)
	}

	inj.FailNextCommit(codes.Aborted)
	if r := e.do("POST", "/social/rest/comments/"+id, bob.token, map[string]string{"text": "hi"}); r.status != 201 {
		t.Errorf("comment: %d %s", r.status, r.raw)
	}
	inj.FailNextCommit(codes.Aborted)
	if r := e.do("POST", "/social/rest/likes/"+id, bob.token, nil); r.status != 200 {
		t.Errorf("like: %d %s", r.status, r.raw)
	}
	a := e.activity(alice, alice.id, id)
	if a["commentsCount"] != 1.0 || a["likesCount"] != 1.0 {
		t.Errorf("counts after one comment and one like: comments %v, likes %v", a["commentsCount"], a["likesCount"])
	}
	if n := inj.Counts(); len(n) == 0 {
		t.Error("no fault was injected")
	}
}

// A moderator's action whose commit applied and answered Aborted runs
// its transaction again: it finds its own action and answers it, once in
// the audit log, rather than a 409 for an account that is so already.
// Found by the convergence checker (a limit answered 409).
func TestModerationWhoseCommitAppliedThenAborted(t *testing.T) {
	e, inj := newEnvWithFaults(t)
	ada, bob := e.register("ada"), e.register("bob")
	e.makeAdmin(ada)
	for _, action := range []string{"limit", "suspend"} {
		inj.FailNextCommit(codes.Aborted)
		e.act(ada, map[string]any{"action": action, "accountId": bob.id, "reason": "once"})
	}
	if r := e.do("GET", "/social/rest/people/@me/@self", bob.token, nil); r.status != 401 {
		t.Errorf("bob's token after a suspension retried: %d", r.status)
	}
	if got := e.list(e.do("GET", "/social/rest/moderation/actions", ada.token, nil)); len(got) != 3 { // the grant too
		t.Errorf("audit log: %v, want the grant, one limit and one suspension", got)
	}
}

// A scheduled post's cancel whose commit applied and answered Aborted
// runs its transaction again: it finds the post gone by its own hand and
// answers success, not 404. Found by the convergence checker.
func TestCancelWhoseCommitAppliedThenAborted(t *testing.T) {
	e, inj := newEnvWithFaults(t)
	alice := e.register("alice")
	at := time.Now().Add(2 * time.Hour).UTC().Format(time.RFC3339)
	r := e.do("POST", "/social/rest/activities/@me/@self", alice.token, map[string]any{"title": "later", "scheduledAt": at})
	if r.status != 202 {
		t.Fatalf("schedule: %d %s", r.status, r.raw)
	}
	id, _ := e.entry(r)["id"].(string)
	inj.FailNextCommit(codes.Aborted)
	if r := e.do("DELETE", "/social/rest/scheduled/@me/"+id, alice.token, nil); r.status/100 != 2 {
		t.Errorf("cancel: %d %s, want success", r.status, r.raw)
	}
	if r := e.do("GET", "/social/rest/scheduled/@me/"+id, alice.token, nil); r.status != 404 {
		t.Errorf("the scheduled post after its cancel: %d %s, want 404", r.status, r.raw)
	}
	// A cancel of what was never there is still a 404.
	if r := e.do("DELETE", "/social/rest/scheduled/@me/"+id, alice.token, nil); r.status != 404 {
		t.Errorf("a second cancel: %d %s, want 404", r.status, r.raw)
	}
}

// newEnvWithFaults is newEnv on a Datastore client with a fault injector
// the test arms: with cfg, it starts disabled, and the test enables it.
func newEnvWithFaults(t *testing.T, cfg ...dsfaults.Config) (*env, *dsfaults.Injector) {
	t.Helper()
	var c dsfaults.Config
	if len(cfg) > 0 {
		c = cfg[0]
	}
	inj := dsfaults.New(c)
	inj.SetEnabled(len(cfg) == 0)
	client, err := store.Open(context.Background(), testenv.Project, testenv.EmulatorHost(t), inj.Option())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	db, err := store.New(client, testenv.Namespace(t))
	if err != nil {
		t.Fatal(err)
	}
	return newEnvOn(t, db, app.Config{}), inj
}
