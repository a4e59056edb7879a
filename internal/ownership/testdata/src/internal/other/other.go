// Package other reaches into owner's entities.
package other

import (
	"cloud.google.com/go/datastore"

	"example/internal/owner"
)

func use() {
	_ = owner.ThingKey("x")
	_ = owner.Thing{}
	_ = owner.KindThing
	_ = owner.View{}
	_ = owner.Count()
	owner := struct{ Thing int }{}
	_ = owner.Thing // a local variable, not the package
	_ = datastore.NameKey("Thing", "x", nil)
	_ = datastore.NameKey("Other", "x", nil) // not a kind of an owner's
}
