package media

import (
	"errors"
	"testing"

	"socialstream/internal/accounts"
	"socialstream/internal/derrors"
)

// What a change of profile writes, decided without Datastore.
func TestDecideProfile(t *testing.T) {
	str := func(s string) *string { return &s }
	loose := func(owner string) *Item { return &Item{UserID: owner, Loose: 5} }
	as := func(which string) *Item { return &Item{UserID: "ann", Profile: which} }
	for _, c := range []struct {
		name   string
		was    accounts.Profile
		in     accounts.ProfileInput
		items  map[string]*Item
		err    error
		want   accounts.Profile
		items2 map[string]string // id: the profile it is left as ("" loose again)
	}{
		{name: "a first avatar", in: accounts.ProfileInput{Avatar: str("p1")}, items: map[string]*Item{"p1": loose("ann")},
			want: accounts.Profile{Avatar: "p1"}, items2: map[string]string{"p1": accounts.PictureAvatar}},
		{name: "a new avatar: the old one loose again", was: accounts.Profile{Avatar: "p1"}, in: accounts.ProfileInput{Avatar: str("p2")},
			items: map[string]*Item{"p1": as(accounts.PictureAvatar), "p2": loose("ann")},
			want:  accounts.Profile{Avatar: "p2"}, items2: map[string]string{"p1": "", "p2": accounts.PictureAvatar}},
		{name: "no avatar", was: accounts.Profile{Avatar: "p1", Note: "hi"}, in: accounts.ProfileInput{Avatar: str("")},
			items: map[string]*Item{"p1": as(accounts.PictureAvatar)},
			want:  accounts.Profile{Note: "hi"}, items2: map[string]string{"p1": ""}},
		{name: "the header becomes the avatar", was: accounts.Profile{Avatar: "p1", Header: "p2"}, in: accounts.ProfileInput{Avatar: str("p2"), Header: str("p3")},
			items: map[string]*Item{"p1": as(accounts.PictureAvatar), "p2": as(accounts.PictureHeader), "p3": loose("ann")},
			want:  accounts.Profile{Avatar: "p2", Header: "p3"}, items2: map[string]string{"p1": "", "p2": accounts.PictureAvatar, "p3": accounts.PictureHeader}},
		{name: "the note alone", was: accounts.Profile{Avatar: "p1"}, in: accounts.ProfileInput{Note: str("bio")},
			want: accounts.Profile{Avatar: "p1", Note: "bio"}, items2: map[string]string{}},
		{name: "someone else's upload", in: accounts.ProfileInput{Avatar: str("p1")}, items: map[string]*Item{"p1": loose("bob")}, err: derrors.NotFound},
		{name: "no such upload", in: accounts.ProfileInput{Avatar: str("p9")}, err: derrors.NotFound},
		{name: "one on a post", in: accounts.ProfileInput{Avatar: str("p1")}, items: map[string]*Item{"p1": {UserID: "ann", ActivityID: "A"}}, err: errNotLoose},
		{name: "the header as the avatar too", was: accounts.Profile{Header: "p1"}, in: accounts.ProfileInput{Avatar: str("p1")},
			items: map[string]*Item{"p1": as(accounts.PictureHeader)}, err: errSamePicture},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.items == nil {
				c.items = map[string]*Item{}
			}
			before := map[string]Item{}
			for id, it := range c.items {
				before[id] = *it
			}
			plan, err := decideProfile(profileFacts{user: "ann", in: c.in, now: 99, was: c.was, items: c.items})
			for id, it := range c.items {
				if *it != before[id] {
					t.Errorf("the decision changed item %s it was given", id)
				}
			}
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("err %v, want %v", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if plan.profile.Note != c.want.Note || plan.profile.Avatar != c.want.Avatar || plan.profile.Header != c.want.Header {
				t.Errorf("profile %+v, want %+v", plan.profile, c.want)
			}
			if len(plan.items) != len(c.items2) {
				t.Errorf("items %v, want %v", plan.items, c.items2)
			}
			for id, which := range c.items2 {
				it := plan.items[id]
				if it.Profile != which || (which == "") != (it.Loose == 99) {
					t.Errorf("item %s: profile %q loose %d, want %q", id, it.Profile, it.Loose, which)
				}
			}
		})
	}
}
