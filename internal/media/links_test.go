package media

import (
	"testing"
	"time"
)

// BenchmarkLink measures what signing a picture's link costs a page: an
// HMAC-SHA256 of its id, variant and end, with the service's key.
//
//	go test ./internal/media -run '^$' -bench Link
func BenchmarkLink(b *testing.B) {
	m := Minter{key: make([]byte, 32), end: time.Now().Unix()}
	for b.Loop() {
		_ = m.link("384491642961997824", VariantImage)
	}
}
