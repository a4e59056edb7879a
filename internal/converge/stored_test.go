package converge

import (
	"context"
	"io"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"socialstream/internal/testenv"
)

// A violation of a likes count says what the Datastore holds: the
// activity's count, and each like with what the model knows of it.
func TestLikesStored(t *testing.T) {
	index, err := testenv.RepoFile("index.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Defaults()
	cfg.Dir = filepath.Dir(index)
	cfg.Datastore = testenv.EmulatorHost(t)
	cfg.TaskFaults, cfg.EnqueueFaults, cfg.DatastoreFaults, cfg.CommitFaults, cfg.SlowCommits = 0, 0, 0, 0, 0
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := startStack(ctx, cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer st.close()
	r, err := newRunner(ctx, cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	a := &actor{rng: rand.New(rand.NewPCG(1, 2))}
	for range 2 {
		if err := r.register(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	author, liker := a.users[0], a.users[1]
	if err := r.postAs(ctx, a.rng, author); err != nil {
		t.Fatal(err)
	}
	p := r.m.posts[len(r.m.posts)-1]
	if err := r.likeAs(ctx, liker, p, true); err != nil {
		t.Fatal(err)
	}
	r.m.mu.Lock()
	got := r.likesStored(ctx, p.id)
	r.m.mu.Unlock()
	for _, want := range []string{"activity found true, likesCount 1", liker.name + " (stored true, withheld false, model true, suspended false, deleted false)"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in %q", want, got)
		}
	}
	if strings.Contains(got, author.name+" (") {
		t.Errorf("the author, who liked nothing, in %q", got)
	}
}
