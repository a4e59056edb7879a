package converge

// The operations on reactions to activities: likes and comments.

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"socialstream/internal/accounts"
	"socialstream/internal/activities"
	"socialstream/internal/comments"
	"socialstream/internal/graph"
	"socialstream/internal/likes"
	"socialstream/internal/store"
)

func (r *runner) like(ctx context.Context, a *actor) (bool, error) {
	return r.setLike(ctx, a, true)
}

func (r *runner) unlike(ctx context.Context, a *actor) (bool, error) {
	return r.setLike(ctx, a, false)
}

func (r *runner) setLike(ctx context.Context, a *actor, on bool) (bool, error) {
	u := a.pick()
	var p *post
	if on {
		p = r.livePost(a, "")
	} else {
		r.m.mu.Lock()
		var liked []*post
		for _, q := range r.m.posts {
			if !q.deleted && r.m.likes[pair{q.id, u.id}] {
				liked = append(liked, q)
			}
		}
		r.m.mu.Unlock()
		if len(liked) > 0 {
			p = liked[a.rng.IntN(len(liked))]
		}
	}
	if p == nil {
		return false, nil
	}
	return true, r.likeAs(ctx, u, p, on)
}

// likeAs makes u like p (or unlike it, with on false).
func (r *runner) likeAs(ctx context.Context, u *user, p *post, on bool) error {
	defer r.lock("like " + p.id + " " + u.id)()
	op, method := "like", http.MethodPost
	if !on {
		op, method = "unlike", http.MethodDelete
	}
	path := "/social/rest/likes/" + p.id
	r.m.mu.Lock()
	before, blockedBefore := r.m.hiddenFrom(u.id, p), r.m.between(u.id, p.author)
	likedBefore := r.m.likes[pair{p.id, u.id}]
	r.m.mu.Unlock()
	rep, out := r.writeIf(ctx, op, method, path, u.token, nil, r.blockedAnswer(u.id, p.author), http.StatusNotFound)
	r.m.mu.Lock()
	after, blockedAfter := r.m.hiddenFrom(u.id, p), r.m.between(u.id, p.author)
	r.m.mu.Unlock()
	switch {
	case out != acked || before == "" || after == "":
	case on:
		r.m.violate(fmt.Sprintf("like of %s by %s, hidden from them (%s; %s), answered %v", p.id, u.name, after, r.stored(ctx, u.id, p.author), rep.body))
	case !(blockedBefore && blockedAfter && likedBefore):
		// An unlike of what is hidden is a 404, but for taking back a
		// like made before a block.
		r.m.violate(fmt.Sprintf("unlike of %s by %s (liked before: %v), hidden from them (%s; %s), answered %v", p.id, u.name, likedBefore, after, r.stored(ctx, u.id, p.author), rep.body))
	}
	key := pair{p.id, u.id}
	r.m.mu.Lock()
	now := r.m.likes[key]
	r.m.mu.Unlock()
	switch out {
	case acked:
		now = on
		// The answer is the activity as u sees it after the change.
		if e := entry(rep); str(e, "id") != p.id || e["likedByViewer"] != on || num(e, "likesCount") < boolCount(on) {
			r.m.violate(fmt.Sprintf("%s %s by %s answered %v", op, p.id, u.name, rep.body))
		}
	case unknown:
		rep, err := r.probe(ctx, op, path, u.token, 200, 404)
		if err != nil {
			return err
		}
		now = false
		items, _ := rep.body["list"].([]any)
		for _, it := range items {
			if m, ok := it.(map[string]any); ok && str(m, "id") == u.id {
				now = true
			}
		}
		if rep.status == 404 && r.live(p) {
			// Gone, or now hidden from u, and its list with it: only
			// the Datastore tells whether the like landed.
			if now, err = r.truth(ctx, func(l *store.Lookup) func() bool {
				return likes.Liked(l, p.id, u.id).Found
			}); err != nil {
				return err
			}
		}
	}
	r.m.done(op, out != acked, time.Now())
	r.m.mu.Lock()
	r.m.likes[key] = now
	r.m.mu.Unlock()
	return nil
}

// stored tells what the Datastore holds now of what hides author's
// activities from reader, for a violation's message: the author's
// standing, and whether reader follows them.
func (r *runner) stored(ctx context.Context, reader, author string) string {
	var limited, suspended, follows bool
	err := r.retry(ctx, func() error {
		l := r.db.Lookup()
		rec, ref := accounts.Read(l, author), graph.Follows(l, reader, author)
		if err := l.Run(ctx); err != nil {
			return err
		}
		a := rec.Account()
		limited, suspended, follows = a.Limited, a.Suspended, ref.Found()
		return nil
	})
	if err != nil {
		return "stored: " + err.Error()
	}
	return fmt.Sprintf("stored: limited %v, suspended %v, followed %v", limited, suspended, follows)
}

// likesStored tells what the Datastore holds of an activity's likes, for
// a violation's message: its likesCount, and each like with whether it is
// withheld, by whom, and what the model knows of them (the model's lock
// held).
func (r *runner) likesStored(ctx context.Context, activity string) string {
	var stored *activities.Reaction
	held := make([]func() (bool, bool), len(r.m.users))
	err := r.retry(ctx, func() error {
		l := r.db.Lookup()
		stored = activities.ReadReaction(l, activity, nil)
		for i, u := range r.m.users {
			held[i] = likes.Held(l, activity, u.id)
		}
		return l.Run(ctx)
	})
	if err != nil {
		return "stored: " + err.Error()
	}
	count, _ := stored.Counts()
	var b strings.Builder
	fmt.Fprintf(&b, "stored: activity found %v, likesCount %d; likes:", stored.Check() == nil, count)
	for i, u := range r.m.users {
		found, withheld := held[i]()
		if !found && !r.m.likes[pair{activity, u.id}] {
			continue
		}
		fmt.Fprintf(&b, " %s (stored %v, withheld %v, model %v, suspended %v, deleted %v)", u.name, found, withheld,
			r.m.likes[pair{activity, u.id}], r.m.suspended[u.id], r.m.deleted(u.id))
	}
	return b.String()
}

func boolCount(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// live reports whether the model has p not deleted.
func (r *runner) live(p *post) bool {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	return !p.deleted
}

func (r *runner) comment(ctx context.Context, a *actor) (bool, error) {
	u := a.pick()
	p := r.livePost(a, "")
	if p == nil {
		return false, nil
	}
	return true, r.commentAs(ctx, u, p)
}

// commentAs makes u comment on p.
func (r *runner) commentAs(ctx context.Context, u *user, p *post) error {
	r.seq.Lock()
	r.n++
	text := fmt.Sprintf("comment %d by %s", r.n, u.name)
	r.seq.Unlock()
	path := "/social/rest/comments/" + p.id
	r.m.mu.Lock()
	before := r.m.hiddenFrom(u.id, p)
	r.m.mu.Unlock()
	rep, out := r.writeIf(ctx, "comment", http.MethodPost, path, u.token, map[string]string{"text": text}, r.blockedAnswer(u.id, p.author), http.StatusNotFound)
	r.m.mu.Lock()
	after := r.m.hiddenFrom(u.id, p)
	r.m.mu.Unlock()
	if out == acked && before != "" && after != "" {
		r.m.violate(fmt.Sprintf("comment on %s by %s, hidden from them (%s; %s), answered %v", p.id, u.name, after, r.stored(ctx, u.id, p.author), rep.body))
	}
	id := ""
	if out == acked {
		id = str(entry(rep), "id")
	}
	if out == unknown {
		items, err := r.c.list(ctx, path, u.token)
		switch {
		case err != nil && strings.Contains(err.Error(), ": 404 ") && r.live(p):
			// The activity is gone, or now hidden from u (its author
			// suspended, say), and its list with it: whether the comment
			// landed, only the Datastore tells.
			err = r.retry(ctx, func() error {
				return comments.Each(ctx, r.db, u.id, func(v comments.View) error {
					if v.ActivityID == p.id && v.Text == text {
						id = v.ID
					}
					return nil
				})
			})
			if err != nil {
				return err
			}
		case err != nil && !strings.Contains(err.Error(), ": 404 "):
			return err
		}
		for _, it := range items {
			if str(it, "text") == text {
				id = str(it, "id")
			}
		}
	}
	r.m.done("comment", out != acked, time.Now())
	if id != "" {
		r.m.mu.Lock()
		r.m.comments = append(r.m.comments, &comment{id: id, activity: p.id, author: u.id})
		r.m.mu.Unlock()
	}
	return nil
}

func (r *runner) deleteComment(ctx context.Context, a *actor) (bool, error) {
	u := a.pick()
	r.m.mu.Lock()
	var mine []*comment
	for _, c := range r.m.comments {
		if p := r.m.postByID[c.activity]; !c.deleted && !p.deleted && (c.author == u.id || p.author == u.id) {
			mine = append(mine, c)
		}
	}
	r.m.mu.Unlock()
	if len(mine) == 0 {
		return false, nil
	}
	c := mine[a.rng.IntN(len(mine))]
	defer r.lock("comment " + c.id)()
	path := "/social/rest/comments/" + c.activity + "/" + c.id
	_, out := r.write(ctx, "delete comment", http.MethodDelete, path, u.token, nil, http.StatusNotFound)
	// A delete is idempotent (one of what is gone is a 404): one whose
	// answer was lost is sent again until one answers, as a client would.
	for try := 0; out == unknown && try < 10 && ctx.Err() == nil; try++ {
		_, out = r.write(ctx, "delete comment", http.MethodDelete, path, u.token, nil, http.StatusNotFound)
	}
	gone := out != unknown
	if out == unknown {
		// Only the Datastore tells: the activity's list is a 404 to
		// someone it is now hidden from, comment or no comment.
		gone = true
		err := r.retry(ctx, func() error {
			return comments.Each(ctx, r.db, c.author, func(v comments.View) error {
				if v.ID == c.id {
					gone = false
				}
				return nil
			})
		})
		if err != nil {
			return true, err
		}
	}
	r.m.done("delete comment", out != acked, time.Now())
	if gone {
		r.m.mu.Lock()
		c.deleted = true
		r.m.mu.Unlock()
	}
	return true, nil
}
