package oauth

import (
	"os"
	"testing"

	"socialstream/internal/egress"
)

// The tests name private addresses (redirect URIs that must be refused)
// as strings alone; the process is confined to loopback all the same, so
// that none could be reached even if something dialled one.
func TestMain(m *testing.M) {
	egress.ConfineToLoopback()
	code := m.Run()
	if len(egress.Escapes()) > 0 {
		code = 1
	}
	os.Exit(code)
}
