// Package leaky uses test fixtures outside a test.
package leaky

import (
	"example/internal/owner/ownertest"
)

var _ = ownertest.Old
