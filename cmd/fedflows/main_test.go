package main

import (
	"context"
	"io"
	"strings"
	"testing"
)

// The run wants the two tokens of the peer, and no stray argument,
// before it starts anything.
func TestRunWantsTokens(t *testing.T) {
	for _, args := range [][]string{{}, {"-gts-a", "x"}, {"-gts-a", "x", "-gts-b", "y", "stray"}} {
		if err := run(context.Background(), args, io.Discard); err == nil || !strings.Contains(err.Error(), "-gts-a and -gts-b") {
			t.Errorf("%q: %v", args, err)
		}
	}
}
