package converge

import (
	"context"

	"socialstream/internal/activities"
)

// Celebrities: with CELEBRITY_FOLLOWERS set, a person whose followers
// reach it becomes a celebrity at their next post, by a job; their posts
// from then on (but replies to others and reposts) are merged into their
// followers' homes as they are read, copied to no one. When the mark
// lands is the job's, so the oracle reads which posts are a celebrity's
// from the Datastore (no answer tells it), and holds each in a home
// exactly while its reader follows the author, whatever the copy window:
// a follow shows them all at once, an unfollow (keeping history or not)
// takes them all away.

// celebrityPosts reads which of posts are celebrities'.
func (r *runner) celebrityPosts(ctx context.Context, posts []*post) (map[string]bool, error) {
	out := map[string]bool{}
	const batch = 500
	for start := 0; start < len(posts); start += batch {
		ps := posts[start:min(start+batch, len(posts))]
		is := make([]func() bool, len(ps))
		err := r.retry(ctx, func() error {
			l := r.db.Lookup()
			for i, p := range ps {
				is[i] = activities.ReadCelebrityPost(l, p.id)
			}
			return l.Run(ctx)
		})
		if err != nil {
			return nil, err
		}
		for i, p := range ps {
			if is[i]() {
				out[p.id] = true
			}
		}
	}
	return out, nil
}

// celebrityPresence is where a celebrity's post is in reader's home by
// their follow of its author: in while they follow.
func celebrityPresence(evs []event) presence {
	if len(evs) > 0 && evs[len(evs)-1].add {
		return mayIn
	}
	return mayOut
}
