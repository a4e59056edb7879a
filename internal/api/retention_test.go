package api_test

import (
	"context"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"socialstream/internal/activities"
	"socialstream/internal/api"
	"socialstream/internal/app"
	"socialstream/internal/ids"
	"socialstream/internal/localstack"
)

// With a home retention set, a home feed ends at its edge, a follow copies
// nothing past it, and the trim job (enqueued by the hour's scheduled
// request, cron.yaml's /_cron/trim) deletes the audience chunks past it; the activity itself stays, on its
// author's page and by id.
func TestHomeRetention(t *testing.T) {
	ctx := context.Background()
	// The ids' clock runs two hours behind until the old post is made.
	var behind atomic.Int64
	behind.Store(int64(2 * time.Hour))
	gen := ids.NewNode(7, func() time.Time { return time.Now().Add(-time.Duration(behind.Load())) })
	// Trim jobs are counted and, until the feed's edge has been seen
	// with the chunks still stored, answered without running.
	var trims atomic.Int64
	var hold atomic.Bool
	hold.Store(true)
	wrap := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == activities.TrimJob.Path() {
				trims.Add(1)
				if hold.Load() {
					w.WriteHeader(http.StatusOK)
					return
				}
			}
			h.ServeHTTP(w, r)
		})
	}
	e := newEnvFrom(t, localstack.Options{Config: app.Config{BackfillMax: 1000, HomeRetention: time.Hour}, Gen: gen, Wrap: wrap})
	author, reader, late := e.register("author"), e.register("reader"), e.register("late")
	e.follow(reader, author.id)
	e.Settle()
	old := e.post(author, "two hours ago")
	behind.Store(0)
	fresh := e.post(author, "just now")
	e.Settle()
	if n := trims.Load(); n != 0 {
		t.Errorf("%d trim jobs before the schedule asked for one", n)
	}
	e.wantError(e.do("GET", api.CronTrimPath, "", nil), http.StatusForbidden)
	if r := e.do("GET", api.CronTrimPath, "", nil, api.TaskSecretHeader, e.stack.TaskSecret); r.status != http.StatusNoContent {
		t.Fatalf("the scheduled trim: %d %s", r.status, r.raw)
	}
	e.Settle()
	if trims.Load() == 0 {
		t.Error("no trim job enqueued by the scheduled request")
	}
	audience := func(id string) int {
		t.Helper()
		n, err := activities.AudienceSize(ctx, e.db, id)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	self := func() []string {
		t.Helper()
		return e.list(e.do("GET", "/social/rest/activities/@me/@self", author.token, nil))
	}
	check := func(when string, oldAudience int) {
		t.Helper()
		if got, _, _ := e.homeOf(reader); !slices.Equal(got, []string{fresh}) {
			t.Errorf("%s: the reader's home %v, want only %s: %s is past the edge", when, got, fresh, old)
		}
		if got := self(); !slices.Equal(got, []string{fresh, old}) {
			t.Errorf("%s: the author's page %v, want %s and %s", when, got, fresh, old)
		}
		if r := e.do("GET", "/social/rest/activities/"+author.id+"/@self/@app/"+old, reader.token, nil); r.status != 200 {
			t.Errorf("%s: the old activity by id: %d %s", when, r.status, r.raw)
		}
		if n := audience(old); n != oldAudience {
			t.Errorf("%s: the old activity's audience holds %d, want %d", when, n, oldAudience)
		}
	}
	check("before the trim", 2) // the author and the reader, stored but not shown

	// A follow copies the fresh post alone, and its backfill stops at the edge.
	e.follow(late, author.id)
	e.Settle()
	if got, _, _ := e.homeOf(late); !slices.Equal(got, []string{fresh}) {
		t.Errorf("home of a later follower %v, want only %s", got, fresh)
	}
	if n := audience(fresh); n != 3 {
		t.Errorf("the fresh post's audience holds %d, want 3", n)
	}
	// A late fan-out of the old post writes nothing.
	if res, err := e.svc.Activities.Fanout(ctx, activities.FanoutTask{ActivityID: old}); err != nil || res.Skipped == "" {
		t.Errorf("a fan-out past the edge: %+v, %v; want it skipped", res, err)
	}

	// The trim deletes the old post's chunk and nothing else.
	hold.Store(false)
	n, err := e.svc.Activities.Trim(ctx)
	if err != nil || n != 1 {
		t.Fatalf("trim: %d deleted, %v; want 1", n, err)
	}
	check("after the trim", 0)
	if n := audience(fresh); n != 3 {
		t.Errorf("after the trim the fresh post's audience holds %d, want 3", n)
	}
	if n, err := e.svc.Activities.Trim(ctx); err != nil || n != 0 {
		t.Errorf("a second trim: %d deleted, %v; want none", n, err)
	}
}

// homeOf reads u's home feed: the ids shown, and whether u likes each.
func (e *env) homeOf(u user) (shown []string, liked map[string]bool, names map[string]string) {
	e.t.Helper()
	r := e.do("GET", "/social/rest/activities/@me/@friends?count=50", u.token, nil)
	shown = e.list(r)
	liked, names = map[string]bool{}, map[string]string{}
	for _, it := range r.body["list"].([]any) {
		a := it.(map[string]any)
		liked[a["id"].(string)] = a["likedByViewer"] == true
		names[a["id"].(string)] = a["author"].(map[string]any)["preferredUsername"].(string)
	}
	return shown, liked, names
}
