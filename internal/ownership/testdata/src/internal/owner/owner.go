// Package owner owns Thing.
package owner

import "cloud.google.com/go/datastore"

// KindThing is the kind of Thing.
const KindThing = "Thing"

// Thing is an entity.
type Thing struct {
	N     int      `datastore:"n"`
	Tags  []string `datastore:"tags"`
	Kept  string   `datastore:"kept"`
	Deep  string   `datastore:"deep"`
	Seen  bool     `datastore:"seen"`  // indexed, and queried by nothing
	Shown string   `datastore:"shown"` // projected
	Note  string   `datastore:"note,noindex"`
	Skip  string   `datastore:"-"`
}

// View is not an entity.
type View struct {
	N int `json:"n"`
}

// ThingKey returns a Thing's key.
func ThingKey(id string) *datastore.Key { return datastore.NameKey(KindThing, id, nil) }

// Count is a function of the owner others may call.
func Count() int { return 0 }
