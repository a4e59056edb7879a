package wired_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"socialstream/internal/activities"
)

// tagTasks returns the bodies of the tag jobs the recorder took, from the
// n-th task on.
func (r *recorder) tagTasks(t *testing.T, from int) []activities.TagTask {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []activities.TagTask
	for _, task := range r.tasks[from:] {
		if task.Path != activities.TagJob.Path() {
			continue
		}
		var tt activities.TagTask
		if err := json.Unmarshal(task.Body, &tt); err != nil {
			t.Fatal(err)
		}
		out = append(out, tt)
	}
	return out
}

// The tag jobs of a post and of an edit, run by hand in the orders Cloud
// Tasks may run them (before their change commits, twice, after a later
// change, after the delete): each run leaves the state the last change
// asks for. The tag's followers from before the post get it at home, a
// follower since does not, an edit that drops the tag takes it back, and
// a page job that comes after that writes nothing.
func TestTagJobsInAnyOrder(t *testing.T) {
	ctx := context.Background()
	q := &recorder{}
	db, acc, svc := recorded(t, q)
	act := svc.Activities
	author, early, late := register(t, acc, "author"), register(t, acc, "early"), register(t, acc, "late")
	if _, err := svc.Tags.Follow(ctx, early, "#Go"); err != nil {
		t.Fatal(err)
	}
	// The post's id is of a later millisecond: ids are to the
	// millisecond, and a follow within the post's own is after it.
	time.Sleep(2 * time.Millisecond)
	home := func(who string) []string {
		t.Helper()
		got, err := activities.HomeIDs(ctx, db, who, 0, 20)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	run := func(task activities.TagTask) activities.TagResult {
		t.Helper()
		res, err := act.TagJob(ctx, task)
		if err != nil {
			t.Fatalf("%+v: %v", task, err)
		}
		return res
	}

	v, _, err := act.Post(ctx, author, activities.PostInput{Title: "a #go post"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Tags.Follow(ctx, late, "go"); err != nil {
		t.Fatal(err)
	}
	plan := q.tagTasks(t, 0)
	if len(plan) != 1 || plan[0].Tag != "" || !slices.Equal(plan[0].Add, []string{"go"}) {
		t.Fatalf("the post's tag jobs: %+v, want one planning job adding go", plan)
	}
	page := activities.TagTask{ActivityID: v.ID, Tag: "go"}
	// The page before its planning job, and twice.
	for range 2 {
		if res := run(page); res.Written != 1 {
			t.Errorf("page job: %+v, want early's id written", res)
		}
	}
	n := len(q.tasks)
	if res := run(plan[0]); res.Enqueued != 1 {
		t.Errorf("planning job: %+v, want one page enqueued", res)
	}
	if got := q.tagTasks(t, n); len(got) != 1 || got[0].Tag != "go" || got[0].Page != 0 {
		t.Errorf("the planning job enqueued %+v, want page 0 of go", got)
	}
	if got := home(early); !slices.Equal(got, []string{v.ID}) {
		t.Errorf("early's home: %v, want the post", got)
	}
	if got := home(late); len(got) != 0 {
		t.Errorf("late's home: %v, want nothing: the follow came after the post", got)
	}

	// The edit's planning job before the edit commits waits for it.
	early1 := activities.TagTask{ActivityID: v.ID, Edit: 1, At: time.Now().UnixMicro(), Remove: []string{"go"}}
	if _, err := act.TagJob(ctx, early1); !errors.Is(err, activities.ErrNotYet) {
		t.Errorf("an edit's job before the edit: %v, want ErrNotYet", err)
	}
	n = len(q.tasks)
	title := "no tag now"
	if _, err := act.Edit(ctx, author, v.ID, activities.EditInput{Title: &title}); err != nil {
		t.Fatal(err)
	}
	edit := q.tagTasks(t, n)
	if len(edit) != 1 || edit[0].Edit != 1 || !slices.Equal(edit[0].Remove, []string{"go"}) {
		t.Fatalf("the edit's tag jobs: %+v", edit)
	}
	// A page job of before the edit, run after it: nothing written.
	if res := run(page); res.Written != 0 || !strings.Contains(res.Skipped, "edited away") {
		t.Errorf("a page job after the edit: %+v", res)
	}
	for range 2 {
		run(edit[0])
	}
	if got := home(early); len(got) != 0 {
		t.Errorf("early's home after the edit took the tag away: %v", got)
	}
	if res := run(page); res.Written != 0 {
		t.Errorf("the page job once more: %+v", res)
	}
	if got := home(early); len(got) != 0 {
		t.Errorf("early's home after a late page job: %v", got)
	}

	// Once deleted, nothing is written.
	if err := act.Delete(ctx, author, v.ID); err != nil {
		t.Fatal(err)
	}
	if res := run(activities.TagTask{ActivityID: v.ID, Tag: "go", Page: 1}); res.Written != 0 || !strings.Contains(res.Skipped, "deleted") {
		t.Errorf("a page job after the delete: %+v", res)
	}
}
