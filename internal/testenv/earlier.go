package testenv

import (
	"context"
	"strings"
	"testing"

	"cloud.google.com/go/datastore"

	"socialstream/internal/store"
)

// earlierIndexed are the properties an earlier version kept in the
// indexes that this one keeps out.
var earlierIndexed = map[string]bool{"seq": true, "visibleTo": true, "tags": true, "appId": true, "followerIds": true}

// EarlierForm rewrites the entity at key as a version before places
// (package order) stored it: with seq (and visibleTo, tags, appId) indexed
// and no places, an audience chunk's ids in followerIds. For the tests of
// the move and of the feeds that read such entities meanwhile.
func EarlierForm(t testing.TB, db *store.DB, key *datastore.Key) {
	t.Helper()
	ctx := context.Background()
	err := db.Update(ctx, func(tx *store.Tx) error {
		var ps datastore.PropertyList
		if ok, err := tx.Get(key, &ps); err != nil || !ok {
			if err == nil {
				t.Errorf("EarlierForm: no %v", key)
			}
			return err
		}
		var out datastore.PropertyList
		var followers []any
		for _, p := range ps {
			switch p.Name {
			case "feeds", "trim", "order":
			case "home":
				vals, _ := p.Value.([]any)
				for _, v := range vals {
					s, _ := v.(string)
					follower, _, _ := strings.Cut(s, "/")
					followers = append(followers, follower)
				}
			default:
				if earlierIndexed[p.Name] {
					p.NoIndex = false
				}
				out = append(out, p)
			}
		}
		if key.Kind == "Audience" {
			out = append(out, datastore.Property{Name: "followerIds", Value: followers})
		}
		return tx.Put(key, &out)
	})
	if err != nil {
		t.Fatal(err)
	}
}
