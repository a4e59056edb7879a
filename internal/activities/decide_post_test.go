package activities

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"socialstream/internal/accounts"
)

// What a post writes, decided from what its transaction read, without
// Datastore.
func TestDecidePost(t *testing.T) {
	mine := func() *Activity {
		return &Activity{Seq: 7, UserID: "ann", Title: "hi", PostedTime: 1000, MentionIDs: []string{"bob", "cat"}, Tags: []string{"go"}}
	}
	followers := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprint("f", i)
		}
		return out
	}
	cases := []struct {
		name  string
		facts func(*postFacts)
		err   error
		check func(*testing.T, postPlan)
	}{
		{name: "a suspended author", facts: func(f *postFacts) { f.mayAct = accounts.ErrSuspended }, err: accounts.ErrSuspended},
		{name: "the post itself, after a commit that answered an error",
			facts: func(f *postFacts) { f.prior = mine() },
			check: func(t *testing.T, p postPlan) {
				if p.replay == nil || p.activity != nil {
					t.Errorf("%+v", p)
				}
			}},
		{name: "an id someone else's", facts: func(f *postFacts) { f.prior = &Activity{UserID: "bob", PostedTime: 1000} }, err: errIDTaken},
		{name: "an id of the author's at another time", facts: func(f *postFacts) { f.prior = &Activity{UserID: "ann", PostedTime: 999} }, err: errIDTaken},
		{name: "an externalId used", facts: func(f *postFacts) { f.usedBy = "A1" },
			check: func(t *testing.T, p postPlan) {
				if p.existing != "A1" || p.activity != nil || p.fanout || p.mention {
					t.Errorf("%+v", p)
				}
			}},
		{name: "a second repost", facts: func(f *postFacts) { f.repostOf, f.reposted = "S", "R1" },
			check: func(t *testing.T, p postPlan) {
				if p.existing != "R1" || p.activity != nil {
					t.Errorf("%+v", p)
				}
			}},
		{name: "a repost of what became hidden", facts: func(f *postFacts) { f.repostOf, f.hidden = "S", ErrNoSuchActivity }, err: ErrNoSuchActivity},
		{name: "public, one chunk", check: func(t *testing.T, p postPlan) {
			a := p.activity
			if a.Visibility != Public || a.Chunks != 1 || !slices.Equal(a.GroupIDs, []string{"g1"}) || !slices.Equal(a.MentionIDs, []string{"bob"}) ||
				p.fanout || !p.mention || !p.tags || len(p.audiences) != 1 || !slices.Equal(p.audiences[0].FollowerIDs, []string{"ann", "f0", "f1"}) {
				t.Errorf("%+v, activity %+v", p, a)
			}
		}},
		{name: "a celebrity's, three chunks", facts: func(f *postFacts) { f.celebrity, f.chunks = true, 3 }, check: func(t *testing.T, p postPlan) {
			// No follower copied; the fan-out still tells who asked.
			a := p.activity
			if !a.Celebrity || a.Chunks != 3 || !p.fanout || len(p.audiences) != 1 || !slices.Equal(p.audiences[0].FollowerIDs, []string{"ann"}) ||
				!p.audiences[0].Celebrity {
				t.Errorf("%+v, activity %+v", p, a)
			}
		}},
		{name: "a celebrity's reply to someone else", facts: func(f *postFacts) {
			f.celebrity, f.answers, f.alsoFollow = true, "bob", map[string]bool{"f1": true}
		}, check: func(t *testing.T, p postPlan) {
			if a := p.activity; a.Celebrity || !slices.Equal(p.audiences[0].FollowerIDs, []string{"ann", "f1"}) {
				t.Errorf("%+v, activity %+v", p, a)
			}
		}},
		{name: "a celebrity's repost", facts: func(f *postFacts) { f.celebrity, f.repostOf, f.repostOfUser = true, "S", "bob" }, check: func(t *testing.T, p postPlan) {
			if a := p.activity; a.Celebrity || len(p.audiences[0].FollowerIDs) != 3 {
				t.Errorf("%+v, activity %+v", p, a)
			}
		}},
		{name: "a celebrity's for the mentioned alone", facts: func(f *postFacts) { f.celebrity, f.visibility = true, MentionedOnly }, check: func(t *testing.T, p postPlan) {
			if a := p.activity; a.Celebrity {
				t.Errorf("%+v, activity %+v", p, a)
			}
		}},
		{name: "public, three chunks", facts: func(f *postFacts) { f.chunks = 3 }, check: func(t *testing.T, p postPlan) {
			if p.activity.Chunks != 3 || !p.fanout {
				t.Errorf("%+v", p)
			}
		}},
		{name: "followers only", facts: func(f *postFacts) { f.visibility, f.chunks = FollowersOnly, 2 }, check: func(t *testing.T, p postPlan) {
			a := p.activity
			if !slices.Equal(a.VisibleTo, []string{FollowersOnly}) || a.GroupIDs != nil || p.tags || !p.fanout || a.Chunks != 2 {
				t.Errorf("%+v, activity %+v", p, a)
			}
		}},
		{name: "mentioned only", facts: func(f *postFacts) { f.visibility, f.chunks = MentionedOnly, 2 }, check: func(t *testing.T, p postPlan) {
			a := p.activity
			if a.VisibleTo != nil || a.Chunks != 1 || p.fanout || p.tags || len(p.audiences) != 1 ||
				!slices.Equal(p.audiences[0].FollowerIDs, []string{"ann", "bob"}) || p.audiences[0].UserID != MentionAudience("ann") {
				t.Errorf("%+v, activity %+v", p, a)
			}
		}},
		{name: "no one mentionable", facts: func(f *postFacts) { f.mentionable = nil }, check: func(t *testing.T, p postPlan) {
			if p.mention || p.activity.MentionIDs != nil {
				t.Errorf("%+v", p)
			}
		}},
		{name: "a first chunk past one entity", facts: func(f *postFacts) { f.firstFollowers = followers(AudienceChunkSize + 10) }, check: func(t *testing.T, p postPlan) {
			if len(p.audiences) != 2 || len(p.audiences[0].FollowerIDs) != AudienceChunkSize || len(p.audiences[1].FollowerIDs) != 11 {
				t.Errorf("%d audiences", len(p.audiences))
			}
		}},
		{name: "a reply to bob, who is named", facts: func(f *postFacts) {
			f.answers, f.firstFollowers, f.alsoFollow = "bob", []string{"f0", "f1", "bob", "f2"}, map[string]bool{"f1": true, "f2": false}
		}, check: func(t *testing.T, p postPlan) {
			// Those who follow bob too, and bob; bob is told by the reply's
			// own notification, not by the mention job.
			if !slices.Equal(p.audiences[0].FollowerIDs, []string{"ann", "f1", "bob"}) || p.mention || !slices.Equal(p.activity.MentionIDs, []string{"bob"}) {
				t.Errorf("%+v, audience %v", p, p.audiences[0].FollowerIDs)
			}
		}},
		{name: "a public reply tells the person answered", facts: func(f *postFacts) { f.answers, f.mentionable = "cat", nil },
			check: func(t *testing.T, p postPlan) {
				if !p.tell {
					t.Errorf("%+v", p)
				}
			}},
		{name: "a reply for followers tells the person answered if they follow", facts: func(f *postFacts) {
			f.answers, f.visibility, f.mentionable, f.answeredFollows = "cat", FollowersOnly, nil, true
		}, check: func(t *testing.T, p postPlan) {
			if !p.tell {
				t.Errorf("%+v", p)
			}
		}},
		{name: "a reply for followers does not tell a person answered who does not follow", facts: func(f *postFacts) {
			f.answers, f.visibility, f.mentionable = "cat", FollowersOnly, nil
		}, check: func(t *testing.T, p postPlan) {
			if p.tell || p.mention {
				t.Errorf("%+v", p)
			}
		}},
		{name: "a reply for followers that names the person answered tells them", facts: func(f *postFacts) {
			f.answers, f.visibility, f.mentionable = "cat", FollowersOnly, []string{"cat"}
		}, check: func(t *testing.T, p postPlan) {
			if !p.tell || p.mention {
				t.Errorf("%+v", p)
			}
		}},
		{name: "a reply for the mentioned that does not name the person answered does not tell them", facts: func(f *postFacts) {
			f.answers, f.visibility, f.answeredFollows = "cat", MentionedOnly, true
		}, check: func(t *testing.T, p postPlan) {
			if p.tell || !p.mention {
				t.Errorf("%+v", p)
			}
		}},
		{name: "a repost tells the author of what it shares", facts: func(f *postFacts) { f.repostOf, f.repostOfUser = "S", "bob" },
			check: func(t *testing.T, p postPlan) {
				if !p.tell {
					t.Errorf("%+v", p)
				}
			}},
		{name: "a reply of one's own", facts: func(f *postFacts) { f.firstFollowers = []string{"f0", "f1"} }, check: func(t *testing.T, p postPlan) {
			if !slices.Equal(p.audiences[0].FollowerIDs, []string{"ann", "f0", "f1"}) {
				t.Errorf("audience %v", p.audiences[0].FollowerIDs)
			}
		}},
		{name: "a reply to what became hidden", facts: func(f *postFacts) { f.answers, f.hidden = "bob", ErrNoSuchActivity }, err: ErrNoSuchActivity},
		{name: "a repost", facts: func(f *postFacts) { f.repostOf, f.repostOfUser = "S", "bob" }, check: func(t *testing.T, p postPlan) {
			if p.activity.RepostOf != "S" || p.activity.RepostOfUser != "bob" {
				t.Errorf("%+v", p.activity)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := postFacts{mine: mine(), visibility: Public, chunks: 1, firstFollowers: []string{"f0", "f1"}, groups: []string{"g1"},
				mentionable: []string{"bob"}}
			if c.facts != nil {
				c.facts(&f)
			}
			in := *f.mine
			plan, err := decidePost(f)
			if !errors.Is(err, c.err) {
				t.Fatalf("err %v, want %v", err, c.err)
			}
			if c.check != nil {
				c.check(t, plan)
			}
			if f.mine.Visibility != in.Visibility || !slices.Equal(f.mine.MentionIDs, in.MentionIDs) {
				t.Error("the decision changed the activity it was given")
			}
		})
	}
}
