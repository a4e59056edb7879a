// Package other reaches into owner's entities.
package other

import (
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
}
