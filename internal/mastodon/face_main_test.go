package mastodon_test

import (
	"os"
	"testing"

	"socialstream/internal/app"
	"socialstream/internal/localstack"
	"socialstream/internal/stacktest"
	"socialstream/internal/testenv"
)

// The Mastodon face's tests drive the deployment over real HTTP with a
// Mastodon client library nobody here wrote (github.com/mattn/go-mastodon),
// each on a stack of its own (package stacktest).
func TestMain(m *testing.M) { os.Exit(stacktest.Main(m)) }

// newEnv starts a test's deployment, as the REST face's tests do.
func newEnv(t testing.TB) *stacktest.Env {
	t.Helper()
	return stacktest.New(t, localstack.Options{DB: testenv.DB(t), Config: app.Config{BackfillMax: 1000}})
}
