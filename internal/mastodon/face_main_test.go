package mastodon_test

import (
	"fmt"
	"os"
	"testing"

	"socialstream/internal/app"
	"socialstream/internal/egress"
	"socialstream/internal/localstack"
	"socialstream/internal/stacktest"
	"socialstream/internal/testenv"
)

// The Mastodon face's tests drive the deployment over real HTTP with a
// Mastodon client library nobody here wrote (github.com/mattn/go-mastodon),
// each on a stack of its own (package stacktest).
func TestMain(m *testing.M) {
	// The tests wait on their jobs, not the CPU: four at a time.
	testenv.Parallel(4)
	// No address off the loopback is reached even if the guard broke; a
	// run in which it let one through fails.
	egress.ConfineToLoopback()
	code := testenv.Main(m)
	if escaped := egress.Escapes(); len(escaped) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: the guard let %v through (confinement refused them)\n", escaped)
		code = 1
	}
	os.Exit(code)
}

// newEnv starts a test's deployment, as the REST face's tests do.
func newEnv(t testing.TB) *stacktest.Env {
	t.Helper()
	return stacktest.New(t, localstack.Options{DB: testenv.DB(t), Config: app.Config{BackfillMax: 1000}})
}
