package wired_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"

	"socialstream/internal/accounts"
	"socialstream/internal/activities"
	"socialstream/internal/app"
	"socialstream/internal/app/apptest"
	"socialstream/internal/graph"
	"socialstream/internal/ids"
	"socialstream/internal/store"
)

// The posts of an author whose followers fill many chunks reach most
// followers through fan-out jobs, which may run well after the post. Such a job copies the post to the
// followers of the moment it was made: not to one who followed after it
// (asking for no copies), but to one who unfollowed after it keeping their
// copies. Both were violations the convergence checker found once follows
// spread over many chunks; here the jobs run by hand, after the changes.
func TestLateFanoutCopiesToFollowersOfThePost(t *testing.T) {
	ctx := context.Background()
	db, acc, svc := recorded(t, &recorder{}) // no job runs by itself
	user := func(name string) string { return register(t, acc, name) }
	star, stays, leaves, late := user("star"), user("stays"), user("leaves"), user("late")
	fillFirstChunk(t, svc, star)
	none := 0
	for _, f := range []string{stays, leaves} {
		if _, err := svc.Graph.Follow(ctx, f, star, &none); err != nil {
			t.Fatal(err)
		}
	}
	v, _, err := svc.Activities.Post(ctx, star, activities.PostInput{Title: "to the followers of now"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Graph.Follow(ctx, late, star, &none); err != nil {
		t.Fatal(err)
	}
	if err := svc.Graph.Unfollow(ctx, leaves, star, true); err != nil {
		t.Fatal(err)
	}
	var a activities.Activity
	if _, err := db.Get(ctx, activities.Key(db, v.ID), &a); err != nil {
		t.Fatal(err)
	}
	if a.Chunks < 2 {
		t.Fatalf("the post has %d chunks; want the follows past the first", a.Chunks)
	}
	for n := 1; n < a.Chunks; n++ {
		if _, err := svc.Activities.Fanout(ctx, activities.FanoutTask{ActivityID: v.ID, Chunk: n}); err != nil {
			t.Fatal(err)
		}
	}
	for who, want := range map[string]bool{stays: true, leaves: true, late: false} {
		list, _, err := svc.Activities.Feed(ctx, activities.FeedRequest{Viewer: who, Selector: activities.Friends, UserID: who, Page: store.PageRequest{Count: 10}})
		if err != nil {
			t.Fatal(err)
		}
		has := slices.ContainsFunc(list, func(x activities.View) bool { return x.ID == v.ID })
		if has != want {
			t.Errorf("home of %s has the post: %v, want %v", map[string]string{stays: "stays", leaves: "leaves", late: "late"}[who], has, want)
		}
	}
}

// A follow that begins while a post is committing may run its own job
// before the post lands, so the post's fan-out must copy the post to it:
// the fan-out goes by when the post committed, not when it began. (The
// checker found a post lost this way when fan-out went by the latter.)
// Here the follow runs while the post's commit is held.
func TestFanoutCoversFollowsDuringTheCommit(t *testing.T) {
	ctx := context.Background()
	db, acc, svc, hold := held(t)
	star, _, err := acc.Register(ctx, "star", "password1", "")
	if err != nil {
		t.Fatal(err)
	}
	fan, _, err := acc.Register(ctx, "fan", "password1", "")
	if err != nil {
		t.Fatal(err)
	}
	fillFirstChunk(t, svc, star.ID)
	// The follow runs up to its own commit while the post's is held; it
	// commits once the post's locks are released.
	var followed error
	done := make(chan struct{})
	hold("/Commit", func() {
		reached := make(chan struct{})
		hold("/Commit", func() { close(reached) })
		go func() {
			defer close(done)
			none := 0
			_, followed = svc.Graph.Follow(ctx, fan.ID, star.ID, &none)
		}()
		<-reached
	})
	v, _, err := svc.Activities.Post(ctx, star.ID, activities.PostInput{Title: "landing late"})
	<-done
	if err != nil || followed != nil {
		t.Fatalf("post %v, follow during its commit %v", err, followed)
	}
	var a activities.Activity
	if _, err := db.Get(ctx, activities.Key(db, v.ID), &a); err != nil {
		t.Fatal(err)
	}
	if f, ok, err := svc.Graph.Get(ctx, fan.ID, star.ID); err != nil || !ok || f.Created.UnixMicro() <= a.PostedTime*1000 || f.Created.UnixMicro() >= a.Committed {
		t.Fatalf("the follow (%v %v) began at %d, not between the post's start %d and its commit stamp %d", ok, err, f.Created.UnixMicro(), a.PostedTime*1000, a.Committed)
	}
	for n := 1; n < a.Chunks; n++ {
		if _, err := svc.Activities.Fanout(ctx, activities.FanoutTask{ActivityID: v.ID, Chunk: n}); err != nil {
			t.Fatal(err)
		}
	}
	list, _, err := svc.Activities.Feed(ctx, activities.FeedRequest{Viewer: fan.ID, Selector: activities.Friends, UserID: fan.ID, Page: store.PageRequest{Count: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(list, func(x activities.View) bool { return x.ID == v.ID }) {
		t.Errorf("the fan-out left out a follow made while the post committed")
	}
}

// held builds the services, with no job running by itself, on a Datastore
// client that, once hold is given a gRPC method's suffix and a function,
// runs the function (once) just before the next call of that method. A
// function may hold the next step.
func held(t *testing.T) (*store.DB, *accounts.Service, *app.Services, func(method string, f func())) {
	t.Helper()
	var mu sync.Mutex
	hooks := map[string]func(){}
	db := intercepted(t, func(ctx context.Context, m string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		name := m[strings.LastIndex(m, "/"):]
		mu.Lock()
		f := hooks[name]
		delete(hooks, name)
		mu.Unlock()
		if f != nil {
			f()
		}
		return invoker(ctx, m, req, reply, cc, opts...)
	})
	gen := ids.New()
	acc := apptest.Accounts(t, db, gen)
	return db, acc, apptest.Services(t, db, gen, acc, &recorder{}), func(method string, f func()) {
		mu.Lock()
		hooks[method] = f
		mu.Unlock()
	}
}

// fillFirstChunk gives user a full first follower chunk and a second one
// begun (by import, of followers who are ids alone), so that their posts
// have fan-out jobs and their next follows go to the second chunk, which
// the posts reach by those jobs.
func fillFirstChunk(t *testing.T, svc *app.Services, user string) {
	t.Helper()
	filler := make([]string, graph.ChunkCap+1)
	for i := range filler {
		filler[i] = fmt.Sprint(7_000_000_000 + i)
	}
	if err := svc.Graph.ImportFollowers(context.Background(), user, filler); err != nil {
		t.Fatal(err)
	}
}
