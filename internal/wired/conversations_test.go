package wired_test

import (
	"context"
	"slices"
	"testing"

	"socialstream/internal/activities"
	"socialstream/internal/paging"
)

// A direct post's conversation is of its people as posted, however late
// its job runs: an edit that names someone else before the job runs adds
// it to no conversation of theirs, and the people it named keep it.
func TestConversationJobAfterAnEditKeepsThePeopleAsPosted(t *testing.T) {
	ctx := context.Background()
	q := &recorder{}
	_, acc, svc := recorded(t, q)
	ann, bob, cat := register(t, acc, "ann"), register(t, acc, "bob"), register(t, acc, "cat")
	v, _, err := svc.Activities.Post(ctx, ann, activities.PostInput{Title: "just us @bob", Visibility: activities.MentionedOnly})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Activities.Edit(ctx, ann, v.ID, activities.EditInput{Title: ptr("now @bob and @cat")}); err != nil {
		t.Fatal(err)
	}
	jobs := tasksOf(t, q, activities.ConversationJob, 0)
	if len(jobs) != 1 {
		t.Fatalf("conversation jobs: %+v, want the post's", jobs)
	}
	for range 2 { // late, and twice
		if _, err := svc.Activities.Converse(ctx, jobs[0]); err != nil {
			t.Fatal(err)
		}
	}
	list := func(who string) []string {
		t.Helper()
		got, _, err := svc.Conversations.List(ctx, who, "", paging.Request{Count: 10})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range got {
			out = append(out, c.Last)
		}
		return out
	}
	if got := list(bob); !slices.Equal(got, []string{v.ID}) {
		t.Errorf("bob's conversations: %v, want the post's", got)
	}
	if got := list(ann); !slices.Equal(got, []string{v.ID}) {
		t.Errorf("ann's conversations: %v, want the post's", got)
	}
	if got := list(cat); len(got) != 0 {
		t.Errorf("cat's conversations: %v, want none (the edit named cat after the post)", got)
	}
}
