package converge

// The operations on activities: posts with mentions and tags, edits,
// deletes, reposts, followed tags and read markers.

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"math/rand/v2"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"
)

func (r *runner) livePost(a *actor, author string) *post {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	var live []*post
	for _, p := range r.m.posts {
		if !p.deleted && (author == "" || p.author == author) {
			live = append(live, p)
		}
	}
	if len(live) == 0 {
		return nil
	}
	return live[a.rng.IntN(len(live))]
}

func (r *runner) post(ctx context.Context, a *actor) (bool, error) {
	return true, r.postAs(ctx, a.rng, a.pick())
}

// postAs posts as u, mentioning up to two users, half the time with an
// externalId.
func (r *runner) postAs(ctx context.Context, rng *rand.Rand, u *user) error {
	r.seq.Lock()
	r.n++
	n := r.n
	r.seq.Unlock()
	title, mentions, tagged := r.postText(rng, u, n)
	link, cardTitle := r.someLink(rng)
	if link != "" {
		title += " " + link
	}
	body := map[string]any{"title": title}
	visibility := someVisibility(rng)
	if visibility != "public" || rng.IntN(2) == 0 {
		body["visibility"] = visibility
	}
	if rng.IntN(2) == 0 {
		body["externalId"] = fmt.Sprintf("ext-%d", n)
	}
	// A fifth answer a post anyone may read, or one of their own.
	parent := r.replyTarget(rng, u)
	if parent != nil {
		body["inReplyTo"] = parent.id
	}
	// One in six is behind a content warning.
	warning := ""
	if rng.IntN(6) == 0 {
		warning = fmt.Sprintf("warning of post %d", n)
		body["spoilerText"] = warning
	}
	// One in five carries a picture or two.
	var pics, alts []string
	if rng.IntN(5) == 0 {
		for k := 1 + rng.IntN(2); k > 0; k-- {
			alt := fmt.Sprintf("picture %d of post %d", k, n)
			upload := r.upload
			if rng.IntN(3) == 0 {
				upload = r.uploadLater // as a Mastodon app, made safe by its job
			}
			if id, err := upload(ctx, u, alt); err != nil {
				return err
			} else if id != "" {
				pics, alts = append(pics, id), append(alts, alt)
			}
		}
		if len(pics) > 0 {
			body["mediaItems"] = pics
		}
	}
	poll, multiple := somePoll(rng, body, len(pics) > 0)
	start := time.Now()
	var hiddenBefore string
	if parent != nil {
		r.m.mu.Lock()
		hiddenBefore = r.m.hiddenFrom(u.id, parent)
		r.m.mu.Unlock()
	}
	// A reply to what is gone, or hidden from u, since: a 404.
	rep, out := r.writeIf(ctx, "post", http.MethodPost, "/social/rest/activities/@me/@self", u.token, body,
		func(status int) bool { return parent != nil && status == http.StatusNotFound })
	if parent != nil && out == acked {
		r.checkReply(u, parent, hiddenBefore, rep)
	}
	id := ""
	var made []string // the mentions the post made
	if out == acked {
		id = str(entry(rep), "id")
		made = r.checkMentions(title, u.id, entry(rep), mentions)
		r.checkPictures("post", id, entry(rep), pics, alts)
	}
	if out == unknown {
		// It is the newest of the author's own, if it happened.
		rep, err := r.probe(ctx, "post", "/social/rest/activities/@me/@self?count=5", u.token, 200)
		if err != nil {
			return err
		}
		items, _ := rep.body["list"].([]any)
		for _, it := range items {
			if m, ok := it.(map[string]any); ok && str(m, "title") == title {
				id = str(m, "id")
				made = r.checkMentions(title, u.id, m, mentions)
				r.checkPictures("post", id, m, pics, alts)
			}
		}
	}
	end := time.Now()
	r.m.done("post", out != acked, end)
	if id != "" {
		p := &post{id: id, author: u.id, title: title, mentions: made, tags: tagged, start: start, end: end, seqTime: seqTime(id), visibility: visibility,
			warning: warning, pictures: pics, alts: alts, poll: poll, multiple: multiple, link: link, cardTitle: cardTitle}
		p.conversation = conversationOf(visibility, u.id, made)
		if parent != nil {
			p.inReplyTo, p.answers = parent.id, parent.author
			p.ancestors = append([]string{parent.id}, parent.ancestors...)
			p.ancestors = p.ancestors[:min(len(p.ancestors), keptAncestors)]
		}
		r.record(p)
	}
	return nil
}

// postText is the title of post n by u: mentions of up to two people, a
// third of the time a tag or two, in whatever case, and a third of the
// time a rare tag.
func (r *runner) postText(rng *rand.Rand, u *user, n int) (title string, mentions, tagged []string) {
	title = fmt.Sprintf("post %d by %s", n, u.name)
	for k := rng.IntN(3); k > 0; k-- {
		m := r.someUser(rng)
		if !strings.Contains(title, "@"+m.name+" ") {
			title += " @" + m.name + " "
			mentions = append(mentions, m.id)
		}
	}
	if rng.IntN(3) == 0 {
		for k := 1 + rng.IntN(2); k > 0; k-- {
			t := tagNames[rng.IntN(len(tagNames))]
			if !slices.Contains(tagged, t) {
				tagged = append(tagged, t)
			}
		}
	}
	if n%3 == 1 {
		// A rare tag besides, that few of one person's posts share: what
		// trends counts of them turns on each post (trends.go).
		tagged = append(tagged, fmt.Sprintf("rare%d", n%7))
	}
	return strings.TrimSpace(title) + tagText(rng, tagged), mentions, tagged
}

// someVisibility is a post's: six in ten public, one unlisted, two for
// followers, one for the mentioned.
func someVisibility(rng *rand.Rand) string {
	switch k := rng.IntN(10); {
	case k == 9:
		return "mentioned"
	case k >= 7:
		return "followers"
	case k == 6:
		return "unlisted"
	}
	return "public"
}

// checkReply checks the answer of u's reply to parent: it answers parent,
// and parent was not hidden from u throughout (hiddenBefore: as it was
// before the request).
func (r *runner) checkReply(u *user, parent *post, hiddenBefore string, rep reply) {
	r.m.mu.Lock()
	after := r.m.hiddenFrom(u.id, parent)
	r.m.mu.Unlock()
	if hiddenBefore != "" && after != "" {
		r.m.violate(fmt.Sprintf("a reply of %s to %s, hidden from them (%s), answered %v", u.name, parent.id, after, rep.body))
	}
	if str(entry(rep), "inReplyTo") != parent.id {
		r.m.violate(fmt.Sprintf("a reply of %s to %s answered %v", u.name, parent.id, rep.body))
	}
}

// record adds an acknowledged post to the model.
func (r *runner) record(p *post) {
	r.m.mu.Lock()
	if r.m.postByID[p.id] != nil {
		r.m.mu.Unlock()
		r.m.violate(fmt.Sprintf("post %q answered the id of another post, %s", p.title, p.id))
		return
	}
	r.m.posts = append(r.m.posts, p)
	r.m.postByID[p.id] = p
	r.m.mu.Unlock()
}

// keptAncestors is how many of the posts above it a reply keeps (the
// service's KeptAncestors), and maxAncestors how many of them its
// context shows (MaxAncestors).
const (
	keptAncestors = 500
	maxAncestors  = 40
)

// replyTarget picks, a fifth of the time, a post for u to answer: one
// anyone may read, or one of u's own; nil otherwise.
func (r *runner) replyTarget(rng *rand.Rand, u *user) *post {
	if rng.IntN(5) != 0 {
		return nil
	}
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	var some []*post
	for _, p := range r.m.posts {
		if !p.deleted && p.repostOf == "" && (p.open() || p.author == u.id) {
			some = append(some, p)
		}
	}
	if len(some) == 0 {
		return nil
	}
	return some[rng.IntN(len(some))]
}

// tinyPNG is the picture the mix uploads: a 2 × 2 PNG.
var tinyPNG = func() []byte {
	var buf bytes.Buffer
	img := image.NewNRGBA(image.Rect(0, 0, 2, 2))
	for i := range img.Pix {
		img.Pix[i] = byte(40 * i)
	}
	if err := png.Encode(&buf, img); err != nil {
		panic(err)
	}
	return buf.Bytes()
}()

// upload uploads a picture as u and returns its id, or "" if it was not
// known to be stored (a loose upload is collected a day later).
func (r *runner) upload(ctx context.Context, u *user, alt string) (string, error) {
	rep, err := r.c.upload(ctx, u.token, tinyPNG, alt)
	ok := err == nil && rep.status == http.StatusCreated
	switch {
	case err != nil, rep.status == http.StatusServiceUnavailable:
	case !ok && rep.status != http.StatusUnauthorized && rep.status != http.StatusForbidden:
		r.m.violate(fmt.Sprintf("upload: answered %d %v", rep.status, rep.body))
	}
	r.m.done("upload", !ok, time.Now())
	if !ok {
		return "", nil
	}
	e := entry(rep)
	if str(e, "description") != alt || num(e, "width") != 2 || str(e, "mimeType") != "image/png" {
		r.m.violate(fmt.Sprintf("upload: answered %v", e))
	}
	return str(e, "id"), nil
}

// checkPictures checks the pictures an activity v shows: those posted, in
// order, with their alt texts.
func (r *runner) checkPictures(op, id string, v map[string]any, pics, alts []string) {
	items, _ := v["mediaItems"].([]any)
	var got, gotAlts []string
	for _, it := range items {
		m, _ := it.(map[string]any)
		got, gotAlts = append(got, str(m, "id")), append(gotAlts, str(m, "description"))
	}
	if !slices.Equal(got, pics) || !slices.Equal(gotAlts, alts) {
		r.m.violate(fmt.Sprintf("%s: activity %s shows pictures %v %q, want %v %q", op, id, got, gotAlts, pics, alts))
	}
}

// checkMentions returns the mentions activity v made, and checks them
// against those its title asked for: a mention may only be dropped for
// someone whose account is gone or who had a block with the author.
func (r *runner) checkMentions(title, author string, v map[string]any, asked []string) []string {
	got, _ := v["mentions"].([]any)
	made := make([]string, 0, len(got))
	for _, g := range got {
		made = append(made, fmt.Sprint(g))
	}
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	for _, m := range made {
		if !slices.Contains(asked, m) {
			r.m.violations = append(r.m.violations, fmt.Sprintf("post %q: mentions %s, which it did not name", title, m))
		}
	}
	for _, m := range asked {
		if !slices.Contains(made, m) && !r.m.gone(m) && !r.m.blockedOnce(author, m) {
			r.m.violations = append(r.m.violations, fmt.Sprintf("post %q: dropped the mention of %s", title, m))
		}
	}
	return made
}

// takenDown tolerates the 404 of an edit of p while a moderator removes
// it, or after.
func (r *runner) takenDown(p *post) func(int) bool {
	return func(status int) bool {
		r.m.mu.Lock()
		defer r.m.mu.Unlock()
		return status == http.StatusNotFound && (p.removed || p.removing)
	}
}

// goneAnswer tolerates the refusals an operation naming id may get while
// id's account is being deleted.
func (r *runner) goneAnswer(id string) func(int) bool {
	return func(status int) bool {
		r.m.mu.Lock()
		defer r.m.mu.Unlock()
		return r.m.gone(id) && (status == 401 || status == 403 || status == 404 || status == 409)
	}
}

// hiddenAnswer is goneAnswer for a write that names a person: one
// suspended (or perhaps, with a suspension or lift under way) is not there
// to follow, block or mute either (404).
func (r *runner) hiddenAnswer(id string) func(int) bool {
	gone := r.goneAnswer(id)
	return func(status int) bool {
		r.m.mu.Lock()
		suspended := r.m.mayBeSuspended(id)
		r.m.mu.Unlock()
		return gone(status) || suspended && status == 404
	}
}

// hiddenFromAnswer is hiddenAnswer for a write of from's that names the
// person id, to whom a block either way (now, or one under way or just
// ended) hides them too: an invitation (404).
func (r *runner) hiddenFromAnswer(from, id string) func(int) bool {
	hidden := r.hiddenAnswer(id)
	return func(status int) bool {
		r.m.mu.Lock()
		blocked := r.m.blockedOnce(from, id)
		r.m.mu.Unlock()
		return hidden(status) || blocked && status == 404
	}
}

// editPost edits one of a user's posts, by REST or JSON-RPC in turn: a new
// title naming up to two people, so that its mentions change.
func (r *runner) editPost(ctx context.Context, a *actor) (bool, error) {
	u := a.pick()
	p := r.livePost(a, u.id)
	if p == nil || p.repostOf != "" {
		return false, nil // a repost has no text to edit
	}
	// Not while a moderator removes it, nor after: its probe reads it by
	// id, a 404 once removed.
	defer r.lock("moderate " + p.id)()
	r.m.mu.Lock()
	removed := p.removed
	r.m.mu.Unlock()
	if removed {
		return false, nil
	}
	r.seq.Lock()
	r.n++
	n := r.n
	r.seq.Unlock()
	title := fmt.Sprintf("edit %d by %s", n, u.name)
	var mentions []string
	for k := a.rng.IntN(3); k > 0; k-- {
		m := r.someUser(a.rng)
		if !strings.Contains(title, "@"+m.name+" ") {
			title += " @" + m.name + " "
			mentions = append(mentions, m.id)
		}
	}
	// An edit keeps the post's tags (the tag jobs of edits are tested on
	// their own): the oracle's tag history of a post is its posting's.
	r.m.mu.Lock()
	tagged := p.tags
	r.m.mu.Unlock()
	title = strings.TrimSpace(title) + tagText(a.rng, tagged)
	path := "/social/rest/activities/@me/@self/@app/" + p.id
	var rep reply
	var out outcome
	if r.turns.Add(1)%2 == 0 {
		rep, out = r.writeIf(ctx, "edit", viaRPC, "activities.update", u.token,
			map[string]any{"activityId": p.id, "activity": map[string]string{"title": title}}, r.takenDown(p), http.StatusConflict)
		rep.body = map[string]any{"entry": rep.body}
	} else {
		rep, out = r.writeIf(ctx, "edit", http.MethodPut, path, u.token, map[string]string{"title": title}, r.takenDown(p), http.StatusConflict)
	}
	var made []string
	applied := out == acked
	if applied {
		made = r.checkMentions(title, u.id, entry(rep), mentions)
	}
	if out == unknown {
		rep, err := r.probe(ctx, "edit", "/social/rest/activities/@me/@self/@app/"+p.id, u.token, 200)
		if err != nil {
			return true, err
		}
		if items, _ := rep.body["list"].([]any); len(items) == 1 {
			if m, ok := items[0].(map[string]any); ok && str(m, "title") == title {
				applied = true
				made = r.checkMentions(title, u.id, m, mentions)
			}
		}
	}
	r.m.done("edit", out != acked, time.Now())
	if applied {
		r.m.mu.Lock()
		p.title, p.mentions, p.edited = title, made, true
		p.link, p.cardTitle = "", "" // an edit's text links nothing
		r.m.mu.Unlock()
	}
	return true, nil
}

func (r *runner) deletePost(ctx context.Context, a *actor) (bool, error) {
	u := a.pick()
	p := r.livePost(a, u.id)
	if p == nil {
		return false, nil
	}
	// Not while a moderator removes it, nor after: a removed post is a
	// 404 by id, and the probe below could not tell it from a deleted
	// one. So is a repost of what moderation, or a block, hides from its
	// reposter.
	defer r.lock("moderate " + p.id)()
	if p.repostOf != "" {
		defer r.lock("standing " + p.sharedAuthor)()
		defer r.lock("moderate " + p.repostOf)()
	}
	r.m.mu.Lock()
	hidden := p.removed || p.repostOf != "" && (r.m.hidden(p) || r.m.suspended[p.sharedAuthor] || r.m.between(u.id, p.sharedAuthor) ||
		r.m.limited[p.sharedAuthor] && p.sharedAuthor != u.id && !r.m.following[pair{u.id, p.sharedAuthor}])
	r.m.mu.Unlock()
	if hidden {
		return false, nil
	}
	path := "/social/rest/activities/@me/@self/@app/" + p.id
	_, out := r.write(ctx, "delete", http.MethodDelete, path, u.token, nil, http.StatusNotFound)
	gone := out != unknown // 204, or a 404 after an attempt that did delete
	if out == unknown {
		rep, err := r.probe(ctx, "delete", path, u.token, 200, 404)
		if err != nil {
			return true, err
		}
		gone = rep.status == 404
	}
	r.m.done("delete", out != acked, time.Now())
	if gone {
		r.m.mu.Lock()
		r.m.drop(p, fmt.Sprintf("delete %s", out))
		r.m.mu.Unlock()
	}
	return true, nil
}

// repost makes one of a's users repost a live post (a repost shares the
// post it shares), or undo one of theirs, by REST: a new repost is a post
// of theirs, an undone one is deleted with it; reposting again must
// answer the first repost.
func (r *runner) repost(ctx context.Context, a *actor) (bool, error) {
	u := a.pick()
	r.m.mu.Lock()
	var mine []*post
	for k, p := range r.m.reposts {
		if k.b == u.id && !p.deleted {
			mine = append(mine, p)
		}
	}
	sort.Slice(mine, func(i, j int) bool { return mine[i].id < mine[j].id })
	r.m.mu.Unlock()
	if len(mine) > 0 && (r.wants("unrepost") || a.rng.IntN(3) == 0) {
		return true, r.unrepost(ctx, u, mine[a.rng.IntN(len(mine))])
	}
	p := r.livePost(a, "")
	if p == nil {
		return false, nil
	}
	return true, r.repostAs(ctx, u, p)
}

// repostAs makes u repost p (what p shares, if p is a repost).
func (r *runner) repostAs(ctx context.Context, u *user, p *post) error {
	orig, sharer := p.id, p.author
	if p.repostOf != "" {
		orig, sharer = p.repostOf, p.sharedAuthor
	}
	defer r.lock("repost " + orig + " " + u.id)()
	// No moderator hides what it shares between the repost and a probe of
	// it (a probe reads one's own page, which would not show it).
	defer r.rlock("standing " + sharer)()
	defer r.rlock("moderate " + orig)()
	start := time.Now()
	path := "/social/rest/reposts/" + p.id
	// Only a public or unlisted post can be reposted: another is a 403
	// (or, to someone who may not see it, a 404); the repost takes its
	// visibility.
	r.m.mu.Lock()
	shared := r.m.postByID[orig]
	public := shared != nil && shared.open()
	visibility := "public"
	if shared != nil {
		visibility = shared.visibility
	}
	r.m.mu.Unlock()
	blocked := r.blockedAnswer(u.id, sharer)
	rep, out := r.writeIf(ctx, "repost", http.MethodPost, path, u.token, nil,
		func(status int) bool { return status == http.StatusForbidden && !public || blocked(status) }, http.StatusNotFound)
	id := ""
	switch out {
	case acked:
		e := entry(rep)
		id = str(e, "id")
		if o, _ := e["repostOf"].(map[string]any); o == nil || str(o, "id") != orig || o["repostedByViewer"] != true || num(o, "repostsCount") < 1 {
			r.m.violate(fmt.Sprintf("repost of %s by %s answered %v", p.id, u.name, rep.body))
		}
	case unknown:
		// It is among the reposter's own, if it happened.
		pr, err := r.probe(ctx, "repost", "/social/rest/activities/@me/@self?count=20", u.token, 200)
		if err != nil {
			return err
		}
		items, _ := pr.body["list"].([]any)
		for _, it := range items {
			if m, ok := it.(map[string]any); ok {
				if o, _ := m["repostOf"].(map[string]any); o != nil && str(o, "id") == orig {
					id = str(m, "id")
				}
			}
		}
	}
	end := time.Now()
	r.m.done("repost", out != acked, end)
	if id == "" {
		return nil
	}
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	k := pair{orig, u.id}
	if had := r.m.reposts[k]; had != nil && !had.deleted {
		if had.id != id {
			r.m.violations = append(r.m.violations, fmt.Sprintf("repost of %s by %s answered %s, not the first repost %s", orig, u.name, id, had.id))
		}
		return nil
	}
	q := &post{id: id, author: u.id, repostOf: orig, sharedAuthor: sharer, start: start, end: end, seqTime: seqTime(id), visibility: visibility}
	if r.m.postByID[id] != nil {
		r.m.violations = append(r.m.violations, fmt.Sprintf("repost of %s by %s answered the id of another post, %s", orig, u.name, id))
		return nil
	}
	r.m.posts = append(r.m.posts, q)
	r.m.postByID[id] = q
	r.m.reposts[k] = q
	if o := r.m.postByID[orig]; o == nil || o.deleted {
		r.m.drop(q, "reposted after its post went") // its post went meanwhile: so does the repost
	}
	return nil
}

// unrepost undoes u's repost q: the answer is the post it shared.
func (r *runner) unrepost(ctx context.Context, u *user, q *post) error {
	defer r.lock("repost " + q.repostOf + " " + u.id)()
	rep, out := r.write(ctx, "unrepost", http.MethodDelete, "/social/rest/reposts/"+q.repostOf, u.token, nil, http.StatusNotFound)
	// An unrepost is idempotent: one whose answer was lost is sent again
	// until one answers, as a client would. A probe of the repost cannot
	// always tell: a repost of what is now hidden from its reposter is a
	// 404 to them while it is still there.
	for try := 0; out == unknown && try < 10 && ctx.Err() == nil; try++ {
		rep, out = r.write(ctx, "unrepost", http.MethodDelete, "/social/rest/reposts/"+q.repostOf, u.token, nil, http.StatusNotFound)
	}
	gone := out != unknown
	if out == acked {
		if e := entry(rep); str(e, "id") != q.repostOf || e["repostedByViewer"] != false {
			r.m.violate(fmt.Sprintf("unrepost of %s by %s answered %v", q.repostOf, u.name, rep.body))
		}
	}
	if out == unknown {
		pr, err := r.probe(ctx, "unrepost", "/social/rest/activities/@me/@self/@app/"+q.id, u.token, 200, 404)
		if err != nil {
			return err
		}
		gone = pr.status == 404
	}
	r.m.done("unrepost", out != acked, time.Now())
	if gone {
		r.m.mu.Lock()
		r.m.drop(q, fmt.Sprintf("unrepost %s", out))
		r.m.mu.Unlock()
	}
	return nil
}

// tagText writes tags as a title's tail, each in a case of its own.
func tagText(rng *rand.Rand, tags []string) string {
	var b strings.Builder
	for _, t := range tags {
		switch rng.IntN(3) {
		case 0:
			t = strings.ToUpper(t)
		case 1:
			t = strings.ToUpper(t[:1]) + t[1:]
		}
		b.WriteString(" #" + t)
	}
	return b.String()
}

// followTag makes one of a's users follow a tag, or unfollow one they
// follow, by REST: from the follow on, the tag's new posts come to their
// home feed; an unfollow stops what comes next.
func (r *runner) followTag(ctx context.Context, a *actor) (bool, error) {
	u := a.pick()
	tag := tagNames[a.rng.IntN(len(tagNames))]
	k := pair{u.id, tag}
	r.m.mu.Lock()
	on := !r.m.tagFollowing[k]
	r.m.mu.Unlock()
	op := "follow tag"
	start := time.Now()
	var out outcome
	if on {
		name := tag
		if a.rng.IntN(2) == 0 {
			name = "#" + strings.ToUpper(tag)
		}
		_, out = r.write(ctx, op, http.MethodPost, "/social/rest/tags/@me", u.token, map[string]string{"name": name})
	} else {
		op = "unfollow tag"
		_, out = r.write(ctx, op, http.MethodDelete, "/social/rest/tags/@me/"+tag, u.token, nil)
	}
	now := on == (out == acked) // refused: as it was
	if out == unknown {
		rep, err := r.probe(ctx, op, "/social/rest/tags/@me/"+tag, u.token, 200)
		if err != nil {
			return true, err
		}
		now = entry(rep)["following"] == true
	}
	end := time.Now()
	r.m.done(op, out != acked, end)
	r.m.mu.Lock()
	if now != r.m.tagFollowing[k] {
		r.m.tagFollows[k] = append(r.m.tagFollows[k], event{add: now, start: start, end: end})
	}
	r.m.tagFollowing[k] = now
	r.m.mu.Unlock()
	return true, nil
}

// mark moves one of a's users' home marker to some post, by REST: the
// answer must be the newer of that post and the marker as it was.
func (r *runner) mark(ctx context.Context, a *actor) (bool, error) {
	u := a.pick()
	p := r.livePost(a, "")
	if p == nil {
		return false, nil
	}
	r.m.mu.Lock()
	was := r.m.marks[u.id]
	r.m.mu.Unlock()
	want := p.id
	if was != "" && newerOrSame(was, p.id) {
		want = was
	}
	rep, out := r.write(ctx, "mark", http.MethodPost, "/social/rest/markers/@me", u.token, map[string]any{"home": map[string]string{"lastReadId": p.id}})
	if out == unknown {
		var err error
		if rep, err = r.probe(ctx, "mark", "/social/rest/markers/@me?feeds=home", u.token, 200); err != nil {
			return true, err
		}
	}
	r.m.done("mark", out != acked, time.Now())
	home, _ := entry(rep)["home"].(map[string]any)
	got := str(home, "lastReadId")
	switch {
	case out == acked && got != want, out == unknown && got != want && got != was:
		r.m.violate(fmt.Sprintf("mark: %s's home marker moved from %q to %s answered %q, want %q", u.name, was, p.id, got, want))
	case out != refused:
		r.m.mu.Lock()
		r.m.marks[u.id] = got
		r.m.mu.Unlock()
	}
	return true, nil
}

// readNotices reads one of a's users' newest notifications on the
// Mastodon face and moves their notifications marker to one of them, or
// marks one read by REST: the unread count follows either (checked once
// the run settles, against the list).
func (r *runner) readNotices(ctx context.Context, a *actor) (bool, error) {
	u := a.pick()
	page, err := r.mastodonPage(ctx, "/api/v1/notifications?limit=10", u.token)
	if err != nil || len(page) == 0 {
		return false, nil // signed out, or nothing to read: another operation
	}
	n := page[a.rng.IntN(len(page))]
	if a.rng.IntN(2) == 0 {
		_, out := r.write(ctx, "read notices", http.MethodPost, "/api/v1/markers", u.token,
			map[string]any{"notifications": map[string]string{"last_read_id": str(n, "id")}})
		r.m.done("read notices", out != acked, time.Now())
		return true, nil
	}
	rest, err := r.c.read(ctx, "/social/rest/notifications/@me?count=10", u.token)
	if err != nil || rest.status != http.StatusOK {
		return false, nil
	}
	list, _ := rest.body["list"].([]any)
	if len(list) == 0 {
		return false, nil
	}
	one, _ := list[a.rng.IntN(len(list))].(map[string]any)
	_, out := r.write(ctx, "read notices", http.MethodPost, "/social/rest/notifications/@me/read", u.token,
		map[string]any{"ids": []string{str(one, "id")}})
	r.m.done("read notices", out != acked, time.Now())
	return true, nil
}

// readElsewhere reads through the second instance a user's home, @all
// and the user's unread count, which that instance keeps (what the pages
// show, the home's range, and the count, for Config.PageCacheTTL): the
// comparison reads through it too, and must find every change there. The
// home's first page is the one the comparison reads (client.list's), so
// that the range kept is the one it takes, unless a change dropped it.
func (r *runner) readElsewhere(ctx context.Context, a *actor) (bool, error) {
	u := a.pick()
	for _, path := range []string{"/social/rest/activities/@me/@friends?count=100", "/social/rest/activities/@all/@all?count=20",
		"/api/v1/notifications/unread_count"} {
		if _, err := r.other.read(ctx, path, u.token); err != nil {
			return true, err
		}
	}
	r.m.done("read elsewhere", false, time.Now())
	return true, nil
}
