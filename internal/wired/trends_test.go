package wired_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"socialstream/internal/accounts"
	"socialstream/internal/activities"
	"socialstream/internal/app"
	"socialstream/internal/ids"
	"socialstream/internal/moderation"
	"socialstream/internal/queue"
	"socialstream/internal/store"
	"socialstream/internal/trends"
)

// tasksOf returns the bodies of the jobs of job the recorder took, from
// the n-th task on.
func tasksOf[T any](t *testing.T, r *recorder, job queue.Job[T], from int) []T {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []T
	for _, task := range r.tasks[from:] {
		if task.Path != job.Path() {
			continue
		}
		var body T
		if err := json.Unmarshal(task.Body, &body); err != nil {
			t.Fatal(err)
		}
		out = append(out, body)
	}
	return out
}

type trendsFixture struct {
	t   *testing.T
	db  *store.DB
	q   *recorder
	svc *app.Services
}

// people counts the people of a subject today.
func (f *trendsFixture) people(k trends.Kind, name string) int64 {
	f.t.Helper()
	n, err := trends.People(context.Background(), f.db, trends.Subject{Kind: k, Name: name}, trends.DayOf(time.Now()))
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

// runTrends runs the trend jobs recorded from the from-th task on, in
// reverse, and returns how many tasks there are now.
func (f *trendsFixture) runTrends(from int) int {
	f.t.Helper()
	tasks := tasksOf(f.t, f.q, activities.TrendJob, from)
	for _, task := range slices.Backward(tasks) {
		if _, err := f.svc.Activities.Trend(context.Background(), task); err != nil {
			f.t.Fatalf("%+v (of %d, from %d): %v", task, len(tasks), from, err)
		}
	}
	f.q.mu.Lock()
	defer f.q.mu.Unlock()
	return len(f.q.tasks)
}

func (f *trendsFixture) post(author string, in activities.PostInput) string {
	f.t.Helper()
	v, _, err := f.svc.Activities.Post(context.Background(), author, in)
	if err != nil {
		f.t.Fatal(err)
	}
	return v.ID
}

// What counts toward trends is what Mastodon counts: each person once a
// day, of public posts neither sensitive nor by a limited account; the
// trend jobs may run late, twice and out of order, and an edit, a delete
// and an unlike take back what they made.
func TestTrendsCountPeopleOnceInAnyOrder(t *testing.T) {
	ctx := context.Background()
	q := &recorder{}
	db, acc, svc := recorded(t, q)
	f := &trendsFixture{t: t, db: db, q: q, svc: svc}
	ann, bob, cat, dan := register(t, acc, "ann"), register(t, acc, "bob"), register(t, acc, "cat"), register(t, acc, "dan")

	first := f.post(ann, activities.PostInput{Title: "#go is fun"})
	f.post(ann, activities.PostInput{Title: "#go again, the same day"})
	bobs := f.post(bob, activities.PostInput{Title: "#go and #news"})
	f.post(cat, activities.PostInput{Title: "#go, behind a warning", SpoilerText: "spoilers"})
	f.post(dan, activities.PostInput{Title: "#go for followers", Visibility: activities.FollowersOnly})
	done := f.runTrends(0)
	f.runTrends(0) // twice
	if got := f.people(trends.Tags, "go"); got != 2 {
		t.Fatalf("#go's people: %d, want 2 (ann once, bob; not the warned nor the followers-only post)", got)
	}
	if got := f.people(trends.Tags, "news"); got != 1 {
		t.Fatalf("#news's people: %d, want 1", got)
	}

	// An edit that drops #go takes bob's use back, however late the
	// post's own job runs again.
	if _, err := svc.Activities.Edit(ctx, bob, bobs, activities.EditInput{Title: ptr("just #news")}); err != nil {
		t.Fatal(err)
	}
	f.runTrends(done)
	f.runTrends(0)
	if got, news := f.people(trends.Tags, "go"), f.people(trends.Tags, "news"); got != 1 || news != 1 {
		t.Fatalf("after bob's edit: #go %d, #news %d people, want 1 and 1", got, news)
	}

	// ann's use stands while one of her posts of the day has the tag.
	if err := svc.Activities.Delete(ctx, ann, first); err != nil {
		t.Fatal(err)
	}
	for _, task := range tasksOf(t, q, activities.CleanupJob, 0) {
		if _, _, err := svc.Activities.Cleanup(ctx, task); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.people(trends.Tags, "go"); got != 1 {
		t.Fatalf("#go after one of ann's two posts was deleted: %d people, want 1", got)
	}
	// The deleted post's job, run again late, marks nothing.
	if _, err := svc.Activities.Trend(ctx, activities.TrendTask{ActivityID: first}); err != nil && !errors.Is(err, queue.ErrNotYet) {
		t.Fatal(err)
	}
	if got := f.people(trends.Tags, "go"); got != 1 {
		t.Fatalf("#go after the deleted post's job ran again: %d people, want 1", got)
	}

	// Likes count each liker once; an unlike takes it back; a repost
	// counts its reposter.
	q.mu.Lock()
	before := len(q.tasks)
	q.mu.Unlock()
	liked := f.post(dan, activities.PostInput{Title: "worth a like"})
	for _, who := range []string{ann, bob, bob} {
		if _, err := svc.Likes.Like(ctx, who, liked); err != nil {
			t.Fatal(err)
		}
	}
	from := f.runTrends(before)
	if _, _, err := svc.Activities.Repost(ctx, cat, liked); err != nil {
		t.Fatal(err)
	}
	f.runTrends(from)
	if got := f.people(trends.Statuses, liked); got != 3 {
		t.Fatalf("the liked post's people: %d, want 3 (ann, bob, cat's repost)", got)
	}
	if _, err := svc.Likes.Unlike(ctx, bob, liked); err != nil {
		t.Fatal(err)
	}
	if got := f.people(trends.Statuses, liked); got != 2 {
		t.Fatalf("after bob's unlike: %d people, want 2", got)
	}
}

// The hour's refresh ranks what most people used; nothing trends before a
// moderator approves it, a rejected subject never does, and the trends
// page reads the one snapshot.
func TestTrendsWaitForReview(t *testing.T) {
	ctx := context.Background()
	q := &recorder{}
	db, acc, svc := recorded(t, q)
	f := &trendsFixture{t: t, db: db, q: q, svc: svc}
	people := []string{register(t, acc, "ann"), register(t, acc, "bob"), register(t, acc, "cat")}
	for i, who := range people {
		f.post(who, activities.PostInput{Title: "#popular"})
		if i < 2 {
			f.post(who, activities.PostInput{Title: "#rising"})
		}
	}
	f.post(people[0], activities.PostInput{Title: "#lonely"})
	f.runTrends(0)
	if err := svc.Activities.RefreshTrends(ctx); err != nil {
		t.Fatal(err)
	}
	names := func(items []trends.Item) []string {
		var out []string
		for _, it := range items {
			out = append(out, it.Name)
		}
		return out
	}
	get := func(waiting bool) []trends.Item {
		t.Helper()
		got, err := svc.Activities.Trending(ctx, activities.TrendsRequest{Kind: trends.Tags, Count: 10, Waiting: waiting})
		if err != nil {
			t.Fatal(err)
		}
		return got.Tags
	}
	if shown, all := get(false), get(true); len(shown) != 0 || !slices.Equal(names(all), []string{"popular", "rising"}) {
		t.Fatalf("before review: shown %v, all %v; want none shown, popular and rising waiting (lonely has one person)", names(shown), names(all))
	}
	// With review off (TRENDS_REVIEW=off), the same snapshot shows all.
	off, err := trends.New(db, trends.Config{ReviewOff: true})
	if err != nil {
		t.Fatal(err)
	}
	shownOff, waitingOff, err := off.Trending(ctx, trends.Tags)
	if err != nil || !slices.Equal(names(shownOff), []string{"popular", "rising"}) || len(waitingOff) != 0 {
		t.Fatalf("review off, before review: shown %v, waiting %v, %v; want both shown", names(shownOff), names(waitingOff), err)
	}
	w := get(true)[0]
	if w.Today != 3 || w.History[0].People != 3 || w.History[0].Uses != 3 || len(w.History) != trends.HistoryDays {
		t.Fatalf("popular: %+v, want 3 people and 3 posts today, a week of history", w)
	}
	if _, err := svc.Activities.ReviewTrend(ctx, people[0], trends.Tags, "popular", true); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Activities.ReviewTrend(ctx, people[0], trends.Tags, "rising", false); err != nil {
		t.Fatal(err)
	}
	if shown, all := get(false), get(true); !slices.Equal(names(shown), []string{"popular"}) || !slices.Equal(names(all), []string{"popular"}) {
		t.Fatalf("after review: shown %v, all %v; want popular shown, rising rejected", names(shown), names(all))
	}
	// With review off, a rejected tag does not trend either.
	if shownOff, _, err = off.Trending(ctx, trends.Tags); err != nil || !slices.Equal(names(shownOff), []string{"popular"}) {
		t.Fatalf("review off, after rising was rejected: shown %v, %v", names(shownOff), err)
	}
	// A refresh keeps the reviews.
	if err := svc.Activities.RefreshTrends(ctx); err != nil {
		t.Fatal(err)
	}
	if shown := get(false); !slices.Equal(names(shown), []string{"popular"}) {
		t.Fatalf("after a refresh: shown %v, want popular", names(shown))
	}
	// A link no refresh ranked cannot be reviewed by an id.
	if _, err := svc.Activities.ReviewTrend(ctx, people[0], trends.Links, "0123", true); !errors.Is(err, trends.ErrNoSuchTrend) {
		t.Fatalf("review of an unknown link: %v, want ErrNoSuchTrend", err)
	}
}

func ptr[T any](v T) *T { return &v }

// runWithholds runs the withholding jobs recorded from the from-th task
// on, and those they enqueue, until none is left.
func (f *trendsFixture) runWithholds(from int) {
	f.t.Helper()
	for done := 0; ; {
		tasks := tasksOf(f.t, f.q, moderation.WithholdJob, from)
		if done == len(tasks) {
			return
		}
		for _, task := range tasks[done:] {
			if _, err := f.svc.Moderation.Withhold(context.Background(), task); err != nil {
				f.t.Fatalf("%+v: %v", task, err)
			}
		}
		done = len(tasks)
	}
}

// Moderation reaches what trends: a post taken down counts for nothing
// and counts again once put back, and a person limited counts for
// nothing from then on, their earlier uses deleted.
func TestTrendsFollowModeration(t *testing.T) {
	ctx := context.Background()
	q := &recorder{}
	db, acc, svc := recorded(t, q)
	f := &trendsFixture{t: t, db: db, q: q, svc: svc}
	ada, bob, cat := register(t, acc, "ada"), register(t, acc, "bob"), register(t, acc, "cat")
	if err := moderation.SetRole(ctx, db, ids.New(), ada, accounts.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	bobs := f.post(bob, activities.PostInput{Title: "#go"})
	f.post(cat, activities.PostInput{Title: "#go too"})
	f.runTrends(0)
	if got := f.people(trends.Tags, "go"); got != 2 {
		t.Fatalf("#go's people: %d, want 2", got)
	}
	act := func(in moderation.ActionInput) {
		t.Helper()
		q.mu.Lock()
		from := len(q.tasks)
		q.mu.Unlock()
		in.Reason = "spam"
		if _, err := svc.Moderation.Act(ctx, ada, in); err != nil {
			t.Fatal(err)
		}
		f.runWithholds(from)
	}
	act(moderation.ActionInput{Action: moderation.Remove, AccountID: bob, ActivityIDs: []string{bobs}})
	if got := f.people(trends.Tags, "go"); got != 1 {
		t.Fatalf("#go after bob's post was taken down: %d people, want 1", got)
	}
	act(moderation.ActionInput{Action: moderation.Restore, AccountID: bob, ActivityIDs: []string{bobs}})
	if got := f.people(trends.Tags, "go"); got != 2 {
		t.Fatalf("#go after bob's post was put back: %d people, want 2", got)
	}
	act(moderation.ActionInput{Action: moderation.Limit, AccountID: cat})
	if got := f.people(trends.Tags, "go"); got != 1 {
		t.Fatalf("#go after cat was limited: %d people, want 1", got)
	}
	// What a limited person posts then counts for nothing.
	q.mu.Lock()
	from := len(q.tasks)
	q.mu.Unlock()
	f.post(cat, activities.PostInput{Title: "#go again"})
	f.runTrends(from)
	if got := f.people(trends.Tags, "go"); got != 1 {
		t.Fatalf("#go after the limited person posted: %d people, want 1", got)
	}
}
