// Package wired_test tests the domain services as the deployed service
// wires them (package apptest), on the emulators: the rules that take
// more than one service to show, one file for each service (activities,
// graph, moderation, likes, comments, groups, app data, lifecycle).
//
// They live apart from each service's own tests, which test its
// unexported decisions from inside the package, for two reasons: the
// packages above a service in the app are then compiled once for the
// suite, not again for that service's test binary; and they share one
// test binary, where each binary of its own would link the whole service
// again (about five seconds of CPU each).
package wired_test

import (
	"os"
	"testing"

	"socialstream/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
