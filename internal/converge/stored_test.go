package converge

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// A violation of a likes count says what the Datastore holds: the
// activity's count, and each like with what the model knows of it.
func TestLikesStored(t *testing.T) {
	ctx, r, _ := faultlessRunner(t)
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
