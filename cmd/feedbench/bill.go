package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"time"

	"socialstream/internal/activities"
	"socialstream/internal/meter"
	"socialstream/internal/store"
	"socialstream/internal/tasksemu"
)

// The billing meter: what each operation costs as Firestore in Datastore
// mode bills it (package meter), beside what its answer needs. Every
// operation runs through the API on a small world made for it, with the
// jobs it enqueues (the bill is taken once every queue is empty), one at a
// time, so the meter counts that operation alone.

// billRow is one operation's bill.
type billRow struct {
	Op   string `json:"op"`
	Bill opBill `json:"bill"`
	// MinReads is the least the answer needs (MinRule says why); 0 where
	// no minimum is stated.
	MinReads int    `json:"minReads,omitempty"`
	MinRule  string `json:"minRule,omitempty"`
}

// opBill is what one operation, with its jobs, is billed: its Datastore
// calls' bill, its Cloud Tasks operations, and the bytes its deliveries
// sent other servers (each request as it came to them).
type opBill struct {
	meter.Bill
	Tasks tasksemu.Operations `json:"tasks"`
	Sent  int                 `json:"sent,omitempty"`
}

// Ratio is the reads billed over the minimum.
func (r billRow) Ratio() float64 {
	if r.MinReads == 0 {
		return 0
	}
	return float64(r.Bill.Reads()) / float64(r.MinReads)
}

// billWorld is what the metered operations act on: a reader following
// billPage authors, each of whom posted once naming the reader (the
// newest page of every feed), the first author billPage more times
// before, all with one tag and in one group of the reader's; the reader
// liked a few of them.
type billWorld struct {
	reader, helper user
	authors        []user
	group          string
	list           string   // the reader's list of every author
	newest         []string // the authors' newest posts, by author
	notice         string   // one of the reader's notifications, to dismiss
}

const (
	billPage  = pageSize
	billTag   = "bench"
	billLikes = 5
)

// billing runs every metered operation and returns its bill; posters are
// the follower counts of the posts metered.
func billing(ctx context.Context, s *stack, posters []int, progress func(string, ...any)) ([]billRow, error) {
	w, err := billSeed(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("billing: seed: %w", err)
	}
	progress("billing: world ready")
	var rows []billRow
	for _, bill := range []func(context.Context, *stack, *billWorld) ([]billRow, error){billFeeds, billNotifications} {
		r, err := bill(ctx, s, w)
		if rows = append(rows, r...); err != nil {
			return nil, err
		}
	}
	progress("billing: feeds and notifications metered")
	r, err := billPosts(ctx, s, posters, progress)
	if rows = append(rows, r...); err != nil {
		return nil, err
	}
	progress("billing: posts metered")
	for _, bill := range []func(context.Context, *stack, *billWorld) ([]billRow, error){billPictures, billProfiles, billWrites, billPush, billScheduled, billLinks, billSearch, billTalking, billTrends, billThirdLike} {
		r, err := bill(ctx, s, w)
		if rows = append(rows, r...); err != nil {
			return nil, err
		}
		progress("billing: %d rows metered", len(rows))
	}
	r, err = billFederation(ctx, s)
	if rows = append(rows, r...); err != nil {
		return nil, err
	}
	progress("billing: federation metered")
	r, err = billCelebrities(ctx, s)
	if rows = append(rows, r...); err != nil {
		return nil, err
	}
	progress("billing: celebrities metered")
	return rows, nil
}

// billPosts meters posts, each with its jobs, by authors of posters
// followers.
func billPosts(ctx context.Context, s *stack, posters []int, progress func(string, ...any)) ([]billRow, error) {
	var rows []billRow
	for _, n := range posters {
		p, err := s.register(ctx, fmt.Sprintf("billposter%d", n))
		if err != nil {
			return rows, err
		}
		if n > 0 {
			followers := make([]string, n)
			for i := range followers {
				followers[i] = fmt.Sprintf("billfollower%d", i)
			}
			if err := s.graph.ImportFollowers(ctx, p.id, followers); err != nil {
				return rows, err
			}
		}
		b, err := s.metered(ctx, p, "POST", "/social/rest/activities/@me/@self", map[string]string{"title": "a post"}, nil)
		if err != nil {
			return rows, fmt.Errorf("billing: post to %d: %w", n, err)
		}
		rows = append(rows, billRow{Op: fmt.Sprintf("post, %d followers", n), Bill: b})
		progress("billing: post to %d followers metered", n)
	}
	return rows, nil
}

// billPictures meters an upload, and a post that carries four (whose feeds
// read nothing more: the post keeps a copy of them), and its deletion.
func billPictures(ctx context.Context, s *stack, w *billWorld) ([]billRow, error) {
	var rows []billRow
	var pics []map[string]string
	for i := range 4 {
		var up created
		path := fmt.Sprintf("/social/rest/mediaItems/@me/@self?description=picture+%d", i)
		if i == 1 { // the first made the links' key
			b, err := s.metered(ctx, w.helper, "POST", path, billPicture, &up)
			if err != nil {
				return rows, fmt.Errorf("billing: upload: %w", err)
			}
			rows = append(rows, billRow{Op: "upload a picture", Bill: b})
		} else if err := s.do(ctx, w.helper, "POST", path, billPicture, &up); err != nil {
			return rows, fmt.Errorf("billing: upload: %w", err)
		}
		pics = append(pics, map[string]string{"id": up.Entry.ID})
	}
	var posted created
	b, err := s.metered(ctx, w.helper, "POST", "/social/rest/activities/@me/@self", map[string]any{"title": "four pictures", "mediaItems": pics}, &posted)
	if err != nil {
		return rows, fmt.Errorf("billing: post with pictures: %w", err)
	}
	rows = append(rows, billRow{Op: "post with 4 pictures, 0 followers", Bill: b})
	if b, err = s.metered(ctx, w.helper, "DELETE", "/social/rest/activities/@me/@self/@app/"+posted.Entry.ID, nil, nil); err != nil {
		return rows, fmt.Errorf("billing: delete with pictures: %w", err)
	}
	rows = append(rows, billRow{Op: "delete a post with 4 pictures", Bill: b})
	return rows, nil
}

// billProfiles meters a change of profile that sets an avatar, and a
// read of the avatar by its link.
func billProfiles(ctx context.Context, s *stack, w *billWorld) ([]billRow, error) {
	var up created
	if err := s.do(ctx, w.helper, "POST", "/social/rest/mediaItems/@me/@self?description=a+face", billPicture, &up); err != nil {
		return nil, fmt.Errorf("billing: upload: %w", err)
	}
	var person struct {
		Entry struct {
			ThumbnailURL string `json:"thumbnailUrl"`
		} `json:"entry"`
	}
	b, err := s.metered(ctx, w.helper, "PUT", "/social/rest/people/@me/@self", map[string]any{"note": "a bio", "avatar": up.Entry.ID}, &person)
	if err != nil {
		return nil, fmt.Errorf("billing: profile: %w", err)
	}
	rows := []billRow{{Op: "profile, with an avatar", Bill: b}}
	if b, err = s.metered(ctx, w.reader, "GET", person.Entry.ThumbnailURL, nil, nil); err != nil {
		return rows, fmt.Errorf("billing: avatar: %w", err)
	}
	return append(rows, billRow{Op: "an avatar, by its link", Bill: b, MinReads: 1, MinRule: "the person's card"}), nil
}

// billWrites meters reactions, an edit, a delete, a follow and an
// unfollow, each with its jobs.
func billWrites(ctx context.Context, s *stack, w *billWorld) ([]billRow, error) {
	var rows []billRow
	var notes struct {
		List []struct {
			ID string `json:"id"`
		} `json:"list"`
	}
	if err := s.do(ctx, w.reader, "GET", "/social/rest/notifications/@me?count=1", nil, &notes); err != nil || len(notes.List) == 0 {
		return rows, fmt.Errorf("billing: a notification to dismiss: %v, %d", err, len(notes.List))
	}
	w.notice = notes.List[0].ID
	first := w.authors[0]
	h := w.helper
	// A post with a poll, which the helper votes in.
	var polled created
	if err := s.do(ctx, w.authors[7], "POST", "/social/rest/activities/@me/@self", map[string]any{"title": "which?",
		"poll": map[string]any{"options": []string{"this", "that"}, "expiresIn": 86400}}, &polled); err != nil {
		return rows, fmt.Errorf("billing: a post with a poll: %w", err)
	}
	writes := []struct {
		op, method, path string
		who              user
		body             any
	}{
		{"like", "POST", "/social/rest/likes/" + w.newest[1], h, nil},
		{"comment", "POST", "/social/rest/comments/" + w.newest[1], h, map[string]string{"text": "a comment"}},
		{"repost", "POST", "/social/rest/reposts/" + w.newest[2], h, nil},
		{"edit", "PUT", "/social/rest/activities/@me/@self/@app/" + w.newest[3], w.authors[3], map[string]string{"title": "edited"}},
		{"pin", "POST", "/social/rest/pins/" + w.newest[5], w.authors[5], nil},
		{"bookmark", "POST", "/social/rest/bookmarks/" + w.newest[6], w.authors[6], nil},
		{"vote in a poll", "POST", "/social/rest/polls/" + polled.Entry.ID + "/votes", h, map[string]any{"choices": []int{1}}},
		{"delete", "DELETE", "/social/rest/activities/@me/@self/@app/" + w.newest[4], w.authors[4], nil},
		{"follow, with its rebuild", "POST", "/social/rest/people/@me/@friends", h, map[string]string{"id": first.id}},
		{"unfollow, with its rebuild", "DELETE", "/social/rest/people/@me/@friends/" + first.id, h, nil},
		{"dismiss a notification", "DELETE", "/social/rest/notifications/@me/" + w.notice, w.reader, nil},
		{"clear notifications", "DELETE", "/social/rest/notifications/@me", w.reader, nil},
	}
	for _, op := range writes {
		b, err := s.metered(ctx, op.who, op.method, op.path, op.body, nil)
		if err != nil {
			return rows, fmt.Errorf("billing: %s: %w", op.op, err)
		}
		rows = append(rows, billRow{Op: op.op, Bill: b})
	}
	return billThread(ctx, s, w, rows)
}

// billThirdLike meters a post's third like, which bumps no trend's
// candidate (trends.Sampled: the first, then each doubling); after the
// trends' rows, which its likes would change.
func billThirdLike(ctx context.Context, s *stack, w *billWorld) ([]billRow, error) {
	if err := s.do(ctx, w.reader, "POST", "/social/rest/likes/"+w.newest[1], nil, nil); err != nil {
		return nil, fmt.Errorf("billing: a second like: %w", err)
	}
	b, err := s.metered(ctx, w.authors[2], "POST", "/social/rest/likes/"+w.newest[1], nil, nil)
	if err != nil {
		return nil, fmt.Errorf("billing: a third like: %w", err)
	}
	return []billRow{{Op: "like, its post's third (no trend bumped)", Bill: b}}, nil
}

// billPush meters a like of a post whose author has one push
// subscription that wants it: the like, its notification, and the job
// that delivers it to the push service (on loopback).
func billPush(ctx context.Context, s *stack, w *billWorld) ([]billRow, error) {
	author, post := w.authors[10], w.newest[10]
	key, err := s.push.keys.Current(ctx)
	if err != nil {
		return nil, err
	}
	s.push.Expect(key.Public)
	dev := s.push.Device()
	sub := map[string]any{
		"subscription": map[string]any{"endpoint": dev.Endpoint, "keys": map[string]string{"p256dh": dev.P256dh(), "auth": dev.Auth()}},
		"data":         map[string]any{"alerts": map[string]bool{"favourite": true}},
	}
	if err := s.do(ctx, author, "POST", "/api/v1/push/subscription", sub, nil); err != nil {
		return nil, fmt.Errorf("billing: a push subscription: %w", err)
	}
	b, err := s.metered(ctx, w.helper, "POST", "/social/rest/likes/"+post, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("billing: a like pushed: %w", err)
	}
	if got, errs := len(s.push.Messages(dev)), s.push.Errors(); got != 1 || len(errs) > 0 {
		return nil, fmt.Errorf("billing: a like pushed: %d messages, %v", got, errs)
	}
	return []billRow{{Op: "like, pushed to 1 subscription", Bill: b}}, nil
}

// billThread meters a reply to someone else (its fan-out reads the
// follows of the person answered), and the context of a post and of its
// reply.
func billThread(ctx context.Context, s *stack, w *billWorld, rows []billRow) ([]billRow, error) {
	parent, by := w.newest[7], w.authors[8]
	var reply created
	b, err := s.metered(ctx, by, "POST", "/social/rest/activities/@me/@self", map[string]any{"title": "a reply", "inReplyTo": parent}, &reply)
	if err != nil {
		return rows, fmt.Errorf("billing: reply: %w", err)
	}
	rows = append(rows, billRow{Op: "reply to someone else, 1 follower", Bill: b})
	for _, c := range []struct{ op, author, id string }{
		{"context of a post with a reply", w.authors[7].id, parent},
		{"context of a reply", by.id, reply.Entry.ID},
	} {
		b, err := s.metered(ctx, w.reader, "GET", "/social/rest/activities/"+c.author+"/@self/@app/"+c.id+"/context", nil, nil)
		if err != nil {
			return rows, fmt.Errorf("billing: %s: %w", c.op, err)
		}
		rows = append(rows, billRow{Op: c.op, Bill: b})
	}
	return rows, nil
}

// billSeed makes the world of the metered operations through the API.
func billSeed(ctx context.Context, s *stack) (*billWorld, error) {
	w := &billWorld{}
	var err error
	if w.reader, err = s.register(ctx, "billreader"); err != nil {
		return nil, err
	}
	if w.helper, err = s.register(ctx, "billhelper"); err != nil {
		return nil, err
	}
	var g created
	if err := s.do(ctx, w.reader, "POST", "/social/rest/groups/@me", map[string]string{"title": "bench", "joinPolicy": "open"}, &g); err != nil {
		return nil, err
	}
	w.group = g.Entry.ID
	for i := range billPage {
		a, err := s.register(ctx, fmt.Sprintf("billauthor%d", i))
		if err != nil {
			return nil, err
		}
		w.authors = append(w.authors, a)
		// Every author has a profile: a page shows it from the card it
		// reads anyway.
		if err := s.do(ctx, a, "PUT", "/social/rest/people/@me/@self", map[string]any{"note": "the bio of " + a.name,
			"fields": []map[string]string{{"name": "site", "value": "https://example.com/" + a.name}}}, nil); err != nil {
			return nil, err
		}
		if err := s.do(ctx, a, "POST", "/social/rest/groups/@all/"+w.group+"/members", map[string]string{"id": "@me"}, nil); err != nil {
			return nil, err
		}
		if err := s.do(ctx, w.reader, "POST", "/social/rest/people/@me/@friends", map[string]string{"id": a.id}, nil); err != nil {
			return nil, err
		}
	}
	// The reader's list of every author: a list's timeline.
	var list created
	if err := s.do(ctx, w.reader, "POST", "/social/rest/lists/@me", map[string]string{"title": "bench"}, &list); err != nil {
		return nil, err
	}
	w.list = list.Entry.ID
	members := make([]string, len(w.authors))
	for i, a := range w.authors {
		members[i] = a.id
	}
	if err := s.do(ctx, w.reader, "POST", "/social/rest/lists/@me/"+w.list+"/members", map[string]any{"ids": members}, nil); err != nil {
		return nil, err
	}
	for i := range billPage {
		id, err := s.postHTTP(ctx, w.authors[0], fmt.Sprintf("earlier %d #%s", i, billTag))
		if err != nil {
			return nil, err
		}
		// Each post's jobs run before the next post: the trend jobs of
		// one author's posts of one hashtag all write that author's use
		// of it today, and twenty at once abort each other's
		// transactions for minutes (a seed that once took over 5).
		if err := s.settle(ctx); err != nil {
			return nil, err
		}
		// The first author pins the most they may: their @pinned page.
		if i < activities.MaxPins {
			if err := s.do(ctx, w.authors[0], "POST", "/social/rest/pins/"+id, nil, nil); err != nil {
				return nil, err
			}
		}
	}
	for i, a := range w.authors {
		id, err := s.postHTTP(ctx, a, fmt.Sprintf("post %d for @%s #%s", i, w.reader.name, billTag))
		if err != nil {
			return nil, err
		}
		w.newest = append(w.newest, id)
	}
	// The reader bookmarks every author's post but the one "delete"
	// deletes (whose cleanup would delete the bookmark): a page of
	// bookmarks.
	for i, id := range w.newest {
		if i == 4 {
			continue
		}
		if err := s.do(ctx, w.reader, "POST", "/social/rest/bookmarks/"+id, nil, nil); err != nil {
			return nil, err
		}
	}
	for _, id := range w.newest[len(w.newest)-billLikes:] {
		if err := s.do(ctx, w.reader, "POST", "/social/rest/likes/"+id, nil, nil); err != nil {
			return nil, err
		}
	}
	return w, s.settle(ctx)
}

// do sends a request as u, fails on any answer but a 2xx, and decodes it
// into out (if not nil).
func (s *stack) do(ctx context.Context, u user, method, path string, body, out any) error {
	status, data, err := s.call(ctx, method, path, u.token, body)
	if err != nil {
		return err
	}
	if status/100 != 2 {
		return fmt.Errorf("%s %s as %s: %d %s", method, path, u.name, status, data)
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

// billPruneWindow is the bill's stack's notifications.Config.PruneWindow:
// a pruning bills the same whenever it runs, and an operation's waits
// for it are the most of the bill's time at the default.
const billPruneWindow = 500 * time.Millisecond

// settle waits for every queue to empty. The bill's stack prunes
// notifications every billPruneWindow, so that each operation, metered
// once the last one's pruning ran, enqueues a pruning of its own.
func (s *stack) settle(ctx context.Context) error {
	return waitFor(ctx, 5*time.Minute, 20*time.Millisecond, func() (bool, error) { return s.pending() == 0, nil })
}

// metered runs one request as u, with the jobs it enqueues, and returns
// what the Datastore calls of both were billed, and the Cloud Tasks
// operations they made. The token is read (and cached) by a request
// before, and the instance's cache emptied, so the bill is the
// operation's alone, cold. Its jobs run once it has answered (see
// measure), so a second run of one (Tasks.Redispatched) is a job that
// failed.
func (s *stack) metered(ctx context.Context, u user, method, path string, body, out any) (opBill, error) {
	if err := s.do(ctx, u, "GET", "/social/rest/people/@me/@self", nil, nil); err != nil {
		return opBill{}, err
	}
	if err := s.settle(ctx); err != nil {
		return opBill{}, err
	}
	s.cache.Purge() // cold: what other requests read is not kept
	return s.measure(ctx, u, method, path, body, out)
}

// meteredWarm runs a page's request as u once, and then meters it again:
// what a page reads on an instance that read it a moment ago, after
// what it shows last changed, when what it shows is kept (store.Cache).
func (s *stack) meteredWarm(ctx context.Context, u user, method, path string, body, out any) (opBill, error) {
	// What changed less than the margin before the first read is read
	// again by the next (its mark's time may precede its commit).
	time.Sleep(store.SyncMargin)
	if err := s.do(ctx, u, method, path, body, nil); err != nil {
		return opBill{}, err
	}
	if err := s.settle(ctx); err != nil {
		return opBill{}, err
	}
	return s.measure(ctx, u, method, path, body, out)
}

// measure runs one request as u and waits for its jobs: what their
// Datastore calls were billed, and their Cloud Tasks operations.
//
// The queues hold the request's jobs until it has answered: a job
// enqueued ahead of its commit first runs queue.AheadDelay later, meant
// to find the commit done, but on a loaded machine the commit can come
// later than that, and the job's second run (a retry's reads, a task
// run) would be billed to the operation for the machine's slowness.
// Held, each job first runs after the commit, as the cost model counts.
func (s *stack) measure(ctx context.Context, u user, method, path string, body, out any) (opBill, error) {
	s.meter.Take()
	before := s.operations()
	release := s.hold()
	err := s.do(ctx, u, method, path, body, out)
	release()
	if err != nil {
		return opBill{}, err
	}
	if err := s.settle(ctx); err != nil {
		return opBill{}, err
	}
	return opBill{Bill: s.meter.Take(), Tasks: s.operations().Sub(before)}, nil
}

// billMarkdown writes the bills as a table.
func billMarkdown(w io.Writer, rows []billRow) {
	fmt.Fprintln(w, "### What each operation is billed")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| operation | calls | reads | keys found / missing | query entities / keys-only | writes | deletes | transforms | index entries | bytes | tasks: created / runs / second runs | least reads | ratio |")
	fmt.Fprintln(w, "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |")
	for _, r := range rows {
		b := r.Bill
		least, ratio := "", ""
		if r.MinReads > 0 {
			least, ratio = fmt.Sprintf("%d: %s", r.MinReads, r.MinRule), fmt.Sprintf("%.2fx", r.Ratio())
		}
		fmt.Fprintf(w, "| %s | %s | %d | %d / %d | %d / %d | %d | %d | %d | %d | %d | %d / %d / %d | %s | %s |\n", r.Op, callString(b.Calls), b.Reads(),
			b.Found, b.Missing, b.EntityResults, b.KeyResults, b.Writes, b.Deletes, b.Transforms, b.IndexEntries, b.Bytes,
			b.Tasks.Created, b.Tasks.Dispatched, b.Tasks.Redispatched, least, ratio)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Reads: every key looked up (found or missing), every entity a query returned, one for a query that returned none;")
	fmt.Fprintln(w, "keys-only results are index entries read, not entities. Every job the operation enqueued is included.")
	fmt.Fprintln(w, "Tasks: Cloud Tasks' billed operations, each task created (a name taken too) and each attempt run; a second run is a job's attempt after its first.")
}

// billPicture is the picture the bill uploads: 64 × 64 pixels, as PNG.
var billPicture = func() []byte {
	img := image.NewNRGBA(image.Rect(0, 0, 64, 64))
	for i := range img.Pix {
		img.Pix[i] = byte(i)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		panic(err)
	}
	return buf.Bytes()
}()
