// Package ownertest is test fixtures: it may write owner's entities as
// a test needs them.
package ownertest

import "example/internal/owner"

// Old returns a Thing as a test writes it.
func Old() owner.Thing { return owner.Thing{N: 1} }
