package app

import (
	"os"
	"testing"

	"socialstream/internal/testenv"
)

// The package's tests are confined to loopback, as every test binary
// that builds guarded clients is: none reaches an address off this
// machine, whatever a configuration names.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
