package activitypub

import (
	"net/http/httptest"
	"slices"
	"testing"

	"socialstream/internal/accounts"
	"socialstream/internal/activities"
	"socialstream/internal/federation"
)

// The face's own rules, without a deployment: its tests through one
// (other servers reading it, and writing to its inbox) are the
// federation's, in package api.

var fed = federation.Config{Domain: "social.example"}

// A post is addressed by its visibility, as Mastodon addresses it, and
// to the people it mentions whose addresses are known: here, or of
// another server the post names.
func TestAddressedByVisibility(t *testing.T) {
	const followers = "https://social.example/users/1/followers"
	r := renderer{fed: fed, at: federation.Addresses{Actors: map[string]string{"9": "https://other.example/users/eve"}}}
	v := activities.View{Mentions: []string{"2", "9", "8"}, MentionNames: []string{"bob", "eve@other.example", "gone@nowhere.example"}}
	bob, eve := fed.Actor("2"), "https://other.example/users/eve"
	for _, c := range []struct {
		visibility string
		to, cc     []string
	}{
		{activities.Public, []string{federation.PublicCollection}, []string{followers, bob, eve}},
		{activities.Unlisted, []string{followers}, []string{federation.PublicCollection, bob, eve}},
		{activities.FollowersOnly, []string{followers}, []string{bob, eve}},
		{activities.MentionedOnly, []string{bob, eve}, []string{}},
	} {
		v.Visibility = c.visibility
		to, cc := r.addressed(v, followers)
		if !slices.Equal(to, c.to) || !slices.Equal(cc, c.cc) {
			t.Errorf("%s: to %v cc %v, want to %v cc %v", c.visibility, to, cc, c.to, c.cc)
		}
	}
}

// A Note says what its post says: its warning, its language, whom it
// answers (a post of another server at that server's address), its
// mentions and hashtags as tags, its edit.
func TestNoteOfAPost(t *testing.T) {
	r := renderer{fed: fed, at: federation.Addresses{
		Actors: map[string]string{"9": "https://other.example/users/eve"},
		Notes:  map[string]string{"77": "https://other.example/notes/5"}}}
	v := activities.View{ID: "100", Title: "hi @bob and @eve@other.example #go", Visibility: activities.Public,
		SpoilerText: "careful", Language: "ja", PostedTime: 1_000_000, EditedTime: 2_000_000, InReplyTo: "77",
		Mentions: []string{"2", "9"}, MentionNames: []string{"bob", "eve@other.example"}, Tags: []string{"go"},
		Author: &accounts.Person{ID: "1"}}
	n := r.renderNote(v, true)
	if n.ID != fed.Note("100") || n.URL != n.ID || n.AttributedTo != fed.Actor("1") || n.Context == nil {
		t.Errorf("the Note's addresses: %+v", n)
	}
	if n.Summary == nil || *n.Summary != "careful" || n.ContentMap["ja"] != n.Content || n.Content == "" {
		t.Errorf("its warning and language: %+v", n)
	}
	if n.InReplyTo == nil || *n.InReplyTo != "https://other.example/notes/5" {
		t.Errorf("whom it answers: %v", n.InReplyTo)
	}
	if n.Published != "1970-01-01T00:16:40Z" || n.Updated != "1970-01-01T00:33:20Z" {
		t.Errorf("its times: %s, %s", n.Published, n.Updated)
	}
	want := []tag{{"Mention", fed.Actor("2"), "@bob@social.example"}, {"Mention", "https://other.example/users/eve", "@eve@other.example"},
		{"Hashtag", "https://social.example/tags/go", "#go"}}
	if !slices.Equal(n.Tag, want) {
		t.Errorf("its tags: %+v, want %+v", n.Tag, want)
	}
	// A reply to a post here names its Note here.
	v.InReplyTo = "55"
	if n := r.renderNote(v, false); n.InReplyTo == nil || *n.InReplyTo != fed.Note("55") || n.Context != nil {
		t.Errorf("a reply to a post here: %v", n.InReplyTo)
	}
}

// A repost is the Announce of what it shares, at its server's address
// for a post of another server's.
func TestAnnounceOfARepost(t *testing.T) {
	r := renderer{fed: fed}
	shared := activities.View{ID: "7", ExternalID: activities.ElsewherePrefix + "https://other.example/notes/7",
		URL: "https://other.example/notes/7", Visibility: activities.Public}
	a := r.renderActivity(activities.View{ID: "8", Visibility: activities.Public, Author: &accounts.Person{ID: "1"}, RepostOf: &shared})
	if a.Type != "Announce" || a.ID != fed.Note("8") || a.Actor != fed.Actor("1") {
		t.Errorf("the Announce: %+v", a)
	}
	if a.Object != "https://other.example/notes/7" {
		t.Errorf("what it shares: %v, want its Note there", a.Object)
	}
	// A post here, its Note here.
	here := activities.View{ID: "6", Visibility: activities.Public}
	if a := r.renderActivity(activities.View{ID: "8", Visibility: activities.Public, Author: &accounts.Person{ID: "1"}, RepostOf: &here}); a.Object != fed.Note("6") {
		t.Errorf("a repost of a post here shares %v", a.Object)
	}
}

// ActivityPub's JSON is asked for by either of its media types, with any
// profile, at a weight above zero; anything else gets the page.
func TestWantsActivity(t *testing.T) {
	for accept, want := range map[string]bool{
		"application/activity+json": true,
		`application/ld+json; profile="https://www.w3.org/ns/activitystreams"`: true,
		"text/html, application/activity+json;q=0.9":                           true,
		"application/activity+json;q=0":                                        false,
		"application/activity+json;q=0.0":                                      false,
		"text/html":                                                            false,
		"application/json":                                                     false,
		"":                                                                     false,
	} {
		req := httptest.NewRequest("GET", "/users/1", nil)
		req.Header.Set("Accept", accept)
		if got := wantsActivity(req); got != want {
			t.Errorf("Accept %q: %v, want %v", accept, got, want)
		}
	}
}

// The face owns the paths other servers read, and no other.
func TestOwnsItsPaths(t *testing.T) {
	for path, want := range map[string]bool{
		"/users/1": true, "/statuses/5": true, "/inbox": true, "/.well-known/webfinger": true, "/.well-known/host-meta": true,
		"/api/v1/accounts": false, "/social/rest/people/@me/@self": false, "/.well-known/nodeinfo": false, "/": false,
	} {
		if got := (&Server{}).Owns(path); got != want {
			t.Errorf("%s: %v, want %v", path, got, want)
		}
	}
}
