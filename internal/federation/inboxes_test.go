package federation

import (
	"context"
	"testing"

	"cloud.google.com/go/datastore"

	"socialstream/internal/store"
	"socialstream/internal/testenv"
)

// A batch of the inboxes job writes the actor's delivery inbox onto the
// Follows at its keys as its transaction finds them: one that holds
// another is written, one deleted between the job's query and the
// transaction is left gone, one that holds it already is not written
// again, and a key of another person's Follow is left alone.
func TestCopyInboxLeavesAFollowGoneMeanwhileGone(t *testing.T) {
	ctx := context.Background()
	db := testenv.DB(t)
	s := &Service{db: db}
	const inbox = "https://elsewhere.example/inbox"
	if err := db.Put(ctx, remoteActorKey(db, "7"), &remoteActor{URI: "https://elsewhere.example/users/u", Inbox: "https://elsewhere.example/users/u/inbox",
		SharedInbox: inbox}); err != nil {
		t.Fatal(err)
	}
	follows := map[*datastore.Key]*remoteFollow{
		remoteFollowKey(db, "7", "1"): {Follower: "7", Followee: "1", Inbox: "https://elsewhere.example/old"},
		remoteFollowKey(db, "7", "2"): {Follower: "7", Followee: "2", Inbox: inbox},
		remoteFollowKey(db, "8", "1"): {Follower: "8", Followee: "1", Inbox: "https://other.example/inbox"},
	}
	for k, f := range follows {
		if err := db.Put(ctx, k, f); err != nil {
			t.Fatal(err)
		}
	}
	gone := remoteFollowKey(db, "7", "3") // found by the query, deleted since
	keys := []*datastore.Key{remoteFollowKey(db, "7", "1"), remoteFollowKey(db, "7", "2"), gone, remoteFollowKey(db, "8", "1")}
	var wrote int
	if err := db.Update(ctx, func(tx *store.Tx) error {
		var err error
		wrote, err = s.copyInbox(ctx, tx, "7", keys)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if wrote != 1 {
		t.Errorf("wrote %d Follows, want 1", wrote)
	}
	want := map[*datastore.Key]string{keys[0]: inbox, keys[1]: inbox, keys[3]: "https://other.example/inbox"}
	for k, w := range want {
		var f remoteFollow
		if ok, err := db.Get(ctx, k, &f); err != nil || !ok || f.Inbox != w {
			t.Errorf("%s: %q (found %v, %v), want %q", k.Name, f.Inbox, ok, err, w)
		}
	}
	if ok, err := db.Get(ctx, gone, &remoteFollow{}); err != nil || ok {
		t.Errorf("the Follow gone meanwhile: found %v (%v), want it left gone", ok, err)
	}
}
